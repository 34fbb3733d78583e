"""`nvidia-smi --query-gpu=... --format=csv` logs: one row per GPU per query, as cron or `-l N` writes them.

Accepted shapes:
- a plain log: a header line (`timestamp, name, utilization.gpu [%], memory.used [MiB]`, or without the
  `[unit]` parts under `nounits`), then rows; a header repeated by concatenated logs is skipped;
- a capture of several commands, each section headed by `# $ <command>` (the layout of
  nvidia_gpu_exporter's captures in shared/samples): every section whose command is
  `nvidia-smi --query-gpu=... --format=csv...` is taken (idle and load, say), the other sections
  (`-q`, `dmon`, `--query-compute-apps`, help texts) are ignored; a capture without such a section
  is rejected, naming what was expected. A `noheader` section takes its field names from its command.

What lands (through `telemetry.land`, so in the same tables as DCGM series): one series per GPU and
numeric field. Fields with a DCGM counterpart take the DCGM name (`utilization.gpu` ->
`DCGM_FI_DEV_GPU_UTIL`, `memory.used` -> `DCGM_FI_DEV_FB_USED`, `power.draw` -> `DCGM_FI_DEV_POWER_USAGE`,
... see `DCGM_NAMES`), with the same units; other fields whose values are all numbers keep their own
name (`clocks.max.sm`); text fields (`Enabled`, `Default`) are not samples and are dropped. Labels use
dcgm-exporter's names: `UUID` (uuid), `gpu` (index), `modelName` (name), `pci_bus_id`,
`DCGM_FI_DRIVER_VERSION`, `Hostname`.

Quirks: `[N/A]`, `N/A`, `[Requested functionality has been deprecated]`, any `[...]` and empty values
are missing; values carry units (`19818 MiB`, `631.95 W`) unless `nounits`; timestamps
(`2026/07/14 08:12:53.353`) are the host's local time without zone, read in `Options.timezone`.
The host is the `hostname` field where the row has one, else `Options.host` (`--host`), else the
file is rejected: a sample without a host could not be told apart from other machines' GPUs.
"""

from __future__ import annotations

import io
import re

import polars as pl

from gpu_ledger.ingest import telemetry
from gpu_ledger.ingest.base import Format, LoadContext
from gpu_ledger.ingest.sniff import Sniff, read_bytes

# nvidia-smi field -> (DCGM metric, unit the DCGM metric uses, as nvidia-smi prints it)
DCGM_NAMES: dict[str, tuple[str, str | None]] = {
    "utilization.gpu": ("DCGM_FI_DEV_GPU_UTIL", "%"),
    "utilization.memory": ("DCGM_FI_DEV_MEM_COPY_UTIL", "%"),
    "utilization.encoder": ("DCGM_FI_DEV_ENC_UTIL", "%"),
    "utilization.decoder": ("DCGM_FI_DEV_DEC_UTIL", "%"),
    "memory.used": ("DCGM_FI_DEV_FB_USED", "MiB"),
    "memory.free": ("DCGM_FI_DEV_FB_FREE", "MiB"),
    "memory.total": ("DCGM_FI_DEV_FB_TOTAL", "MiB"),
    "memory.reserved": ("DCGM_FI_DEV_FB_RESERVED", "MiB"),
    "power.draw": ("DCGM_FI_DEV_POWER_USAGE", "W"),
    "power.draw.instant": ("DCGM_FI_DEV_POWER_USAGE_INSTANT", "W"),
    "power.limit": ("DCGM_FI_DEV_POWER_MGMT_LIMIT", "W"),
    "enforced.power.limit": ("DCGM_FI_DEV_ENFORCED_POWER_LIMIT", "W"),
    "temperature.gpu": ("DCGM_FI_DEV_GPU_TEMP", None),
    "temperature.memory": ("DCGM_FI_DEV_MEMORY_TEMP", None),
    "clocks.current.sm": ("DCGM_FI_DEV_SM_CLOCK", "MHz"),
    "clocks.sm": ("DCGM_FI_DEV_SM_CLOCK", "MHz"),
    "clocks.current.memory": ("DCGM_FI_DEV_MEM_CLOCK", "MHz"),
    "clocks.mem": ("DCGM_FI_DEV_MEM_CLOCK", "MHz"),
    "clocks.current.video": ("DCGM_FI_DEV_VIDEO_CLOCK", "MHz"),
    "fan.speed": ("DCGM_FI_DEV_FAN_SPEED", "%"),
    "pstate": ("DCGM_FI_DEV_PSTATE", None),
    "pcie.link.gen.current": ("DCGM_FI_DEV_PCIE_LINK_GEN", None),
    "pcie.link.width.current": ("DCGM_FI_DEV_PCIE_LINK_WIDTH", None),
    "remapped_rows.correctable": ("DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", None),
    "remapped_rows.uncorrectable": ("DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", None),
}
# nvidia-smi identity field -> dcgm-exporter label; `timestamp` and `hostname` are handled apart
LABELS = {
    "uuid": "UUID",
    "gpu_uuid": "UUID",
    "index": "gpu",
    "name": "modelName",
    "gpu_name": "modelName",
    "pci.bus_id": "pci_bus_id",
    "gpu_bus_id": "pci_bus_id",
    "driver_version": "DCGM_FI_DRIVER_VERSION",
}
KNOWN_FIELDS = set(DCGM_NAMES) | {"uuid", "index", "pci.bus_id", "serial", "driver_version", "name"}
TEXT_FIELDS = {"timestamp", "hostname", "serial", "vbios_version", "compute_cap"} | set(LABELS)
# identifiers and versions that look numeric (`inforom.oem` 2.1, `platform.slot_number` 0) are not samples
TEXT_PREFIXES = ("inforom.", "platform.", "fabric.", "pci.", "vgpu_")
SEP = ", "
_HEADER_FIELD = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_.]*( \[[^\]]+\])?$")
_CMD = re.compile(r"^#\s*\$\s*(.*)$")
_QUERY_GPU = re.compile(r"\bnvidia-smi\b.*--query-gpu[= ](\S+).*--format[= ](\S+)")
_NUMBER = r"^([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)(?:\s+\S+)?$"
_TS_FORMAT = "%Y/%m/%d %H:%M:%S%.f"


def _is_header(line: str) -> bool:
    fields = [f.strip() for f in line.strip().split(SEP)]
    return (
        len(fields) >= 2
        and all(_HEADER_FIELD.match(f) for f in fields)
        and any(f.split(" [")[0] in KNOWN_FIELDS for f in fields)
    )


def detect(s: Sniff) -> bool:
    """A query-gpu CSV header as first line, or a capture whose sections echo `# $ nvidia-smi ...`."""
    if s.is_parquet:
        return False
    if _is_header(s.first_line):
        return True
    # a head that never names nvidia-smi echoes no command of it: most files skip the match per line
    return "nvidia-smi" in s.text and any(
        (m := _CMD.match(line)) is not None and m.group(1).startswith("nvidia-smi")
        for line in s.text.splitlines()
    )


def _fields(header: str) -> list[tuple[str, str | None]]:
    """`memory.used [MiB]` -> ("memory.used", "MiB"); `memory.used` -> ("memory.used", None)."""
    out = []
    for token in header.strip().split(SEP):
        name, _, unit = token.strip().partition(" [")
        out.append((name, unit.rstrip("]") or None))
    return out


def _blocks(ctx: LoadContext, lines: pl.DataFrame) -> list[tuple[list[tuple[str, str | None]], pl.DataFrame]]:
    """The query-gpu CSV blocks of the file: (fields, rows with their line numbers)."""
    cmd = pl.col("line").str.extract(r"^#\s*\$\s*(.*)$", 1)
    lines = lines.with_columns(cmd.alias("cmd"), cmd.is_not_null().cum_sum().alias("section"))
    commands = lines.filter(pl.col("cmd").is_not_null()).select("section", "cmd")
    csv_lines = lines.filter(
        pl.col("line").is_not_null()
        & (pl.col("line").str.strip_chars() != "")
        & ~pl.col("line").str.strip_chars_start().str.starts_with("#")
    )
    if commands.height == 0:  # a plain log: one block, its first line the header
        sections: list[tuple[int, str | None]] = [(0, None)]
    else:
        sections = [(sec, c) for sec, c in commands.iter_rows() if _QUERY_GPU.search(c) and "csv" in c]
        if not sections:
            raise ctx.error(
                "this nvidia-smi capture has no `--query-gpu` CSV section",
                expected="a section headed `# $ nvidia-smi --query-gpu=... --format=csv`",
            )
    blocks = []
    for sec, command in sections:
        rows = csv_lines.filter(pl.col("section") == sec).select("line_no", "line")
        fmt = _QUERY_GPU.search(command).group(2) if command else "csv"
        if "noheader" in fmt:
            names = _QUERY_GPU.search(command).group(1).split(",")
            units: list[str | None] = [None] * len(names) if "nounits" in fmt else ["?"] * len(names)
            fields = list(zip(names, units, strict=True))
        else:
            if rows.height == 0:
                continue
            header_line, header = rows.row(0)
            if not _is_header(header):
                raise ctx.error(
                    f"the first line is not a --query-gpu CSV header: {header[:120]!r}",
                    line=header_line,
                    expected="a header like 'timestamp, uuid, utilization.gpu [%]'",
                )
            fields = _fields(header)
            rows = rows.filter(pl.col("line").str.strip_chars() != header.strip())
        if rows.height:
            blocks.append((fields, rows))
    if not blocks:
        raise ctx.error("no --query-gpu rows in the file", expected="at least one row under the header")
    return blocks


def _wide(ctx: LoadContext, fields: list[tuple[str, str | None]], rows: pl.DataFrame) -> pl.DataFrame:
    """Split rows into one text column per field, checking each row has as many fields as the header."""
    names = [f"f{i}" for i in range(len(fields))]
    split = rows.with_columns(pl.col("line").str.strip_chars_end("\r\n").str.split(SEP).alias("parts"))
    bad = split.filter(pl.col("parts").list.len() != len(fields))
    if bad.height:
        line_no, line, parts = bad.row(0)
        raise ctx.error(
            f"{len(parts)} fields where the header has {len(fields)}: {line[:120]!r}",
            line=line_no,
            expected=f"{len(fields)} values separated by ', '",
        )
    return split.select("line_no", pl.col("parts").list.to_struct(fields=names).struct.unnest())


def _missing(col: pl.Expr) -> pl.Expr:
    text = col.str.strip_chars()
    return (
        col.is_null() | (text == "") | (text == "N/A") | (text.str.starts_with("[") & text.str.ends_with("]"))
    )


def _long(ctx: LoadContext, fields: list[tuple[str, str | None]], wide: pl.DataFrame) -> pl.DataFrame:
    """One row per GPU, metric and time, with the identity labels: what telemetry.land needs."""
    by_name = {name: f"f{i}" for i, (name, _) in enumerate(fields)}
    if "timestamp" not in by_name:
        raise ctx.error(
            "no timestamp field", column="timestamp", expected="--query-gpu=timestamp,... as the first field"
        )
    ts_col = pl.col(by_name["timestamp"]).str.strip_chars()
    ts = (
        ts_col.str.to_datetime(_TS_FORMAT, strict=False)
        .dt.replace_time_zone(ctx.options.timezone, ambiguous="earliest", non_existent="null")
        .dt.convert_time_zone("UTC")
    )
    wide = wide.with_columns(ts.alias("_ts"))
    bad_ts = wide.filter(pl.col("_ts").is_null())
    if bad_ts.height:
        line_no, value = bad_ts.select("line_no", by_name["timestamp"]).row(0)
        raise ctx.error(
            f"timestamp {value!r} is not a time",
            line=line_no,
            column="timestamp",
            expected=f"YYYY/MM/DD HH:MM:SS.mmm in {ctx.options.timezone}",
        )
    host = pl.lit(ctx.options.host, pl.Utf8)
    if "hostname" in by_name:
        file_host = pl.col(by_name["hostname"])
        host = pl.when(_missing(file_host)).then(host).otherwise(file_host.str.strip_chars())
    wide = wide.with_columns(host.alias("Hostname"))
    no_host = wide.filter(pl.col("Hostname").is_null())
    if no_host.height:
        raise ctx.error(
            "the file does not name its host (no hostname field, or [N/A])",
            line=no_host["line_no"][0],
            column="hostname",
            expected="--host HOST, or --query-gpu=...,hostname",
        )
    labels = ["Hostname"]
    for field, label in LABELS.items():
        if field in by_name and label not in labels:
            c = pl.col(by_name[field])
            wide = wide.with_columns(
                pl.when(_missing(c)).then(None).otherwise(c.str.strip_chars()).alias(label)
            )
            labels.append(label)
    metrics = []
    for name, unit in fields:
        if name in TEXT_FIELDS or name.startswith(TEXT_PREFIXES):
            continue
        col = pl.col(by_name[name])
        text = col.str.strip_chars()
        if name == "pstate":
            text = text.str.replace(r"^P(\d+)$", "$1")
        number = text.str.extract(_NUMBER, 1).cast(pl.Float64, strict=False)
        checked = wide.select("line_no", by_name[name], _missing(col).alias("m"), number.alias("v"))
        not_number = checked.filter(~pl.col("m") & pl.col("v").is_null())
        dcgm = DCGM_NAMES.get(name)
        if dcgm is None:
            if not_number.height or checked["m"].all():
                continue  # a text field (Enabled, 0x...), or never reported here: not a sample
            metric = name
        else:
            metric, want = dcgm
            if not_number.height:
                line_no, value = not_number.row(0)[:2]
                raise ctx.error(
                    f"value {value!r} is not a number",
                    line=line_no,
                    column=name,
                    expected=f"a number{' in ' + want if want else ''} or [N/A]",
                )
            if unit not in (None, "?") and want is not None and unit != want:
                raise ctx.error(
                    f"unit [{unit}] where {metric} is in [{want}]", column=name, expected=f"[{want}]"
                )
        metrics.append(number.alias(metric))
    if not metrics:
        raise ctx.error(
            "no numeric field in the query", expected="fields such as utilization.gpu, memory.used"
        )
    out = wide.select("line_no", pl.col("_ts").alias("ts"), *labels, *metrics)
    names = [m.meta.output_name() for m in metrics]
    return out.unpivot(index=["line_no", "ts", *labels], on=names, variable_name="metric").filter(
        pl.col("value").is_not_null()
    )


def load(ctx: LoadContext) -> None:
    data = read_bytes(ctx.path)
    try:
        lines = pl.read_csv(
            io.BytesIO(data),
            has_header=False,
            separator="\x01",
            quote_char=None,
            new_columns=["line"],
            infer_schema=False,
        ).with_row_index("line_no", offset=1)
    except pl.exceptions.PolarsError as exc:
        raise ctx.error(f"could not be read as text lines: {exc}", expected="UTF-8 text") from exc
    del data
    if lines.height and lines["line"][0] is not None:
        lines = lines.with_columns(pl.col("line").str.strip_chars_start("\ufeff"))
    frames = [_long(ctx, fields, _wide(ctx, fields, rows)) for fields, rows in _blocks(ctx, lines)]
    samples = pl.concat(frames, how="diagonal_relaxed")
    label_cols = [c for c in samples.columns if c not in ("line_no", "ts", "metric", "value")]
    samples = samples.with_columns(
        pl.struct("metric", *label_cols).rank("dense").cast(pl.Int64).alias("series_no")
    )
    entries = ", ".join(
        ["{'key': '__name__', 'value': metric}"] + [f"{{'key': '{c}', 'value': \"{c}\"}}" for c in label_cols]
    )
    parsed = ctx.store.con.sql(
        f"""
        select series_no,
               map_from_entries(list_filter([{entries}], lambda e: e.value is not null)) as labels,
               ts::timestamptz as ts, value
        from samples
        """
    )
    telemetry.land(ctx, parsed)


FORMAT = Format(
    name="nvidia_smi_query_gpu",
    group="telemetry",
    description="nvidia-smi --query-gpu=... --format=csv log (or a capture holding such sections)",
    detect=detect,
    load=load,
    independent=True,
)
