"""The ingest promises of CONTRACT §3 on telemetry files: idempotent, restatement-aware, atomic, clear."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import duckdb
import polars as pl
import pytest

from ingest import registry
from ingest.base import Format, LoadContext
from ingest.runner import ingest
from ingest.store import RawStore

UTIL = "telemetry/prometheus/hpc-fra/DCGM_FI_DEV_GPU_UTIL"


def _totals(store: RawStore) -> tuple[int, float]:
    return store.con.sql("select count(*), sum(value) from raw.dcgm_samples").fetchall()[0]


def _query_range(series: list[tuple[dict, list[list]]]) -> str:
    result = [{"metric": m, "values": v} for m, v in series]
    return json.dumps({"status": "success", "data": {"resultType": "matrix", "result": result}})


GPU = {"__name__": "DCGM_FI_DEV_GPU_UTIL", "UUID": "GPU-1", "Hostname": "node-a", "gpu": "0"}


def test_ingesting_twice_changes_nothing(sim: Path, tmp_path: Path):
    with RawStore(tmp_path / "landed.duckdb") as store:
        first = ingest([sim / UTIL], store, progress=False)
        assert {o.status for o in first} == {"loaded"}
        totals = _totals(store)
        manifest_rows = store.manifest().height
        second = ingest([sim / UTIL], store, progress=False)
        assert {o.status for o in second} == {"unchanged"}
        assert _totals(store) == totals
        assert store.manifest().height == manifest_rows


def test_landed_utilisation_equals_the_simulators_ground_truth(sim: Path, tmp_path: Path):
    """Busy GPU-hours from the landed samples equal the ground truth for the on-prem GPUs."""
    with RawStore(tmp_path / "landed.duckdb") as store:
        ingest([sim / UTIL], store, progress=False)
        busy = store.con.sql("select sum(value) / 100 * 300 / 3600 from raw.dcgm_samples").fetchall()[0][0]
        labelled = store.con.sql("select count(*) from raw.dcgm_series where hpc_job is not null").fetchall()[
            0
        ][0]
    truth = pl.read_csv(sim / "ground_truth" / "gpu_hours.csv").filter(
        pl.col("instance_id").str.starts_with("DC1-")
    )
    assert busy == pytest.approx(truth["busy_gpu_hours"].sum(), rel=1e-9)
    assert labelled > 0, "Slurm job ids arrive as the hpc_job label"


def test_exported_pod_labels_name_the_workload_not_the_exporter(sim: Path, tmp_path: Path):
    with RawStore(tmp_path / "landed.duckdb") as store:
        ingest([sim / "telemetry/prometheus/eks-ml-use1/DCGM_FI_DEV_FB_USED"], store, progress=False)
        pods = store.con.sql(
            "select distinct pod, namespace from raw.dcgm_series where pod is not null"
        ).fetchall()
    assert pods and not any(p.startswith("nvidia-dcgm-exporter") for p, _ in pods)
    assert "gpu-operator" not in {ns for _, ns in pods}


def test_a_changed_file_replaces_its_earlier_load(tmp_path: Path):
    path = tmp_path / "util.json"
    path.write_text(_query_range([(GPU, [[1_800_000_000, "10"], [1_800_000_030, "20"]])]))
    with RawStore(tmp_path / "landed.duckdb") as store:
        ingest([path], store, progress=False)
        path.write_text(_query_range([(GPU, [[1_800_000_000, "50"]])]))
        (outcome,) = ingest([path], store, progress=False)
        assert outcome.status == "loaded" and outcome.replaced == [str(path.resolve())]
        assert _totals(store) == (1, 50.0)
        assert store.manifest()["status"].to_list() == ["replaced", "loaded"]


@pytest.fixture
def versioned_format(monkeypatch) -> str:
    """A stand-in billing format whose files name their scope and version, to test the runner alone."""

    def load(ctx: LoadContext) -> None:
        scope, version, amount = ctx.sniff.first_line.split(",")
        ctx.scope, ctx.version = scope, version
        ctx.land("test_bill", pl.DataFrame({"amount": [float(amount)]}))

    fmt = Format("test_bill", "billing", "scope,version,amount", lambda s: False, load)
    monkeypatch.setitem(registry.BY_NAME, fmt.name, fmt)
    return fmt.name


@pytest.mark.parametrize("order", [("v1", "v2"), ("v2", "v1")])
def test_only_the_newest_delivery_of_a_billing_period_remains(tmp_path: Path, versioned_format: str, order):
    files = {}
    for version, amount in (("v1", 100.0), ("v2", 120.0)):
        files[version] = tmp_path / f"{version}.csv"
        files[version].write_text(f"aws/111/2026-10,{version},{amount}\n")
    with RawStore(tmp_path / "landed.duckdb") as store:
        outcomes = [ingest([files[v]], store, format_name=versioned_format, progress=False)[0] for v in order]
        assert store.con.sql("select sum(amount), count(*) from raw.test_bill").fetchall() == [(120.0, 1)]
        statuses = dict(zip(order, [o.status for o in outcomes], strict=True))
    assert statuses == (
        {"v1": "loaded", "v2": "loaded"} if order == ("v1", "v2") else {"v2": "loaded", "v1": "superseded"}
    )


KILLABLE = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from ingest import registry
    from ingest.base import Format
    from ingest.formats.telemetry import prometheus_range
    from ingest.runner import ingest
    from ingest.store import RawStore

    def slow_load(ctx):
        prometheus_range.load(ctx)  # the rows are in, the transaction is not committed yet
        Path(sys.argv[2]).write_text("landed")
        time.sleep(60)

    registry.BY_NAME["slow"] = Format("slow", "telemetry", "", lambda s: False, slow_load)
    with RawStore(Path(sys.argv[1])) as store:
        ingest([Path(sys.argv[3])], store, format_name="slow", progress=False)
    """
)


def test_a_load_killed_mid_file_leaves_the_store_unchanged(sim: Path, tmp_path: Path):
    db = tmp_path / "landed.duckdb"
    first, second = sorted((sim / UTIL).iterdir())[:2]
    with RawStore(db) as store:
        ingest([first], store, progress=False)
        before = (_totals(store), store.manifest().height)
    marker = tmp_path / "landed.marker"
    proc = subprocess.Popen(
        [sys.executable, "-c", KILLABLE, str(db), str(marker), str(second)],
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
    )
    deadline = time.monotonic() + 60
    while not marker.exists():
        assert proc.poll() is None, "the loader died before landing"
        assert time.monotonic() < deadline
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    with RawStore(db) as store:
        assert (_totals(store), store.manifest().height) == before


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("empty.json", "", "the file is empty (expected at least a header or one record)"),
        ("unknown.txt", "hello world\n", "format not recognised from its content"),
        (
            "truncated.json",
            _query_range([(GPU, [[1_800_000_000, "1"]])])[:-20],
            "not a readable Prometheus query_range answer",
        ),
        (
            "wrong_type.json",
            _query_range([(GPU, [[1_800_000_000, "abc"]])]),
            "column 'values': series 1, point 1: value 'abc' is not a number (expected a number as a string",
        ),
        (
            "negative.json",
            _query_range([(GPU, [[1_800_000_000, "-3"]])]),
            "column 'DCGM_FI_DEV_GPU_UTIL': series 1 (DCGM_FI_DEV_GPU_UTIL, GPU GPU-1 on node-a) "
            "has value -3 at 2027-01-15T08:00:00Z (expected 0 to 100)",
        ),
        (
            "duplicated.json",
            _query_range([(GPU, [[1_800_000_000, "1"]]), (GPU, [[1_800_000_000, "1"]])]),
            "has 2 samples at 2027-01-15T08:00:00Z (expected one sample per series and time)",
        ),
        (
            "unordered.json",
            _query_range([(GPU, [[1_800_000_030, "1"], [1_800_000_000, "2"]])]),
            "series 1, point 2: timestamp 2027-01-15T08:00:00Z is not after the previous one",
        ),
    ],
)
def test_bad_input_is_rejected_with_its_reason_and_the_rest_still_loads(
    sim: Path, tmp_path: Path, name, content, message
):
    bad = tmp_path / name
    bad.write_text(content)
    good = sorted((sim / UTIL).iterdir())[0]
    with RawStore(tmp_path / "landed.duckdb") as store:
        outcomes = {o.path.name: o for o in ingest([bad, good], store, progress=False)}
        assert outcomes[good.name].status == "loaded"
        assert outcomes[name].status == "rejected"
        assert outcomes[name].error.startswith(f"{bad}: ")
        assert message in outcomes[name].error
        manifest = store.manifest().filter(pl.col("status") == "rejected")
        assert manifest["error"].to_list() == [outcomes[name].error]
        assert (
            store.con.sql("select count(*) from raw.dcgm_samples").fetchall()[0][0]
            == outcomes[good.name].rows
        )


def test_cli_exit_code_says_something_was_rejected(sim: Path, tmp_path: Path):
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    gz = tmp_path / "good.json.gz"
    gz.write_bytes(gzip.compress(_query_range([(GPU, [[1_800_000_000, "7"]])]).encode()))
    cli = [sys.executable, "-m", "gpu_ledger.cli", "ingest", "--home", str(tmp_path / "home"), "--quiet"]
    result = subprocess.run([*cli, str(bad), str(gz)], capture_output=True, text=True)
    assert result.returncode == 1
    assert f"rejected: {bad}: format not recognised" in result.stderr
    assert "2 files: 1 loaded, 1 rejected; 1 rows landed" in result.stdout
    with duckdb.connect(str(tmp_path / "home" / "landed.duckdb"), read_only=True) as con:
        assert con.sql("select value from raw.dcgm_samples").fetchall() == [(7.0,)]
    shutil.rmtree(tmp_path / "home")
    assert subprocess.run([*cli, str(gz)], capture_output=True).returncode == 0
