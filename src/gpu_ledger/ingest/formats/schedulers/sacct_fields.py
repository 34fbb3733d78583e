"""Which sacct fields a `--parsable2` file holds, in which order.

A file describes itself when it has a header row. A headerless file (`--noheader`) does not, so the
list comes from, in order of precedence:
1. `--sacct-fields` (`Options.sacct_fields`): the user knows best; it is saved as the default;
2. the default saved by an earlier headerless load given `--sacct-fields`, when the file's first
   lines have its number of fields (a saved list that cannot fit would only reject the file);
3. a well-known collector's list, recognised by field count and content: Open XDMoD's shredder and
   NordicHPC Sonar run sacct headerless with fixed lists. Every sampled line must fit exactly one
   of them (field count, and each field the list types: ids, times, states, numbers); the list
   assumed is said in a note on the load, so nobody wonders how a bare file was read.
Otherwise the file is rejected, asking for `--sacct-fields`.

A list identifies jobs when it has `JobID` or `JobIDRaw` (a collector may keep only the raw id).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime

from gpu_ledger.ingest.base import LoadContext

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
JOB_ID_FIELDS = ("jobid", "jobidraw")
FIELD_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")

# field shapes a collector list is recognised by (whole-field regexes; '' is allowed where steps
# or pending jobs print nothing)
_ID = r"\d+(?:_(?:\d+|\[[^\]|]*\]))?(?:\+\d+)?(?:\.[\w-]+)?"
_TIME = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:Z|[+-]\d\d:?\d\d)?|Unknown|None"
_STATE = r"[A-Z][A-Z_]*(?: by \d+)?\+?"
_COUNT = r"\d+"
_DURATION = r"(?:\d+-)?(?:\d+:)?\d+:\d+(?:\.\d+)?|INVALID|UNLIMITED|Partition_Limit"
_EXIT = r"\d+:\d+"


@dataclass(frozen=True)
class CollectorList:
    """A headerless sacct field list a well-known collector always uses."""

    name: str
    fields: tuple[str, ...]
    shapes: dict[str, str]  # field (lower case) -> whole-field regex every line must match

    def fits(self, line: str) -> bool:
        values = line.split("|", len(self.fields) - 1)
        if len(values) != len(self.fields):
            return False
        lower = [f.lower() for f in self.fields]
        return all(re.fullmatch(shape, values[lower.index(f)]) for f, shape in self.shapes.items())


COLLECTOR_LISTS = (
    CollectorList(
        name="Open XDMoD shredder",
        # xdmod-slurm-helper: TZ=UTC sacct --allusers --parsable2 --noheader --allocations --duplicates
        fields=(
            "JobID",
            "JobIDRaw",
            "Cluster",
            "Partition",
            "QOS",
            "Account",
            "Group",
            "GID",
            "User",
            "UID",
            "Submit",
            "Eligible",
            "Start",
            "End",
            "Elapsed",
            "ExitCode",
            "State",
            "NNodes",
            "NCPUS",
            "ReqCPUS",
            "ReqMem",
            "ReqTRES",
            "AllocTRES",
            "Timelimit",
            "NodeList",
            "JobName",
        ),  # fmt: skip
        shapes={
            "jobid": _ID,
            "jobidraw": _ID,
            "gid": rf"(?:{_COUNT})?",
            "uid": rf"(?:{_COUNT})?",
            "submit": _TIME,
            "eligible": _TIME,
            "start": _TIME,
            "end": _TIME,
            "elapsed": _DURATION,
            "exitcode": _EXIT,
            "state": _STATE,
            "nnodes": _COUNT,
            "ncpus": _COUNT,
            "reqcpus": _COUNT,
        },
    ),
    CollectorList(
        name="NordicHPC Sonar",
        # sonar's slurm job collector: sacct -aP --noheader -o <these 32 fields>
        fields=(
            "JobID",
            "JobIDRaw",
            "User",
            "Account",
            "State",
            "Start",
            "End",
            "AveCPU",
            "AveDiskRead",
            "AveDiskWrite",
            "AveRSS",
            "AveVMSize",
            "ElapsedRaw",
            "ExitCode",
            "Layout",
            "MaxRSS",
            "MaxVMSize",
            "MinCPU",
            "ReqCPUS",
            "ReqMem",
            "ReqNodes",
            "Reservation",
            "Submit",
            "Suspended",
            "SystemCPU",
            "TimelimitRaw",
            "UserCPU",
            "NodeList",
            "Partition",
            "AllocTRES",
            "Priority",
            "JobName",
        ),  # fmt: skip
        shapes={
            "jobid": _ID,
            "jobidraw": _ID,
            "state": _STATE,
            "start": _TIME,
            "end": _TIME,
            "elapsedraw": _COUNT,
            "exitcode": _EXIT,
            "reqcpus": _COUNT,
            "reqnodes": _COUNT,
            "submit": _TIME,
            "suspended": _DURATION,
            "timelimitraw": rf"(?:{_COUNT}|UNLIMITED|Partition_Limit)?",
            "priority": rf"(?:{_COUNT})?",
        },
    ),
)
SAMPLE_LINES = 50  # lines a collector list must fit before it is assumed


def header_fields(line: str) -> list[str] | None:
    """The field names if `line` is a sacct header row, else None."""
    names = line.split("|")
    if len(names) < 2 or not all(FIELD_NAME.match(n) for n in names):
        return None
    return names if any(n.lower() in JOB_ID_FIELDS for n in names) else None


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


def recognised_list(lines: list[str]) -> CollectorList | None:
    """The one collector list every sampled line fits, else None (none fits, or several do)."""
    sample = lines[:SAMPLE_LINES]
    fitting = [c for c in COLLECTOR_LISTS if sample and all(c.fits(line) for line in sample)]
    return fitting[0] if len(fitting) == 1 else None


def _fits(fields: tuple[str, ...], lines: list[str]) -> bool:
    """True when some sampled line has exactly these fields and none has fewer (more only where a
    last JobName holds a `|`)."""
    counts = [line.count("|") + 1 for line in lines]
    return len(fields) in counts and min(counts) == len(fields)


def field_list(ctx: LoadContext, header: list[str] | None, lines: list[str]) -> list[str]:
    """The file's field list (see the module docstring for the precedence); `lines` are its first lines."""
    if header is not None:
        return header
    given = ctx.options.sacct_fields
    if given:
        fields = tuple(f.strip() for f in given if f.strip())
        bad = [f for f in fields if not FIELD_NAME.match(f)]
        if bad or not any(f.lower() in JOB_ID_FIELDS for f in fields):
            raise ctx.error(
                f"--sacct-fields {','.join(given)!r} is not a sacct field list",
                expected="comma-separated sacct field names including JobID or JobIDRaw, in the order of "
                "--format",
            )
        save_fields(ctx, fields)
        return list(fields)
    saved = saved_fields(ctx)
    if saved and lines and _fits(saved, lines):
        return list(saved)
    collector = recognised_list(lines)
    if collector is not None:
        unfit = f"; the saved default ({len(saved)} fields) does not fit" if saved else ""
        ctx.note(
            f"headerless sacct output read as the {collector.name} field list "
            f"({len(collector.fields)} fields: {','.join(collector.fields)}), recognised by its content"
            f"{unfit}; pass --sacct-fields to read it otherwise"
        )
        return list(collector.fields)
    if saved:
        return list(saved)  # rejected by the field count check, naming the saved list
    raise ctx.error(
        "headerless sacct output and no field list: pass --sacct-fields with the --format list sacct "
        "was run with (e.g. --sacct-fields JobID,JobIDRaw,User,Account,State,Start,End,...,JobName); "
        "it is then saved as the default for later headerless files",
        line=1,
        expected="a header row, --sacct-fields, a saved default, or Open XDMoD's or Sonar's field list",
    )
