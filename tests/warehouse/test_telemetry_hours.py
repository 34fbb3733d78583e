"""Telemetry hours and GPU inventory against the simulator's ground truth.

`int_telemetry__gpu_hours` must reproduce `ground_truth/gpu_hours.csv` for every monitored GPU-hour
(the whole-GPU rows; MIG GPUs sum their slices), `dim_gpus` must hold every GPU of the simulated
fleet, and an incremental build that adds a day must insert the new hours (and the inference servers'
new token days) without rebuilding the old ones, and give every incremental telemetry model the full
build's result.
"""

from __future__ import annotations

import shutil
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import duckdb
import polars as pl
import pytest

from gpu_ledger.simulator.generate import INPUT_FOLDERS, build_fleet
from gpu_ledger.simulator.model import SimulationConfig

pytestmark = pytest.mark.minutes(4)

REL = 1e-9
# the ground truth CSV keeps 9 decimals; a per-row comparison allows that rounding
ROW_ABS = 2e-9


def _read(warehouse: Path, sql: str) -> pl.DataFrame:
    with duckdb.connect(str(warehouse), read_only=True) as con:
        return con.sql(sql).pl()


def _truth(sim: Path) -> pl.DataFrame:
    return pl.read_csv(
        sim / "ground_truth" / "gpu_hours.csv",
        try_parse_dates=True,
        schema_overrides={"account_id": pl.String},
    ).with_columns(pl.col("hour_start").dt.convert_time_zone("UTC"))


def _gpu_rows(warehouse: Path) -> pl.DataFrame:
    return _read(
        warehouse,
        "select gpu_uuid, hour_start, samples, telemetry_seconds, busy_gpu_hours, avg_gpu_util_pct, "
        "max_fb_used_mib, energy_kwh from intermediate.int_telemetry__gpu_hours "
        "where mig_instance_id is null",
    ).with_columns(pl.col("hour_start").dt.convert_time_zone("UTC"))


def _assert_matches_truth(built: pl.DataFrame, truth: pl.DataFrame) -> None:
    measured = truth.filter(pl.col("is_monitored") & (pl.col("telemetry_seconds") > 0))
    keys = ["gpu_uuid", "hour_start"]
    # exact hour coverage: the same GPU-hours, no more, no fewer
    missing = measured.select(keys).join(built.select(keys), on=keys, how="anti")
    extra = built.select(keys).join(measured.select(keys), on=keys, how="anti")
    assert missing.is_empty(), f"GPU-hours in the ground truth but not built: {missing.head(5)}"
    assert extra.is_empty(), f"GPU-hours built but not in the ground truth: {extra.head(5)}"
    joined = measured.join(built, on=keys, suffix="_built")
    assert (joined["telemetry_seconds"] == joined["telemetry_seconds_built"]).all()
    for column in ("busy_gpu_hours", "energy_kwh"):
        truth_sum, built_sum = joined[column].sum(), joined[f"{column}_built"].fill_null(0.0).sum()
        assert built_sum == pytest.approx(truth_sum, rel=REL), column
        worst = (joined[column] - joined[f"{column}_built"].fill_null(0.0)).abs().max()
        assert worst <= ROW_ABS, f"{column}: a GPU-hour differs by {worst}"
    assert (joined["max_fb_used_mib"] == joined["max_fb_used_mib_built"]).all()
    worst_util = (joined["avg_gpu_util_pct"] - joined["avg_gpu_util_pct_built"]).abs().max()
    assert worst_util <= 1e-6


def test_gpu_hours_match_ground_truth(sim: Path, warehouse: Path) -> None:
    _assert_matches_truth(_gpu_rows(warehouse), _truth(sim))


def test_mig_slices_sum_to_their_gpu(warehouse: Path) -> None:
    sums = _read(
        warehouse,
        """
        select
            g.gpu_uuid,
            g.hour_start,
            g.busy_gpu_hours,
            sum(s.busy_gpu_hours) as slice_busy,
            count(s.energy_kwh) as slice_energy_rows
        from intermediate.int_telemetry__gpu_hours as g
        inner join intermediate.int_telemetry__gpu_hours as s
            on s.gpu_uuid = g.gpu_uuid and s.hour_start = g.hour_start and s.mig_instance_id is not null
        where g.mig_instance_id is null
        group by all
        """,
    )
    assert not sums.is_empty(), "the simulated fleet has MIG GPUs: slice rows expected"
    assert (sums["busy_gpu_hours"] - sums["slice_busy"]).abs().max() < 1e-9
    assert (sums["slice_energy_rows"] == 0).all(), "energy is counted on the whole-GPU row only"


def test_consumer_hours_cover_busy_time(warehouse: Path) -> None:
    """Every consumer-hour is inside a GPU-hour and never holds more samples than the unit had; together
    they hold no more either, but on a GPU whose pods dcgm-exporter measured each (they hold it at the
    same sample times: int_telemetry__pod_gpu_use), where each one alone does not."""
    over = _read(
        warehouse,
        """
        select c.gpu_uuid, c.mig_instance_id, c.hour_start, sum(c.samples) as consumer_samples,
            max(c.samples) as most_of_one, max(g.samples) as unit_samples
        from intermediate.int_telemetry__consumer_hours as c
        left join intermediate.int_telemetry__gpu_hours as g
            on g.gpu_uuid = c.gpu_uuid and g.hour_start = c.hour_start
            and g.mig_instance_id is not distinct from c.mig_instance_id
        group by all
        having max(g.samples) is null or max(c.samples) > max(g.samples) or (
            sum(c.samples) > max(g.samples)
            and c.gpu_uuid not in (
                select gpu_uuid from intermediate.int_telemetry__pod_gpu_use where measured_by = 'dcgm'
            )
        )
        """,
    )
    assert over.is_empty(), over.head(5)
    shared = _read(
        warehouse,
        "select count(*) from intermediate.int_telemetry__pod_gpu_use where measured_by = 'dcgm'",
    )
    assert shared.item() > 0, "the simulated fleet has a GPU whose pods dcgm-exporter measured"


def _fleet() -> tuple[pl.DataFrame, pl.DataFrame]:
    """The fixture's fleet, rebuilt from its configuration (the simulator is deterministic)."""
    config = SimulationConfig(
        out=Path("/nonexistent"),
        gpus=80,
        days=8,
        interval_s=300,
        seed=11,
        start=datetime(2026, 10, 1, tzinfo=UTC),
    )
    fleet, _ = build_fleet(config)
    return fleet.instances, fleet.gpus


def test_every_fleet_gpu_is_in_dim_gpus(warehouse: Path) -> None:
    instances, gpus = _fleet()
    expected = gpus.join(
        instances.select("instance_id", "gpu_model", "provider", "is_monitored"), on="instance_id"
    ).with_columns(
        pl.when(pl.col("is_monitored"))
        .then(pl.col("gpu_uuid"))
        .otherwise(pl.format("{}:{}", "instance_id", "gpu_index"))
        .alias("gpu_id")
    )
    dim = _read(
        warehouse,
        "select gpu_id, instance_id, gpu_model, provider, is_monitored, ownership from marts.dim_gpus",
    )
    assert dim["gpu_id"].n_unique() == dim.height
    joined = expected.join(dim, on="gpu_id", how="left", suffix="_dim")
    absent = joined.filter(pl.col("instance_id_dim").is_null() & pl.col("is_monitored_dim").is_null())
    assert absent.is_empty(), (
        f"fleet GPUs missing from dim_gpus: {absent.select('gpu_id', 'instance_id').head(5)}"
    )
    wrong = joined.filter(
        (pl.col("instance_id") != pl.col("instance_id_dim"))
        | (pl.col("gpu_model") != pl.col("gpu_model_dim"))
        | (pl.col("is_monitored") != pl.col("is_monitored_dim"))
    )
    assert wrong.is_empty(), wrong.select(
        "gpu_id", "instance_id", "instance_id_dim", "gpu_model", "gpu_model_dim"
    )
    assert dim.height == expected.height, "dim_gpus holds GPUs the fleet never had"
    onprem = dim.filter(pl.col("provider") == "onprem")
    assert (onprem["ownership"] == "on_prem").all() and not onprem.is_empty()


def test_unmonitored_azure_t4_is_in_dim_gpus(warehouse: Path) -> None:
    """The T4 VM has no telemetry: its node (and, once billing is in, its bill) keeps it in dim_gpus."""
    t4 = _read(warehouse, "select * from marts.dim_gpus where gpu_model = 'T4'")
    assert t4.height == 1, t4
    row = t4.row(0, named=True)
    assert row["is_monitored"] is False
    assert row["provider"] == "azure" and row["instance_type"] == "Standard_NC4as_T4_v3"
    assert row["gpu_id"] == f"{row['instance_id']}:0"


# ------------------------------------------------------------------------------------ incremental


def _ingest(home, paths: list[Path]) -> None:
    from gpu_ledger.ingest.runner import ingest
    from gpu_ledger.ingest.store import RawStore

    with RawStore(home.raw_db) as store:
        outcomes = ingest(paths, store, progress=False)
    rejected = [o.error for o in outcomes if o.status == "rejected"]
    assert not rejected, rejected


# The incremental models the test compares and what they read; dim_dates, a mart that reads only seeds,
# makes the selection publishable (a build publishes only a file with marts). The marts over them are
# the full build's business, and so are the relationships tests that point at them: the selection keeps
# both builds here to a tenth of the project's nodes.
INCREMENTAL_MODELS = [
    "+int_telemetry__hour_parts",
    "+int_telemetry__gpu_hours",
    "+int_telemetry__dcgm_pod_gpu_use",
    "+int_telemetry__consumer_hours",
    "+int_workloads__dcgm_gpu_consumers",
    "+int_idle__gpu_low_runs",
    "+int_inference__pod_token_days",
    "dim_dates",
]


def _build(home, dbt_vars: str | None = None) -> str:
    from gpu_ledger.build.duckdb_engine import build

    result = build(home, dbt_vars=dbt_vars, select=INCREMENTAL_MODELS, exclude=["test_name:relationships"])
    assert result.success, result.output[-3000:]
    return result.output


def test_incremental_build_adds_a_day_without_rebuilding_the_rest(
    sim: Path, warehouse: Path, tmp_path: Path
) -> None:
    from gpu_ledger.home import Home

    last_day = "2026-10-08"
    telemetry = sorted(p for p in (sim / "telemetry").rglob("*") if p.is_file())
    day_files = [p for p in telemetry if p.name.startswith(last_day) or last_day in p.name]
    earlier = [p for p in telemetry if p not in day_files]
    assert day_files and earlier

    # seven days of telemetry (and every other source), its incremental models built
    first = Home(tmp_path / "first")
    _ingest(first, [sim / name for name in INPUT_FOLDERS if name != "telemetry"] + earlier)
    # batches of one day each (a sample budget any day exceeds): seven, the last up to the eighth day
    one_day = "{telemetry_batch_samples: 1}"
    output = _build(first, one_day)
    assert "int_telemetry__hour_parts: batch 7 of 7, up to 2026-10-08" in output, output[-3000:]
    assert "int_inference__pod_token_days: batch 7 of 7, up to 2026-10-08" in output, output[-3000:]
    before = _gpu_rows(first.warehouse)
    newest = before["hour_start"].max()

    # a copy of the home, the incremental models' rows marked: rows a build leaves alone keep the mark
    second = Home(tmp_path / "second")
    shutil.copytree(first.root, second.root)
    with duckdb.connect(str(second.root / "work.duckdb")) as con:
        _mark_hostnames(con)
        con.sql(
            "update intermediate.int_inference__pod_token_days "
            "set inference_server = inference_server || '#untouched'"
        )
    _ingest(second, day_files)
    output = _build(second, one_day)
    # one more day is one batch: from the hour before the newest held to the end of the new day
    assert "int_telemetry__hour_parts: batch 1 of 1, up to 2026-10-09" in output, output[-3000:]
    # the token days: from the start of the newest day held, whose last increases needed the new day
    assert "int_inference__pod_token_days: batch 1 of 1, up to 2026-10-09" in output, output[-3000:]
    token_days = _read(
        second.warehouse, "select day, inference_server from intermediate.int_inference__pod_token_days"
    )
    newest_day = date(2026, 10, 7)
    old_days = token_days.filter(pl.col("day") < newest_day)
    assert not old_days.is_empty() and old_days["inference_server"].str.ends_with("#untouched").all(), (
        "a token day before the newest held was rebuilt"
    )
    assert (
        not token_days.filter(pl.col("day") >= newest_day)["inference_server"]
        .str.ends_with("#untouched")
        .any()
    ), "the newest day held was not rebuilt"
    assert token_days["day"].max() == date(2026, 10, 8), "the new day's tokens were not added"

    # the one pass: from the hour before the newest held; the GPU-hours: the days the one pass
    # rewrote (from the newest held day's midnight) and the new day
    cutoff = newest - timedelta(hours=1)
    _assert_rewritten(second.warehouse, "int_telemetry__hour_parts", cutoff, None)
    day_cutoff = cutoff.replace(hour=0)
    _assert_rewritten(second.warehouse, "int_telemetry__gpu_hours", day_cutoff, None)
    after = _read(
        second.warehouse, "select hour_start from intermediate.int_telemetry__gpu_hours"
    ).with_columns(pl.col("hour_start").dt.convert_time_zone("UTC"))
    assert after["hour_start"].max() > newest, "the new day's hours were not added"
    old = after.filter(pl.col("hour_start") < day_cutoff)
    assert old.height == before.filter(pl.col("hour_start") < day_cutoff).height + _slice_rows_before(
        first.warehouse, day_cutoff
    )

    # and the incremental result, built a day a batch, is the full result: all eight days agree with
    # the ground truth, and every telemetry model equals the full build's (the session warehouse,
    # one batch of eight days) but for the marked columns; the marts are not compared: the marks
    # reach them
    _assert_matches_truth(_gpu_rows(second.warehouse), _truth(sim))
    _assert_same_as_full_build(second.warehouse, warehouse)


# each telemetry model and the column that carries the incremental tests' mark
TELEMETRY_TABLES = {
    "intermediate.int_telemetry__hour_parts": "hostname",
    "intermediate.int_telemetry__gpu_hours": "hostname",
    "intermediate.int_workloads__dcgm_gpu_consumers": "hostname",
    "intermediate.int_telemetry__consumer_hours": "hostname",
    "intermediate.int_idle__gpu_low_runs": "hostname",
    "intermediate.int_inference__pod_token_days": "inference_server",
    # not marked: its consumer is left out, spelled from the pod's columns, which are compared
    "intermediate.int_telemetry__dcgm_pod_gpu_use": "consumer",
}


def _mark_hostnames(con: duckdb.DuckDBPyConnection) -> None:
    """Mark the incremental telemetry models' rows, each model with its own mark (a model summed from
    another's rows takes that one's): the rows a build leaves alone keep their model's mark."""
    for model in ("int_telemetry__hour_parts", "int_telemetry__gpu_hours"):
        con.sql(f"update intermediate.{model} set hostname = hostname || '{_mark(model)}'")


def _mark(model: str) -> str:
    return f"#untouched in {model}"


def _assert_rewritten(warehouse: Path, model: str, start: datetime, end: datetime | None) -> None:
    """The model's hours in [start, end) were rebuilt (the mark is gone) and no other hour was."""
    hours = _read(warehouse, f"select hour_start, hostname from intermediate.{model}").with_columns(
        pl.col("hour_start").dt.convert_time_zone("UTC")
    )
    window = pl.col("hour_start") >= start
    if end is not None:
        window &= pl.col("hour_start") < end
    assert hours.filter(~window)["hostname"].str.ends_with(_mark(model)).all(), (
        f"{model}: an hour outside [{start}, {end}) was rebuilt"
    )
    rebuilt = hours.filter(window)["hostname"]
    assert not rebuilt.is_empty() and not rebuilt.str.ends_with(_mark(model)).any(), (
        f"{model}: an hour in [{start}, {end}) was not rebuilt"
    )


def _assert_same_as_full_build(incremental: Path, full: Path) -> None:
    """Every incremental telemetry model holds the full build's rows, byte for byte, but for the
    marked column: no row of either is missing from the other (EXCEPT ALL both ways)."""
    with duckdb.connect() as con:
        con.execute(f"attach '{incremental}' as incremental (read_only)")
        con.execute(f"attach '{full}' as full_build (read_only)")
        for table, marked in TELEMETRY_TABLES.items():
            rows = {
                db: f"select * exclude ({marked}) from {db}.{table}" for db in ("incremental", "full_build")
            }
            assert con.sql(f"select count(*) from full_build.{table}").fetchall()[0][0] > 0, table
            for this, other in (("incremental", "full_build"), ("full_build", "incremental")):
                only = con.sql(f"{rows[this]} except all {rows[other]}").pl()
                assert only.is_empty(), f"{table}: rows only the {this} build has: {only.head(3)}"


def _slice_rows_before(warehouse: Path, cutoff: datetime) -> int:
    with duckdb.connect(str(warehouse), read_only=True) as con:
        return con.execute(
            "select count(*) from intermediate.int_telemetry__gpu_hours "
            "where mig_instance_id is not null and hour_start < ?",
            [cutoff],
        ).fetchone()[0]


def test_late_samples_reopen_exactly_their_day(sim: Path, warehouse: Path, tmp_path: Path) -> None:
    from gpu_ledger.home import Home

    # every source, but one cluster's telemetry of an old day arrives after the first build
    late_day = "2026-10-03"
    telemetry = sorted(p for p in (sim / "telemetry").rglob("*") if p.is_file())
    cluster = sorted(p.parent.parent.name for p in telemetry if p.name.startswith(late_day))[0]
    late = [p for p in telemetry if p.name.startswith(late_day) and p.parent.parent.name == cluster]
    assert late
    home = Home(tmp_path / "home")
    _ingest(home, [sim / name for name in INPUT_FOLDERS if name != "telemetry"])
    _ingest(home, [p for p in telemetry if p not in late])
    one_day = "{telemetry_batch_samples: 1}"
    _build(home, one_day)
    with duckdb.connect(str(home.root / "work.duckdb")) as con:
        _mark_hostnames(con)

    _ingest(home, late)
    output = _build(home, one_day)
    # the late day is re-opened, one batch, and nothing after the newest day is built
    assert "int_telemetry__hour_parts: batch 1 of 1, up to 2026-10-04" in output, output[-3000:]
    # the one pass's window: from the hour before the newest held before the day (its last hour's
    # energy), to the day's end; the GPU-hours: the days the one pass rewrote, whole
    day_end = datetime(2026, 10, 4, tzinfo=UTC)
    _assert_rewritten(
        home.warehouse, "int_telemetry__hour_parts", datetime(2026, 10, 2, 22, tzinfo=UTC), day_end
    )
    _assert_rewritten(home.warehouse, "int_telemetry__gpu_hours", datetime(2026, 10, 2, tzinfo=UTC), day_end)

    # and every incremental telemetry model is the full build's
    _assert_same_as_full_build(home.warehouse, warehouse)
