"""Telemetry hours and GPU inventory against the simulator's ground truth.

`int_telemetry__gpu_hours` must reproduce `ground_truth/gpu_hours.csv` for every monitored GPU-hour
(the whole-GPU rows; MIG GPUs sum their slices), `dim_gpus` must hold every GPU of the simulated
fleet, and an incremental build that adds a day must insert the new hours (and the inference servers'
new token days) without rebuilding the old ones, late samples and a restated bill must re-open
exactly their days, a changed asset register must rebuild the priced GPU-hours whole, and every
incremental model must hold the full build's result.
"""

from __future__ import annotations

import csv
import os
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


def _read(warehouse: Path, sql: str, parameters: list | None = None) -> pl.DataFrame:
    with duckdb.connect(str(warehouse), read_only=True) as con:
        return con.sql(sql, params=parameters).pl()


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


LAST_DAY = "2026-10-08"  # the incremental test's new day
LATE_DAY = "2026-10-03"  # the late data test's old day

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
    "+fct_gpu_hours",
    "dim_dates",
]


def _build(home, dbt_vars: str | None = None) -> str:
    from gpu_ledger.build.duckdb_engine import build

    result = build(home, dbt_vars=dbt_vars, select=INCREMENTAL_MODELS, exclude=["test_name:relationships"])
    assert result.success, result.output[-3000:]
    return result.output


def _telemetry(sim: Path) -> list[Path]:
    return sorted(p for p in (sim / "telemetry").rglob("*") if p.is_file())


def _last_day(sim: Path) -> list[Path]:
    """The telemetry of the fleet's last day, which the incremental test delivers after a first build."""
    return [p for p in _telemetry(sim) if p.name.startswith(LAST_DAY) or LAST_DAY in p.name]


def _late(sim: Path) -> list[Path]:
    """One cluster's telemetry of an old day, which the late data test delivers after a first build."""
    old_day = [p for p in _telemetry(sim) if p.name.startswith(LATE_DAY)]
    cluster = sorted(p.parent.parent.name for p in old_day)[0]
    return [p for p in old_day if p.parent.parent.name == cluster]


def _billing(sim: Path) -> list[Path]:
    return sorted(p for p in (sim / "billing").rglob("*") if p.is_file())


def _later_bills(sim: Path) -> list[Path]:
    """The AWS bill's last delivery and the asset register, which the late data test delivers after a
    first build (and an earlier version of each before it)."""
    billing = _billing(sim)
    last_run = max(p.parent.name for p in billing if p.suffix == ".parquet")
    register = sim / "billing" / "onprem" / "asset_register.csv"
    return [p for p in billing if p.parent.name == last_run] + [register]


@pytest.fixture(scope="module")
def landed_before_deliveries(sim: Path, tmp_path_factory) -> Path:
    """A home with the fleet landed but for what the incremental tests deliver after their first builds
    (`_last_day`, `_late`, `_later_bills`): one ingest for both tests, which copy it."""
    from gpu_ledger.home import Home

    home = Home(tmp_path_factory.mktemp("landed") / "home")
    later = {*_last_day(sim), *_late(sim), *_later_bills(sim)}
    _ingest(
        home,
        [sim / name for name in INPUT_FOLDERS if name not in ("telemetry", "billing")]
        + [p for p in _billing(sim) + _telemetry(sim) if p not in later],
    )
    return home.root


def test_incremental_build_adds_a_day_without_rebuilding_the_rest(
    sim: Path, warehouse: Path, landed_before_deliveries: Path, tmp_path: Path
) -> None:
    from gpu_ledger.home import Home

    day_files = _last_day(sim)
    assert day_files

    # seven days of telemetry (and every other source), its incremental models built
    first = Home(tmp_path / "first")
    shutil.copytree(landed_before_deliveries, first.root)
    _ingest(first, _late(sim) + _later_bills(sim))
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
        _mark_rows(con)
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
    _assert_rewritten(second.warehouse, "intermediate.int_telemetry__hour_parts", cutoff, None)
    day_cutoff = cutoff.replace(hour=0)
    _assert_rewritten(second.warehouse, "intermediate.int_telemetry__gpu_hours", day_cutoff, None)
    # the priced GPU-hours: whole, as the inventory changed: DCGM saw the GPUs of the instances
    # started on the new day, which take the place of their placeholders (billed, not yet monitored)
    newly_monitored = _read(
        second.warehouse,
        "select count(*) from intermediate.int_inventory__gpus where is_monitored and first_seen_at >= ?",
        [datetime(2026, 10, 8, tzinfo=UTC)],
    ).item()
    assert newly_monitored > 0
    for table in PRICED_TABLES:
        _assert_rebuilt_whole(second.warehouse, table)
    after = _read(
        second.warehouse, "select hour_start from intermediate.int_telemetry__gpu_hours"
    ).with_columns(pl.col("hour_start").dt.convert_time_zone("UTC"))
    assert after["hour_start"].max() > newest, "the new day's hours were not added"
    old = after.filter(pl.col("hour_start") < day_cutoff)
    assert old.height == before.filter(pl.col("hour_start") < day_cutoff).height + _slice_rows_before(
        first.warehouse, day_cutoff
    )

    # and the incremental result, built a day a batch, is the full result: all eight days agree with
    # the ground truth, and every incremental model equals the full build's (the session warehouse,
    # one batch of eight days) but for the marks
    _assert_matches_truth(_gpu_rows(second.warehouse), _truth(sim))
    _assert_same_as_full_build(second.warehouse, warehouse)


# each incremental model, and the column the tests mark in place, if any (the token days' server: a
# mark that reaches no table compared), which the comparison with the full build leaves out
INCREMENTAL_TABLES = {
    "intermediate.int_telemetry__hour_parts": "",
    "intermediate.int_telemetry__gpu_hours": "",
    "intermediate.int_workloads__dcgm_gpu_consumers": "",
    "intermediate.int_telemetry__consumer_hours": "",
    "intermediate.int_idle__gpu_low_runs": "",
    "intermediate.int_inference__pod_token_days": "inference_server",
    "intermediate.int_telemetry__dcgm_pod_gpu_use": "",
    "intermediate.int_attribution__gpu_hours": "",
    "marts.fct_gpu_hours": "",
}
# the priced GPU-hours, whose days bills and inventory re-open besides the GPU-hours'
PRICED_TABLES = ["intermediate.int_attribution__gpu_hours", "marts.fct_gpu_hours"]
# the tables whose rows the tests mark, in a column of the tests' own that no model reads: a row a
# build rewrites has it null (a mark in a column a model reads, such as a hostname, would reach the
# inventory, and through it the priced GPU-hours)
MARKED_TABLES = [
    "intermediate.int_telemetry__hour_parts",
    "intermediate.int_telemetry__gpu_hours",
    *PRICED_TABLES,
]
MARK = "untouched_by_build"


def _mark_rows(con: duckdb.DuckDBPyConnection) -> None:
    """Mark the marked tables' rows: the rows a build leaves alone keep the mark."""
    for table in MARKED_TABLES:
        con.sql(f"alter table {table} add column if not exists {MARK} boolean")
        con.sql(f"update {table} set {MARK} = true")


def _assert_rewritten(
    warehouse: Path,
    table: str,
    start: datetime,
    end: datetime | None,
    *more: tuple[datetime, datetime | None],
) -> None:
    """The table's hours in [start, end) (and in each more window) were rebuilt (the mark is gone) and
    no other hour was."""
    hours = _read(warehouse, f"select hour_start, {MARK} from {table}").with_columns(
        pl.col("hour_start").dt.convert_time_zone("UTC")
    )
    window = pl.lit(False)
    for first, last in ((start, end), *more):
        window |= (pl.col("hour_start") >= first) & (
            pl.col("hour_start") < (last or datetime.max.replace(tzinfo=UTC))
        )
    windows = [(start, end), *more]
    assert hours.filter(~window)[MARK].eq_missing(True).all(), (
        f"{table}: an hour outside {windows} was rebuilt"
    )
    rebuilt = hours.filter(window)[MARK]
    assert not rebuilt.is_empty() and rebuilt.is_null().all(), (
        f"{table}: an hour in {windows} was not rebuilt"
    )


def _assert_rebuilt_whole(warehouse: Path, table: str) -> None:
    """Every row of the table was built anew: the table was (the marked column is gone), or every
    row lost its mark."""
    if MARK in _read(warehouse, f"select * from {table} limit 0").columns:
        marked = _read(warehouse, f"select count(*) from {table} where {MARK} is not null").item()
        assert marked == 0, f"{table}: {marked} rows not rebuilt"


def _assert_same_as_full_build(incremental: Path, full: Path) -> None:
    """Every incremental model holds the full build's rows, byte for byte, but for the marks: no row
    of either is missing from the other (EXCEPT ALL both ways)."""
    with duckdb.connect() as con:
        con.execute(f"attach '{incremental}' as incremental (read_only)")
        con.execute(f"attach '{full}' as full_build (read_only)")
        for table, marked in INCREMENTAL_TABLES.items():
            compared = f"columns(lambda c: c not in ('{MARK}', '{marked}'))"
            rows = {db: f"select {compared} from {db}.{table}" for db in ("incremental", "full_build")}
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


def test_late_data_reopens_exactly_its_days(
    sim: Path, warehouse: Path, landed_before_deliveries: Path, tmp_path: Path
) -> None:
    from gpu_ledger.home import Home

    # every source, but one cluster's telemetry of an old day arrives after the first build, and so
    # do the AWS bill's last delivery and the asset register: before them, an earlier delivery that
    # priced one hour of the first day differently, and an earlier register with another PUE
    late = _late(sim)
    assert late
    *last_delivery, register = _later_bills(sim)
    earlier = [
        _earlier_delivery(next(p for p in last_delivery if p.suffix == ".parquet"), tmp_path),
        _earlier_register(register, tmp_path),
    ]
    home = Home(tmp_path / "home")
    shutil.copytree(landed_before_deliveries, home.root)
    _ingest(home, earlier)
    _ingest(home, _last_day(sim))
    one_day = "{telemetry_batch_samples: 1}"
    _build(home, one_day)
    work = home.root / "work.duckdb"
    with duckdb.connect(str(work)) as con:
        _mark_rows(con)

    _ingest(home, late)
    output = _build(home, one_day)
    # the late day is re-opened, one batch, and nothing after the newest day is built
    assert "int_telemetry__hour_parts: batch 1 of 1, up to 2026-10-04" in output, output[-3000:]
    # the one pass's window: from the hour before the newest held before the day (its last hour's
    # energy), to the day's end; the GPU-hours and the priced GPU-hours: the days the one pass
    # rewrote, whole
    day_end = datetime(2026, 10, 4, tzinfo=UTC)
    _assert_rewritten(
        home.warehouse,
        "intermediate.int_telemetry__hour_parts",
        datetime(2026, 10, 2, 22, tzinfo=UTC),
        day_end,
    )
    for table in ["intermediate.int_telemetry__gpu_hours", *PRICED_TABLES]:
        _assert_rewritten(home.warehouse, table, datetime(2026, 10, 2, tzinfo=UTC), day_end)

    # the last delivery restates the first day's hour: the priced GPU-hours re-open that day, and
    # besides only the newest, which the GPU-hours re-read on a build without new samples
    with duckdb.connect(str(work)) as con:
        _mark_rows(con)
    _ingest(home, last_delivery)
    _build(home, one_day)
    for table in PRICED_TABLES:
        _assert_rewritten(
            home.warehouse,
            table,
            datetime(2026, 10, 1, tzinfo=UTC),
            datetime(2026, 10, 2, tzinfo=UTC),
            (datetime(2026, 10, 8, tzinfo=UTC), None),
        )

    # the register's PUE prices every on-prem GPU-hour: the priced GPU-hours are rebuilt whole
    with duckdb.connect(str(work)) as con:
        _mark_rows(con)
    _ingest(home, [register])
    _build(home, one_day)
    for table in PRICED_TABLES:
        _assert_rebuilt_whole(home.warehouse, table)

    # and every incremental model is the full build's, which read the same data at once
    _assert_same_as_full_build(home.warehouse, warehouse)


def _earlier_delivery(last: Path, tmp_path: Path) -> Path:
    """The AWS bill's last delivery as an export an hour earlier had it: the instances' lines of one hour
    of the first day at twice their cost (its execution folder dates it, after the delivery before)."""
    exported = datetime.strptime(last.parent.name[:16], "%Y%m%dT%H%M%SZ") - timedelta(hours=1)
    earlier = tmp_path / "earlier" / f"{exported:%Y%m%dT%H%M%SZ}-earlier" / last.name
    earlier.parent.mkdir(parents=True)
    hour = (
        "line_item_resource_id like 'i-%' and line_item_usage_start_date = timestamp '2026-10-01 12:00:00'"
        " and line_item_usage_end_date <= timestamp '2026-10-02 00:00:00'"
    )
    with duckdb.connect() as con:
        assert (
            con.execute(f"select count(*) from read_parquet(?) where {hour}", [str(last)]).fetchone()[0] > 0
        )
        doubled = ", ".join(
            f"case when {hour} then {cost} * 2 else {cost} end as {cost}"
            for cost in ("line_item_unblended_cost", "line_item_blended_cost", "line_item_net_unblended_cost")
        )
        con.execute(
            f"copy (select * replace ({doubled}) from read_parquet('{last}')) to '{earlier}' (format parquet)"
        )
    return earlier


def _earlier_register(register: Path, tmp_path: Path) -> Path:
    """The asset register as an earlier edit of it had it: its first asset's PUE higher (and the file
    older, which orders the two)."""
    with register.open(newline="") as f:
        rows = list(csv.DictReader(f))
    rows[0]["pue"] = f"{float(rows[0]['pue']) + 0.25:g}"
    earlier = tmp_path / "earlier" / register.name
    with earlier.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    written = register.stat().st_mtime - 3600
    os.utime(earlier, (written, written))
    return earlier
