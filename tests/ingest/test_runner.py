"""The ingest promises of interface §3 on telemetry files: idempotent, restatement-aware, atomic, clear."""

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
import unicodedata
from pathlib import Path

import duckdb
import polars as pl
import pytest

from gpu_ledger.ingest import registry
from gpu_ledger.ingest.base import Format, LoadContext
from gpu_ledger.ingest.runner import ingest
from gpu_ledger.ingest.store import RawStore
from tests.conftest import mig_gpu_uuids

UTIL = "telemetry/prometheus/hpc-fra/DCGM_FI_DEV_GPU_UTIL"


def _totals(store: RawStore) -> tuple[int, float]:
    # rounded: a double sum over several Parquet files read in parallel varies in its last digits
    return store.con.sql("select count(*), round(sum(value), 6) from raw.dcgm_samples").fetchall()[0]


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
    """Busy GPU-hours from the landed samples equal the ground truth for the on-prem GPUs not split into
    MIG slices."""
    with RawStore(tmp_path / "landed.duckdb") as store:
        ingest([sim / UTIL], store, progress=False)
        busy = store.con.sql("select sum(value) / 100 * 300 / 3600 from raw.dcgm_samples").fetchall()[0][0]
        labelled = store.con.sql("select count(*) from raw.dcgm_series where hpc_job is not null").fetchall()[
            0
        ][0]
    truth = pl.read_csv(
        sim / "ground_truth" / "gpu_hours.csv", schema_overrides={"account_id": pl.String}
    ).filter(pl.col("instance_id").str.starts_with("DC1-") & ~pl.col("gpu_uuid").is_in(mig_gpu_uuids(sim)))
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
    from gpu_ledger.ingest import registry
    from gpu_ledger.ingest.base import Format
    from gpu_ledger.ingest.formats.telemetry import prometheus_range
    from gpu_ledger.ingest.runner import ingest
    from gpu_ledger.ingest.store import RawStore

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
            "plus_inf.json",
            _query_range([(GPU, [[1_800_000_000, "+Inf"]])]),
            "column 'DCGM_FI_DEV_GPU_UTIL': series 1 (DCGM_FI_DEV_GPU_UTIL, GPU GPU-1 on node-a) "
            "has value +Inf at 2027-01-15T08:00:00Z (expected a finite reading",
        ),
        ("minus_inf.json", _query_range([(GPU, [[1_800_000_000, "-Inf"]])]), "has value -Inf at 2027-01-15"),
        (
            "ms_as_seconds.json",
            _query_range([(GPU, [[1_800_000_000_000, "1"]])]),
            "column 'timestamp': series 1 (DCGM_FI_DEV_GPU_UTIL, GPU GPU-1 on node-a) "
            "has a sample at 59009-09-24T08:00:00Z",
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
    assert "2 files: 1 loaded, 1 rejected; 1 row landed" in result.stdout
    with duckdb.connect(str(tmp_path / "home" / "landed.duckdb"), read_only=True) as con:
        assert con.sql("select value from raw.dcgm_samples").fetchall() == [(7.0,)]
    shutil.rmtree(tmp_path / "home")
    assert subprocess.run([*cli, str(gz)], capture_output=True).returncode == 0


def test_a_folder_without_files_is_refused_and_no_bar_is_drawn_off_a_terminal(tmp_path: Path):
    """Nothing to ingest is one line and status 2, not `0 files: ;` and 0; a progress bar is drawn
    only on a terminal (here standard error is a pipe, and --quiet is not given)."""
    empty = tmp_path / "drop"
    (empty / "sub").mkdir(parents=True)
    (empty / ".hidden.json").write_text("{}")
    cli = [sys.executable, "-m", "gpu_ledger.cli", "ingest", "--home", str(tmp_path / "home")]
    nothing = subprocess.run([*cli, str(empty)], capture_output=True, text=True)
    assert (nothing.returncode, nothing.stdout) == (2, "")
    assert (
        nothing.stderr
        == f"gpu-ledger ingest: no files in {empty} (hidden files are skipped): nothing was ingested\n"
    )
    (empty / "sub" / "good.json").write_text(_query_range([(GPU, [[1_800_000_000, "7"]])]))
    one = subprocess.run([*cli, str(empty)], capture_output=True, text=True)
    assert (one.returncode, one.stderr) == (0, "")
    assert one.stdout.startswith("1 file: 1 loaded; 1 row landed in ")


def test_a_blank_sentinel_is_missing_but_infinity_is_not_a_blank(tmp_path: Path):
    """DCGM marks "no value" with finite sentinels >= 2^62: dropped (+Inf, also above, is rejected)."""
    blank = tmp_path / "blank.json"
    blank.write_text(_query_range([(GPU, [[1_800_000_000, "9223372036854775794"], [1_800_000_030, "5"]])]))
    with RawStore(tmp_path / "landed.duckdb") as store:
        (outcome,) = ingest([blank], store, progress=False)
        assert (outcome.status, outcome.rows) == ("loaded", 1)
        assert _totals(store) == (1, 5.0)


def test_nan_is_no_reading_dropped_and_counted(tmp_path: Path):
    """Issue 31: Prometheus writes NaN legitimately (a rule's 0/0, the marker of a vanished series), and
    one NaN rejected the whole file. It is no reading: dropped, and counted in a note of the load."""
    answer = tmp_path / "util.json"
    answer.write_text(
        _query_range([(GPU, [[1_800_000_000, "NaN"], [1_800_000_030, "5"], [1_800_000_060, "NaN"]])])
    )
    scrape = tmp_path / "node-b-2026-10-01T000000Z.prom"
    scrape.write_text(
        'DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-7",Hostname="node-b"} NaN\n'
        'DCGM_FI_DEV_FB_USED{gpu="0",UUID="GPU-7",Hostname="node-b"} 1024\n'
    )
    with RawStore(tmp_path / "landed.duckdb") as store:
        outcomes = ingest([answer, scrape], store, progress=False)
        assert [(o.status, o.rows, o.notes) for o in outcomes] == [
            ("loaded", 1, [f"{answer}: 2 samples without a reading (NaN) dropped"]),
            ("loaded", 1, [f"{scrape}: 1 sample without a reading (NaN) dropped"]),
        ]
        assert store.con.sql("select value from raw.dcgm_samples order by 1").fetchall() == [
            (5.0,),
            (1024.0,),
        ]


# ------------------------------------------------------------------------------ idempotent by content
BUSINESS = {
    "business_value.csv": "month,project,value,currency,basis\n2026-10,ranking,1250.00,USD,uplift\n",
    "inference_requests.csv": (
        "date,project,model,model_version,environment,requests\n2026-10-01,ranking,ranker,v4,production,900\n"
    ),
    "model_deployments.csv": (
        "model,model_version,project,training_run_id,training_completed_at,deployed_at,environment\n"
        "ranker,v4,ranking,,,2026-10-02T00:00:00Z,production\n"
    ),
}


def _business(folder: Path) -> Path:
    folder.mkdir(parents=True)
    for name, text in BUSINESS.items():
        (folder / name).write_text(text)
    return folder


def _business_totals(store: RawStore) -> list[tuple]:
    tables = ("business_value", "inference_requests", "model_deployments")
    return [store.con.sql(f"select count(*) from raw.{t}").fetchall()[0] for t in tables]


def test_the_same_files_from_another_folder_land_once(tmp_path: Path):
    """Issue 17: the business CSVs ingested again from a copy doubled fct_project_roi."""
    first = _business(tmp_path / "export-1")
    copy = tmp_path / "elsewhere" / "export-1-copy"
    shutil.copytree(first, copy)
    with RawStore(tmp_path / "landed.duckdb") as store:
        assert {o.status for o in ingest([first], store, progress=False)} == {"loaded"}
        before, rows = _business_totals(store), store.manifest().height
        assert before == [(1,), (1,), (1,)]
        again = ingest([copy], store, progress=False)
        assert [(o.path, o.status) for o in again] == [(p, "unchanged") for p in sorted(copy.iterdir())]
        assert (_business_totals(store), store.manifest().height) == (before, rows)
        # moved rather than copied: the same
        shutil.rmtree(first)
        assert {o.status for o in ingest([copy], store, progress=False)} == {"unchanged"}
        assert store.manifest().height == rows


def test_files_loaded_ahead_settle_in_order_and_a_copy_in_the_same_batch_lands_once(
    sim: Path, tmp_path: Path
):
    """Telemetry files are parsed side by side ahead of their turn; the manifest still ends as a one by
    one ingest leaves it: outcomes in the order given, a copy met next to its original in the same
    batch (both loaded ahead at once, neither landed yet) unchanged, nothing left pending."""
    days = sorted((sim / UTIL).iterdir())
    batch = tmp_path / "batch"
    batch.mkdir()
    for day in days:
        shutil.copy(day, batch / day.name)
    copy = batch / days[0].name.replace(".json", "-copy.json")  # sorts just before its original
    shutil.copy(days[0], copy)
    with RawStore(tmp_path / "landed.duckdb") as store:
        outcomes = ingest([batch], store, progress=False)
        assert [o.path.name for o in outcomes] == sorted(p.name for p in batch.iterdir())
        assert outcomes[0].path == copy
        assert [o.status for o in outcomes] == ["loaded", "unchanged"] + ["loaded"] * (len(days) - 1)
        assert store.manifest().height == len(days)
        assert not any((store.files / ".pending").iterdir())
        together = _totals(store)
    with RawStore(tmp_path / "one-by-one.duckdb") as store:
        for day in days:
            ingest([day], store, progress=False)
        assert _totals(store) == together


def test_reingesting_an_unchanged_folder_adds_no_manifest_row(tmp_path: Path, versioned_format: str):
    """Issue 17: the second ingest of a folder with a replaced delivery added a "superseded" row."""
    folder = tmp_path / "bills"
    folder.mkdir()
    (folder / "a.csv").write_text("aws/111/2026-10,v1,100.0\n")
    (folder / "b.csv").write_text("aws/111/2026-10,v2,120.0\n")
    with RawStore(tmp_path / "landed.duckdb") as store:
        first = ingest([folder], store, format_name=versioned_format, progress=False)
        assert [o.status for o in first] == ["loaded", "loaded"]
        manifest = store.manifest()
        for _ in range(2):
            again = ingest([folder], store, format_name=versioned_format, progress=False)
            assert [o.status for o in again] == ["unchanged", "unchanged"]
            assert store.manifest().equals(manifest)
        assert store.con.sql("select sum(amount) from raw.test_bill").fetchall() == [(120.0,)]


def test_a_repeated_rejection_is_reported_but_recorded_once(tmp_path: Path):
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    with RawStore(tmp_path / "landed.duckdb") as store:
        for _ in range(3):
            (outcome,) = ingest([bad], store, progress=False)
            assert outcome.status == "rejected"
        assert store.manifest()["status"].to_list() == ["rejected"]
        bad.write_text("[]")  # other content, other rejection
        assert ingest([bad], store, progress=False)[0].status == "rejected"
        assert store.manifest()["status"].to_list() == ["rejected", "rejected"]


POD_LIST = json.dumps(
    {
        "apiVersion": "v1",
        "items": [
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": "trainer-0", "namespace": "ml", "uid": "uid-1"},
                "spec": {
                    "nodeName": "node-a",
                    "containers": [{"name": "main", "resources": {"limits": {"nvidia.com/gpu": "1"}}}],
                },
                "status": {"phase": "Running", "startTime": "2026-10-01T00:00:00Z"},
            }
        ],
        "kind": "List",
        "metadata": {"resourceVersion": ""},
    },
    indent=4,
)


def test_identical_snapshots_taken_at_different_times_are_two_observations(tmp_path: Path):
    """kubectl output carries no time: a pod running unchanged gives byte-identical snapshots, each an
    observation. The snapshot's time (file name stamp, else mtime) is part of its identity."""
    day = tmp_path / "day"
    day.mkdir()
    for stamp in ("20261001T000000Z", "20261001T060000Z"):
        (day / f"pods-{stamp}.json").write_text(POD_LIST)
    unstamped = [tmp_path / "plain" / name for name in ("a.json", "b.json")]
    unstamped[0].parent.mkdir()
    for i, path in enumerate(unstamped):
        path.write_text(POD_LIST)
        os.utime(path, (1_790_000_000 + i * 3600,) * 2)
    with RawStore(tmp_path / "landed.duckdb") as store:
        outcomes = ingest([day, *unstamped], store, progress=False)
        assert [o.status for o in outcomes] == ["loaded"] * 4
        observed = store.con.sql(
            "select observed_at, snapshot_time_source from raw.k8s_pods p "
            "join raw.ingest_manifest m on m.load_id = p._load_id order by 1"
        ).fetchall()
        assert [source for _, source in observed] == ["file_mtime", "file_mtime", "file_name", "file_name"]
        assert len({at for at, _ in observed}) == 4
        # the same snapshots found again elsewhere, names and mtimes kept (cp -p): the same observations
        copy = tmp_path / "backup"
        shutil.copytree(day, copy)
        shutil.copy2(unstamped[0], copy / "a.json")
        rows = store.manifest().height
        assert {o.status for o in ingest([copy], store, progress=False)} == {"unchanged"}
        assert store.manifest().height == rows


# ------------------------------------------------------------------------------ what is not a readable file
def test_what_cannot_be_read_is_rejected_alone(tmp_path: Path):
    """A dangling link, a named pipe and a socket in a folder: each a rejection, the rest lands."""
    import socket

    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "a.json").write_text(_query_range([(GPU, [[1_800_000_000, "7"]])]))
    (folder / "b_link.json").symlink_to(folder / "gone.json")
    os.mkfifo(folder / "c_pipe")
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(folder / "d.sock"))
    (folder / "e.json").write_text(_query_range([(GPU, [[1_800_000_030, "9"]])]))
    try:
        with RawStore(tmp_path / "landed.duckdb") as store:
            outcomes = {o.path.name: o for o in ingest([folder], store, progress=False)}
            manifest = store.manifest()
    finally:
        server.close()
    assert {n: o.status for n, o in outcomes.items()} == {
        "a.json": "loaded",
        "b_link.json": "rejected",
        "c_pipe": "rejected",
        "d.sock": "rejected",
        "e.json": "loaded",
    }
    assert outcomes["b_link.json"].error == (
        f"{folder / 'b_link.json'}: a symbolic link to {folder / 'gone.json'}, which does not exist "
        "(expected a file or folder this user may read)"
    )
    assert "a named pipe in a folder (name it on the command line" in outcomes["c_pipe"].error
    assert "a socket, not a file" in outcomes["d.sock"].error
    assert manifest.filter(pl.col("status") == "rejected")["sha256"].to_list() == ["unreadable"] * 3


def _unprivileged() -> list[str]:
    """A command prefix that runs as an unprivileged user: root reads a chmod 000 file, so a test run as
    root (in a container) would prove nothing without it."""
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: cannot make a file unreadable")
    return ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


@pytest.fixture
def shared_dir():
    """A folder the unprivileged child may enter and write (pytest's tmp_path is root's own)."""
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="gpu-ledger-perm-"))
    folder.chmod(0o777)
    yield folder
    for path in folder.rglob("*"):
        path.chmod(0o755)
    shutil.rmtree(folder)


CLI = [sys.executable, "-m", "gpu_ledger.cli", "ingest", "--quiet"]
REPO = Path(__file__).resolve().parents[2]


def test_an_unreadable_file_or_folder_is_rejected_and_the_batch_goes_on(shared_dir: Path):
    """Issue 17: a PermissionError stopped the batch; an unreadable folder was skipped with exit 0."""
    folder = shared_dir / "in"
    (folder / "locked").mkdir(parents=True)
    (folder / "locked" / "hidden.json").write_text(_query_range([(GPU, [[1_800_000_060, "1"]])]))
    (folder / "a.json").write_text(_query_range([(GPU, [[1_800_000_000, "7"]])]))
    (folder / "b.json").write_text(_query_range([(GPU, [[1_800_000_030, "8"]])]))
    (folder / "z.json").write_text(_query_range([(GPU, [[1_800_000_090, "9"]])]))
    (folder / "b.json").chmod(0o000)
    (folder / "locked").chmod(0o000)
    home = shared_dir / "home"
    result = subprocess.run(
        [*_unprivileged(), *CLI, "--home", str(home), str(folder)], capture_output=True, text=True, cwd=REPO
    )
    assert "Traceback" not in result.stderr
    assert result.returncode == 1, result.stderr
    assert result.stderr.splitlines() == [
        f"rejected: {folder / 'b.json'}: cannot be read: Permission denied "
        "(expected a file or folder this user may read)",
        f"rejected: {folder / 'locked'}: the folder cannot be read: Permission denied "
        "(expected a file or folder this user may read)",
    ]
    assert "4 files: 2 loaded, 2 rejected; 2 rows landed" in result.stdout
    with duckdb.connect(str(home / "landed.duckdb"), read_only=True) as con:
        assert con.sql("select value from raw.dcgm_samples order by ts").fetchall() == [(7.0,), (9.0,)]


def test_streams_are_read_once(tmp_path: Path):
    """Issue 17: `ingest <(cat file)` said "the file is empty": hashing had consumed the pipe."""
    body = _query_range([(GPU, [[1_800_000_000, "7"]])]).encode()
    home = tmp_path / "home"
    read, write = os.pipe()
    with subprocess.Popen(
        [*CLI, "--home", str(home), f"/dev/fd/{read}"], pass_fds=(read,), stdout=subprocess.PIPE, text=True
    ) as proc:
        os.close(read)
        with os.fdopen(write, "wb") as pipe:
            pipe.write(body)
        out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 0 and "1 file: 1 loaded; 1 row landed" in out
    # the same bytes on standard input are the same content: unchanged; other bytes land
    stdin = subprocess.run([*CLI, "--home", str(home), "-"], input=body, capture_output=True)
    assert stdin.returncode == 0 and b"1 unchanged" in stdin.stdout
    other = gzip.compress(_query_range([(GPU, [[1_800_000_030, "8"]])]).encode())
    stdin = subprocess.run([*CLI, "--home", str(home), "-"], input=other, capture_output=True)
    assert stdin.returncode == 0 and b"1 loaded" in stdin.stdout
    bad = subprocess.run([*CLI, "--home", str(home), "-"], input="{}", capture_output=True, text=True)
    assert bad.returncode == 1
    assert bad.stderr.startswith("rejected: -: format not recognised from its content: empty JSON ({})")
    with duckdb.connect(str(home / "landed.duckdb"), read_only=True) as con:
        assert con.sql("select value from raw.dcgm_samples order by ts").fetchall() == [(7.0,), (8.0,)]
        paths = con.sql("select path, status from raw.ingest_manifest order by loaded_at").fetchall()
    assert paths == [(f"/dev/fd/{read}", "loaded"), ("<stdin>", "loaded"), ("<stdin>", "rejected")]


def test_the_manifest_holds_each_name_as_the_file_system_spells_it(tmp_path: Path):
    """Issue 31: names with spaces and accents, in both Unicode forms (two files: NFC and NFD are other
    bytes), reached through a linked folder, are recorded as found; a name that is not UTF-8 stopped the
    batch (DuckDB takes no surrogates) and is now a rejection that names it with \\xNN."""
    folder = tmp_path / "drop"
    folder.mkdir()
    names = [unicodedata.normalize(form, "dcgm Zürich été.json") for form in ("NFC", "NFD")]
    for i, name in enumerate([*names, os.fsdecode("caf\xe9.json".encode("latin-1"))]):
        (folder / name).write_text(_query_range([(GPU, [[1_800_000_000 + 30 * i, "7"]])]))
    link = tmp_path / "link"
    link.symlink_to(folder)
    with RawStore(tmp_path / "landed.duckdb") as store:
        outcomes = ingest([link], store, progress=False)
        manifest = dict(store.con.sql("select path, status from raw.ingest_manifest").fetchall())
    assert manifest == {
        f"{link}/{names[0]}": "loaded",
        f"{link}/{names[1]}": "loaded",
        f"{link}/caf\\xe9.json": "rejected",
    }
    assert (
        outcomes[0].error
        == f"{link}/caf\\xe9.json: its name is not UTF-8: rename the file (expected a UTF-8 file name)"
    )
    # a process that reads file names as ASCII (C locale, no UTF-8 mode) records them alike, and says why
    # it cannot land them
    home = tmp_path / "home"
    ascii_env = {**os.environ, "LC_ALL": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0"}
    result = subprocess.run(
        [*CLI, "--home", str(home), str(folder)], capture_output=True, text=True, cwd=REPO, env=ascii_env
    )
    assert "Traceback" not in result.stderr
    assert (
        result.stderr.count("this process reads file names as ascii, not UTF-8: run it under a UTF-8 locale")
        == 2
    )
    with duckdb.connect(str(home / "landed.duckdb"), read_only=True) as con:
        paths = {p for (p,) in con.sql("select path from raw.ingest_manifest").fetchall()}
    assert paths == {f"{folder}/{names[0]}", f"{folder}/{names[1]}", f"{folder}/caf\\xe9.json"}
