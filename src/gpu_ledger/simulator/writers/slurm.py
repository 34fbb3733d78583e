"""Render the fleet's Slurm jobs as `sacct --parsable2` prints them.

Layout: one file per Slurm cluster, `<out>/schedulers/slurm/sacct_<cluster>.txt`, the output of

    TZ=UTC sacct --clusters=<cluster> --allusers --duplicates --parsable2 \
        --starttime=<window start> --endtime=<window end> --format=<SACCT_FIELDS>

with its header row. Why each quirk is kept (ingest must handle every one of them):

- The fleet's Frankfurt cluster (`hpc-fra`) runs sacct on a host in Europe/Berlin with
  `SLURM_TIME_FORMAT=%Y-%m-%dT%H:%M:%S%z`, as sites that want unambiguous times do: its times carry
  their UTC offset (`2026-10-01T02:56:36+0200`, `+0100` after the October DST change), which must win
  over ingest's `--timezone`. Other clusters print UTC without an offset.

- `--parsable2`: fields joined by `|`, no trailing `|`. `JobName` is the last field because a job name
  may itself contain `|`; a reader must split at most `len(SACCT_FIELDS) - 1` times.
- Times are otherwise `YYYY-MM-DDTHH:MM:SS` in UTC without an offset. A start or end that has not happened is
  `Unknown` (pending jobs, running jobs' End); a job cancelled while still pending has Start `None`
  and End at the cancellation, as slurmdbd records it.
- Step rows follow their job: `<id>.batch` (first node only), `<id>.extern` (every node) and `<id>.0`
  (the srun, every node) for batch work, `<id>.interactive` and `<id>.extern` for development
  sessions. Steps have empty User, Group, Partition, QOS, Timelimit, ReqTRES and Comment, and their
  AllocTRES has no `billing=` except on `.extern`. Steps are not allocations: the job row is.
- Array tasks are `<parent>_<index>`; their JobIDRaw is the task's own id except for the last task,
  which keeps the parent's (both come from the fleet's jobs frame as written).
- Requeued jobs (`--duplicates`): every attempt is a row with the same JobID and JobIDRaw; all but
  the last attempt show State `REQUEUED`.
- NodeList is a Slurm hostlist expression (`gpu-[01-04,07]`), `None assigned` before a job starts.
- AllocTRES is `billing=B,cpu=C,gres/gpu:<type>=N,gres/gpu=N,mem=M,node=K`; `gres/gpu` is the total
  (do not add the typed entry to it). A MIG slice is `gres/gpu:<type>_<profile>=1,gres/gpu=1`; a job
  sharing a GPU holds `gres/shard=N` or `gres/mps=N` and no gres/gpu, as Slurm 22.05 prints it
  (`billing=1,cpu=1,gres/shard=2,mem=1000M,node=1`).
- WCKey is the job's `project-id` label (empty when it has none); Comment carries the job's labels as
  `key=value` pairs joined by `,` (the site convention `sbatch --comment=team-id=...,project-id=...`).
- Group is the user's own name (user private groups); QOS is `normal`.
- Elapsed is `[D-]HH:MM:SS`; for a running job it counts up to the window end, when sacct "ran".
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import polars as pl

from gpu_ledger.simulator import catalogue
from gpu_ledger.simulator.fleet import SLURM
from gpu_ledger.simulator.model import Fleet

SACCT_FIELDS: tuple[str, ...] = (
    "JobID",
    "JobIDRaw",
    "Cluster",
    "User",
    "Group",
    "Account",
    "WCKey",
    "Partition",
    "QOS",
    "State",
    "ExitCode",
    "Submit",
    "Eligible",
    "Start",
    "End",
    "Elapsed",
    "ElapsedRaw",
    "Timelimit",
    "NNodes",
    "NCPUS",
    "ReqMem",
    "ReqTRES",
    "AllocTRES",
    "NodeList",
    "Comment",
    "JobName",
)

# clusters whose sacct host prints local times with their offset (SLURM_TIME_FORMAT=...%z)
OFFSET_TIME_ZONES: dict[str, ZoneInfo] = {SLURM: ZoneInfo("Europe/Berlin")}

SEPARATOR = "|"
NONE_ASSIGNED = "None assigned"
# TRES billing weight of one whole GPU, as a site's TRESBillingWeights would set it
GPU_BILLING_WEIGHT = 16

_TRAILING_NUMBER = re.compile(r"^(.*?)(\d+)$")
_JOB_ID = re.compile(r"^(\d+)(?:_(\d+|\[[^\]]*\]))?")
_MIG_G = re.compile(r"^(\d+)g\.")


# --------------------------------------------------------------------------------------------- hostlist


def compress_hostlist(hosts: Iterable[str]) -> str:
    """Slurm's hostlist form of a set of node names: `gpu-01,gpu-02,gpu-04` -> `gpu-[01-02,04]`.

    Names are grouped by the text before their trailing number; a range keeps the zero padding of its
    first number (`09-10`), so `expand_hostlist` gives back exactly the names that went in.
    """
    unique = sorted(set(hosts), key=_host_sort_key)
    if not unique:
        return ""
    out: list[str] = []
    groups: dict[str, list[str]] = {}
    order: list[str] = []
    for host in unique:
        m = _TRAILING_NUMBER.match(host)
        if m is None:
            out_key = "\0" + host
            groups[out_key] = [host]
            order.append(out_key)
            continue
        prefix = m.group(1)
        if prefix not in groups:
            groups[prefix] = []
            order.append(prefix)
        groups[prefix].append(m.group(2))
    for key in order:
        if key.startswith("\0"):
            out.append(key[1:])
            continue
        digits = sorted(groups[key], key=lambda d: (int(d), len(d)))
        ranges: list[tuple[str, str]] = []
        for d in digits:
            if ranges:
                lo, hi = ranges[-1]
                if int(d) == int(hi) + 1 and str(int(d)).zfill(len(lo)) == d:
                    ranges[-1] = (lo, d)
                    continue
            ranges.append((d, d))
        if len(ranges) == 1 and ranges[0][0] == ranges[0][1]:
            out.append(key + ranges[0][0])
        else:
            body = ",".join(lo if lo == hi else f"{lo}-{hi}" for lo, hi in ranges)
            out.append(f"{key}[{body}]")
    return ",".join(out)


def expand_hostlist(expr: str) -> list[str]:
    """The node names a hostlist expression stands for (inverse of `compress_hostlist`)."""
    if not expr or expr == NONE_ASSIGNED:
        return []
    hosts: list[str] = []
    for part in _split_top_level(expr):
        m = re.match(r"^(.*?)\[([^\]]+)\](.*)$", part)
        if m is None:
            hosts.append(part)
            continue
        prefix, body, suffix = m.groups()
        for rng in body.split(","):
            lo, _, hi = rng.partition("-")
            hi = hi or lo
            for n in range(int(lo), int(hi) + 1):
                hosts.append(f"{prefix}{str(n).zfill(len(lo))}{suffix}")
    return hosts


def _split_top_level(expr: str) -> list[str]:
    """Split a hostlist at the commas that are outside brackets."""
    parts, depth, cur = [], 0, []
    for ch in expr:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return [p for p in parts if p]


def _host_sort_key(host: str) -> tuple[str, int, int]:
    m = _TRAILING_NUMBER.match(host)
    if m is None:
        return (host, -1, 0)
    return (m.group(1), int(m.group(2)), len(m.group(2)))


# --------------------------------------------------------------------------------------------- formats


def format_time(ts: datetime | None, missing: str = "Unknown", zone: ZoneInfo | None = None) -> str:
    """sacct's time form: `2024-05-01T12:00:00` on a host in UTC, or the local time with its offset
    (`2024-05-01T14:00:00+0200`) where the site sets `SLURM_TIME_FORMAT=%Y-%m-%dT%H:%M:%S%z`; `missing`
    for no time."""
    if ts is None:
        return missing
    if zone is not None:
        return ts.astimezone(zone).strftime("%Y-%m-%dT%H:%M:%S%z")
    return ts.strftime("%Y-%m-%dT%H:%M:%S")


def format_duration(seconds: int) -> str:
    """sacct's `[D-]HH:MM:SS` for Elapsed and Timelimit."""
    seconds = max(0, int(seconds))
    days, rem = divmod(seconds, 86400)
    hours, rem = divmod(rem, 3600)
    minutes, secs = divmod(rem, 60)
    hms = f"{hours:02d}:{minutes:02d}:{secs:02d}"
    return f"{days}-{hms}" if days else hms


def format_mem(mem_mb: int | None) -> str:
    """Memory as Slurm prints TRES memory: whole GiB as `128G`, otherwise `10000M`."""
    if mem_mb is None:
        return ""
    mem_mb = int(mem_mb)
    if mem_mb and mem_mb % 1024 == 0:
        return f"{mem_mb // 1024}G"
    return f"{mem_mb}M"


def gres_type(gpu_model: str | None, mig_profile: str | None = None) -> str | None:
    """The GRES type name an admin gives a GPU model in gres.conf (`H100-SXM5-80GB` -> `h100`).

    The 80 GB A100 gets `a100_80` beside the 40 GB `a100`, as real sites name them; a MIG slice is
    typed `<type>_<profile>` (`a100_3g.40gb`).
    """
    if not gpu_model:
        return None
    head = gpu_model.split("-")[0].lower()
    if head == "a100" and "80GB" in gpu_model.upper():
        head = "a100_80"
    return f"{head}_{mig_profile}" if mig_profile else head


def tres_string(
    *,
    cpus: int,
    mem_mb: int | None,
    gpus: int,
    gpu_type: str | None,
    nodes: int,
    billing: int | None,
    sharing: tuple[str, int] | None = None,
) -> str:
    """A TRES string in Slurm's fixed order: billing, cpu, gres/gpu:<type>, gres/gpu, mem, node; a job
    sharing a GPU holds `gres/shard=N` or `gres/mps=N` (`sharing`) where the GPU entries would be."""
    parts: list[str] = []
    if billing is not None:
        parts.append(f"billing={billing}")
    parts.append(f"cpu={cpus}")
    if sharing:
        parts.append(f"gres/{sharing[0]}={sharing[1]}")
    elif gpus:
        if gpu_type:
            parts.append(f"gres/gpu:{gpu_type}={gpus}")
        parts.append(f"gres/gpu={gpus}")
    mem = format_mem(mem_mb)
    if mem:
        parts.append(f"mem={mem}")
    parts.append(f"node={nodes}")
    return ",".join(parts)


def _billing(cpus: int, gpus: int, gpu_model: str | None, mig_profile: str | None) -> int:
    """TRES billing units: CPUs plus a weight per GPU (a MIG slice weighs its share, g / its GPU's compute
    slices)."""
    if mig_profile:
        m = _MIG_G.match(mig_profile)
        g = int(m.group(1)) if m else 1
        return cpus + max(1, round(GPU_BILLING_WEIGHT * g / catalogue.gpu_compute_slices(gpu_model)))
    return cpus + GPU_BILLING_WEIGHT * gpus


def _labels_dict(labels: Sequence[dict] | None) -> dict[str, str]:
    return {lab["key"]: lab["value"] for lab in labels or [] if lab.get("key")}


def _comment(labels: dict[str, str]) -> str:
    """Labels as the `--comment` convention: `k=v,k=v` (no `|`, which would break the row)."""
    return ",".join(f"{k}={v}".replace("|", "_").replace(",", "_") for k, v in labels.items())


def _clean(value: object) -> str:
    """A field value as sacct would print it: no `|` (except in JobName) and no newlines."""
    if value is None:
        return ""
    return str(value).replace("|", "_").replace("\n", " ")


def _sort_key(row: dict) -> tuple:
    m = _JOB_ID.match(row["job_id"] or "")
    if m is None:
        return (1, row["job_id"] or "", 0, "", row["attempt"] or 0)
    task = m.group(2)
    task_num = int(task) if task and task.isdigit() else -1
    return (0, "", int(m.group(1)), task_num, task or "", row["attempt"] or 0)


# --------------------------------------------------------------------------------------------- writer


def _utc(ts: datetime) -> datetime:
    """The config's window bounds may be naive (meaning UTC); job times from the frames are aware."""
    return ts if ts.tzinfo is not None else ts.replace(tzinfo=UTC)


_STEP_STATE: dict[str, tuple[str, str, str]] = {
    # job state word -> (.batch/.interactive state, .extern state, .0 state); exit codes follow
    "COMPLETED": ("COMPLETED", "COMPLETED", "COMPLETED"),
    "FAILED": ("FAILED", "COMPLETED", "FAILED"),
    "CANCELLED": ("CANCELLED", "COMPLETED", "CANCELLED"),
    "TIMEOUT": ("CANCELLED", "COMPLETED", "CANCELLED"),
    "REQUEUED": ("CANCELLED", "COMPLETED", "CANCELLED"),
    "PREEMPTED": ("CANCELLED", "COMPLETED", "CANCELLED"),
    "NODE_FAIL": ("CANCELLED", "CANCELLED", "CANCELLED"),
    "OUT_OF_MEMORY": ("OUT_OF_MEMORY", "COMPLETED", "OUT_OF_MEMORY"),
    "RUNNING": ("RUNNING", "RUNNING", "RUNNING"),
}


def _step_exit(step_state: str, job_exit: str) -> str:
    """A step's ExitCode: signals show as `0:15` (SIGTERM), `0:9`, OOM as `0:125`."""
    if step_state == "CANCELLED":
        return "0:15"
    if step_state == "OUT_OF_MEMORY":
        return "0:125"
    if step_state == "FAILED":
        return job_exit if job_exit != "0:0" else "1:0"
    return "0:0"


def _job_rows(job: dict, state: str, window_end: datetime, zone: ZoneInfo | None) -> list[list[str]]:
    """The job row of one attempt and its step rows, each a list of field values (times in `zone`
    with their offset, or naive UTC)."""
    job_id: str = job["job_id"]
    raw: str = job["job_id_raw"] or job_id
    hosts: list[str] = list(job["hostnames"] or [])
    started, ended, submitted = job["started_at"], job["ended_at"], job["submitted_at"]
    never_started = started is None
    gpus = int(job["gpus_allocated"] or 0)
    cpus = int(job["cpus"] or 0)
    mem_mb = job["mem_mb"]
    mig = job["mig_profile"]
    gtype = gres_type(job["gpu_model"], mig)
    nnodes = max(1, len(hosts))
    labels = _labels_dict(job["labels"])
    exit_code = job["exit_code"] or "0:0"
    sharing = (job["gpu_sharing"], int(job["gpu_sharing_count"])) if job["gpu_sharing"] else None
    billing = _billing(cpus, 0 if sharing else gpus, job["gpu_model"], mig)

    if never_started:
        start_s = "None" if ended is not None else "Unknown"
        end_s = format_time(ended, zone=zone)
        elapsed = 0
        nodelist = NONE_ASSIGNED
        alloc_tres = ""
    else:
        start_s = format_time(started, zone=zone)
        end_s = format_time(ended, zone=zone)
        elapsed = int(((ended or window_end) - started).total_seconds())
        nodelist = compress_hostlist(hosts)
        alloc_tres = tres_string(
            cpus=cpus,
            mem_mb=mem_mb,
            gpus=gpus,
            gpu_type=gtype,
            nodes=nnodes,
            billing=billing,
            sharing=sharing,
        )
    req_tres = tres_string(
        cpus=cpus, mem_mb=mem_mb, gpus=gpus, gpu_type=None, nodes=nnodes, billing=billing, sharing=sharing
    )
    limit = job["time_limit_min"]
    fields = {
        "JobID": job_id,
        "JobIDRaw": raw,
        "Cluster": job["cluster"],
        "User": job["user"],
        "Group": job["user"],
        "Account": job["slurm_account"],
        "WCKey": labels.get("project-id", ""),
        "Partition": job["partition"],
        "QOS": "normal",
        "State": state,
        "ExitCode": exit_code,
        "Submit": format_time(submitted, zone=zone),
        "Eligible": format_time(submitted, zone=zone),
        "Start": start_s,
        "End": end_s,
        "Elapsed": format_duration(elapsed),
        "ElapsedRaw": str(elapsed),
        "Timelimit": format_duration(int(limit) * 60) if limit is not None else "UNLIMITED",
        "NNodes": str(nnodes),
        "NCPUS": str(cpus),
        "ReqMem": format_mem(mem_mb),
        "ReqTRES": req_tres,
        "AllocTRES": alloc_tres,
        "NodeList": nodelist,
        "Comment": _comment(labels),
        "JobName": job["name"] or "",
    }
    rows = [[_clean(fields[f]) if f != "JobName" else fields[f] for f in SACCT_FIELDS]]
    if never_started:
        return rows

    word = state.split()[0]
    batch_state, extern_state, srun_state = _STEP_STATE.get(word, (word, "COMPLETED", word))
    interactive = job["workload_class"] == "development"
    per_node_cpus = max(1, cpus // nnodes)
    per_node_gpus = gpus // nnodes if gpus >= nnodes else gpus
    per_node_mem = int(mem_mb) // nnodes if mem_mb is not None else None

    def step(suffix: str, st: str, start: datetime, end_offset_s: int, nodes: list[str], name: str) -> None:
        n = len(nodes)
        end = None if ended is None else ended + timedelta(seconds=end_offset_s)
        if end is not None and end < start:
            end = start
        el = int(((end or window_end) - start).total_seconds())
        tres = tres_string(
            cpus=per_node_cpus * n if n < nnodes else cpus,
            mem_mb=per_node_mem * n if (per_node_mem is not None and n < nnodes) else mem_mb,
            gpus=per_node_gpus * n if n < nnodes else gpus,
            gpu_type=gtype,
            nodes=n,
            billing=billing if suffix == "extern" else None,
            sharing=sharing,
        )
        values = {
            "JobID": f"{job_id}.{suffix}",
            "JobIDRaw": f"{raw}.{suffix}",
            "Cluster": job["cluster"],
            "Account": job["slurm_account"],
            "State": st,
            "ExitCode": _step_exit(st, exit_code),
            "Submit": format_time(start, zone=zone),
            "Eligible": format_time(start, zone=zone),
            "Start": format_time(start, zone=zone),
            "End": format_time(end, zone=zone),
            "Elapsed": format_duration(el),
            "ElapsedRaw": str(el),
            "NNodes": str(n),
            "NCPUS": str(per_node_cpus * n if n < nnodes else cpus),
            "AllocTRES": tres,
            "NodeList": compress_hostlist(nodes),
            "JobName": name,
        }
        rows.append([_clean(values.get(f, "")) if f != "JobName" else values[f] for f in SACCT_FIELDS])

    # steps begin a second after the allocation and are reaped a few seconds after it ends
    srun_start = min(started + timedelta(seconds=1), ended) if ended is not None else started
    if interactive:
        step("interactive", batch_state, started, 1, hosts[:1], "interactive")
        step("extern", extern_state, started, 3, hosts, "extern")
    else:
        step("batch", batch_state, started, 1, hosts[:1], "batch")
        step("extern", extern_state, started, 3, hosts, "extern")
        step("0", srun_state, srun_start, 2, hosts, _srun_name(job))
    return rows


def _srun_name(job: dict) -> str:
    """The program the job's srun step ran: torchrun for multi-node training, python otherwise."""
    if job["workload_class"] == "training" and len(job["hostnames"] or []) > 1:
        return "torchrun"
    return "python"


def write_sacct(fleet: Fleet, out: Path) -> Path:
    """Write `sacct_<cluster>.txt` for every Slurm cluster; returns the folder that holds them.

    Attempts of one job (same cluster and JobID) are ordered by `attempt`; every attempt but the last
    is printed as `REQUEUED`, whatever state the jobs frame gives it, because that is the only state
    slurmdbd keeps for a requeued record.
    """
    folder = out / "schedulers" / "slurm"
    folder.mkdir(parents=True, exist_ok=True)
    jobs = fleet.jobs.filter(pl.col("scheduler") == "slurm")
    if jobs.is_empty():
        return folder
    window_end = _utc(fleet.config.end)
    last_attempt = jobs.group_by(["cluster", "job_id"]).agg(pl.col("attempt").max().alias("_last"))
    jobs = jobs.join(last_attempt, on=["cluster", "job_id"], how="left")
    for cluster in sorted(jobs["cluster"].unique().to_list()):
        rows = sorted(jobs.filter(pl.col("cluster") == cluster).to_dicts(), key=_sort_key)
        lines = [SEPARATOR.join(SACCT_FIELDS)]
        for job in rows:
            state = job["state"] or "UNKNOWN"
            if job["attempt"] is not None and job["attempt"] < job["_last"]:
                state = "REQUEUED"
            for values in _job_rows(job, state, window_end, OFFSET_TIME_ZONES.get(cluster)):
                lines.append(SEPARATOR.join(values))
        path = folder / f"sacct_{cluster}.txt"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder
