"""Scheduler, event and business formats: real samples, the simulator's files, and hand-made bad input."""

from __future__ import annotations

import json
import os
import re
import time
from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import pytest
import yaml

from gpu_ledger.ingest import registry
from gpu_ledger.ingest.base import Options
from gpu_ledger.ingest.errors import UnknownFormat
from gpu_ledger.ingest.formats.schedulers.kubernetes import parse_provider_id
from gpu_ledger.ingest.formats.schedulers.sacct_values import parse_tres_gpus
from gpu_ledger.ingest.hostlist import HostlistError, expand_hostlist
from gpu_ledger.ingest.runner import Outcome, ingest
from gpu_ledger.ingest.sniff import Sniff
from gpu_ledger.ingest.store import RawStore
from tests.conftest import SAMPLES
from tests.samples import SONAR_SACCT_FIELDS

XDMOD_FIELDS = tuple(
    [
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
)
HEADER = (
    "JobID|JobIDRaw|Cluster|User|Account|State|ExitCode|Submit|Start|End|ElapsedRaw|NCPUS|AllocTRES|NodeList"
    "|JobName"
)
JOB = "101|101|c1|ann|phys|COMPLETED|0:0|2026-03-29T00:30:00|2026-03-29T01:00:00|2026-03-29T03:30:00|9000|8|cpu=8,gres/gpu=2|gpu-[01-02]|train"  # noqa: E501


@pytest.fixture
def store(tmp_path: Path):
    with RawStore(tmp_path / "home" / "landed.duckdb") as s:
        yield s


def land(store: RawStore, *paths: Path, **options: object) -> list[Outcome]:
    return ingest(list(paths), store, options=Options(**options), progress=False)


def one(store: RawStore, path: Path, **options: object) -> Outcome:
    (outcome,) = land(store, path, **options)
    return outcome


def rows(store: RawStore, sql: str) -> list[tuple]:
    return store.con.sql(sql).fetchall()


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# --------------------------------------------------------------------------------------------- hostlist


@pytest.mark.parametrize(
    ("expr", "hosts"),
    [
        ("gpu-[01-04,07]", ["gpu-01", "gpu-02", "gpu-03", "gpu-04", "gpu-07"]),
        ("c1-28", ["c1-28"]),
        ("d09n04s[01-02],d13n[03,05]", ["d09n04s01", "d09n04s02", "d13n03", "d13n05"]),
        ("n[8-10]", ["n8", "n9", "n10"]),
        ("n[08-10]", ["n08", "n09", "n10"]),
        ("r[1-2]-n[1-2]", ["r1-n1", "r1-n2", "r2-n1", "r2-n2"]),
        ("None assigned", []),
        ("", []),
    ],
)
def test_hostlist_expansion(expr: str, hosts: list[str]) -> None:
    assert expand_hostlist(expr) == hosts


@pytest.mark.parametrize("expr", ["gpu-[01-04", "gpu-01]", "gpu-[a-b]", "gpu-[5-1]", "gpu-[[1]]"])
def test_hostlist_rejects_what_slurm_cannot_print(expr: str) -> None:
    with pytest.raises(HostlistError):
        expand_hostlist(expr)


# --------------------------------------------------------------------------------------------- sacct samples


def test_sacct_with_header_slurm2sql_sample(samples: Path, store: RawStore) -> None:
    path = samples / "slurm" / "slurm2sql_test-data1.csv"
    assert registry.detect(Sniff.of(path)).name == "slurm_sacct"
    out = one(store, path)
    assert (out.status, out.rows) == ("loaded", 5)
    got = rows(
        store,
        "select job_id, base_job_id, step_id, allocation_job_id, state, state_raw, cancelled_by_uid, "
        "end_at, elapsed_s, timelimit_min, nodes, submit_line, extra['maxrss'] "
        "from raw.slurm_sacct order by _source_row",
    )
    assert got[0][:7] == (
        "43974388",
        "43974388",
        None,
        "43974388",
        "CANCELLED",
        "CANCELLED by 1300204",
        1300204,
    )
    assert got[0][7] == datetime(2019, 8, 1, 2, 2, 39, tzinfo=UTC)
    assert got[0][8:11] == (3 * 3600 + 33 * 60 + 25, 5 * 24 * 60, ["pe2"])
    assert got[0][11] == "srun test_submit_line"
    assert got[1][12] == "231092K"  # fields without a column of their own are kept in `extra`
    assert [g[2] for g in got] == [None, "batch", "0", None, "batch"]
    assert got[1][3] == "43974388"
    assert got[3][7] is None  # End=Unknown
    comment = rows(store, "select comment from raw.slurm_sacct where job_id = '43977780.batch'")[0][0]
    assert json.loads(comment)["gpu_util"] == 53.1


def test_sacct_headerless_without_fields_is_a_clear_error(tmp_path: Path, store: RawStore) -> None:
    path = write(tmp_path, "bare.txt", f"{JOB}\n")  # 15 fields: no collector's list
    out = one(store, path)
    assert out.status == "rejected" and out.format == "slurm_sacct"
    assert "--sacct-fields" in out.error and ":1:" in out.error
    assert "slurm_sacct" not in store.tables()


def test_sacct_sonar_samples_with_fields(samples: Path, store: RawStore) -> None:
    outs = land(
        store,
        samples / "slurm" / "sonar_fox_sacct_output_2025.txt",
        samples / "slurm" / "sonar_fox_sacct_output_2024.txt",
        sacct_fields=SONAR_SACCT_FIELDS,
    )
    assert [(o.status, o.rows) for o in outs] == [("loaded", 301), ("loaded", 96)]
    running = rows(
        store,
        "select state, end_at, alloc_gpus, gpu_type, nodes, timelimit_min, elapsed_s "
        "from raw.slurm_sacct where job_id = '1879824'",
    )[0]
    assert running == ("RUNNING", None, 1, "a100", ["gpu-2"], 20160, 1192379)
    pending = rows(
        store, "select start_at, nodes, node_list, alloc_gpus from raw.slurm_sacct where job_id = '1903070'"
    )
    assert pending == [(None, [], "None assigned", 0)]
    four = rows(store, "select alloc_gpus, gpu_type from raw.slurm_sacct where job_id = '1902893'")
    assert four == [(4, "a100_80")]  # gres/gpu=4 is the total; the typed a100_80=4 is not added
    steps = {
        r[0] for r in rows(store, "select distinct step_id from raw.slurm_sacct where step_id is not null")
    }
    assert {"batch", "extern", "interactive", "0"} <= steps
    cancelled = rows(store, "select count(*) from raw.slurm_sacct where cancelled_by_uid is not null")[0][0]
    assert cancelled > 0
    mig = rows(
        store,
        "select count(*), min(alloc_gpus), max(alloc_gpus), count(gpu_type) from raw.slurm_sacct "
        "where partition = 'mig' and alloc_gpus > 0",
    )[0]
    assert mig[0] > 0 and mig[1:] == (1, 1, 0)  # untyped gres/gpu=1
    assert rows(store, "select count(*) from raw.slurm_sacct where not state_known")[0][0] == 0


def test_sacct_xdmod_samples(samples: Path, store: RawStore) -> None:
    names = [
        "xdmod_accounting-logs.log",
        "xdmod_accounting-logs-with-job-arrays.log",
        "xdmod_non-ended-job-state.log",
        "xdmod_unknown-job-state.log",
        "xdmod_utf8-multibyte-chars.log",
    ]
    outs = land(store, *[samples / "slurm" / n for n in names], sacct_fields=XDMOD_FIELDS)
    assert [(o.status, o.rows) for o in outs] == [("loaded", n) for n in (4, 6, 2, 2, 1)]
    arrays = rows(
        store,
        "select job_id, base_job_id, array_task_id, is_pending_array, len(nodes) from raw.slurm_sacct "
        "where _source_file like '%job-arrays%' order by _source_row",
    )
    assert arrays[0] == ("4103947_100", "4103947", "100", False, 32)
    assert arrays[1][:4] == ("4103947_[1-3]", "4103947", "[1-3]", True)
    assert [a[2] for a in arrays[2:5]] == ["[1,5]", "[9-11,20]", "[91,100-102]"]
    cancelled = rows(
        store, "select state, cancelled_by_uid, uid from raw.slurm_sacct where job_id = '4107166'"
    )
    assert cancelled == [("CANCELLED", 102216, 102216)]
    gpu = rows(
        store, "select eligible_at, alloc_gpus, req_gpus, nodes from raw.slurm_sacct where job_id = '5692623'"
    )
    assert gpu == [(None, 2, 0, ["cpn-k16-35-01", "cpn-k16-37-01"])]  # AllocTRES gres/gpu=2, ReqTRES empty
    assert rows(store, "select job_name from raw.slurm_sacct where _source_file like '%utf8%'") == [("aàb",)]
    # xdmod's deliberately invalid states: landed as printed, flagged, never silently "known"
    unknown = rows(
        store, "select state, state_known from raw.slurm_sacct where _source_file like '%unknown%'"
    )
    assert sorted(unknown) == [("BAR", False), ("FOO", False)]
    pending = rows(
        store, "select state, start_at from raw.slurm_sacct where job_id = '3483276' and state = 'PENDING'"
    )
    assert pending == [("PENDING", None)]


def test_alloc_tres_gpu_counts_match_xdmod_cases(samples: Path) -> None:
    cases = json.loads((samples / "slurm" / "xdmod_alloc-tres-gpu-count.json").read_text())
    assert len(cases) >= 8
    for tres, expected in cases:
        assert (parse_tres_gpus(tres)[0] or 0) == expected, tres


def test_sacct_field_default_is_saved_and_a_header_never_changes_it(
    samples: Path, store: RawStore, tmp_path: Path
) -> None:
    first = samples / "slurm" / "xdmod_accounting-logs.log"
    assert one(store, first, sacct_fields=XDMOD_FIELDS).status == "loaded"
    saved = rows(store, "select value from raw.ingest_settings where key = 'slurm.sacct_fields'")
    assert saved == [(",".join(XDMOD_FIELDS),)]
    assert one(store, samples / "slurm" / "slurm2sql_test-data1.csv").status == "loaded"
    assert rows(store, "select value from raw.ingest_settings")[0][0] == ",".join(XDMOD_FIELDS)
    later = one(store, samples / "slurm" / "xdmod_non-ended-job-state.log")  # no --sacct-fields
    assert (later.status, later.rows) == ("loaded", 2)


def test_sacct_headerless_with_fields_matches_the_header_form(tmp_path: Path, store: RawStore) -> None:
    headed = write(tmp_path, "a.txt", f"{HEADER}\n{JOB}\n")
    bare = write(tmp_path, "b.txt", JOB.replace("101", "102") + "\n")
    land(store, headed)
    assert one(store, bare, sacct_fields=tuple(HEADER.split("|"))).rows == 1
    got = rows(store, "select job_id, alloc_gpus, nodes, start_at from raw.slurm_sacct order by job_id")
    assert [g[1:] for g in got] == [(2, ["gpu-01", "gpu-02"], datetime(2026, 3, 29, 1, tzinfo=UTC))] * 2


def test_sacct_timezone_is_converted_to_utc(tmp_path: Path, store: RawStore) -> None:
    # Europe/Oslo switches to summer time at 01:00 UTC on 2026-03-29: 00:30 is CET, 03:30 is CEST
    path = write(tmp_path, "oslo.txt", f"{HEADER}\n{JOB}\n")
    assert one(store, path, timezone="Europe/Oslo").status == "loaded"
    got = rows(store, "select submit_at, start_at, end_at from raw.slurm_sacct")[0]
    assert got == (
        datetime(2026, 3, 28, 23, 30, tzinfo=UTC),
        datetime(2026, 3, 29, 0, 0, tzinfo=UTC),
        datetime(2026, 3, 29, 1, 30, tzinfo=UTC),
    )


def test_sacct_time_in_a_dst_gap_and_an_unknown_zone_are_rejected(tmp_path: Path, store: RawStore) -> None:
    gap = write(tmp_path, "gap.txt", f"{HEADER}\n{JOB.replace('T03:30:00', 'T02:30:00')}\n")
    out = one(store, gap, timezone="Europe/Oslo")
    assert out.status == "rejected"
    assert out.error.startswith(f"{gap}:2: column 'end': '2026-03-29T02:30:00' does not exist in time zone")
    bad_zone = write(tmp_path, "z.txt", f"{HEADER}\n{JOB}\n")
    out = one(store, bad_zone, timezone="Mars/Olympus")
    assert out.status == "rejected" and "unknown time zone 'Mars/Olympus'" in out.error


def test_sacct_truncated_line_gives_file_line_column_and_expectation(tmp_path: Path, store: RawStore) -> None:
    cut = JOB.rsplit("|", 4)[0]  # the last four fields lost
    path = write(tmp_path, "cut.txt", f"{HEADER}\n{JOB}\n{cut}\n")
    out = one(store, path)
    assert out.status == "rejected"
    assert out.error == (
        f"{path}:3: column 'NCPUS': 11 fields, the field list has 15 (a truncated line, or the wrong "
        f"field list) (expected 15 '|'-separated fields: {HEADER.replace('|', ',')})"
    )
    assert "slurm_sacct" not in store.tables()  # all or nothing


def test_sacct_bad_timestamp_and_wrong_type(tmp_path: Path, store: RawStore) -> None:
    bad_time = write(
        tmp_path, "t.txt", f"{HEADER}\n{JOB.replace('2026-03-29T01:00:00', '29/03/2026 01:00')}\n"
    )
    out = one(store, bad_time)
    assert out.error == (
        f"{bad_time}:2: column 'start': '29/03/2026 01:00' is not a sacct time "
        "(expected YYYY-MM-DDTHH:MM:SS with an optional UTC offset (+0100, +01:00, Z), Unknown or None)"
    )
    bad_int = write(tmp_path, "i.txt", f"{HEADER}\n{JOB}\n{JOB.replace('|8|', '|eight|')}\n")
    out = one(store, bad_int)
    assert out.error == (
        f"{bad_int}:3: column 'ncpus': 'eight' is not a whole number (expected a whole number from 0 up)"
    )


def test_sacct_state_that_is_not_a_state_means_wrong_fields(tmp_path: Path, store: RawStore) -> None:
    path = write(tmp_path, "s.txt", f"{HEADER}\n{JOB.replace('COMPLETED', 'phys-lab')}\n")
    out = one(store, path)
    assert out.status == "rejected"
    assert "column 'state': 'phys-lab' is not a Slurm job state" in out.error and ":2:" in out.error


def test_sacct_jobname_with_pipes_is_kept_whole(tmp_path: Path, store: RawStore) -> None:
    path = write(tmp_path, "p.txt", f"{HEADER}\n{JOB.replace('|train', '|a|b|c')}\n")
    assert one(store, path).status == "loaded"
    assert rows(store, "select job_name, node_list from raw.slurm_sacct") == [("a|b|c", "gpu-[01-02]")]


def test_sacct_same_file_twice_changes_nothing(samples: Path, store: RawStore) -> None:
    path = samples / "slurm" / "slurm2sql_test-data1.csv"
    assert one(store, path).status == "loaded"
    before = rows(store, "select count(*) from raw.slurm_sacct")[0][0]
    assert one(store, path).status == "unchanged"
    assert rows(store, "select count(*) from raw.slurm_sacct")[0][0] == before == 5
    assert rows(store, "select count(*) from raw.ingest_manifest")[0][0] == 1


def test_sacct_100k_lines_land_quickly(tmp_path: Path, store: RawStore) -> None:
    lines = [HEADER] + [JOB.replace("101|101", f"{n}|{n}") for n in range(1000, 101_000)]
    path = write(tmp_path, "big.txt", "\n".join(lines) + "\n")
    started = time.perf_counter()
    out = one(store, path)
    took = time.perf_counter() - started
    assert (out.status, out.rows) == ("loaded", 100_000)
    assert took < 5, f"100k sacct lines took {took:.1f}s"


# --------------------------------------------------------------------------------------------- simulator


@pytest.fixture(scope="module")
def simulated(tmp_path_factory):
    """The simulator's fleet frames and its scheduler, event and business files (no telemetry)."""
    from gpu_ledger.simulator.generate import build_fleet
    from gpu_ledger.simulator.model import SimulationConfig
    from gpu_ledger.simulator.writers.business import write_business
    from gpu_ledger.simulator.writers.events import write_eventbridge
    from gpu_ledger.simulator.writers.kubernetes import write_kubernetes
    from gpu_ledger.simulator.writers.slurm import write_sacct

    out = tmp_path_factory.mktemp("sim")
    config = SimulationConfig(
        out=out, gpus=80, days=8, interval_s=900, seed=11, start=datetime(2026, 10, 1, tzinfo=UTC)
    )
    fleet, _ = build_fleet(config)
    write_sacct(fleet, out)
    write_kubernetes(fleet, out)
    write_eventbridge(fleet, out)
    write_business(fleet, out)
    store = RawStore(tmp_path_factory.mktemp("home") / "landed.duckdb")
    outcomes = ingest([out], store, progress=False)
    yield fleet, out, store, outcomes
    store.close()


def test_simulator_files_all_land(simulated) -> None:
    _, _, _, outcomes = simulated
    bad = [o for o in outcomes if o.status == "rejected"]
    assert not bad, bad[0].error
    formats = {o.format for o in outcomes if o.status == "loaded"}
    assert formats == {
        "slurm_sacct",
        "k8s_pods",
        "k8s_nodes",
        "k8s_resource_claims",
        "eventbridge_json",
        "inference_requests_csv",
        "model_deployments_csv",
        "business_value_csv",
        "training_runs_csv",
    }


def test_simulator_sacct_matches_the_fleet(simulated) -> None:
    fleet, out, store, _ = simulated
    # the Frankfurt cluster prints local times with their offset (%z); they must land as the fleet's UTC
    text = (out / "schedulers" / "slurm" / "sacct_hpc-fra.txt").read_text(encoding="utf-8")
    assert re.search(r"\|2026-10-0[1-8]T[0-9:]{8}\+0200\|", text)
    jobs = fleet.jobs.filter(pl.col("scheduler") == "slurm")
    landed = (
        store.con.sql(
            "select cluster, job_id, job_id_raw, state_raw, alloc_gpus, nodes, start_at, end_at "
            "from raw.slurm_sacct where step_id is null"
        )
        .pl()
        .with_columns(pl.col("start_at", "end_at").dt.convert_time_zone("UTC"))
    )
    assert landed.height == jobs.height
    assert sorted(landed["job_id"].unique()) == sorted(jobs["job_id"].unique())
    last = jobs.sort("attempt").group_by(["cluster", "job_id"]).last()
    final = landed.join(last, on=["cluster", "job_id"]).filter(pl.col("state_raw") != "REQUEUED")
    assert final.height == last.height
    assert (final["state_raw"] == final["state"]).all()
    ran = final.filter(pl.col("started_at").is_not_null())
    # a job holding shards or an MPS share of a GPU asks for no gres/gpu: sacct prints no GPU count for it
    whole = ran.filter(pl.col("gpu_sharing").is_null())
    assert (whole["alloc_gpus"] == whole["gpus_allocated"].cast(pl.Int64)).all()
    shared = ran.filter(pl.col("gpu_sharing").is_not_null())
    assert shared.height > 0 and (shared["alloc_gpus"] == 0).all()
    assert (ran["start_at"] == ran["started_at"]).all()
    assert all(sorted(a) == sorted(b) for a, b in zip(ran["nodes"], ran["hostnames"], strict=True))


def test_simulator_pods_match_the_fleet(simulated) -> None:
    fleet, out, store, _ = simulated
    jobs = fleet.jobs.filter(pl.col("scheduler") == "kubernetes")
    pods = (
        store.con.sql(
            "select uid, any_value(gpu_request) as gpu, any_value(mig_profile) as mig, "
            "bool_or(disruption) as dis, max(finished_at) as fin, count(*) as n "
            "from raw.k8s_pods group by uid"
        )
        .pl()
        .with_columns(pl.col("fin").dt.convert_time_zone("UTC"))
    )
    joined = pods.join(jobs, left_on="uid", right_on="job_id", how="left")
    assert joined["scheduler"].null_count() == 0  # every pod is a fleet job
    started = set(jobs.filter(pl.col("started_at").is_not_null())["job_id"])
    assert started <= set(pods["uid"])  # every pod that ran is seen
    # a pod that holds its GPU through a DRA claim asks for no nvidia.com/gpu: the claim reserved for it says
    claimed = {
        uid
        for (uid,) in rows(store, "select distinct unnest(reserved_for_uids) from raw.k8s_resource_claims")
    }
    by_claim = joined.filter(pl.col("uid").is_in(claimed))
    assert by_claim.height > 0 and (by_claim["gpu"].fill_null(0) == 0).all()
    whole = joined.filter(pl.col("mig_profile").is_null() & ~pl.col("uid").is_in(claimed))
    assert (whole["gpu"] == whole["gpus_allocated"].cast(pl.Int64)).all()
    sliced = joined.filter(pl.col("mig_profile").is_not_null())
    assert sliced.height > 0 and (sliced["mig"] == sliced["mig_profile"]).all()
    interrupted = joined.filter(pl.col("end_reason") == "interrupted")
    if interrupted.height:
        assert interrupted["dis"].all()
    done = joined.filter(pl.col("ended_at").is_not_null() & pl.col("started_at").is_not_null())
    assert (done["fin"] == done["ended_at"]).all()
    # one row per pod per snapshot, even where two snapshots have the same content: each is an observation
    snapshots = sorted(out.glob("schedulers/kubernetes/*/pods-*.json"))
    expected = sum(len(json.loads(path.read_text())["items"]) for path in snapshots)
    assert rows(store, "select count(*) from raw.k8s_pods")[0][0] == expected


def test_simulator_nodes_match_the_fleet(simulated) -> None:
    fleet, _, store, _ = simulated
    nodes = store.con.sql(
        "select name, any_value(instance_id) as iid, any_value(provider) as provider, "
        "any_value(capacity_type) as cap, any_value(gpu_count) as gpus, any_value(instance_type) as itype "
        "from raw.k8s_nodes group by name"
    ).pl()
    insts = fleet.instances.filter(pl.col("scheduler") == "kubernetes")
    joined = nodes.join(insts, left_on="name", right_on="hostname", how="inner")
    assert joined.height == nodes.height > 0
    assert (joined["iid"] == joined["instance_id"]).all()
    assert (joined["itype"] == joined["instance_type"]).all()
    expected_cap = joined.select(
        pl.when(pl.col("provider") == "azure")
        .then(pl.when(pl.col("capacity_type") == "spot").then(pl.lit("spot")).otherwise(pl.lit("on_demand")))
        .otherwise(pl.col("capacity_type"))
    ).to_series()
    assert (joined["cap"] == expected_cap).all()
    assert set(nodes["provider"]) == {"aws", "azure"}
    ran_pods = fleet.jobs.filter(pl.col("scheduler") == "kubernetes")["hostnames"].explode().drop_nulls()
    assert set(ran_pods) <= set(nodes["name"])  # every node that ran a pod is known


def test_simulator_events_match_the_fleet(simulated) -> None:
    fleet, out, store, _ = simulated
    lines = sum(len(p.read_text().splitlines()) for p in out.glob("events/aws/*.jsonl"))
    assert rows(store, "select count(*) from raw.aws_events")[0][0] == lines
    aws = set(fleet.instances.filter(pl.col("provider") == "aws")["instance_id"])
    start, end = fleet.config.start, fleet.config.end
    start = start if start.tzinfo else start.replace(tzinfo=UTC)
    end = end if end.tzinfo else end.replace(tzinfo=UTC)
    spot = fleet.spot_interruptions.filter(
        pl.col("instance_id").is_in(list(aws))
        & (pl.col("warning_at") >= start)
        & (pl.col("warning_at") < end)
    )
    landed = store.con.sql(
        "select instance_id, time, availability_zone, instance_action from raw.aws_events "
        "where detail_type = 'EC2 Spot Instance Interruption Warning'"
    ).pl()
    assert landed.height == spot.height
    assert set(landed["instance_id"]) == set(spot["instance_id"])
    assert landed["availability_zone"].null_count() == 0 and set(landed["instance_action"]) <= {"terminate"}


def test_simulator_business_files_match_the_fleet(simulated) -> None:
    fleet, _, store, _ = simulated
    (n, total) = rows(store, "select count(*), sum(requests) from raw.inference_requests")[0]
    assert total == fleet.inference_requests["requests"].sum()
    assert (
        n
        == fleet.inference_requests.select("date", "project", "model", "model_version", "environment")
        .unique()
        .height
    )
    assert rows(store, "select count(*) from raw.model_deployments")[0][0] == fleet.deployments.height
    value = store.con.sql("select month, project, value from raw.business_value").pl()
    assert value.height == fleet.business_value.height
    assert float(value["value"].cast(pl.Float64).sum()) == pytest.approx(
        float(fleet.business_value["value"].round(2).sum()), abs=0.01
    )
    types = dict(rows(store, "select column_name, data_type from information_schema.columns "
                             "where table_name = 'business_value'"))  # fmt: skip
    assert types["value"] == "DECIMAL(18,2)" and types["month"] == "DATE"
    work = store.con.sql("select tokens_processed, samples_processed from raw.training_runs").pl()
    assert work.height == fleet.training_work.height > 0
    assert work["tokens_processed"].sum() == fleet.training_work["tokens_processed"].sum() > 0
    assert work["samples_processed"].sum() == fleet.training_work["samples_processed"].sum() > 0


# --------------------------------------------------------------------------------------------- kubernetes


def test_k8s_yaml_manifest_is_rejected_not_misdetected(samples: Path, store: RawStore) -> None:
    path = samples / "k8s" / "dcgm-exporter_tests_gpu-pod.yaml"
    out = one(store, path)
    assert (out.status, out.format) == ("rejected", "k8s_pods")
    assert "manifest" in out.error and "nbody-pod" in out.error and "kubectl get pods" in out.error


@pytest.mark.parametrize("name", ["gfd_expected-output.txt", "gfd_expected-output-mig-single.txt"])
def test_gfd_label_pattern_files_are_not_a_format(samples: Path, name: str) -> None:
    with pytest.raises(UnknownFormat):
        registry.detect(Sniff.of(samples / "k8s" / name))


def _a_pod_list(simulated) -> dict:
    _, out, _, _ = simulated
    for path in sorted(out.glob("schedulers/kubernetes/*/pods-*.json")):
        doc = json.loads(path.read_text())
        if any(p["metadata"].get("labels") for p in doc["items"]):
            return doc
    raise AssertionError("no pods")


def test_k8s_kubectl_yaml_and_single_pod_without_a_stamp(simulated, tmp_path: Path, store: RawStore) -> None:
    doc = _a_pod_list(simulated)
    as_yaml = write(tmp_path, "pods-20261002T060000Z.yaml", yaml.safe_dump(doc))
    single = write(tmp_path, "one-pod.json", json.dumps(doc["items"][0]))
    os.utime(single, (1_790_000_000, 1_790_000_000))
    outs = land(store, as_yaml, single)
    assert [(o.status, o.format, o.rows) for o in outs] == [
        ("loaded", "k8s_pods", len(doc["items"])),
        ("loaded", "k8s_pods", 1),
    ]
    got = rows(store, "select distinct snapshot_at, snapshot_time_source from raw.k8s_pods order by 2 desc")
    assert got == [
        (datetime(2026, 10, 2, 6, tzinfo=UTC), "file_name"),
        (datetime.fromtimestamp(1_790_000_000, UTC), "file_mtime"),
    ]


def test_k8s_bad_pod_quantity_names_the_item(simulated, tmp_path: Path, store: RawStore) -> None:
    doc = _a_pod_list(simulated)
    pod = next(
        p for p in doc["items"] if "nvidia.com/gpu" in p["spec"]["containers"][0]["resources"]["limits"]
    )
    pod["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] = "1.5"
    index = doc["items"].index(pod) + 1
    path = write(tmp_path, "pods.json", json.dumps(doc))
    out = one(store, path)
    assert out.error == (
        f"{path}:{index}: column 'resources.nvidia.com/gpu': '1.5' is not a whole device count "
        "(expected an integer)"
    )


def _pod(name: str, *containers: dict[str, int]) -> dict:
    """A pod as `kubectl get pods -o json` reports it, its containers' limits given."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "search", "uid": f"uid-{name}"},
        "spec": {
            "nodeName": "gpu-h1",
            "containers": [
                {"name": f"c{i}", "resources": {"limits": {k: str(v) for k, v in limits.items()}}}
                for i, limits in enumerate(containers)
            ],
        },
        "status": {"phase": "Running", "startTime": "2026-10-01T00:00:00Z"},
    }


def test_k8s_hami_requests_are_per_gpu_not_summed(tmp_path: Path, store: RawStore) -> None:
    """HAMi's nvidia.com/gpucores, gpumem and gpumem-percentage ask for part of each GPU a container
    holds: a pod's value is their mean over its GPUs, while nvidia.com/gpu is summed."""
    pods = [
        # as in HAMi's own example (examples/nvidia/use_sharing_card.yaml)
        _pod("one", {"nvidia.com/gpu": 1, "nvidia.com/gpumem-percentage": 40, "nvidia.com/gpucores": 60}),
        _pod(
            "two",
            {"nvidia.com/gpu": 1, "nvidia.com/gpucores": 60},
            {"nvidia.com/gpu": 1, "nvidia.com/gpucores": 20},
        ),
        _pod("wide", {"nvidia.com/gpu": 2, "nvidia.com/gpucores": 50, "nvidia.com/gpumem": 3000}),
    ]
    path = write(
        tmp_path,
        "pods-20261001T060000Z.json",
        json.dumps({"apiVersion": "v1", "kind": "List", "items": pods}),
    )
    assert one(store, path).status == "loaded"
    got = dict(rows(store, "select name, map_entries(gpu_resources) from raw.k8s_pods"))
    assert {name: {e["key"]: e["value"] for e in entries} for name, entries in got.items()} == {
        "one": {"nvidia.com/gpu": 1, "nvidia.com/gpumem-percentage": 40, "nvidia.com/gpucores": 60},
        "two": {"nvidia.com/gpu": 2, "nvidia.com/gpucores": 40},
        "wide": {"nvidia.com/gpu": 2, "nvidia.com/gpucores": 50, "nvidia.com/gpumem": 3000},
    }


REAL_SET3 = SAMPLES.parent / "real-world" / "set3"


@pytest.mark.parametrize(
    ("name", "fmt", "says"),
    [
        ("hami/use_sharing_card.yaml", "k8s_pods",
         "item 1 (gpu-pod1) has no metadata.uid or status: this is a manifest"),
        # the DRA specs are k8s_resource_claims' (tests/ingest/test_k8s_resource_claims.py)
        ("k8s-dra-driver-gpu/mig-1g-12gb.yaml", "k8s_resource_claims",
         "item 2 (mig-1g-12gb.gpu.nvidia.com) is a DeviceClass: a spec"),
        ("k8s-dra-driver-gpu/gpu-test5.yaml", "k8s_resource_claims",
         "item 2 (multiple-gpus) is a ResourceClaimTemplate: a spec"),
    ],
)  # fmt: skip
def test_k8s_real_hami_and_dra_manifests_are_refused_in_one_line(
    name: str, fmt: str, says: str, store: RawStore
) -> None:
    """Real HAMi and DRA examples are what kubectl apply reads (their comments first), not what ran."""
    path = REAL_SET3 / name
    if not path.is_file():
        pytest.skip(f"real-world file not found: {path}")
    out = one(store, path)
    assert (out.status, out.format) == ("rejected", fmt)
    assert out.error.startswith(str(path)) and says in out.error and "\n" not in out.error


def test_k8s_node_provider_ids() -> None:
    assert parse_provider_id("aws:///us-east-1a/i-0abc") == ("aws", "i-0abc")
    vm = "azure:///subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachines/aks-a-1"
    assert parse_provider_id(vm) == ("azure", "aks-a-1")
    vmss = (
        "azure:///subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/"
        "virtualMachineScaleSets/aks-gpu-123-vmss/virtualMachines/4"
    )
    assert parse_provider_id(vmss) == ("azure", "aks-gpu-123-vmss_4")
    assert parse_provider_id("gce://proj/us-central1-a/gke-n-1") == ("gcp", "gke-n-1")
    assert parse_provider_id(None) == (None, None)


# --------------------------------------------------------------------------------------------- events


def test_eventbridge_samples(samples: Path, store: RawStore) -> None:
    folder = samples / "aws-events"
    outs = land(
        store,
        folder / "nth_spot_interruption_warning_example.json",
        folder / "nth_ec2_state_change_example.json",
    )
    assert [(o.status, o.format, o.rows) for o in outs] == [("loaded", "eventbridge_json", 1)] * 2
    got = rows(
        store,
        "select detail_type, account, region, availability_zone, instance_id, state, instance_action, time "
        "from raw.aws_events order by detail_type",
    )
    assert got == [
        ("EC2 Instance State-change Notification", "123456789012", "us-east-1", None, "i-abcd1111",
         "pending", None, datetime(2015, 11, 11, 21, 29, 54, tzinfo=UTC)),
        ("EC2 Spot Instance Interruption Warning", "<account_number>", "us-east-1", "us-east-1b",
         "i-0b662ef9931388ba0", None, "terminate", datetime(1970, 1, 1, tzinfo=UTC)),
    ]  # fmt: skip


def test_eventbridge_array_and_json_lines(samples: Path, tmp_path: Path, store: RawStore) -> None:
    folder = samples / "aws-events"
    events = [json.loads(p.read_text()) for p in sorted(folder.glob("*.json"))]
    array = write(tmp_path, "array.json", json.dumps(events, indent=2))
    lines = write(
        tmp_path, "lines.jsonl", "\n".join(json.dumps({**e, "id": e["id"] + "x"}) for e in events) + "\n"
    )
    outs = land(store, array, lines)
    assert [(o.status, o.rows) for o in outs] == [("loaded", 2), ("loaded", 2)]
    broken = write(
        tmp_path, "broken.jsonl", json.dumps(events[0]) + "\n" + '{"id": "x", "detail-type": ' + "\n"
    )
    out = one(store, broken)
    assert out.status == "rejected" and out.error.startswith(f"{broken}:2: not JSON")


def test_eventbridge_bad_time(samples: Path, tmp_path: Path, store: RawStore) -> None:
    event = json.loads((samples / "aws-events" / "nth_ec2_state_change_example.json").read_text())
    path = write(tmp_path, "e.json", json.dumps({**event, "time": "yesterday"}))
    out = one(store, path)
    assert (
        out.error == f"{path}:1: column 'time': 'yesterday' is not a time "
        "(expected ISO 8601 such as 2026-10-01T00:00:00Z)"
    )


# ------------------------------------------------------------------------------------ business, jobs csv


def test_business_value_with_three_decimals_is_rejected(tmp_path: Path, store: RawStore) -> None:
    path = write(
        tmp_path, "v.csv", "month,project,value,currency,basis\n2026-10,a,10.00,USD,x\n2026-10,b,1.234,USD,\n"
    )
    out = one(store, path)
    assert out.format == "business_value_csv"
    assert out.error == (
        f"{path}:3: column 'value': '1.234' does not fit "
        "(expected a decimal number with at most 2 decimal places)"
    )


def test_inference_requests_bad_date_and_negative_count(tmp_path: Path, store: RawStore) -> None:
    head = "date,project,model,model_version,environment,requests\n"
    bad_date = write(tmp_path, "d.csv", head + "2026-13-01,p,m,v1,production,5\n")
    assert one(store, bad_date).error == (
        f"{bad_date}:2: column 'date': '2026-13-01' does not fit (expected a date YYYY-MM-DD)"
    )
    negative = write(tmp_path, "n.csv", head + "2026-10-01,p,m,v1,production,-5\n")
    assert "column 'requests': '-5' does not fit" in one(store, negative).error


def test_training_runs_take_tokens_or_samples_and_reject_a_negative_count(
    tmp_path: Path, store: RawStore
) -> None:
    tokens_only = write(tmp_path, "t.csv", "run_id,tokens_processed\nllm-1,2000000000\n")
    out = one(store, tokens_only)
    assert (out.status, out.format, out.rows) == ("loaded", "training_runs_csv", 1)
    both = write(tmp_path, "b.csv", "run_id,tokens_processed,samples_processed\nr1,,5000\nr2,-3,\n")
    out = one(store, both)
    assert out.format == "training_runs_csv"
    assert out.error == (
        f"{both}:3: column 'tokens_processed': '-3' does not fit (expected a whole number ≥ 0)"
    )


GOOD_JOBS = (
    "job_id,scheduler,cluster,user,team,project,workload_class,submitted_at,started_at,ended_at,state,gpus,"
    "gpu_model,hosts,gpu_uuids\n"
    "raysubmit_1,ray,ray-prod,ann,nlp,chat,training,2026-10-01T00:00:00Z,2026-10-01T02:05:00+02:00,"
    '2026-10-01 03:00:00,SUCCEEDED,8,H100-SXM5-80GB,"gpu-[01-02]",GPU-a;GPU-b\n'
    "sm-train-7,sagemaker,,bob,,,inference,2026-10-01T01:00:00Z,,,InProgress,1,,,\n"
)


def test_generic_jobs_csv_lands_typed(tmp_path: Path, store: RawStore) -> None:
    path = write(tmp_path, "jobs.csv", GOOD_JOBS)
    out = one(store, path)
    assert (out.status, out.format, out.rows) == ("loaded", "generic_jobs_csv", 2)
    got = rows(
        store,
        "select job_id, started_at, ended_at, gpus, host_list, gpu_uuid_list, team "
        "from raw.generic_jobs order by 1",
    )
    assert got[0] == (
        "raysubmit_1",
        datetime(2026, 10, 1, 0, 5, tzinfo=UTC),
        datetime(2026, 10, 1, 3, tzinfo=UTC),
        8,
        ["gpu-01", "gpu-02"],
        ["GPU-a", "GPU-b"],
        "nlp",
    )
    assert got[1][1:7] == (None, None, 1, [], [], None)


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ((",8,H100", ",eight,H100"), ":2: column 'gpus': 'eight' does not fit (expected a whole number ≥ 0)"),
        (
            ("2026-10-01 03:00:00", "2026-09-30 03:00:00"),
            ":2: column 'ended_at': 2026-09-30 03:00:00+00:00 is before started_at",
        ),
        (("job_id,", "jobid,"), ":1: column 'jobid': unknown column 'jobid'"),
        (
            (",training,", ",learning,"),
            ":2: column 'workload_class': 'learning' does not fit (expected one of training",
        ),
    ],
)
def test_generic_jobs_csv_errors(
    tmp_path: Path, store: RawStore, change: tuple[str, str], expected: str
) -> None:
    path = write(tmp_path, "jobs.csv", GOOD_JOBS.replace(*change))
    (out,) = ingest([path], store, format_name="generic_jobs_csv", progress=False)
    assert out.status == "rejected"
    assert out.error.startswith(f"{path}{expected}"), out.error
