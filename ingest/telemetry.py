"""Landing DCGM series from any telemetry format: one label vocabulary, typed, with missing values dropped.

Every telemetry format parses its file into a DuckDB relation of (series_no, labels MAP, ts, value)
and hands it here. This module maps the label variants dcgm-exporter and Prometheus produce onto one
set of typed columns, identifies each series by a stable hash of its labels, drops DCGM blank
sentinels (values at or above 2^62 mean "not available"), and lands:

- `raw.dcgm_series`: one row per series per load: series_id, metric, the typed labels, the full map;
- `raw.dcgm_samples`: series_id, ts, value, _load_id — the bulk, kept narrow.
"""

from __future__ import annotations

import duckdb

from ingest.base import LoadContext

DCGM_BLANK_THRESHOLD = 2.0**62

# dcgm-exporter 1.x (and --use-old-namespace) metric names -> the current ones
OLD_METRIC_NAMES = {
    "dcgm_gpu_utilization": "DCGM_FI_DEV_GPU_UTIL",
    "dcgm_mem_copy_utilization": "DCGM_FI_DEV_MEM_COPY_UTIL",
    "dcgm_fb_used": "DCGM_FI_DEV_FB_USED",
    "dcgm_fb_free": "DCGM_FI_DEV_FB_FREE",
    "dcgm_power_usage": "DCGM_FI_DEV_POWER_USAGE",
    "dcgm_total_energy_consumption": "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
    "dcgm_fi_prof_gr_engine_active": "DCGM_FI_PROF_GR_ENGINE_ACTIVE",
    "dcgm_fi_prof_pipe_tensor_active": "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE",
    "dcgm_gpu_temp": "DCGM_FI_DEV_GPU_TEMP",
}

# typed column -> label names that carry it, first present wins. Where Prometheus renamed the
# exporter's own pod labels to exported_* (honorLabels off), the exported_* ones are the workload's.
LABEL_COLUMNS = {
    "gpu_uuid": ("UUID", "uuid", "gpu_uuid"),
    "gpu_index": ("gpu",),
    "hostname": ("Hostname", "hostname"),
    "model_name": ("modelName", "model_name"),
    "pci_bus_id": ("pci_bus_id",),
    "device": ("device",),
    "mig_profile": ("GPU_I_PROFILE",),
    "gpu_instance_id": ("GPU_I_ID",),
    "pod": ("exported_pod", "pod", "pod_name"),
    "namespace": ("exported_namespace", "namespace", "pod_namespace"),
    "container": ("exported_container", "container", "container_name"),
    "pod_uid": ("pod_uid",),
    "hpc_job": ("hpc_job",),
    "driver_version": ("DCGM_FI_DRIVER_VERSION",),
    "scrape_job": ("job",),
    "scrape_instance": ("instance",),
}
# when honorLabels is off, plain pod/namespace/container name the exporter itself, not the workload
EXPORTER_POD_LABELS = ("pod", "namespace", "container")


def _label(column: str, names: tuple[str, ...]) -> str:
    picks = []
    for name in names:
        value = f"labels['{name}']"
        if column in EXPORTER_POD_LABELS and name == column:
            # a series whose exporter labels were renamed keeps plain pod/namespace for the exporter
            value = f"case when map_contains(labels, 'exported_{column}') then null else {value} end"
        picks.append(f"nullif({value}, '')")
    return f"coalesce({', '.join(picks)})" if len(picks) > 1 else picks[0]


def land(ctx: LoadContext, parsed: duckdb.DuckDBPyRelation) -> None:
    """Land a parsed relation of (series_no, labels, ts, value) as series and samples."""
    con = ctx.store.con
    con.sql("create or replace temp table _parsed as select * from parsed")
    metric_case = " ".join(f"when '{old}' then '{new}'" for old, new in OLD_METRIC_NAMES.items())
    typed = ",\n".join(f"{_label(col, names)} as {col}" for col, names in LABEL_COLUMNS.items())
    con.sql(f"""
        create or replace temp table _series as
        with distinct_series as (
            select series_no, any_value(labels) as labels from _parsed group by series_no
        )
        select
            md5_number_lower(array_to_string(list_sort(list_transform(
                map_entries(labels), lambda e: e.key || '=' || e.value)), chr(31))) as series_id,
            case labels['__name__'] {metric_case} else labels['__name__'] end as metric,
            {typed},
            labels,
            series_no
        from distinct_series
    """)
    if con.sql("select count(*) from _series where metric is null").fetchall()[0][0]:
        raise ctx.error("a series has no metric name", column="__name__", expected="a DCGM metric name")
    ctx.land("dcgm_series", con.sql("select * exclude (series_no) from _series"), count=False)
    samples = con.sql(f"""
        select s.series_id, p.ts, p.value
        from _parsed p join _series s using (series_no)
        where p.value is not null and p.value < {DCGM_BLANK_THRESHOLD}
    """)
    _land_samples(ctx, samples)
    con.sql("drop table _parsed")
    con.sql("drop table _series")


def _land_samples(ctx: LoadContext, samples: duckdb.DuckDBPyRelation) -> None:
    """Samples go straight from the relation into raw.dcgm_samples, without a trip through Python."""
    con = ctx.store.con
    con.sql(
        "create table if not exists raw.dcgm_samples "
        "(series_id ubigint, ts timestamptz, value double, _load_id varchar)"
    )
    inserted = con.execute(
        "insert into raw.dcgm_samples select series_id, ts, value, $id from samples", {"id": ctx.load_id}
    ).fetchall()[0][0]
    ctx.rows += inserted
    ctx.tables.add("dcgm_samples")
