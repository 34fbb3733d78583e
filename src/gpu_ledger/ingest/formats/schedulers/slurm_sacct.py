"""Slurm accounting as `sacct --parsable2` prints it, with or without its header row.

What a file is, and how it is recognised:
- with a header: the first line is `|`-separated sacct field names, one of them `JobID` or
  `JobIDRaw` (any case);
- without one (`--noheader`): the first line starts with a Slurm job id (`123`, `123_4`, `123_[1-3]`,
  `123+0`, each optionally `.step`) followed by `|`, and carries a sacct time or a known state word.
  The field list then comes from `--sacct-fields`, a saved default, or a recognised collector's
  list (Open XDMoD, Sonar): see `sacct_fields`. A header-bearing file never changes the default.

Every line lands in `raw.slurm_sacct`, allocations and steps alike (steps carry `step_id`; dbt keeps
the allocation rows), typed, with the fields this project uses as named columns and every other
field kept in `extra` (MAP of the lower-cased sacct field name to the printed value), so nothing
sacct said is lost. Quirks handled:
- `JobName` may contain `|`: lines are split at most (fields - 1) times, so JobName must be last
  (a line with more separators than fields is rejected unless JobName is the last field);
- a list with `JobIDRaw` but no `JobID` identifies each job by its raw id: an array task is then
  its own job (its raw id is unique), the array it belongs to is not known;
- times are the sacct host's local time without offset, read in `Options.timezone`, unless they
  carry one (`SLURM_TIME_FORMAT=%Y-%m-%dT%H:%M:%S%z` prints `2022-02-21T14:37:02+0100`; `+01:00`
  and `Z` are read too): an explicit offset wins over `--timezone`. All are stored as UTC.
  `Unknown`, `None` and blank are null. An ambiguous wall time in the autumn DST fold is taken as
  its first occurrence; a time inside the spring DST gap cannot be printed by sacct, so it is
  rejected (the time zone given is likely wrong);
- blank or whitespace-only fields are null, others are stripped (JobName and Comment are kept as
  printed); numbers are whole, ASCII and not negative (uids, counts, seconds, priorities), exit
  codes `STATUS:SIGNAL` of up to 3 digits each, durations of up to 6 digits a part, else the file
  is rejected with one line naming line, field and what was expected;
- `CANCELLED by 1001` -> state `CANCELLED`, `cancelled_by_uid` 1001, `state_raw` as printed;
- job ids: `123_4` (array task: base 123, task `4`), `123_[1-3]` (pending array: task `[1-3]`,
  `is_pending_array`), `123+0` (heterogeneous component), `.batch` / `.extern` / `.interactive` /
  `.0` steps (`step_id`); `allocation_job_id` is the job id without its step, to join steps to
  their allocation;
- `AllocTRES`: `gres/gpu=N` is the total; typed entries (`gres/gpu:a100=1`) are never added to it.
  Only when no untyped entry exists (old Slurm) are the typed entries summed. `gpu_type` is the type
  name(s) of the typed entries (`a100`, `a100_3g.20gb` for a MIG slice); a GPU entry whose value is
  not a count (`gres/gpu=`, `gres/gpu=-1`) rejects the file, other entries are not read;
- `NodeList` is kept raw and expanded into `nodes` (VARCHAR[]); `None assigned` gives [];
- states: every Slurm base state (plus `CANCELLED by N`) is known. A value shaped like a state word
  but unknown to this release (a newer Slurm's `LAUNCH_FAILED`, or xdmod's test values FOO/BAR)
  lands with `state_known = false`, so a Slurm upgrade never makes a month of accounting
  unloadable; dbt treats it as end_reason unknown. A value not shaped like a state at all (lower
  case, digits, a time) means the field list does not fit the file, and the file is rejected.

Parsing is vectorised in Polars (`splitn` per line, casts per column); the few distinct TRES strings
and hostlists are parsed once each. 100k lines land in under a second (measured 0.8 s).
"""

from __future__ import annotations

import re
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import polars as pl

from gpu_ledger.ingest.base import Format, LoadContext
from gpu_ledger.ingest.formats.schedulers.sacct_fields import SAMPLE_LINES, field_list, header_fields
from gpu_ledger.ingest.formats.schedulers.sacct_values import (
    NO_LIMIT,
    durations,
    fail_at,
    ints,
    parse_tres_column,
    times,
)
from gpu_ledger.ingest.hostlist import HostlistError, expand_many
from gpu_ledger.ingest.sniff import Sniff, open_text

TABLE = "slurm_sacct"

# Slurm base job states (job_state_string in src/common/slurm_protocol_defs.c, 23.x-25.x)
KNOWN_STATES = frozenset(
    {
        "BOOT_FAIL",
        "CANCELLED",
        "COMPLETED",
        "COMPLETING",
        "CONFIGURING",
        "DEADLINE",
        "FAILED",
        "NODE_FAIL",
        "OUT_OF_MEMORY",
        "PENDING",
        "PREEMPTED",
        "REQUEUED",
        "REQUEUE_FED",
        "REQUEUE_HOLD",
        "RESIZING",
        "RESV_DEL_HOLD",
        "REVOKED",
        "RUNNING",
        "SIGNALING",
        "SPECIAL_EXIT",
        "STAGE_OUT",
        "STOPPED",
        "SUSPENDED",
        "TIMEOUT",
    }
)
_STATE_SHAPE = r"^[A-Z][A-Z_]*(?: by [0-9]{1,10})?\+?$"  # sacct may append '+' when a state is truncated

# sacct field name (lower case) -> column, for fields kept as text as printed
TEXT_FIELDS = {
    "jobid": "job_id",
    "jobidraw": "job_id_raw",
    "cluster": "cluster",
    "user": "user_name",
    "group": "group_name",
    "account": "account",
    "partition": "partition",
    "wckey": "wckey",
    "qos": "qos",
    "reqmem": "req_mem",
    "reqtres": "req_tres",
    "alloctres": "alloc_tres",
    "nodelist": "node_list",
    "comment": "comment",
    "jobname": "job_name",
    "exitcode": "exit_code",
    "reservation": "reservation",
    "submitline": "submit_line",
}
INT_FIELDS = {
    "uid": "uid",
    "gid": "gid",
    "nnodes": "nnodes",
    "ncpus": "ncpus",
    "alloccpus": "alloc_cpus",
    "reqcpus": "req_cpus",
    "priority": "priority",
}
TIME_FIELDS = {"submit": "submit_at", "eligible": "eligible_at", "start": "start_at", "end": "end_at"}
VERBATIM = {"jobname", "comment"}  # free text kept exactly as printed; every other field is stripped
HANDLED = {*TEXT_FIELDS, *INT_FIELDS, *TIME_FIELDS, "state", "elapsed", "elapsedraw", "timelimit",
           "timelimitraw"}  # fmt: skip

# column order of raw.slurm_sacct (columns a file does not carry are null)
COLUMNS: dict[str, pl.DataType] = {
    "cluster": pl.String,
    "job_id": pl.String,
    "job_id_raw": pl.String,
    "base_job_id": pl.String,
    "array_task_id": pl.String,
    "is_pending_array": pl.Boolean,
    "het_offset": pl.Int32,
    "step_id": pl.String,
    "allocation_job_id": pl.String,
    "user_name": pl.String,
    "uid": pl.Int64,
    "group_name": pl.String,
    "gid": pl.Int64,
    "account": pl.String,
    "partition": pl.String,
    "wckey": pl.String,
    "qos": pl.String,
    "state": pl.String,
    "state_raw": pl.String,
    "state_known": pl.Boolean,
    "cancelled_by_uid": pl.Int64,
    "exit_code": pl.String,
    "exit_status": pl.Int32,
    "exit_signal": pl.Int32,
    "submit_at": pl.Datetime("us", "UTC"),
    "eligible_at": pl.Datetime("us", "UTC"),
    "start_at": pl.Datetime("us", "UTC"),
    "end_at": pl.Datetime("us", "UTC"),
    "elapsed_s": pl.Int64,
    "timelimit_min": pl.Int64,
    "nnodes": pl.Int64,
    "ncpus": pl.Int64,
    "alloc_cpus": pl.Int64,
    "req_cpus": pl.Int64,
    "priority": pl.Int64,
    "req_mem": pl.String,
    "req_tres": pl.String,
    "alloc_tres": pl.String,
    "alloc_gpus": pl.Int64,
    "gpu_type": pl.String,
    "req_gpus": pl.Int64,
    "node_list": pl.String,
    "nodes": pl.List(pl.String),
    "reservation": pl.String,
    "comment": pl.String,
    "submit_line": pl.String,
    "job_name": pl.String,
}

_JOB_ID = r"^([0-9]+)(?:_([0-9]+|\[[^\]]*\]))?(?:\+([0-9]{1,9}))?(?:\.([^.|]+))?$"
_HEAD_JOB_ID = re.compile(r"^\d+(?:_(?:\d+|\[[^\]|]*\]))?(?:\+\d+)?(?:\.[\w-]+)?\|")
_HEAD_EVIDENCE = re.compile(
    r"\|(?:\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:Z|[+-]\d\d:?\d\d)?|Unknown|None|"
    + "|".join(sorted(KNOWN_STATES))
    + r")(?:\||$| by)"
)


# ------------------------------------------------------------------------------------------ detection


def detect(s: Sniff) -> bool:
    line = s.first_line
    if "|" not in line:
        return False
    if header_fields(line) is not None:
        return True
    return bool(_HEAD_JOB_ID.match(line)) and line.count("|") >= 3 and bool(_HEAD_EVIDENCE.search(line))


# ------------------------------------------------------------------------------------------ parsing


def _zone(ctx: LoadContext) -> str:
    try:
        ZoneInfo(ctx.options.timezone)
    except (ZoneInfoNotFoundError, ValueError):
        raise ctx.error(
            f"unknown time zone {ctx.options.timezone!r}",
            expected="an IANA time zone name such as UTC or Europe/Oslo (--timezone)",
        ) from None
    return ctx.options.timezone


def _split_lines(ctx: LoadContext) -> tuple[list[str] | None, pl.DataFrame]:
    """(header fields or None, frame of `line` with its 1-based `_source_row`), blank lines dropped."""
    with open_text(ctx.path) as f:
        text = f.read()
    lines = text.split("\n")
    header = header_fields(lines[0].rstrip("\r")) if lines else None
    frame = pl.DataFrame({"line": lines}).with_row_index("_source_row", offset=1)
    frame = frame.with_columns(pl.col("line").str.strip_suffix("\r"))
    frame = frame.filter(pl.col("line").str.strip_chars() != "")
    if header is not None:
        # a concatenation of several sacct runs repeats the header: drop every copy of it
        frame = frame.filter(pl.col("line") != lines[0].rstrip("\r"))
    return header, frame


def load(ctx: LoadContext) -> None:
    zone = _zone(ctx)
    header, lines = _split_lines(ctx)
    fields = field_list(ctx, header, lines["line"].head(SAMPLE_LINES).to_list())
    lower = [f.lower() for f in fields]
    if len(set(lower)) != len(lower):
        raise ctx.error(f"the field list names a field twice: {','.join(fields)}", expected="distinct fields")
    n = len(fields)
    seps = lines["line"].str.count_matches("|", literal=True)
    few = seps < n - 1
    if few.any():
        i = int(few.arg_true()[0])
        raise ctx.error(
            f"{int(seps[i]) + 1} fields, the field list has {n} (a truncated line, or the wrong field list)",
            line=int(lines["_source_row"][i]),
            column=fields[int(seps[i]) + 1],
            expected=f"{n} '|'-separated fields: {','.join(fields)}",
        )
    if lower[-1] != "jobname":
        many = seps > n - 1
        if many.any():
            i = int(many.arg_true()[0])
            raise ctx.error(
                f"{int(seps[i]) + 1} fields, the field list has {n}; a JobName containing '|' "
                "can only be read when JobName is the last field",
                line=int(lines["_source_row"][i]),
                expected=f"{n} '|'-separated fields with JobName last",
            )
    split = lines["line"].str.splitn("|", n).struct.rename_fields([f"f:{f}" for f in lower]).struct.unnest()
    frame = pl.concat([lines.select("_source_row"), split], how="horizontal").with_columns(
        pl.col(f"f:{f}").str.strip_chars().replace("", None) for f in lower if f not in VERBATIM
    )
    id_field = "jobid" if "jobid" in lower else "jobidraw"
    if id_field not in lower:
        raise ctx.error(
            "the field list has no JobID or JobIDRaw", expected="JobID or JobIDRaw among the fields"
        )

    out: dict[str, pl.Series] = {}
    for f in lower:
        if f in TEXT_FIELDS:
            out[TEXT_FIELDS[f]] = frame[f"f:{f}"]
        elif f in INT_FIELDS:
            out[INT_FIELDS[f]] = ints(ctx, frame, f)
        elif f in TIME_FIELDS:
            out[TIME_FIELDS[f]] = times(ctx, frame, f, zone)

    # job id anatomy (of JobIDRaw when the list has no JobID: each raw id is then its own job)
    out["job_id"] = frame[f"f:{id_field}"]
    ids = frame[f"f:{id_field}"].str.extract_groups(_JOB_ID)
    bad = ids.struct.field("1").is_null()
    if bad.any():
        fail_at(ctx, frame, bad, id_field, "{value!r} is not a Slurm job id",
                 "123, 123_4, 123_[1-3], 123+0, optionally .batch/.extern/.N")  # fmt: skip
    out["base_job_id"] = ids.struct.field("1")
    out["array_task_id"] = ids.struct.field("2")
    out["is_pending_array"] = ids.struct.field("2").str.starts_with("[").fill_null(False)
    out["het_offset"] = ids.struct.field("3").cast(pl.Int32)
    out["step_id"] = ids.struct.field("4")
    out["allocation_job_id"] = frame[f"f:{id_field}"].str.replace(r"\.[^.]+$", "")

    # state
    if "state" in lower:
        raw = frame["f:state"]
        shaped = raw.str.contains(_STATE_SHAPE)
        bad = ~shaped.fill_null(True)
        if bad.any():
            fail_at(ctx, frame, bad, "state", "{value!r} is not a Slurm job state",
                 "a state such as COMPLETED or 'CANCELLED by 1001' (is the field list right?)")  # fmt: skip
        word = raw.str.extract(r"^([A-Z_]+)")
        out["state"] = word
        out["state_raw"] = raw
        out["state_known"] = word.is_in(list(KNOWN_STATES))
        out["cancelled_by_uid"] = raw.str.extract(r"^CANCELLED by ([0-9]+)$").cast(pl.Int64)

    if "exitcode" in lower:
        code = frame["f:exitcode"].str.extract_groups(r"^([0-9]{1,3}):([0-9]{1,3})$")
        bad = code.struct.field("1").is_null() & frame["f:exitcode"].is_not_null()
        if bad.any():
            fail_at(
                ctx,
                frame,
                bad,
                "exitcode",
                "{value!r} is not an exit code",
                "STATUS:SIGNAL, e.g. 0:0 or 1:15",
            )
        out["exit_status"] = code.struct.field("1").cast(pl.Int32)
        out["exit_signal"] = code.struct.field("2").cast(pl.Int32)

    if "elapsedraw" in lower:
        out["elapsed_s"] = ints(ctx, frame, "elapsedraw")
    elif "elapsed" in lower:
        out["elapsed_s"] = durations(ctx, frame, "elapsed")
    if "timelimitraw" in lower:
        raw = frame["f:timelimitraw"]
        out["timelimit_min"] = raw.cast(pl.Int64, strict=False)
        bad = out["timelimit_min"].is_null() & raw.is_not_null() & ~raw.is_in(NO_LIMIT)
        if bad.any():
            fail_at(ctx, frame, bad, "timelimitraw", "{value!r} is not minutes", "an integer or UNLIMITED")
    elif "timelimit" in lower:
        out["timelimit_min"] = durations(ctx, frame, "timelimit") // 60

    # resources: distinct TRES strings and hostlists are parsed once each
    for field, count_col, type_col in (
        ("alloctres", "alloc_gpus", "gpu_type"),
        ("reqtres", "req_gpus", None),
    ):
        if field in lower:
            parsed = parse_tres_column(ctx, frame, field)
            col = frame[f"f:{field}"]
            out[count_col] = col.replace_strict(
                list(parsed), [v[0] for v in parsed.values()], return_dtype=pl.Int64
            ).fill_null(0)
            if type_col:
                out[type_col] = col.replace_strict(
                    list(parsed), [v[1] for v in parsed.values()], return_dtype=pl.String
                )
    if "nodelist" in lower:
        try:
            hosts = expand_many(frame["f:nodelist"].to_list())
        except HostlistError as exc:
            bad = frame["f:nodelist"].map_elements(
                lambda e: _bad_hostlist(e), return_dtype=pl.Boolean, skip_nulls=False
            )
            fail_at(
                ctx, frame, bad, "nodelist", f"{{value!r}}: {exc}", "a Slurm hostlist such as gpu-[01-04,07]"
            )
        keys = [k for k in hosts if k is not None]
        out["nodes"] = frame["f:nodelist"].replace_strict(
            keys, [hosts[k] for k in keys], default=[], return_dtype=pl.List(pl.String)
        )

    # every column in its declared type: a file of no rows (what `sacct -P` prints when no job
    # matches) leaves the parsed ones in whatever type an empty parse has
    columns = [
        out[c].cast(dtype).alias(c) if c in out else pl.Series(c, [None] * frame.height, dtype=dtype)
        for c, dtype in COLUMNS.items()
    ]
    # fields without a column of their own: kept as a MAP so nothing sacct printed is lost
    extra_fields = [f for f in lower if f not in HANDLED]
    entries = [pl.struct(pl.lit(f).alias("key"), pl.col(f"f:{f}").alias("value")) for f in extra_fields]
    typed = pl.DataFrame(columns).with_columns(  # noqa: F841  (read by the SQL below)
        frame.select(pl.concat_list(entries).alias("extra"))["extra"]
        if entries
        else pl.lit(None).alias("extra"),
        pl.lit(str(ctx.path)).alias("_source_file"),
        frame["_source_row"].cast(pl.Int64).alias("_source_row"),
    )
    extra_sql = (
        "map_from_entries(list_filter(extra, lambda e: e.value is not null))"
        if entries
        else "map([]::varchar[], []::varchar[])"
    )
    rel = ctx.store.con.sql(f"select * exclude (extra), {extra_sql} as extra from typed")
    ctx.land(TABLE, rel)


def _bad_hostlist(expr: str | None) -> bool:
    try:
        expand_many([expr])
    except HostlistError:
        return True
    return False


FORMAT = Format(
    name="slurm_sacct",
    group="scheduler",
    description=(
        "Slurm sacct --parsable2 output: with a header row, --sacct-fields, or the headerless lists of "
        "Open XDMoD and Sonar"
    ),
    detect=detect,
    load=load,
)
