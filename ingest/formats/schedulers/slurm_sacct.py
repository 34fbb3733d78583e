"""Slurm accounting as `sacct --parsable2` prints it, with or without its header row.

What a file is, and how it is recognised:
- with a header: the first line is `|`-separated sacct field names, one of them `JobID` (any case);
- without one (`--noheader`): the first line starts with a Slurm job id (`123`, `123_4`, `123_[1-3]`,
  `123+0`, each optionally `.step`) followed by `|`, and carries a sacct time or a known state word.
  The field list then comes from `--sacct-fields` (`Options.sacct_fields`), else from the default
  saved in `raw.ingest_settings` by an earlier headerless load that was given `--sacct-fields`.
  A header-bearing file never changes that default: its header describes itself only.

Every line lands in `raw.slurm_sacct`, allocations and steps alike (steps carry `step_id`; dbt keeps
the allocation rows), typed, with the fields this project uses as named columns and every other
field kept in `extra` (MAP of the lower-cased sacct field name to the printed value), so nothing
sacct said is lost. Quirks handled:
- `JobName` may contain `|`: lines are split at most (fields - 1) times, so JobName must be last
  (a line with more separators than fields is rejected unless JobName is the last field);
- times are the sacct host's local time without offset; they are read in `Options.timezone` and
  stored as UTC. `Unknown` and `None` are null. An ambiguous wall time in the autumn DST fold is
  taken as its first occurrence; a time inside the spring DST gap cannot be printed by sacct, so it
  is rejected (the time zone given is likely wrong);
- `CANCELLED by 1001` -> state `CANCELLED`, `cancelled_by_uid` 1001, `state_raw` as printed;
- job ids: `123_4` (array task: base 123, task `4`), `123_[1-3]` (pending array: task `[1-3]`,
  `is_pending_array`), `123+0` (heterogeneous component), `.batch` / `.extern` / `.interactive` /
  `.0` steps (`step_id`); `allocation_job_id` is the job id without its step, to join steps to
  their allocation;
- `AllocTRES`: `gres/gpu=N` is the total; typed entries (`gres/gpu:a100=1`) are never added to it.
  Only when no untyped entry exists (old Slurm) are the typed entries summed. `gpu_type` is the type
  name(s) of the typed entries (`a100`, `a100_3g.20gb` for a MIG slice);
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
from datetime import UTC, datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import polars as pl

from ingest.base import Format, LoadContext
from ingest.hostlist import HostlistError, expand_many
from ingest.sniff import Sniff, open_text

TABLE = "slurm_sacct"
SETTINGS_TABLE = "raw.ingest_settings"
SETTING_FIELDS = "slurm.sacct_fields"
SETTINGS_DDL = f"""
create table if not exists {SETTINGS_TABLE} (
    key varchar primary key,
    value varchar not null,
    set_by varchar,
    updated_at timestamptz not null
)
"""

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
_STATE_SHAPE = r"^[A-Z][A-Z_]*(?: by \d+)?\+?$"  # sacct may append '+' when a state is truncated

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

_JOB_ID = r"^(\d+)(?:_(\d+|\[[^\]]*\]))?(?:\+(\d+))?(?:\.([^.|]+))?$"
_HEAD_JOB_ID = re.compile(r"^\d+(?:_(?:\d+|\[[^\]|]*\]))?(?:\+\d+)?(?:\.[\w-]+)?\|")
_HEAD_EVIDENCE = re.compile(
    r"\|(?:\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d|Unknown|None|" + "|".join(sorted(KNOWN_STATES)) + r")(?:\||$| by)"
)
_FIELD_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
_DURATION = r"^(?:(\d+)-)?(?:(\d+):)??(?:(\d+):)?(\d+(?:\.\d+)?)$"
_TIME_FORMAT = "%Y-%m-%dT%H:%M:%S"
_NO_TIME = ("Unknown", "None", "")
_NO_LIMIT = ("UNLIMITED", "Partition_Limit", "INVALID", "NONE")


# ------------------------------------------------------------------------------------------ detection


def header_fields(line: str) -> list[str] | None:
    """The field names if `line` is a sacct header row, else None."""
    names = line.split("|")
    if len(names) < 2 or not all(_FIELD_NAME.match(n) for n in names):
        return None
    return names if any(n.lower() in ("jobid", "jobidraw") for n in names) else None


def detect(s: Sniff) -> bool:
    line = s.first_line
    if "|" not in line:
        return False
    if header_fields(line) is not None:
        return True
    return bool(_HEAD_JOB_ID.match(line)) and line.count("|") >= 3 and bool(_HEAD_EVIDENCE.search(line))


# ------------------------------------------------------------------------------------------ settings


def saved_fields(ctx: LoadContext) -> tuple[str, ...] | None:
    """The sacct field list saved by an earlier headerless load, if any."""
    con = ctx.store.con
    con.sql(SETTINGS_DDL)
    rows = con.sql(
        f"select value from {SETTINGS_TABLE} where key = $k", params={"k": SETTING_FIELDS}
    ).fetchall()
    return tuple(rows[0][0].split(",")) if rows else None


def save_fields(ctx: LoadContext, fields: tuple[str, ...]) -> None:
    """Remember `--sacct-fields` for later headerless files (inside this file's transaction)."""
    ctx.store.con.sql(SETTINGS_DDL)
    ctx.store.con.sql(
        f"insert or replace into {SETTINGS_TABLE} values ($k, $v, $by, $at)",
        params={"k": SETTING_FIELDS, "v": ",".join(fields), "by": str(ctx.path), "at": datetime.now(UTC)},
    )


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


def _fail_at(ctx: LoadContext, frame: pl.DataFrame, bad: pl.Series, field: str, message: str, expected: str):
    """Raise for the first row where `bad` is true, naming its line and the printed value."""
    idx = int(bad.arg_true()[0])
    row = frame.row(idx, named=True)
    raise ctx.error(
        message.format(value=row[f"f:{field}"]), line=row["_source_row"], column=field, expected=expected
    )


def _times(ctx: LoadContext, frame: pl.DataFrame, field: str, zone: str) -> pl.Series:
    raw = frame[f"f:{field}"]
    parsed = raw.str.strptime(pl.Datetime("us"), _TIME_FORMAT, strict=False)
    bad = parsed.is_null() & raw.is_not_null() & ~raw.is_in(_NO_TIME)
    if bad.any():
        _fail_at(
            ctx, frame, bad, field, "{value!r} is not a sacct time", "YYYY-MM-DDTHH:MM:SS, Unknown or None"
        )
    local = parsed.dt.replace_time_zone(zone, ambiguous="earliest", non_existent="null")
    gap = local.is_null() & parsed.is_not_null()
    if gap.any():
        _fail_at(
            ctx, frame, gap, field, f"{{value!r}} does not exist in time zone {zone} (a DST gap)",
            "a wall time that exists in --timezone; is the time zone right?",
        )  # fmt: skip
    return local.dt.convert_time_zone("UTC")


def _ints(ctx: LoadContext, frame: pl.DataFrame, field: str) -> pl.Series:
    raw = frame[f"f:{field}"]
    out = raw.cast(pl.Int64, strict=False)
    bad = out.is_null() & raw.is_not_null()
    if bad.any():
        _fail_at(ctx, frame, bad, field, "{value!r} is not a whole number", "an integer")
    return out


def _duration_s(raw: pl.Series) -> pl.Series:
    """Seconds of a Slurm `[D-][HH:]MM:SS[.fff]` duration; null where not one."""
    parts = raw.str.extract_groups(_DURATION)
    days = parts.struct.field("1").cast(pl.Int64).fill_null(0)
    hours = parts.struct.field("2").cast(pl.Int64).fill_null(0)
    minutes = parts.struct.field("3").cast(pl.Int64).fill_null(0)
    seconds = parts.struct.field("4").cast(pl.Float64)
    return (days * 86400 + hours * 3600 + minutes * 60 + seconds.floor().cast(pl.Int64)).alias("s")


def _durations(ctx: LoadContext, frame: pl.DataFrame, field: str) -> pl.Series:
    raw = frame[f"f:{field}"]
    out = _duration_s(raw)
    bad = out.is_null() & raw.is_not_null() & ~raw.is_in(_NO_LIMIT)
    if bad.any():
        _fail_at(ctx, frame, bad, field, "{value!r} is not a Slurm duration", "[D-]HH:MM:SS or UNLIMITED")
    return out


def parse_tres_gpus(tres: str | None) -> tuple[int | None, str | None]:
    """(GPU count, GPU type names) of a TRES string; `gres/gpu=N` is the total when present."""
    if tres is None:
        return None, None
    total: int | None = None
    typed_sum = 0
    types: list[str] = []
    for item in tres.split(","):
        key, _, value = item.partition("=")
        if key == "gres/gpu":
            total = int(value) if value.isdigit() else total
        elif key.startswith("gres/gpu:"):
            types.append(key.removeprefix("gres/gpu:"))
            typed_sum += int(value) if value.isdigit() else 0
    if total is None:
        total = typed_sum
    return total, ",".join(dict.fromkeys(types)) or None


def _split_lines(ctx: LoadContext) -> tuple[list[str] | None, pl.DataFrame]:
    """(header fields or None, frame of `line` with its 1-based `_source_row`), blank lines dropped."""
    with open_text(ctx.path) as f:
        text = f.read()
    lines = text.split("\n")
    header = header_fields(lines[0].rstrip("\r")) if lines else None
    frame = pl.DataFrame({"line": lines}).with_row_index("_source_row", offset=1)
    frame = frame.with_columns(pl.col("line").str.strip_suffix("\r")).filter(pl.col("line") != "")
    if header is not None:
        # a concatenation of several sacct runs repeats the header: drop every copy of it
        frame = frame.filter(pl.col("line") != lines[0].rstrip("\r"))
    return header, frame


def _field_list(ctx: LoadContext, header: list[str] | None) -> list[str]:
    if header is not None:
        return header
    given = ctx.options.sacct_fields
    if given:
        fields = [f.strip() for f in given if f.strip()]
        bad = [f for f in fields if not _FIELD_NAME.match(f)]
        if bad or not any(f.lower() == "jobid" for f in fields):
            raise ctx.error(
                f"--sacct-fields {','.join(given)!r} is not a sacct field list",
                expected="comma-separated sacct field names including JobID, in the order of --format",
            )
        save_fields(ctx, tuple(fields))
        return fields
    saved = saved_fields(ctx)
    if saved:
        return list(saved)
    raise ctx.error(
        "headerless sacct output and no field list: pass --sacct-fields with the --format list sacct "
        "was run with (e.g. --sacct-fields JobID,JobIDRaw,User,Account,State,Start,End,...,JobName); "
        "it is then saved as the default for later headerless files",
        line=1,
        expected="a header row, --sacct-fields, or a saved default",
    )


def load(ctx: LoadContext) -> None:
    zone = _zone(ctx)
    header, lines = _split_lines(ctx)
    fields = _field_list(ctx, header)
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
        pl.col(f"f:{f}").replace("", None) for f in lower if f != "jobname"
    )
    if "jobid" not in lower:
        raise ctx.error("the field list has no JobID", expected="JobID among the fields")

    out: dict[str, pl.Series] = {}
    for f in lower:
        if f in TEXT_FIELDS:
            out[TEXT_FIELDS[f]] = frame[f"f:{f}"]
        elif f in INT_FIELDS:
            out[INT_FIELDS[f]] = _ints(ctx, frame, f)
        elif f in TIME_FIELDS:
            out[TIME_FIELDS[f]] = _times(ctx, frame, f, zone)

    # job id anatomy
    ids = frame["f:jobid"].str.extract_groups(_JOB_ID)
    bad = ids.struct.field("1").is_null()
    if bad.any():
        _fail_at(ctx, frame, bad, "jobid", "{value!r} is not a Slurm job id",
                 "123, 123_4, 123_[1-3], 123+0, optionally .batch/.extern/.N")  # fmt: skip
    out["base_job_id"] = ids.struct.field("1")
    out["array_task_id"] = ids.struct.field("2")
    out["is_pending_array"] = ids.struct.field("2").str.starts_with("[").fill_null(False)
    out["het_offset"] = ids.struct.field("3").cast(pl.Int32)
    out["step_id"] = ids.struct.field("4")
    out["allocation_job_id"] = frame["f:jobid"].str.replace(r"\.[^.]+$", "")

    # state
    if "state" in lower:
        raw = frame["f:state"]
        shaped = raw.str.contains(_STATE_SHAPE)
        bad = ~shaped.fill_null(True)
        if bad.any():
            _fail_at(ctx, frame, bad, "state", "{value!r} is not a Slurm job state",
                 "a state such as COMPLETED or 'CANCELLED by 1001' (is the field list right?)")  # fmt: skip
        word = raw.str.extract(r"^([A-Z_]+)")
        out["state"] = word
        out["state_raw"] = raw
        out["state_known"] = word.is_in(list(KNOWN_STATES))
        out["cancelled_by_uid"] = raw.str.extract(r"^CANCELLED by (\d+)$").cast(pl.Int64)

    if "exitcode" in lower:
        code = frame["f:exitcode"].str.extract_groups(r"^(\d+):(\d+)$")
        bad = code.struct.field("1").is_null() & frame["f:exitcode"].is_not_null()
        if bad.any():
            _fail_at(ctx, frame, bad, "exitcode", "{value!r} is not an exit code", "STATUS:SIGNAL, e.g. 0:0")
        out["exit_status"] = code.struct.field("1").cast(pl.Int32)
        out["exit_signal"] = code.struct.field("2").cast(pl.Int32)

    if "elapsedraw" in lower:
        out["elapsed_s"] = _ints(ctx, frame, "elapsedraw")
    elif "elapsed" in lower:
        out["elapsed_s"] = _durations(ctx, frame, "elapsed")
    if "timelimitraw" in lower:
        raw = frame["f:timelimitraw"]
        out["timelimit_min"] = raw.cast(pl.Int64, strict=False)
        bad = out["timelimit_min"].is_null() & raw.is_not_null() & ~raw.is_in(_NO_LIMIT)
        if bad.any():
            _fail_at(ctx, frame, bad, "timelimitraw", "{value!r} is not minutes", "an integer or UNLIMITED")
    elif "timelimit" in lower:
        out["timelimit_min"] = _durations(ctx, frame, "timelimit") // 60

    # resources: distinct TRES strings and hostlists are parsed once each
    for field, count_col, type_col in (
        ("alloctres", "alloc_gpus", "gpu_type"),
        ("reqtres", "req_gpus", None),
    ):
        if field in lower:
            parsed = {t: parse_tres_gpus(t) for t in frame[f"f:{field}"].unique().to_list()}
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
            _fail_at(
                ctx, frame, bad, "nodelist", f"{{value!r}}: {exc}", "a Slurm hostlist such as gpu-[01-04,07]"
            )
        keys = [k for k in hosts if k is not None]
        out["nodes"] = frame["f:nodelist"].replace_strict(
            keys, [hosts[k] for k in keys], default=[], return_dtype=pl.List(pl.String)
        )

    columns = [
        out[c].alias(c) if c in out else pl.Series(c, [None] * frame.height, dtype=dtype)
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
    description="Slurm sacct --parsable2 output, with a header row or with --sacct-fields",
    detect=detect,
    load=load,
)
