"""The scheduler, events and business writers render hand-built fleets exactly as the real tools print.

Each format check is anchored on the real upstream samples (`../shared/samples`, via the `samples`
fixture): the same regular expression or key set is first asserted on the real file, then on ours,
so a test cannot pass by checking our output against itself.
"""

from __future__ import annotations

import csv
import io
import json
import re
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from gpu_ledger.simulator import model
from gpu_ledger.simulator.writers.business import (
    BUSINESS_VALUE_COLUMNS,
    DEPLOYMENTS_COLUMNS,
    INFERENCE_REQUESTS_COLUMNS,
    TRAINING_RUNS_COLUMNS,
    write_business,
)
from gpu_ledger.simulator.writers.events import write_eventbridge
from gpu_ledger.simulator.writers.kubernetes import write_kubernetes
from gpu_ledger.simulator.writers.slurm import SACCT_FIELDS, compress_hostlist, expand_hostlist, write_sacct
from tests.samples import SONAR_SACCT_FIELDS

START = datetime(2024, 5, 1, tzinfo=UTC)
DAYS = 2


def at(hours: float) -> datetime:
    """An instant `hours` after the window start."""
    return START + timedelta(hours=hours)


def labels(**kv: str) -> list[dict[str, str]]:
    return [{"key": k.replace("_", "-"), "value": v} for k, v in kv.items()]


def job(**over: object) -> dict:
    """A finished single-node Slurm job; tests override what they are about."""
    row: dict = {
        "job_key": None,
        "scheduler": "slurm",
        "cluster": "hpc1",
        "job_id": "1000",
        "job_id_raw": None,
        "name": "train-llm",
        "namespace": None,
        "user": "alice",
        "slurm_account": "nlp",
        "partition": "gpu",
        "labels": labels(team_id="nlp", project_id="search"),
        "team": "nlp",
        "project": "search",
        "cost_centre": "cc-1",
        "workload_class": "training",
        "environment": "production",
        "capacity_type": "owned",
        "run_id": None,
        "attempt": 1,
        "submitted_at": at(1),
        "started_at": at(1.5),
        "ended_at": at(4),
        "state": "COMPLETED",
        "end_reason": "completed",
        "exit_code": "0:0",
        "gpus_allocated": 4,
        "mig_profile": None,
        "gpu_model": "H100-SXM5-80GB",
        "hostnames": ["gpu-01"],
        "time_limit_min": 1440,
        "cpus": 32,
        "mem_mb": 131072,
    }
    row.update(over)
    row["job_id_raw"] = row["job_id_raw"] or row["job_id"]
    row["job_key"] = row["job_key"] or f"{row['scheduler']}:{row['cluster']}:{row['job_id']}:{row['attempt']}"
    return row


def pod(**over: object) -> dict:
    """A finished Kubernetes pod on node `ip-10-1-2-3.ec2.internal`."""
    base = {
        "scheduler": "kubernetes",
        "cluster": "eks1",
        "namespace": "nlp",
        "slurm_account": None,
        "partition": "gpu-spot",
        "capacity_type": "spot",
        "exit_code": "0",
        "state": "Succeeded",
        "hostnames": ["ip-10-1-2-3.ec2.internal"],
        "gpus_allocated": 1,
        "cpus": 8,
        "mem_mb": 65536,
    }
    base.update(over)
    base.setdefault("job_id", "7f0c6a52-1111-4c1e-9a2b-000000000001")
    base.setdefault("name", "train-" + str(base["job_id"])[-5:])
    return job(**base)


def instance(**over: object) -> dict:
    """An AWS p5 spot node of Kubernetes cluster `eks1`."""
    row: dict = {
        "instance_id": "i-0123456789abcdef0",
        "resource_id": "i-0123456789abcdef0",
        "provider_id": "aws:///us-east-1a/i-0123456789abcdef0",
        "hostname": "ip-10-1-2-3.ec2.internal",
        "provider": "aws",
        "account_id": "111122223333",
        "account_name": "ml-prod",
        "region": "us-east-1",
        "availability_zone": "us-east-1a",
        "cluster": "eks1",
        "scheduler": "kubernetes",
        "pool": "gpu-spot",
        "instance_type": "p5.48xlarge",
        "gpu_model": "H100-SXM5-80GB",
        "gpu_count": 8,
        "gpu_memory_gb": 80,
        "capacity_type": "spot",
        "launched_at": at(0.5),
        "terminated_at": at(30),
        "termination_reason": "spot_interrupted",
        "tag_team": "nlp",
        "tag_project": None,
        "tag_environment": None,
        "is_monitored": True,
        "mig_enabled": False,
    }
    row.update(over)
    return row


def gpus_of(inst: dict, mig: bool = False) -> list[dict]:
    return [
        {
            "gpu_uuid": f"GPU-{inst['instance_id'][-8:]}-0000-0000-0000-{i:012d}",
            "instance_id": inst["instance_id"],
            "hostname": inst["hostname"],
            "gpu_index": i,
            "pci_bus_id": f"00000000:{16 + i:02X}:00.0",
            "device": f"nvidia{i}",
            "dcgm_model_name": "NVIDIA H100 80GB HBM3",
            "mig_enabled": mig,
        }
        for i in range(inst["gpu_count"])
    ]


def make_fleet(tmp_path: Path, **frames: list[dict]) -> model.Fleet:
    """A minimal fleet: the given rows for the named frames, every other frame empty."""
    schemas = {
        "instances": model.INSTANCES_SCHEMA,
        "gpus": model.GPUS_SCHEMA,
        "mig_slices": model.MIG_SLICES_SCHEMA,
        "jobs": model.JOBS_SCHEMA,
        "allocations": model.ALLOCATIONS_SCHEMA,
        "instance_hours": model.INSTANCE_HOURS_SCHEMA,
        "commitments": model.COMMITMENTS_SCHEMA,
        "commitment_hours": model.COMMITMENT_HOURS_SCHEMA,
        "onprem_assets": model.ONPREM_ASSETS_SCHEMA,
        "charges": model.CHARGES_SCHEMA,
        "spot_interruptions": model.SPOT_INTERRUPTIONS_SCHEMA,
        "inference_requests": model.INFERENCE_REQUESTS_SCHEMA,
        "deployments": model.DEPLOYMENTS_SCHEMA,
        "business_value": model.BUSINESS_VALUE_SCHEMA,
        "training_work": model.TRAINING_WORK_SCHEMA,
    }
    config = model.SimulationConfig(out=tmp_path, gpus=16, days=DAYS, interval_s=30, seed=7, start=START)
    built = {name: pl.DataFrame(frames.get(name, []), schema=schema) for name, schema in schemas.items()}
    return model.Fleet(config=config, **built)


# --------------------------------------------------------------------------------------------- Slurm

SACCT_TIME = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d|Unknown|None)$")
JOB_ID = re.compile(r"^\d+(_(\d+|\[[\d,\-]+\]))?(\.(batch|extern|interactive|\d+))?$")
GPU_ALLOC_TRES = re.compile(
    r"^(billing=\d+,)?cpu=\d+(,gres/gpu:[\w.]+=\d+)?,gres/gpu=\d+,mem=\d+[MG],node=\d+$"
)


def read_parsable2(path: Path, fields: list[str] | None = None) -> list[dict[str, str]]:
    """Parse sacct --parsable2 the way ingest must: JobName last, so split at most len-1 times."""
    lines = path.read_text(encoding="utf-8").splitlines()
    if fields is None:
        fields, lines = lines[0].split("|"), lines[1:]
    rows = []
    for line in lines:
        values = line.split("|", len(fields) - 1)
        assert len(values) == len(fields), line
        rows.append(dict(zip(fields, values, strict=True)))
    return rows


XDMOD_FIELDS = [
    "jobid",
    "jobidraw",
    "cluster",
    "partition",
    "qos",
    "account",
    "group",
    "gid",
    "user",
    "uid",
    "submit",
    "eligible",
    "start",
    "end",
    "elapsed",
    "exitcode",
    "state",
    "nnodes",
    "ncpus",
    "reqcpus",
    "reqmem",
    "reqtres",
    "alloctres",
    "timelimit",
    "nodelist",
    "jobname",
]


def sacct_file(tmp_path: Path, jobs: list[dict], cluster: str = "hpc1") -> Path:
    folder = write_sacct(make_fleet(tmp_path, jobs=jobs), tmp_path)
    return folder / f"sacct_{cluster}.txt"


def test_sacct_header_names_real_sacct_fields_with_jobname_last(samples: Path, tmp_path: Path) -> None:
    real_header = (samples / "slurm" / "slurm2sql_test-data1.csv").read_text().splitlines()[0].split("|")
    known = {f.lower() for f in [*real_header, *SONAR_SACCT_FIELDS, *XDMOD_FIELDS]} | {"wckey"}
    path = sacct_file(tmp_path, [job()])
    header = path.read_text().splitlines()[0].split("|")
    assert header == list(SACCT_FIELDS)
    assert header[0] == real_header[0] == "JobID"
    assert header[-1] == "JobName"
    assert [f for f in header if f.lower() not in known] == []
    for required in ("JobIDRaw", "WCKey", "QOS", "Eligible", "ElapsedRaw", "ReqTRES", "AllocTRES", "Comment"):
        assert required in header


def test_sacct_rows_split_and_times_look_like_real_sacct(samples: Path, tmp_path: Path) -> None:
    real = read_parsable2(samples / "slurm" / "slurm2sql_test-data1.csv")
    sonar = read_parsable2(samples / "slurm" / "sonar_fox_sacct_output_2025.txt", SONAR_SACCT_FIELDS)
    for row in real + sonar:
        for f in ("Submit", "Start", "End"):
            assert SACCT_TIME.match(row[f]), (f, row[f])
    jobs = [
        job(job_id="1001", name="a|b name"),
        job(
            job_id="1002", started_at=None, ended_at=None, state="PENDING", end_reason="pending", hostnames=[]
        ),
        job(job_id="1003", ended_at=None, state="RUNNING", end_reason="running"),
    ]
    path = sacct_file(tmp_path, jobs)
    text = path.read_text()
    assert not any(line.endswith("|") for line in text.splitlines())
    ours = read_parsable2(path)
    assert ours[0]["JobName"] == "a|b name"
    for row in ours:
        for f in ("Submit", "Eligible", "Start", "End"):
            assert SACCT_TIME.match(row[f]), (f, row[f])
    assert {r["JobID"]: r["Start"] for r in ours}["1001"] == "2024-05-01T01:30:00"


def test_sacct_job_and_step_ids_have_the_real_forms(samples: Path, tmp_path: Path) -> None:
    real = read_parsable2(samples / "slurm" / "slurm2sql_test-data1.csv")
    sonar = read_parsable2(samples / "slurm" / "sonar_fox_sacct_output_2024.txt", SONAR_SACCT_FIELDS)
    for row in real + sonar:
        assert JOB_ID.match(row["JobID"]), row["JobID"]
    real_steps = [r for r in real + sonar if "." in r["JobID"]]
    assert real_steps and all(r["User"] == "" and r["Partition"] == "" for r in real_steps)

    path = sacct_file(tmp_path, [job(job_id="2000", hostnames=["gpu-01", "gpu-02"], gpus_allocated=16)])
    ours = read_parsable2(path)
    assert [r["JobID"] for r in ours] == ["2000", "2000.batch", "2000.extern", "2000.0"]
    assert [r["JobIDRaw"] for r in ours] == ["2000", "2000.batch", "2000.extern", "2000.0"]
    assert all(JOB_ID.match(r["JobID"]) for r in ours)
    job_row, batch, extern, srun = ours
    assert job_row["User"] == "alice" and job_row["Partition"] == "gpu"
    assert all(s["User"] == "" and s["Partition"] == "" for s in (batch, extern, srun))
    assert batch["NodeList"] == "gpu-01" and batch["NNodes"] == "1"
    assert extern["NodeList"] == srun["NodeList"] == job_row["NodeList"] == "gpu-[01-02]"
    assert "billing=" in extern["AllocTRES"] and "billing=" not in batch["AllocTRES"]


def test_sacct_array_tasks_and_requeues(tmp_path: Path) -> None:
    jobs = [
        job(job_id="3000_2", job_id_raw="3000", submitted_at=at(1)),
        job(job_id="3000_1", job_id_raw="3001", submitted_at=at(1)),
        job(job_id="3100", attempt=2, state="COMPLETED", started_at=at(6), ended_at=at(8)),
        job(job_id="3100", attempt=1, state="NODE_FAIL", started_at=at(2), ended_at=at(5)),
    ]
    rows = read_parsable2(sacct_file(tmp_path, jobs))
    ids = [(r["JobID"], r["JobIDRaw"], r["State"]) for r in rows if "." not in r["JobID"]]
    assert ids == [
        ("3000_1", "3001", "COMPLETED"),
        ("3000_2", "3000", "COMPLETED"),
        ("3100", "3100", "REQUEUED"),
        ("3100", "3100", "COMPLETED"),
    ]
    assert ("3000_1.batch", "3001.batch") in {(r["JobID"], r["JobIDRaw"]) for r in rows}


def test_sacct_cancelled_pending_and_running_states(samples: Path, tmp_path: Path) -> None:
    sonar = read_parsable2(samples / "slurm" / "sonar_fox_sacct_output_2025.txt", SONAR_SACCT_FIELDS)
    real_pending = [r for r in sonar if r["State"] == "PENDING"]
    assert real_pending and all(
        r["NodeList"] == "None assigned" and r["Start"] == "Unknown" for r in real_pending
    )
    assert any(r["State"] == "RUNNING" and r["End"] == "Unknown" for r in sonar)

    jobs = [
        job(job_id="4001", state="CANCELLED by 1001", end_reason="cancelled", ended_at=at(2)),
        job(
            job_id="4002", started_at=None, ended_at=None, state="PENDING", end_reason="pending", hostnames=[]
        ),
        job(job_id="4003", started_at=at(2), ended_at=None, state="RUNNING", end_reason="running"),
        job(job_id="4004", started_at=at(1), ended_at=at(27), state="TIMEOUT", end_reason="timeout"),
    ]
    rows = {r["JobID"]: r for r in read_parsable2(sacct_file(tmp_path, jobs))}
    assert rows["4001"]["State"] == "CANCELLED by 1001" and rows["4001.batch"]["State"] == "CANCELLED"
    assert rows["4001.batch"]["ExitCode"] == "0:15"
    pending = rows["4002"]
    assert (pending["State"], pending["Start"], pending["End"]) == ("PENDING", "Unknown", "Unknown")
    assert pending["NodeList"] == "None assigned" and pending["AllocTRES"] == ""
    assert "4002.batch" not in rows
    running = rows["4003"]
    assert running["End"] == "Unknown" and running["ElapsedRaw"] == str((DAYS * 24 - 2) * 3600)
    assert running["Elapsed"] == "1-22:00:00"
    assert rows["4003.batch"]["State"] == "RUNNING" and rows["4003.batch"]["End"] == "Unknown"
    assert rows["4004"]["Elapsed"] == "1-02:00:00" and rows["4004"]["ElapsedRaw"] == str(26 * 3600)


def test_hostlist_compression_round_trips(samples: Path) -> None:
    assert compress_hostlist(["gpu-07", "gpu-02", "gpu-01", "gpu-04", "gpu-03"]) == "gpu-[01-04,07]"
    assert compress_hostlist(["gpu-09", "gpu-10"]) == "gpu-[09-10]"
    assert compress_hostlist(["gpu-3"]) == "gpu-3"
    # a real multi-prefix NodeList from xdmod expands and compresses back to the same set
    line = (samples / "slurm" / "xdmod_accounting-logs-with-job-arrays.log").read_text().splitlines()[0]
    real = dict(zip(XDMOD_FIELDS, line.split("|", len(XDMOD_FIELDS) - 1), strict=True))["nodelist"]
    hosts = expand_hostlist(real)
    assert "d09n04s01" in hosts and "d13n16" in hosts and len(hosts) == len(set(hosts))
    assert sorted(expand_hostlist(compress_hostlist(hosts))) == sorted(hosts)
    rng = np.random.default_rng(0)
    for _ in range(200):
        names = {
            f"{rng.choice(['gpu-', 'a100n', 'rack1-node'])}{str(int(n)).zfill(int(rng.integers(1, 4)))}"
            for n in rng.integers(0, 120, size=int(rng.integers(1, 30)))
        }
        assert sorted(expand_hostlist(compress_hostlist(names))) == sorted(names)


def gpu_count_from_tres(tres: str) -> int:
    """Ingest's rule: `gres/gpu=N` is the total; typed entries count only when it is absent."""
    total, typed = None, 0
    for part in filter(None, tres.split(",")):
        key, _, value = part.partition("=")
        if key == "gres/gpu":
            total = int(value)
        elif key.startswith("gres/gpu:"):
            typed += int(value)
    return total if total is not None else typed


def test_alloc_tres_parses_like_the_real_gpu_count_cases(samples: Path, tmp_path: Path) -> None:
    cases = json.loads((samples / "slurm" / "xdmod_alloc-tres-gpu-count.json").read_text())
    assert cases and all(gpu_count_from_tres(tres) == n for tres, n in cases)
    sonar = read_parsable2(samples / "slurm" / "sonar_fox_sacct_output_2025.txt", SONAR_SACCT_FIELDS)
    real_gpu = [r["AllocTRES"] for r in sonar if "gres/gpu" in r["AllocTRES"]]
    assert real_gpu and all(GPU_ALLOC_TRES.match(t) for t in real_gpu)

    jobs = [
        job(job_id="5001", gpus_allocated=8, hostnames=["gpu-01", "gpu-02"]),
        job(job_id="5002", gpus_allocated=1, mig_profile="3g.40gb", gpu_model="A100-SXM4-80GB", mem_mb=10000),
    ]
    rows = {r["JobID"]: r for r in read_parsable2(sacct_file(tmp_path, jobs))}
    assert gpu_count_from_tres(rows["5001"]["AllocTRES"]) == 8
    assert gpu_count_from_tres(rows["5002"]["AllocTRES"]) == 1
    assert "gres/gpu:a100_80_3g.40gb=1" in rows["5002"]["AllocTRES"]
    assert "mem=10000M" in rows["5002"]["AllocTRES"]
    for r in rows.values():
        assert GPU_ALLOC_TRES.match(r["AllocTRES"]), r["AllocTRES"]
    assert (
        rows["5001"]["AllocTRES"].startswith("billing=") and ",mem=128G,node=2" in rows["5001"]["AllocTRES"]
    )
    assert rows["5001"]["WCKey"] == "search"
    assert rows["5001"]["Comment"] == "team-id=nlp,project-id=search"


# --------------------------------------------------------------------------------------------- Kubernetes


def k8s_fleet(tmp_path: Path) -> model.Fleet:
    spot = instance()
    mig_node = instance(
        instance_id="i-0fedcba9876543210",
        resource_id="i-0fedcba9876543210",
        provider_id="aws:///us-east-1b/i-0fedcba9876543210",
        hostname="ip-10-1-9-9.ec2.internal",
        availability_zone="us-east-1b",
        pool="gpu-reserved",
        capacity_type="reserved",
        launched_at=START - timedelta(days=3),
        terminated_at=None,
        termination_reason="running",
        mig_enabled=True,
        gpu_count=1,
    )
    short = instance(
        instance_id="i-0aaaaaaaaaaaaaaa1",
        provider_id="aws:///us-east-1a/i-0aaaaaaaaaaaaaaa1",
        hostname="ip-10-1-5-5.ec2.internal",
        launched_at=at(3),
        terminated_at=at(7),
    )
    mig_gpus = gpus_of(mig_node, mig=True)
    slices = [
        {
            "gpu_uuid": mig_gpus[0]["gpu_uuid"],
            "gpu_instance_id": gi,
            "profile": p,
            "compute_slices": g,
            "gpu_compute_slices": 7,
        }
        for gi, p, g in ((1, "3g.40gb", 3), (2, "3g.40gb", 3), (9, "1g.10gb", 1))
    ]
    pods = [
        pod(job_id="uid-done", name="train-done", started_at=at(1), ended_at=at(5)),
        pod(
            job_id="uid-spot",
            name="train-spot",
            run_id="run-7",
            labels=labels(team_id="nlp", project_id="search", run_id="run-7", workload_type="training"),
            started_at=at(2),
            ended_at=at(30),
            state="Failed",
            end_reason="interrupted",
            exit_code="137",
        ),
        pod(
            job_id="uid-mig",
            name="serve-mig",
            workload_class="inference",
            gpus_allocated=1,
            mig_profile="3g.40gb",
            hostnames=["ip-10-1-9-9.ec2.internal"],
            started_at=at(1),
            ended_at=None,
            state="Running",
            end_reason="running",
        ),
        pod(
            job_id="uid-pending",
            name="train-wait",
            started_at=None,
            ended_at=None,
            hostnames=[],
            state="Pending",
            end_reason="pending",
        ),
        pod(
            job_id="uid-short",
            name="batch-short",
            hostnames=["ip-10-1-5-5.ec2.internal"],
            started_at=at(4.5),
            ended_at=at(5.5),
            state="Failed",
            end_reason="failed",
            exit_code="1",
        ),
    ]
    return make_fleet(
        tmp_path,
        jobs=pods,
        instances=[spot, mig_node, short],
        gpus=gpus_of(spot) + mig_gpus + gpus_of(short),
        mig_slices=slices,
    )


def load(path: Path) -> dict:
    return json.loads(path.read_text())


def snapshots(paths: list[Path], kind: str) -> dict[str, dict]:
    return {p.name: load(p) for p in sorted(paths) if p.name.startswith(kind + "-")}


def key_paths(obj: object, prefix: str = "") -> set[str]:
    """Dotted key paths of a JSON/YAML document (list items share their parent's path)."""
    out: set[str] = set()
    if isinstance(obj, dict):
        for k, v in obj.items():
            path = f"{prefix}.{k}" if prefix else k
            out.add(path)
            out |= key_paths(v, path)
    elif isinstance(obj, list):
        for v in obj:
            out |= key_paths(v, prefix + "[]")
    return out


def test_pods_snapshots_are_kubectl_lists_every_6_hours(samples: Path, tmp_path: Path) -> None:
    files = write_kubernetes(k8s_fleet(tmp_path), tmp_path)
    pods = snapshots(files, "pods")
    assert all(p.parent == tmp_path / "schedulers" / "kubernetes" / "eks1" for p in files)
    assert list(pods)[:2] == ["pods-20240501T000000Z.json", "pods-20240501T060000Z.json"]
    assert len(pods) == DAYS * 4 + 1
    for doc in pods.values():
        assert doc["kind"] == "List" and doc["apiVersion"] == "v1" and isinstance(doc["items"], list)

    # every key the real GPU pod manifest uses, the author's command/args aside, is in our pods
    yaml = pytest.importorskip("yaml")
    manifest = yaml.safe_load((samples / "k8s" / "dcgm-exporter_tests_gpu-pod.yaml").read_text())
    wanted = {
        p
        for p in key_paths(manifest)
        if not re.search(r"(command|args|automountServiceAccountToken|\.cpu|\.memory)$", p)
    }
    first = pods["pods-20240501T060000Z.json"]["items"]
    running = next(p for p in first if p["metadata"]["uid"] == "uid-spot")
    assert wanted - key_paths(running) == set()
    assert set(running) == {"apiVersion", "kind", "metadata", "spec", "status"}
    assert set(running["metadata"]) == {
        "creationTimestamp",
        "labels",
        "name",
        "namespace",
        "resourceVersion",
        "uid",
    }
    assert {"containerStatuses", "conditions", "hostIP", "phase", "podIP", "qosClass", "startTime"} <= set(
        running["status"]
    )
    cs = running["status"]["containerStatuses"][0]
    assert set(cs) == {
        "containerID",
        "image",
        "imageID",
        "lastState",
        "name",
        "ready",
        "restartCount",
        "started",
        "state",
    }
    assert (
        running["status"]["phase"] == "Running"
        and cs["state"]["running"]["startedAt"] == "2024-05-01T02:00:00Z"
    )
    assert running["spec"]["nodeName"] == "ip-10-1-2-3.ec2.internal"
    assert running["metadata"]["labels"] == {
        "team-id": "nlp",
        "project-id": "search",
        "run-id": "run-7",
        "workload-type": "training",
    }
    assert running["metadata"]["creationTimestamp"] == "2024-05-01T01:00:00Z"
    # the manifest writes the GPU limit as a number; kubectl's JSON writes every quantity as a string
    assert manifest["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == 1
    assert running["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == "1"


def test_pods_end_in_their_terminal_state_and_spot_kills_look_like_node_shutdown(
    samples: Path, tmp_path: Path
) -> None:
    pods = snapshots(write_kubernetes(k8s_fleet(tmp_path), tmp_path), "pods")
    by_uid: dict[str, list[dict]] = {}
    for doc in pods.values():
        for item in doc["items"]:
            by_uid.setdefault(item["metadata"]["uid"], []).append(item)
    phases = {uid: [p["status"]["phase"] for p in items] for uid, items in by_uid.items()}
    assert phases["uid-short"] == ["Failed", "Failed"]  # never seen running, seen terminated twice
    assert set(phases["uid-pending"]) == {"Pending"} and len(phases["uid-pending"]) == DAYS * 4
    assert phases["uid-mig"][-1] == "Running"
    # ended at 05:00: seen at 06:00 and 12:00, gone at 18:00 (terminal for more than 12 hours)
    assert phases["uid-done"] == ["Succeeded", "Succeeded"]

    killed = by_uid["uid-spot"][-1]
    status = killed["status"]
    assert status["phase"] == "Failed" and status["reason"] == "Terminated"
    target = [c for c in status["conditions"] if c["type"] == "DisruptionTarget"]
    assert target and target[0]["status"] == "True" and target[0]["reason"] == "TerminationByKubelet"
    term = status["containerStatuses"][0]["state"]["terminated"]
    assert term["exitCode"] == 137 and term["finishedAt"] == "2024-05-02T06:00:00Z"
    assert set(term) == {"containerID", "exitCode", "finishedAt", "reason", "startedAt"}

    pending = by_uid["uid-pending"][0]
    assert (
        "nodeName" not in pending["spec"] and pending["status"]["conditions"][0]["reason"] == "Unschedulable"
    )

    # the MIG pod asks for the mixed-strategy resource whose name GFD's MIG labels use
    patterns = (samples / "k8s" / "gfd_expected-output-mig-mixed.txt").read_text()
    assert r"nvidia\.com\/mig-[0-9]+g\.[0-9]+gb\.count" in patterns
    limits = by_uid["uid-mig"][0]["spec"]["containers"][0]["resources"]["limits"]
    assert [k for k in limits if k.startswith("nvidia.com/")] == ["nvidia.com/mig-3g.40gb"]
    assert re.fullmatch(r"nvidia\.com/mig-[0-9]+g\.[0-9]+gb", "nvidia.com/mig-3g.40gb")


def gfd_patterns(path: Path) -> list[re.Pattern[str]]:
    return [re.compile(line.strip()) for line in path.read_text().splitlines() if line.strip()]


def test_nodes_carry_gfd_and_capacity_labels(samples: Path, tmp_path: Path) -> None:
    files = write_kubernetes(k8s_fleet(tmp_path), tmp_path)
    nodes = snapshots(files, "nodes")
    assert "nodes-20240501T000000Z.json" in nodes and "nodes-20240502T000000Z.json" in nodes
    # the 3-to-7-hour node is in no midnight snapshot, so it gets a registration snapshot
    assert "nodes-20240501T031000Z.json" in nodes
    seen = {n["metadata"]["name"]: n for doc in nodes.values() for n in doc["items"]}
    assert set(seen) == {"ip-10-1-2-3.ec2.internal", "ip-10-1-9-9.ec2.internal", "ip-10-1-5-5.ec2.internal"}
    midnight = {n["metadata"]["name"] for n in nodes["nodes-20240501T000000Z.json"]["items"]}
    assert midnight == {"ip-10-1-9-9.ec2.internal"}  # the spot node launched at 00:30

    plain_patterns = gfd_patterns(samples / "k8s" / "gfd_expected-output.txt")
    mixed_patterns = gfd_patterns(samples / "k8s" / "gfd_expected-output-mig-mixed.txt")
    plain, mig = seen["ip-10-1-2-3.ec2.internal"], seen["ip-10-1-9-9.ec2.internal"]
    for node, patterns in ((plain, plain_patterns), (mig, mixed_patterns)):
        nv = {k: v for k, v in node["metadata"]["labels"].items() if k.startswith("nvidia.com/")}
        assert nv
        unmatched = [f"{k}={v}" for k, v in nv.items() if not any(p.match(f"{k}={v}") for p in patterns)]
        assert unmatched == []
    assert plain["metadata"]["labels"]["nvidia.com/gpu.product"] == "NVIDIA-H100-80GB-HBM3"
    assert plain["metadata"]["labels"]["nvidia.com/gpu.count"] == "8"
    assert plain["status"]["capacity"]["nvidia.com/gpu"] == "8"
    assert mig["metadata"]["labels"]["nvidia.com/mig.strategy"] == "mixed"
    assert mig["metadata"]["labels"]["nvidia.com/mig-3g.40gb.count"] == "2"
    assert mig["metadata"]["labels"]["nvidia.com/mig-1g.10gb.count"] == "1"
    assert mig["status"]["allocatable"]["nvidia.com/mig-3g.40gb"] == "2"
    assert mig["status"]["capacity"]["nvidia.com/gpu"] == "0"

    assert plain["spec"]["providerID"] == "aws:///us-east-1a/i-0123456789abcdef0"
    assert plain["metadata"]["creationTimestamp"] == "2024-05-01T00:30:00Z"
    assert plain["metadata"]["labels"]["node.kubernetes.io/instance-type"] == "p5.48xlarge"
    assert plain["metadata"]["labels"]["topology.kubernetes.io/zone"] == "us-east-1a"
    capacity_labels = {
        k: v
        for k, v in plain["metadata"]["labels"].items()
        if k in ("karpenter.sh/capacity-type", "eks.amazonaws.com/capacityType")
    }
    assert capacity_labels in (
        {"karpenter.sh/capacity-type": "spot"},
        {"eks.amazonaws.com/capacityType": "SPOT"},
    )
    assert mig["metadata"]["labels"]["karpenter.sh/capacity-type"] == "reserved"
    assert {a["type"] for a in plain["status"]["addresses"]} == {"InternalIP", "Hostname"}
    assert plain["status"]["addresses"][0]["address"] == "10.1.2.3"


def test_azure_spot_nodes_and_deterministic_output(tmp_path: Path) -> None:
    azure = instance(
        instance_id="aks-gpuspot-12345678-vmss000000",
        resource_id="/subscriptions/sub/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/x",
        provider_id="azure:///subscriptions/sub/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/x/virtualMachines/0",
        hostname="aks-gpuspot-12345678-vmss000000",
        provider="azure",
        region="eastus",
        availability_zone="eastus-1",
        cluster="aks1",
        pool="gpuspot",
        instance_type="Standard_ND96isr_H100_v5",
    )
    fleet = make_fleet(tmp_path, instances=[azure], gpus=gpus_of(azure))
    first = [p.read_bytes() for p in write_kubernetes(fleet, tmp_path / "a")]
    second = [p.read_bytes() for p in write_kubernetes(fleet, tmp_path / "b")]
    assert first == second and first
    node = next(item for doc in first for item in json.loads(doc)["items"])
    assert node["metadata"]["labels"]["kubernetes.azure.com/scalesetpriority"] == "spot"
    assert not any(k.startswith(("karpenter.sh/", "eks.amazonaws.com/")) for k in node["metadata"]["labels"])
    assert node["status"]["capacity"]["cpu"] == "96"


# --------------------------------------------------------------------------------------------- events


def events_fleet(tmp_path: Path) -> model.Fleet:
    spot = instance(terminated_at=at(30))
    steady = instance(
        instance_id="i-0bbbbbbbbbbbbbbbb",
        capacity_type="on_demand",
        launched_at=START - timedelta(days=1),
        terminated_at=None,
        termination_reason="running",
    )
    onprem = instance(instance_id="dgx-001", provider="onprem", cluster="hpc1", scheduler="slurm")
    interruptions = [
        {
            "instance_id": spot["instance_id"],
            "warning_at": at(30) - timedelta(minutes=2),
            "interrupted_at": at(30),
        }
    ]
    return make_fleet(tmp_path, instances=[spot, steady, onprem], spot_interruptions=interruptions)


def read_events(paths: list[Path]) -> list[dict]:
    return [json.loads(line) for p in paths for line in p.read_text().splitlines()]


def test_eventbridge_events_have_the_real_keys_and_arns(samples: Path, tmp_path: Path) -> None:
    real = {
        ev["detail-type"]: ev for ev in (load(p) for p in sorted((samples / "aws-events").glob("*.json")))
    }
    assert set(real) == {"EC2 Spot Instance Interruption Warning", "EC2 Instance State-change Notification"}
    spot_arn = re.compile(r"^arn:aws:ec2:[a-z]{2}-[a-z]+-\d[a-z]:instance/i-[0-9a-f]+$")
    state_arn = re.compile(r"^arn:aws:ec2:[a-z]{2}-[a-z]+-\d:\d{12}:instance/i-[0-9a-f]+$")
    event_time = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
    assert spot_arn.match(real["EC2 Spot Instance Interruption Warning"]["resources"][0])
    assert state_arn.match(real["EC2 Instance State-change Notification"]["resources"][0])

    paths = write_eventbridge(events_fleet(tmp_path), tmp_path)
    assert paths == [tmp_path / "events" / "aws" / "ec2-events_111122223333_us-east-1.jsonl"]
    ours = read_events(paths)
    for ev in ours:
        ref = real[ev["detail-type"]]
        assert list(ev) == list(ref)
        assert set(ev["detail"]) == set(ref["detail"])
        assert event_time.match(ev["time"])
        arn = spot_arn if ev["detail-type"] == "EC2 Spot Instance Interruption Warning" else state_arn
        assert arn.match(ev["resources"][0]), ev["resources"][0]
    warnings = [ev for ev in ours if ev["detail-type"] == "EC2 Spot Instance Interruption Warning"]
    assert len(warnings) == 1 and warnings[0]["time"] == "2024-05-02T05:58:00Z"
    assert warnings[0]["resources"] == ["arn:aws:ec2:us-east-1a:instance/i-0123456789abcdef0"]
    assert warnings[0]["detail"]["instance-action"] == "terminate"
    states = [
        (ev["detail"]["instance-id"], ev["detail"]["state"], ev["time"])
        for ev in ours
        if "state" in ev["detail"]
    ]
    spot_states = [(s, t) for i, s, t in states if i == "i-0123456789abcdef0"]
    assert [s for s, _ in spot_states] == ["pending", "running", "shutting-down", "terminated"]
    assert dict(spot_states)["running"] == "2024-05-01T00:30:00Z"
    assert dict(spot_states)["shutting-down"] == "2024-05-02T06:00:00Z"
    assert not any(i == "i-0bbbbbbbbbbbbbbbb" for i, _, _ in states)  # launched before the window
    assert [ev["time"] for ev in ours] == sorted(ev["time"] for ev in ours)


def test_eventbridge_ids_are_unique_and_deterministic(tmp_path: Path) -> None:
    fleet = events_fleet(tmp_path)
    a = read_events(write_eventbridge(fleet, tmp_path / "a"))
    b = read_events(write_eventbridge(fleet, tmp_path / "b"))
    assert a == b
    ids = [ev["id"] for ev in a]
    assert len(ids) == len(set(ids)) == 5
    assert all(re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", i) for i in ids)


def test_eventbridge_delays_of_an_instance_do_not_move_when_another_is_added(tmp_path: Path) -> None:
    """Each instance draws its pending and terminated delays from a stream of its own (seed + instance id):
    a fleet with one AWS instance more gives every other instance the very same events."""
    fleet = events_fleet(tmp_path)
    before = read_events(write_eventbridge(fleet, tmp_path / "before"))
    extra = instance(instance_id="i-0000000000000000a", launched_at=at(10), terminated_at=at(20))
    grown = make_fleet(
        tmp_path,
        instances=[extra, *fleet.instances.to_dicts()],
        spot_interruptions=fleet.spot_interruptions.to_dicts(),
    )
    after = read_events(write_eventbridge(grown, tmp_path / "after"))
    assert [ev for ev in after if ev["detail"]["instance-id"] != extra["instance_id"]] == before
    assert len(after) == len(before) + 4


# --------------------------------------------------------------------------------------------- business


def test_business_csvs_have_documented_headers_and_values(tmp_path: Path) -> None:
    fleet = make_fleet(
        tmp_path,
        inference_requests=[
            {
                "date": date(2024, 5, 2),
                "project": "search",
                "model": "ranker",
                "model_version": "v2",
                "environment": "production",
                "requests": 1200,
            },
            {
                "date": date(2024, 5, 1),
                "project": "search",
                "model": "ranker",
                "model_version": "v2",
                "environment": "production",
                "requests": 1000,
            },
        ],
        deployments=[
            {
                "model": "ranker",
                "model_version": "v2",
                "project": "search",
                "training_run_id": "run-7",
                "training_completed_at": at(5),
                "deployed_at": at(20),
                "environment": "production",
            },
            {
                "model": "ranker",
                "model_version": "v1",
                "project": "search",
                "training_run_id": None,
                "training_completed_at": None,
                "deployed_at": at(2),
                "environment": "staging",
            },
        ],
        training_work=[
            {"run_id": "run-8", "tokens_processed": None, "samples_processed": 640_000},
            {"run_id": "run-7", "tokens_processed": 2_000_000_000, "samples_processed": None},
        ],
        business_value=[
            {
                "month": date(2024, 5, 1),
                "project": "search, ads",
                "value": 12345.678,
                "currency": "USD",
                "basis": "incremental revenue",
            },
        ],
    )
    paths = write_business(fleet, tmp_path)
    assert [p.relative_to(tmp_path).as_posix() for p in paths] == [
        "business/inference_requests.csv",
        "business/model_deployments.csv",
        "business/business_value.csv",
        "business/training_runs.csv",
    ]
    tables = [list(csv.reader(io.StringIO(p.read_text()))) for p in paths]
    requests, deployments, value, work = tables
    assert tuple(requests[0]) == INFERENCE_REQUESTS_COLUMNS
    assert requests[1:] == [
        ["2024-05-01", "search", "ranker", "v2", "production", "1000"],
        ["2024-05-02", "search", "ranker", "v2", "production", "1200"],
    ]
    assert tuple(deployments[0]) == DEPLOYMENTS_COLUMNS
    assert deployments[1] == ["ranker", "v1", "search", "", "", "2024-05-01T02:00:00Z", "staging"]
    assert deployments[2][3:6] == ["run-7", "2024-05-01T05:00:00Z", "2024-05-01T20:00:00Z"]
    assert tuple(value[0]) == BUSINESS_VALUE_COLUMNS
    assert value[1] == ["2024-05", "search, ads", "12345.68", "USD", "incremental revenue"]
    # a run without jobs in the fleet keeps its id; a run with no tokens leaves the column empty
    assert tuple(work[0]) == TRAINING_RUNS_COLUMNS
    assert work[1:] == [["run-7", "2000000000", ""], ["run-8", "", "640000"]]
    import gpu_ledger.simulator.writers.business as business

    for column in (
        INFERENCE_REQUESTS_COLUMNS + DEPLOYMENTS_COLUMNS + BUSINESS_VALUE_COLUMNS + TRAINING_RUNS_COLUMNS
    ):
        assert f"| {column} |" in (business.__doc__ or ""), column


@pytest.mark.parametrize("writer", [write_sacct, write_kubernetes, write_eventbridge, write_business])
def test_writers_accept_an_empty_fleet(writer, tmp_path: Path) -> None:
    result = writer(make_fleet(tmp_path), tmp_path)
    assert result is not None
