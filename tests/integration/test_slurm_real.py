"""A real Slurm cluster runs a matrix of GPU jobs; what `sacct` prints is captured and ingested.

Why: the sacct loader is written from documentation and third-party samples; this test proves it
against the exact text Slurm 22.05 prints for every job outcome a FinOps user pays for (completed
with steps, multi-node, failed, cancelled by another uid, timed out, array tasks, requeued, still
running, not yet started, sharing a GPU through Slurm's sharding). It needs root and the Debian
packages of scripts/system-deps.sh, and skips cleanly without them. Most of its ~2 minutes is the
TIMEOUT job's one-minute limit.

Set GPU_LEDGER_SAVE_SACCT_CAPTURE=<dir> to keep the two captured files; one run's headered file is kept
as sacct_slurm-22.05_matrix.txt beside this module, and test_saved_real_capture_lands ingests it on any
machine (no Slurm, no root, not slow).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.integration.slurm_cluster import SlurmCluster, parse_parsable2, skip_reason

pytestmark = pytest.mark.minutes(2)

SKIP = skip_reason()
SAVED_CAPTURE = Path(__file__).with_name("sacct_slurm-22.05_matrix.txt")
"""One run's headered capture, kept so machines without Slurm still test the loader on real text."""


def real_cluster(test: Callable[..., None]) -> Callable[..., None]:
    """Mark a test that needs the live cluster: slow, and skipped with a reason where it cannot start."""
    return pytest.mark.slow(pytest.mark.skipif(SKIP is not None, reason=SKIP or "")(test))


FIELDS = [
    *("JobID", "JobIDRaw", "Cluster", "User", "Group", "Account", "WCKey", "Partition", "QOS", "State"),
    *("ExitCode", "Submit", "Eligible", "Start", "End", "Elapsed", "ElapsedRaw", "Timelimit", "NNodes"),
    *("NCPUS", "ReqMem", "ReqTRES", "AllocTRES", "NodeList", "Comment", "JobName"),
]
"""The sacct --format list; JobName last because it may contain `|`."""

PIPE_NAME = "train|bert"  # a job name with the separator in it
UTF8_NAME = "évaluation-ü"  # multibyte job name
COMMENT = '{"run": "r42", "team": "nlp"}'


@dataclass(frozen=True)
class Capture:
    """What one cluster run produced: both sacct files, the job ids by role, and timing facts."""

    headered: Path
    headerless: Path
    jobs: dict[str, int]
    gpus: dict[str, int]
    canceller_uid: int
    cluster_start: datetime
    captured_at: datetime
    cluster_seconds: float


def _run_matrix(cluster: SlurmCluster) -> tuple[dict[str, int], dict[str, int]]:
    """Submit every job of the matrix and drive each to the state it must be in at capture time."""
    jobs: dict[str, int] = {}
    # requested GPUs per allocation (per node x nodes); -t 1 first, it is the long pole
    gpus = {
        "timeout": 1,
        "running": 1,
        "completed": 2,
        "multinode": 4,
        "failed": 1,
        "cancelled": 1,
        "array": 1,
        "requeued": 1,
        "pending": 16,
        "begin": 2,
        "shard": 0,  # 2 of a GPU's 8 shards, no whole GPU
    }
    jobs["timeout"] = cluster.submit(
        "sleep 300", gpus=1, name="timeout-job", account="ml", wckey="proj-a", time_limit="1"
    )
    jobs["running"] = cluster.submit(
        "sleep 600", gpus=1, name="still-running", account="research", wckey="proj-b", comment="long run"
    )
    jobs["completed"] = cluster.submit(
        "srun -n1 hostname\nsrun -n1 sleep 1",
        gpus=2,
        name=PIPE_NAME,
        account="ml",
        wckey="proj-a",
        comment=COMMENT,
        extra=["--mem=8G"],
    )
    jobs["multinode"] = cluster.submit(
        "srun hostname",
        gpus=2,
        name="multi-node-ddp",
        account="research",
        wckey="proj-b",
        extra=["--nodes=2", "--ntasks-per-node=1"],
    )
    jobs["failed"] = cluster.submit("echo failing >&2\nexit 1", gpus=1, name="failing-job")  # default wckey
    jobs["cancelled"] = cluster.submit(
        "sleep 300", user="nobody", gpus=1, name=UTF8_NAME, account="research", wckey="proj-b"
    )
    jobs["array"] = cluster.submit("sleep 1", gpus=1, name="sweep", extra=["--array=1-3"])
    jobs["requeued"] = cluster.submit(
        'if [ "${SLURM_RESTART_COUNT:-0}" -gt 0 ]; then sleep 1; else sleep 300; fi',
        gpus=1,
        name="requeue-me",
        account="ml",
        wckey="proj-a",
    )
    jobs["shard"] = cluster.submit("sleep 1", shards=2, name="shares-a-gpu", account="ml", wckey="proj-a")
    # not eligible for an hour: sacct -S/-E selects jobs eligible before -E, so -E now must omit it
    jobs["begin"] = cluster.submit(
        "sleep 1", gpus=2, name="begins-later", account="ml", wckey="proj-a", extra=["--begin=now+1hour"]
    )

    cluster.wait_for(jobs["cancelled"], "RUNNING")
    cluster.run(["scancel", str(jobs["cancelled"])], user="nobody")  # the owner cancels: CANCELLED by 65534

    cluster.wait_for(jobs["requeued"], "RUNNING")
    cluster.run(["scontrol", "requeue", str(jobs["requeued"])])
    cluster.wait_for(jobs["requeued"], "PENDING", live=True)
    # a requeued job is held back 120 s (its BeginTime); start it now instead
    cluster.run(["scontrol", "update", f"jobid={jobs['requeued']}", "StartTime=now"])

    for role in ("completed", "multinode", "requeued", "shard"):
        cluster.wait_for(jobs[role], "COMPLETED")
    cluster.wait_for(jobs["array"], "COMPLETED", count=3)
    cluster.wait_for(jobs["failed"], "FAILED")
    cluster.wait_for(jobs["cancelled"], "CANCELLED")
    cluster.wait_for(jobs["running"], "RUNNING")
    cluster.wait_for(jobs["begin"], "PENDING")
    # the PENDING row sacct does print: eligible now, waiting for every GPU of both nodes while
    # "running" holds one; submitted last so that it blocks no other job of the matrix
    jobs["pending"] = cluster.submit(
        "sleep 1", gpus=8, name="waits-for-gpus", account="ml", wckey="proj-b", extra=["--nodes=2"]
    )
    cluster.wait_for(jobs["pending"], "PENDING")
    cluster.wait_for(jobs["timeout"], "TIMEOUT", timeout=180)
    return jobs, gpus


@pytest.fixture(scope="module")
def capture(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Capture]:
    """Run the matrix on a fresh cluster, capture sacct twice, tear down, and prove nothing is left."""
    out = tmp_path_factory.mktemp("sacct")
    began = time.monotonic()
    cluster = SlurmCluster()
    with cluster:
        jobs, gpus = _run_matrix(cluster)
        headered = out / "sacct_headered.txt"
        headerless = out / "sacct_noheader.txt"
        headered.write_text(cluster.sacct(FIELDS, header=True))
        headerless.write_text(cluster.sacct(FIELDS, header=False))
        captured_at = datetime.now(UTC)
        daemon_pids = list(cluster.daemon_pids.values())
        root = cluster.root
        canceller = cluster.user("nobody").uid
        cluster_start = cluster.started_at
    seconds = time.monotonic() - began

    # nothing this cluster started may still run: daemons by PID, then anything carrying its marker
    alive = [pid for pid in daemon_pids if Path(f"/proc/{pid}").exists()]
    assert not alive, f"daemons still running after teardown: {alive}"
    assert not cluster.marked_pids(), f"processes of the test cluster survived: {cluster.marked_pids()}"
    if shutil.which("ps"):  # procps is in every Debian image we use, but the /proc checks above suffice
        ps = subprocess.run(["ps", "-eo", "pid,args"], capture_output=True, text=True, check=False).stdout
        assert str(root) not in ps, f"a process still names the cluster dir {root}:\n{ps}"
    assert not root.exists(), "the cluster's temp dir was not removed"

    keep = os.environ.get("GPU_LEDGER_SAVE_SACCT_CAPTURE")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(headered, keep)
        shutil.copy(headerless, keep)
    yield Capture(headered, headerless, jobs, gpus, canceller, cluster_start, captured_at, seconds)


# ---------------------------------------------------------------------------------- raw sacct text


def _by_id(rows: list[dict[str, str]]) -> dict[str, list[dict[str, str]]]:
    grouped: dict[str, list[dict[str, str]]] = {}
    for row in rows:
        grouped.setdefault(row["JobID"], []).append(row)
    return grouped


@real_cluster
def test_sacct_prints_every_state_of_the_matrix(capture: Capture) -> None:
    """The capture itself holds what the loader must handle; this pins Slurm's real spelling."""
    text = capture.headered.read_text()
    assert text.splitlines()[0].split("|") == FIELDS
    rows = parse_parsable2(text)
    by_id = _by_id(rows)
    j = {role: str(job) for role, job in capture.jobs.items()}
    only = {key: rows_[0] for key, rows_ in by_id.items()}

    assert only[j["completed"]]["State"] == "COMPLETED"
    assert {f"{j['completed']}.batch", f"{j['completed']}.0", f"{j['completed']}.1"} <= set(by_id)
    assert only[f"{j['completed']}.0"]["User"] == ""  # step rows carry no user (documented quirk)
    assert only[j["completed"]]["JobName"] == PIPE_NAME
    assert only[j["completed"]]["Comment"] == COMMENT
    assert only[j["multinode"]]["NodeList"] == "gpu-[01-02]"
    assert only[j["multinode"]]["NNodes"] == "2"
    assert "gres/gpu=4" in only[j["multinode"]]["AllocTRES"].split(",")
    assert only[j["failed"]]["State"] == "FAILED"
    assert only[j["failed"]]["ExitCode"] == "1:0"
    assert only[j["failed"]]["WCKey"] == "*proj-a"  # default wckey applied
    assert only[j["cancelled"]]["State"] == f"CANCELLED by {capture.canceller_uid}"
    assert only[j["cancelled"]]["User"] == "nobody"
    assert only[j["cancelled"]]["JobName"] == UTF8_NAME
    assert only[j["timeout"]]["State"] == "TIMEOUT"
    assert only[j["timeout"]]["Timelimit"] == "00:01:00"
    assert {f"{j['array']}_{t}" for t in (1, 2, 3)} <= set(by_id)
    assert j["array"] in {only[f"{j['array']}_{t}"]["JobIDRaw"] for t in (1, 2, 3)}
    assert [r["State"] for r in by_id[j["requeued"]]] == ["REQUEUED", "COMPLETED"]
    assert only[j["running"]]["State"] == "RUNNING"
    assert only[j["running"]]["End"] == "Unknown"
    assert only[j["pending"]]["State"] == "PENDING"
    assert only[j["pending"]]["Start"] == "Unknown"
    assert only[j["pending"]]["NodeList"] == "None assigned"
    assert "gres/gpu=16" in only[j["pending"]]["ReqTRES"].split(",")
    assert "gres/shard=2" in only[j["shard"]]["AllocTRES"].split(",")
    assert not any(tres.startswith("gres/gpu") for tres in only[j["shard"]]["AllocTRES"].split(","))
    assert j["begin"] not in by_id  # eligible only after -E now: sacct leaves it out
    assert {r["Cluster"] for r in rows} == {"ledgertest"}

    lines = capture.headerless.read_text().splitlines()
    assert len(lines) == len(text.splitlines()) - 1
    assert lines[0].split("|")[0] == text.splitlines()[1].split("|")[0]  # same order, no header


@real_cluster
def test_cluster_run_is_quick(capture: Capture) -> None:
    """Guard the suite's wall time: the whole cluster run should stay near the TIMEOUT job's minute."""
    assert capture.cluster_seconds < 240, f"the Slurm cluster run took {capture.cluster_seconds:.0f} s"


# ---------------------------------------------------------------------------------- ingest


def _ingest(home: Path, path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    """Run the real CLI as a user would, in a child process (so its DuckDB is closed when we read it)."""
    result = subprocess.run(
        [sys.executable, "-m", "gpu_ledger.cli", "ingest", "--home", str(home), "--quiet", *extra, str(path)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, f"ingest failed ({result.returncode}):\n{result.stdout}\n{result.stderr}"
    return result


def _landed(home: Path) -> list[dict[str, Any]]:
    import duckdb

    con = duckdb.connect(str(home / "landed.duckdb"), read_only=True)
    try:
        rel = con.sql("select * from raw.slurm_sacct order by _source_row")
        return [dict(zip(rel.columns, row, strict=True)) for row in rel.fetchall()]
    finally:
        con.close()


@pytest.fixture(scope="module")
def landed(capture: Capture, tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    """raw.slurm_sacct after `gpu-ledger ingest` of the headered capture."""
    home = tmp_path_factory.mktemp("home-headered")
    _ingest(home, capture.headered)
    return _landed(home)


@pytest.fixture(scope="module")
def landed_headerless(capture: Capture, tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    """raw.slurm_sacct after ingesting the `--noheader` capture with `--sacct-fields`."""
    home = tmp_path_factory.mktemp("home-headerless")
    _ingest(home, capture.headerless, "--sacct-fields", ",".join(FIELDS))
    return _landed(home)


def _allocations(rows: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    grouped: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        if row["step_id"] is None:
            grouped.setdefault(row["job_id"], []).append(row)
    return grouped


@real_cluster
def test_landed_allocations_carry_the_requested_gpus(capture: Capture, landed: list[dict[str, Any]]) -> None:
    """GPU-hours are billed from alloc_gpus: every allocation that ran must show what it asked for."""
    allocs = _allocations(landed)
    for role, job in capture.jobs.items():
        if role == "begin":  # not in the capture (see test_sacct_prints_every_state_of_the_matrix)
            continue
        keys = [f"{job}_{t}" for t in (1, 2, 3)] if role == "array" else [str(job)]
        for key in keys:
            assert key in allocs, f"{role} job {key} did not land as an allocation row"
            for row in allocs[key]:
                if role == "pending":  # nothing allocated yet; the request is in ReqTRES
                    assert not row["alloc_gpus"], row
                    if "req_gpus" in row:
                        assert row["req_gpus"] == capture.gpus[role]
                    continue
                assert row["alloc_gpus"] == capture.gpus[role], (role, row["alloc_tres"])
                if role == "shard":  # dbt reads its shards from AllocTRES (stg_slurm__sacct.shard_count)
                    assert "gres/shard=2" in row["alloc_tres"].split(","), row["alloc_tres"]
                    continue
                assert row["gpu_type"] == "a100"
                assert row["cluster"] == "ledgertest"


@real_cluster
def test_landed_rows_keep_who_where_and_how_it_ended(capture: Capture, landed: list[dict[str, Any]]) -> None:
    """The fields attribution and chargeback use: nodes, cancel uid, requeues, open and unset times."""
    allocs = _allocations(landed)
    j = {role: str(job) for role, job in capture.jobs.items()}

    (multi,) = allocs[j["multinode"]]
    assert list(multi["nodes"]) == ["gpu-01", "gpu-02"]
    assert multi["nnodes"] == 2
    assert multi["node_list"] == "gpu-[01-02]"

    (cancelled,) = allocs[j["cancelled"]]
    assert cancelled["state"] == "CANCELLED"
    assert cancelled["cancelled_by_uid"] == capture.canceller_uid
    assert cancelled["state_raw"] == f"CANCELLED by {capture.canceller_uid}"
    assert cancelled["user_name"] == "nobody"
    assert cancelled["account"] == "research"
    assert cancelled["job_name"] == UTF8_NAME

    requeued = allocs[j["requeued"]]
    assert [r["state"] for r in requeued] == ["REQUEUED", "COMPLETED"]
    assert all(r["start_at"] is not None and r["end_at"] is not None for r in requeued)
    assert requeued[0]["end_at"] <= requeued[1]["start_at"]

    (running,) = allocs[j["running"]]
    assert running["state"] == "RUNNING"
    assert running["start_at"] is not None
    assert running["end_at"] is None

    (pending,) = allocs[j["pending"]]
    assert pending["state"] == "PENDING"
    assert pending["start_at"] is None
    assert pending["end_at"] is None
    assert list(pending["nodes"]) == []
    assert pending["eligible_at"] is not None
    assert pending["alloc_tres"] is None

    (timeout,) = allocs[j["timeout"]]
    assert timeout["state"] == "TIMEOUT"
    assert timeout["timelimit_min"] == 1
    assert timeout["elapsed_s"] >= 60

    (failed,) = allocs[j["failed"]]
    assert failed["state"] == "FAILED"
    assert failed["exit_code"] == "1:0"
    assert failed["wckey"] == "*proj-a"

    (completed,) = allocs[j["completed"]]
    assert completed["job_name"] == PIPE_NAME
    assert completed["comment"] == COMMENT
    assert completed["wckey"] == "proj-a"
    assert completed["account"] == "ml"
    assert completed["user_name"] == "root"
    assert completed["partition"] == "gpu"
    assert completed["qos"] == "normal"

    steps = [r for r in landed if r["base_job_id"] == j["completed"] and r["step_id"] is not None]
    assert sorted(r["step_id"] for r in steps) == ["0", "1", "batch"]
    assert all(r["job_id"] == f"{j['completed']}.{r['step_id']}" for r in steps)

    tasks = [r for r in landed if r["base_job_id"] == j["array"] and r["step_id"] is None]
    assert sorted(r["array_task_id"] for r in tasks) == ["1", "2", "3"]
    assert j["array"] in {r["job_id_raw"] for r in tasks}  # the last task keeps the parent's raw id

    # times are UTC (sacct ran with TZ=UTC and ingest's default --timezone is UTC): they fall in the run
    lower = capture.cluster_start - timedelta(minutes=1)
    upper = capture.captured_at + timedelta(minutes=1)
    for row in landed:
        for col in ("submit_at", "start_at", "end_at"):
            value = row[col]
            if value is not None:
                assert lower <= value <= upper, (col, row["job_id"], value)
        if row["start_at"] is not None and row["end_at"] is not None:
            assert row["start_at"] <= row["end_at"]
    assert {r["het_offset"] for r in landed} == {None}
    assert all(r["_source_file"].endswith("sacct_headered.txt") for r in landed)


@real_cluster
def test_headerless_lands_the_same_rows(
    landed: list[dict[str, Any]], landed_headerless: list[dict[str, Any]]
) -> None:
    """`--noheader` plus `--sacct-fields` must give the same table as the headered file.

    The two captures are seconds apart, so a RUNNING row's elapsed time may differ; nothing else may
    (bookkeeping columns, named with a leading `_`, describe the load, not the job).
    """

    def comparable(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        out = []
        for row in rows:
            kept = {k: v for k, v in row.items() if not k.startswith("_") and k != "elapsed_s"}
            if row["state"] != "RUNNING":
                kept["elapsed_s"] = row["elapsed_s"]
            out.append(kept)
        return out

    assert len(landed_headerless) == len(landed)
    assert comparable(landed_headerless) == comparable(landed)
    assert [r["_source_row"] for r in landed_headerless] == [r["_source_row"] - 1 for r in landed]


def test_saved_real_capture_lands(tmp_path: Path) -> None:
    """The kept capture of a real run lands with the same facts, no cluster needed (fast, runs anywhere)."""
    _ingest(tmp_path, SAVED_CAPTURE)
    rows = _landed(tmp_path)
    assert len(rows) == len(SAVED_CAPTURE.read_text().splitlines()) - 1
    allocs = [r for r in rows if r["step_id"] is None]
    states = {r["state"] for r in allocs}
    assert states == {"TIMEOUT", "RUNNING", "COMPLETED", "FAILED", "CANCELLED", "REQUEUED", "PENDING"}
    by_name = {r["job_name"]: r for r in allocs}
    assert by_name[PIPE_NAME]["alloc_gpus"] == 2
    assert by_name[PIPE_NAME]["comment"] == COMMENT
    assert list(by_name["multi-node-ddp"]["nodes"]) == ["gpu-01", "gpu-02"]
    assert by_name["multi-node-ddp"]["alloc_gpus"] == 4
    assert by_name[UTF8_NAME]["cancelled_by_uid"] == 65534
    assert by_name["still-running"]["end_at"] is None
    waiting = by_name["waits-for-gpus"]
    assert waiting["start_at"] is None and list(waiting["nodes"]) == [] and not waiting["alloc_gpus"]
    assert [r["state"] for r in allocs if r["job_name"] == "requeue-me"] == ["REQUEUED", "COMPLETED"]
    assert sorted(r["array_task_id"] for r in allocs if r["job_name"] == "sweep") == ["1", "2", "3"]
    sharing = by_name["shares-a-gpu"]
    assert not sharing["alloc_gpus"] and "gres/shard=2" in sharing["alloc_tres"].split(",")
