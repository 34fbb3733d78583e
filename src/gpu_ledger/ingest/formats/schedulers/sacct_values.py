"""The values sacct prints, typed column by column: times (an explicit offset, else --timezone), whole
numbers, Slurm durations and TRES strings' GPUs. A value that is none of these rejects the file at its
line and field (`fail_at`)."""

from __future__ import annotations

import polars as pl

from gpu_ledger.ingest.base import LoadContext

# at most 6 digits per part keeps every duration (and its seconds) far inside Int64; patterns that
# Polars runs spell digits [0-9], its \d would take any Unicode digit that a cast then refuses
DURATION = r"^(?:([0-9]{1,6})-)?(?:([0-9]{1,6}):)??(?:([0-9]{1,6}):)?([0-9]{1,6}(?:\.[0-9]+)?)$"
TIME_FORMAT = "%Y-%m-%dT%H:%M:%S"
OFFSET = r"[0-9](?:Z|[+-][0-9]{2}:?[0-9]{2})$"  # right after the seconds
NO_TIME = ("Unknown", "None")
MAX_COUNT = 2**53  # larger "numbers" are not counts, ids or seconds sacct can print
NO_LIMIT = ("UNLIMITED", "Partition_Limit", "INVALID", "NONE")


def fail_at(ctx: LoadContext, frame: pl.DataFrame, bad: pl.Series, field: str, message: str, expected: str):
    """Raise for the first row where `bad` is true, naming its line and the printed value."""
    idx = int(bad.arg_true()[0])
    row = frame.row(idx, named=True)
    # replace, not str.format: the message may quote text with braces in it
    raise ctx.error(
        message.replace("{value!r}", repr(row[f"f:{field}"])),
        line=row["_source_row"],
        column=field,
        expected=expected,
    )


def times(ctx: LoadContext, frame: pl.DataFrame, field: str, zone: str) -> pl.Series:
    """UTC instants of a time field: an explicit offset wins, a naive time is read in `zone`."""
    raw = frame[f"f:{field}"]
    has_offset = raw.str.contains(OFFSET).fill_null(False)
    aware = (
        raw.str.replace(r"Z$", "+0000")
        .str.strptime(pl.Datetime("us", "UTC"), f"{TIME_FORMAT}%z", strict=False)
        .dt.convert_time_zone("UTC")
    )
    naive = raw.str.strptime(pl.Datetime("us"), TIME_FORMAT, strict=False)
    parsed_ok = pl.select(
        pl.when(has_offset).then(aware.is_not_null()).otherwise(naive.is_not_null())
    ).to_series()
    bad = ~parsed_ok & raw.is_not_null() & ~raw.is_in(NO_TIME)
    if bad.any():
        fail_at(
            ctx, frame, bad, field, "{value!r} is not a sacct time",
            "YYYY-MM-DDTHH:MM:SS with an optional UTC offset (+0100, +01:00, Z), Unknown or None",
        )  # fmt: skip
    local = naive.dt.replace_time_zone(zone, ambiguous="earliest", non_existent="null")
    gap = local.is_null() & naive.is_not_null() & ~has_offset
    if gap.any():
        fail_at(
            ctx, frame, gap, field, f"{{value!r}} does not exist in time zone {zone} (a DST gap)",
            "a wall time that exists in --timezone; is the time zone right?",
        )  # fmt: skip
    return pl.select(pl.when(has_offset).then(aware).otherwise(local.dt.convert_time_zone("UTC"))).to_series()


def ints(ctx: LoadContext, frame: pl.DataFrame, field: str) -> pl.Series:
    """A count, id or number of seconds: a whole number from 0 up."""
    raw = frame[f"f:{field}"]
    out = raw.cast(pl.Int64, strict=False)
    digits = raw.str.contains(r"^[0-9]+$")
    bad = (~digits | out.is_null() | (out > MAX_COUNT)).fill_null(True) & raw.is_not_null()
    if bad.any():
        fail_at(ctx, frame, bad, field, "{value!r} is not a whole number", "a whole number from 0 up")
    return out


def duration_s(raw: pl.Series) -> pl.Series:
    """Seconds of a Slurm `[D-][HH:]MM:SS[.fff]` duration; null where not one."""
    parts = raw.str.extract_groups(DURATION)
    days = parts.struct.field("1").cast(pl.Int64).fill_null(0)
    hours = parts.struct.field("2").cast(pl.Int64).fill_null(0)
    minutes = parts.struct.field("3").cast(pl.Int64).fill_null(0)
    seconds = parts.struct.field("4").cast(pl.Float64)
    return (days * 86400 + hours * 3600 + minutes * 60 + seconds.floor().cast(pl.Int64)).alias("s")


def durations(ctx: LoadContext, frame: pl.DataFrame, field: str) -> pl.Series:
    raw = frame[f"f:{field}"]
    out = duration_s(raw)
    bad = out.is_null() & raw.is_not_null() & ~raw.is_in(NO_LIMIT)
    if bad.any():
        fail_at(ctx, frame, bad, field, "{value!r} is not a Slurm duration", "[D-]HH:MM:SS or UNLIMITED")
    return out


def parse_tres_gpus(tres: str | None) -> tuple[int | None, str | None]:
    """(GPU count, GPU type names) of a TRES string; `gres/gpu=N` is the total when present.

    Raises ValueError when a GPU entry's value is not a count (TRES counts are whole numbers).
    """
    if tres is None:
        return None, None
    total: int | None = None
    typed_sum = 0
    types: list[str] = []
    for item in tres.split(","):
        key, _, value = item.partition("=")
        if key != "gres/gpu" and not key.startswith("gres/gpu:"):
            continue
        if not (value.isascii() and value.isdigit()) or int(value) > MAX_COUNT:
            raise ValueError(f"{key}={value} is not a GPU count")
        if key == "gres/gpu":
            total = int(value)
        else:
            types.append(key.removeprefix("gres/gpu:"))
            typed_sum += int(value)
    if total is None:
        total = typed_sum
    return total, ",".join(dict.fromkeys(types)) or None


def parse_tres_column(
    ctx: LoadContext, frame: pl.DataFrame, field: str
) -> dict[str | None, tuple[int | None, str | None]]:
    """Each distinct TRES string of a field parsed once; the first bad one rejects the file at its line."""
    parsed: dict[str | None, tuple[int | None, str | None]] = {}
    for tres in frame[f"f:{field}"].unique().to_list():
        try:
            parsed[tres] = parse_tres_gpus(tres)
        except ValueError as exc:
            bad = frame[f"f:{field}"] == tres
            fail_at(
                ctx, frame, bad, field, f"{{value!r}}: {exc}", "TRES such as cpu=8,gres/gpu:a100=2,gres/gpu=2"
            )
    return parsed
