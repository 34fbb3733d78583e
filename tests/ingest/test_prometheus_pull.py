"""`pull prometheus` against a real Prometheus server, fed by promtool backfill (no mocks).

The server is the Debian `prometheus` binary on 127.0.0.1, on a free port, with history written as
OpenMetrics and backfilled by `promtool tsdb create-blocks-from openmetrics` before it starts (see
docs/testing.md for the gotchas: seconds timestamps, `# EOF`, long retention).
"""

from __future__ import annotations

import gzip
import json
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import polars as pl
import pytest

from gpu_ledger.ingest import prometheus_pull
from gpu_ledger.ingest.prometheus_pull import PullError, parse_time, plan, pull
from gpu_ledger.ingest.store import RawStore

PROMETHEUS = Path("/usr/bin/prometheus")
PROMTOOL = Path("/usr/bin/promtool")
needs_prometheus = pytest.mark.skipif(
    not (PROMETHEUS.exists() and PROMTOOL.exists()),
    reason="needs the Debian prometheus package (/usr/bin/prometheus, /usr/bin/promtool)",
)

STEP = 30
GPUS = 4
METRICS = ("DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_POWER_USAGE")
# two days that ended a week ago, on the step grid: old enough to be history, young enough for retention
T0 = int(
    (datetime.now(UTC) - timedelta(days=9)).replace(hour=0, minute=0, second=0, microsecond=0).timestamp()
)
POINTS = 2 * 86400 // STEP  # per series
T_LAST = T0 + (POINTS - 1) * STEP


def _expected() -> pl.DataFrame:
    """The samples written: metric, gpu_uuid, epoch seconds, value (exact in binary floating point)."""
    i = pl.int_range(0, POINTS, eager=True)
    frames = []
    for g in range(GPUS):
        for m, metric in enumerate(METRICS):
            value = ((i * (7 + m) + g * 13) % 101).cast(pl.Float64)
            if metric == "DCGM_FI_DEV_POWER_USAGE":
                value = value * 2.5 + 0.25
            frames.append(
                pl.DataFrame(
                    {"metric": metric, "gpu_uuid": f"GPU-{g:08d}-feed", "t": T0 + i * STEP, "value": value}
                )
            )
    return pl.concat(frames)


def _openmetrics(path: Path, expected: pl.DataFrame) -> None:
    """OpenMetrics text as dcgm-exporter's series would be backfilled: seconds timestamps, `# EOF`."""
    gpu = pl.col("gpu_uuid").str.slice(4, 8).cast(pl.Int64)
    lines = expected.sort("metric", "gpu_uuid", "t").select(
        pl.concat_str(
            "metric",
            pl.lit('{gpu="'),
            gpu.cast(pl.Utf8),
            pl.lit('",UUID="'),
            "gpu_uuid",
            pl.lit('",Hostname="node-'),
            (gpu // 2).cast(pl.Utf8),
            pl.lit('",modelName="NVIDIA H100 80GB HBM3"} '),
            pl.col("value").cast(pl.Utf8),
            pl.lit(" "),
            pl.col("t").cast(pl.Utf8),
        ).alias("line")
    )["line"]
    with path.open("w") as f:
        for metric in METRICS:
            f.write(f"# TYPE {metric} gauge\n")
            block = lines.filter(lines.str.starts_with(metric + "{"))
            f.write("\n".join(block.to_list()) + "\n")
        f.write("# EOF\n")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Server:
    url: str
    process: subprocess.Popen
    started_s: float
    backfill_s: float


def _start(tmp: Path, data: Path, web_config: Path | None = None) -> Server:
    """Start a server, retrying on another port if the chosen one turns out to be someone else's."""
    for _ in range(3):
        server = _start_once(tmp, data, web_config)
        if server is not None:
            return server
    pytest.fail("could not start prometheus on a free port after 3 tries")


def _start_once(tmp: Path, data: Path, web_config: Path | None) -> Server | None:
    config = tmp / "prometheus.yml"
    config.write_text("global:\n  scrape_interval: 1m\nscrape_configs: []\n")
    port = _free_port()
    args = [
        str(PROMETHEUS),
        f"--config.file={config}",
        f"--storage.tsdb.path={data}",
        "--storage.tsdb.retention.time=3650d",
        f"--web.listen-address=127.0.0.1:{port}",
    ]
    if web_config is not None:
        args.append(f"--web.config.file={web_config}")
    log = (tmp / f"prometheus-{port}.log").open("w")
    t = time.monotonic()
    process = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            request = urllib.request.Request(url + "/-/ready")
            if web_config is not None:
                request.add_header("Authorization", "Basic Z3B1OnMzY3JldA==")  # gpu:s3cret
            with urllib.request.urlopen(request, timeout=2) as answer:
                if answer.status == 200:
                    break
        except OSError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            pytest.fail(
                f"prometheus did not become ready: {(tmp / f'prometheus-{port}.log').read_text()[-2000:]}"
            )
        time.sleep(0.2)
    # the port was free when chosen, but another test (ours or a colleague's) may have taken it since:
    # make sure the server answering is the one we started, on our data
    time.sleep(0.3)
    flags = urllib.request.Request(url + "/api/v1/status/flags")
    if web_config is not None:
        flags.add_header("Authorization", "Basic Z3B1OnMzY3JldA==")
    with urllib.request.urlopen(flags, timeout=5) as answer:
        path = json.loads(answer.read())["data"].get("storage.tsdb.path")
    if process.poll() is not None or path != str(data):
        _stop(process)
        return None
    return Server(url, process, time.monotonic() - t, 0.0)


def _stop(process: subprocess.Popen) -> None:
    """Stop the server we started, by its PID: SIGTERM, then SIGKILL if it lingers."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


@pytest.fixture(scope="module")
def backfilled(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, pl.DataFrame, float]:
    """TSDB blocks holding the expected samples, built once for the module."""
    if not (PROMETHEUS.exists() and PROMTOOL.exists()):
        pytest.skip("needs /usr/bin/prometheus and /usr/bin/promtool")
    tmp = tmp_path_factory.mktemp("prom")
    expected = _expected()
    source = tmp / "history.om.txt"
    _openmetrics(source, expected)
    data = tmp / "data"
    t = time.monotonic()
    subprocess.run(
        [str(PROMTOOL), "tsdb", "create-blocks-from", "openmetrics", str(source), str(data)],
        check=True,
        capture_output=True,
    )
    return data, expected, time.monotonic() - t


@pytest.fixture(scope="module")
def prometheus(
    backfilled: tuple[Path, pl.DataFrame, float], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    data, _, backfill_s = backfilled
    server = _start(tmp_path_factory.mktemp("prom-run"), data)
    server.backfill_s = backfill_s
    try:
        yield server
    finally:
        _stop(server.process)


def _landed(store: RawStore) -> pl.DataFrame:
    """Landed samples with their series; dcgm_series holds a row per series per load, hence distinct."""
    return store.con.sql(
        """
        select s.metric, s.gpu_uuid, epoch(p.ts)::bigint as t, p.value
        from raw.dcgm_samples p
        join (select distinct series_id, metric, gpu_uuid from raw.dcgm_series) s using (series_id)
        """
    ).pl()


def _assert_same(landed: pl.DataFrame, expected: pl.DataFrame) -> None:
    keys = ["metric", "gpu_uuid", "t"]
    assert landed.height == expected.height
    assert landed.select(keys).is_duplicated().sum() == 0
    joined = expected.join(landed, on=keys, how="full", suffix="_landed", coalesce=True)
    assert joined.filter(pl.col("value").is_null() | pl.col("value_landed").is_null()).height == 0
    assert (joined["value"] == joined["value_landed"]).all()


SELECTORS = list(METRICS)


# ------------------------------------------------------------------------------- real server
@pytest.mark.slow
@needs_prometheus
def test_pull_lands_exactly_what_was_written_and_rerun_pulls_nothing(
    prometheus: Server, backfilled: tuple[Path, pl.DataFrame, float], tmp_path: Path
) -> None:
    _, expected, _ = backfilled
    out = tmp_path / "pulled"
    with RawStore(tmp_path / "landed.duckdb") as store:
        t = time.monotonic()
        first = pull(store, prometheus.url, T0, str(T_LAST), STEP, SELECTORS, out_dir=out, progress=False)
        pull_s = time.monotonic() - t
        assert first.rejected == []
        assert first.fetched == first.chunks and first.skipped == 0
        assert first.rows == expected.height
        _assert_same(_landed(store), expected)
        # every chunk is a saved file, named by metric and chunk start, loaded in the manifest
        assert all(p.exists() and p.parent.name in METRICS for p in first.files)
        manifest = store.manifest()
        assert set(manifest.filter(pl.col("status") == "loaded")["format"]) == {"prometheus_query_range"}

        t = time.monotonic()
        again = pull(store, prometheus.url, T0, str(T_LAST), STEP, SELECTORS, out_dir=out, progress=False)
        rerun_s = time.monotonic() - t
        assert (again.fetched, again.skipped, again.rows, again.outcomes) == (0, again.chunks, 0, [])
        assert store.manifest().height == manifest.height
        _assert_same(_landed(store), expected)
    print(
        f"\nbackfill {prometheus.backfill_s:.2f}s, server ready {prometheus.started_s:.2f}s, "
        f"pull {expected.height} samples {pull_s:.2f}s, rerun {rerun_s:.2f}s"
    )


@pytest.mark.slow
@needs_prometheus
def test_small_chunk_limit_is_respected(
    prometheus: Server, backfilled: tuple[Path, pl.DataFrame, float], tmp_path: Path
) -> None:
    _, expected, _ = backfilled
    with RawStore(tmp_path / "landed.duckdb") as store:
        result = pull(
            store,
            prometheus.url,
            T0,
            T_LAST,
            STEP,
            SELECTORS,
            out_dir=tmp_path / "p",
            progress=False,
            max_points=500,
        )
        assert result.chunks >= len(METRICS) * (POINTS // 500)
        longest = 0
        for path in result.files:
            doc = json.loads(gzip.decompress(path.read_bytes()))
            longest = max([longest, *(len(s["values"]) for s in doc["data"]["result"])])
        assert longest == 500
        _assert_same(_landed(store), expected)


@pytest.mark.slow
@needs_prometheus
def test_interrupted_then_extended_pull_lands_each_sample_once(
    prometheus: Server, backfilled: tuple[Path, pl.DataFrame, float], tmp_path: Path
) -> None:
    """Up to the middle of a chunk first, then both days: that partial chunk grows in place and
    replaces its load. (The middle of the chunk holding the first midnight, not the midnight itself:
    every 25 days a midnight falls on the chunk grid, and no chunk would be partial.)"""
    _, expected, _ = backfilled
    out = tmp_path / "pulled"
    span = 2000 * STEP  # one chunk at max_points=2000
    half = (T0 + 86400) // span * span + span // 2
    with RawStore(tmp_path / "landed.duckdb") as store:
        pull(store, prometheus.url, T0, half, STEP, SELECTORS, out_dir=out, progress=False, max_points=2000)
        assert _landed(store).height == expected.filter(pl.col("t") <= half).height
        second = pull(
            store, prometheus.url, T0, T_LAST, STEP, SELECTORS, out_dir=out, progress=False, max_points=2000
        )
        assert second.skipped > 0 and second.fetched > 0
        assert any(o.replaced for o in second.outcomes)  # the grown chunk replaced its first load
        _assert_same(_landed(store), expected)


@pytest.mark.slow
@needs_prometheus
def test_server_errors_name_url_and_chunk(prometheus: Server, tmp_path: Path) -> None:
    with RawStore(tmp_path / "landed.duckdb") as store:
        dead = f"http://127.0.0.1:{_free_port()}"
        with pytest.raises(PullError) as refused:
            pull(
                store,
                dead,
                T0,
                T_LAST,
                STEP,
                ["DCGM_FI_DEV_GPU_UTIL"],
                out_dir=tmp_path / "a",
                progress=False,
                retries=0,
            )
        message = str(refused.value)
        assert message.startswith(f"{dead}/api/v1/query_range: chunk DCGM_FI_DEV_GPU_UTIL ")
        assert "cannot reach the server" in message

        with pytest.raises(PullError, match=r"/nope/api/v1/query_range: chunk .* HTTP 404"):
            pull(
                store,
                prometheus.url + "/nope",
                T0,
                T_LAST,
                STEP,
                ["DCGM_FI_DEV_GPU_UTIL"],
                out_dir=tmp_path / "b",
                progress=False,
                retries=0,
            )

        with pytest.raises(PullError, match=r"HTTP 400 Bad Request: bad_data: .*parse error"):
            pull(
                store,
                prometheus.url,
                T0,
                T_LAST,
                STEP,
                ["DCGM_FI_DEV_GPU_UTIL{"],
                out_dir=tmp_path / "c",
                progress=False,
                retries=0,
            )
        assert store.manifest().height == 0


@pytest.mark.slow
@needs_prometheus
def test_basic_auth_from_environment(
    backfilled: tuple[Path, pl.DataFrame, float], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server behind --web.config.file basic auth: refused without credentials, served with them."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        import crypt
    hashed = crypt.crypt("s3cret", crypt.mksalt(crypt.METHOD_BLOWFISH))
    if not hashed or not hashed.startswith("$2"):
        pytest.skip("this libcrypt cannot make bcrypt hashes for Prometheus' web config")
    data, expected, _ = backfilled
    copy = tmp_path / "data"
    shutil.copytree(data, copy)
    web = tmp_path / "web.yml"
    web.write_text(f"basic_auth_users:\n  gpu: '{hashed}'\n")
    server = _start(tmp_path, copy, web_config=web)
    try:
        monkeypatch.delenv(prometheus_pull.ENV_TOKEN, raising=False)
        with RawStore(tmp_path / "landed.duckdb") as store:
            monkeypatch.delenv(prometheus_pull.ENV_USER, raising=False)
            with pytest.raises(PullError, match="HTTP 401"):
                pull(
                    store,
                    server.url,
                    T0,
                    T_LAST,
                    STEP,
                    ["DCGM_FI_DEV_GPU_UTIL"],
                    out_dir=tmp_path / "x",
                    progress=False,
                    retries=0,
                )
            monkeypatch.setenv(prometheus_pull.ENV_USER, "gpu")
            monkeypatch.setenv(prometheus_pull.ENV_PASSWORD, "s3cret")
            result = pull(
                store,
                server.url,
                T0,
                T_LAST,
                STEP,
                ["DCGM_FI_DEV_GPU_UTIL"],
                out_dir=tmp_path / "y",
                progress=False,
            )
            assert result.rows == expected.filter(pl.col("metric") == "DCGM_FI_DEV_GPU_UTIL").height
            assert "s3cret" not in json.dumps([p.read_text() for p in (tmp_path / "y").rglob(".*.pull.json")])
    finally:
        _stop(server.process)


# ---------------------------------------------------------------------------- no server needed
def test_parse_time_accepts_rfc3339_dates_and_unix_seconds() -> None:
    want = datetime(2026, 10, 1, tzinfo=UTC)
    assert parse_time("2026-10-01T00:00:00Z") == want
    assert parse_time("2026-10-01T02:00:00+02:00") == want
    assert parse_time("2026-10-01") == want
    assert parse_time(str(int(want.timestamp()))) == want
    assert parse_time(want.timestamp()) == want
    assert parse_time("2026-10-01T00:00:00.250Z") == want + timedelta(milliseconds=250)
    with pytest.raises(ValueError, match="needs a zone"):
        parse_time("2026-10-01T00:00:00")
    with pytest.raises(ValueError, match="not a time"):
        parse_time("yesterday")


def test_plan_keeps_every_chunk_under_the_limit_on_a_fixed_grid(tmp_path: Path) -> None:
    start, end = parse_time("2026-10-01T00:00:10Z"), parse_time("2026-10-31T00:00:00Z")
    chunks = plan(["m"], start, end, 30, tmp_path, 11_000)
    assert all((c.end_ms - c.start_ms) // c.step_ms + 1 <= 11_000 for c in chunks)
    assert (
        chunks[0].start_ms == int(parse_time("2026-10-01T00:00:30Z").timestamp()) * 1000
    )  # on the step grid
    assert chunks[-1].end_ms == int(end.timestamp()) * 1000
    # consecutive, no overlap, no gap
    assert all(b.start_ms == a.end_ms + a.step_ms for a, b in zip(chunks, chunks[1:], strict=False))
    # a later window reuses the same chunk files
    later = plan(["m"], parse_time("2026-10-05T00:00:00Z"), end, 30, tmp_path, 11_000)
    assert {c.path for c in later} <= {c.path for c in chunks}


def test_default_matchers_cover_the_marts_metrics_and_old_names() -> None:
    selectors = prometheus_pull.default_matches()
    assert len(selectors) == len(prometheus_pull.default_metrics())
    assert '{__name__=~"DCGM_FI_DEV_GPU_UTIL|dcgm_gpu_utilization"}' in selectors
    assert any("DCGM_FI_DEV_GPU_TEMP" in s for s in selectors)


def test_credentials_come_from_env_or_url_and_leave_the_url() -> None:
    url, header = prometheus_pull._auth("http://u:p%40ss@prom.example:9090/", {})
    assert url == "http://prom.example:9090" and header == "Basic dTpwQHNz"
    _, header = prometheus_pull._auth("http://prom", {"GPU_LEDGER_PROMETHEUS_TOKEN": "tok"})
    assert header == "Bearer tok"
    assert prometheus_pull._auth("http://prom", None) == ("http://prom", None)


@pytest.mark.slow
@needs_prometheus
def test_cli_pull_prometheus_lands_the_server_history(
    prometheus: Server, backfilled: tuple[Path, pl.DataFrame, float], tmp_path: Path
) -> None:
    _, expected, _ = backfilled
    home = tmp_path / "home"
    args = [
        "pull",
        "prometheus",
        "--home",
        str(home),
        "--url",
        prometheus.url,
        "--start",
        str(T0),
        "--end",
        str(T_LAST),
        "--step",
        str(STEP),
        "--quiet",
        *(f"--match={m}" for m in METRICS),
    ]
    done = subprocess.run([sys.executable, "-m", "gpu_ledger.cli", *args], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert f"{expected.height:,} samples landed" in done.stdout
    with RawStore(home / "landed.duckdb") as store:
        _assert_same(_landed(store), expected)
    again = subprocess.run([sys.executable, "-m", "gpu_ledger.cli", *args], capture_output=True, text=True)
    assert "0 fetched" in again.stdout and "0 samples landed" in again.stdout
