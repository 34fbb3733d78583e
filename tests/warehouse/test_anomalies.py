"""Cost anomalies and capacity by cluster, end to end on the simulated fleet.

`fct_team_cost_anomalies`: the simulator plants one cost spike (simulator.workloads.unplanned_burst:
the search team's unplanned re-embedding on two on-demand p4d nodes), recorded in
ground_truth/anomalies.csv. The mart must flag exactly that team-day, with the team's ground-truth
cost. Its baselines, z-scores and statuses on every team-day are recomputed here from
ground_truth/cost_by_team_day.csv with the method its YAML documents and the vars of dbt_project.yml,
so a flag on an unplanted day can only be the method's own verdict. On the 8-day fixture only the
last day has the default week of history: each team is judged once, and only the planted day may be
flagged. (Over a simulated month, the climate team's weekly Slurm training is flagged on its first two
Thursdays, until three weeks of history make it the team's weekday normal; the model's YAML says so.)

`fct_capacity_daily`: the cluster split adds up, per day, provider and GPU model, to the totals of
the hour facts it is built from.
"""

from __future__ import annotations

import statistics
from datetime import timedelta
from pathlib import Path

import duckdb
import polars as pl
import pytest
import yaml

CENT = 0.005
PROJECT = Path(__file__).resolve().parents[2]


def _read(warehouse: Path, sql: str) -> pl.DataFrame:
    with duckdb.connect(str(warehouse), read_only=True) as con:
        return con.sql(sql).pl()


@pytest.fixture(scope="module")
def method() -> dict:
    """The anomaly vars as dbt_project.yml sets them (the build uses these defaults)."""
    variables = yaml.safe_load((PROJECT / "dbt_project.yml").read_text())["vars"]
    return {k: v for k, v in variables.items() if k.startswith("anomaly_")}


@pytest.fixture(scope="module")
def anomalies(warehouse: Path) -> pl.DataFrame:
    return _read(
        warehouse,
        "select day, team, status, direction, is_anomaly, baseline_days, robust_z, cost::double as cost,"
        " baseline_cost::double as baseline_cost, baseline_mad_cost::double as baseline_mad_cost,"
        " deviation_cost::double as deviation_cost from marts.fct_team_cost_anomalies",
    )


@pytest.fixture(scope="module")
def planted(sim: Path) -> pl.DataFrame:
    return pl.read_csv(sim / "ground_truth" / "anomalies.csv", try_parse_dates=True)


def _stands_out(deviation: float, scale: float | None, method: dict) -> bool:
    """Both thresholds: more than the dollar floor off, and more than the z threshold over the scale."""
    z = deviation / scale if scale else None
    return abs(deviation) > method["anomaly_min_deviation_cost"] and (
        z is None or abs(z) > method["anomaly_z_threshold"]
    )


def _expected(sim: Path, method: dict) -> pl.DataFrame:
    """Each team-day judged from the ground truth's daily team cost, as the model's YAML defines it."""
    team_day = (
        pl.read_csv(sim / "ground_truth" / "cost_by_team_day.csv", try_parse_dates=True)
        .group_by("day", "team")
        .agg(pl.col("cost").sum())
    )
    cost = {(r["team"], r["day"]): r["cost"] for r in team_day.iter_rows(named=True)}
    days = sorted(set(team_day["day"]))
    window = timedelta(days=method["anomaly_baseline_days"])
    rows = []
    for team, first_day in team_day.group_by("team").agg(pl.col("day").min()).iter_rows():
        series = [(day, cost.get((team, day), 0.0)) for day in days if day >= first_day]
        for day, value in series:
            past = [v for d, v in series if day - window <= d < day]
            baseline = statistics.median(past) if past else None
            mad = statistics.median(abs(v - baseline) for v in past) if past else None
            scale = max(1.4826 * mad, baseline * method["anomaly_scale_floor_pct"] / 100) if past else None
            z = (value - baseline) / scale if scale else None
            weekday = [v for d, v in series if day - window <= d < day and (day - d).days % 7 == 0]
            if len(past) < method["anomaly_min_history_days"]:
                status = "insufficient_history"
            elif _stands_out(value - baseline, scale, method) and (
                len(weekday) < method["anomaly_min_weekday_days"]
                or (
                    _stands_out(value - statistics.median(weekday), scale, method)
                    and (value - statistics.median(weekday) > 0) == (value - baseline > 0)
                )
            ):
                status = "anomaly"
            else:
                status = "normal"
            rows.append(
                {
                    "day": day,
                    "team": team,
                    "truth_cost": value,
                    "truth_baseline": baseline,
                    "truth_mad": mad,
                    "truth_days": len(past),
                    "truth_z": z,
                    "truth_status": status,
                }
            )
    return pl.DataFrame(rows)


def test_planted_spike_is_flagged(anomalies: pl.DataFrame, planted: pl.DataFrame, method: dict) -> None:
    assert planted.height == 1, planted
    for spike in planted.iter_rows(named=True):
        found = anomalies.filter((pl.col("day") == spike["day"]) & (pl.col("team") == spike["team"]))
        assert found.height == 1, spike
        row = found.row(0, named=True)
        assert row["baseline_days"] >= method["anomaly_min_history_days"], row
        assert row["status"] == "anomaly" and row["is_anomaly"], row
        assert row["direction"] == spike["direction"] == "spike", row
        assert row["cost"] == pytest.approx(spike["team_cost"], abs=CENT), row
        assert row["robust_z"] > method["anomaly_z_threshold"], row
        # the jump over the team's usual day is the planted machines' cost, give or take its usual noise
        assert row["deviation_cost"] == pytest.approx(spike["planted_cost"], rel=0.1), (row, spike)


def test_no_unplanted_team_day_is_flagged(anomalies: pl.DataFrame, planted: pl.DataFrame) -> None:
    judged = anomalies.filter(pl.col("status").is_in(["anomaly", "normal"]))
    unplanted = judged.join(planted.select("day", "team"), on=["day", "team"], how="anti")
    assert unplanted.height == judged.height - planted.height > 0
    assert not unplanted["is_anomaly"].any(), unplanted.filter(pl.col("is_anomaly"))
    assert anomalies.filter(pl.col("is_anomaly")).height == planted.height


def test_every_team_day_follows_the_documented_method(
    sim: Path, anomalies: pl.DataFrame, method: dict
) -> None:
    expected = _expected(sim, method)
    joined = expected.join(anomalies, on=["day", "team"], how="full", coalesce=True)
    assert joined.height == expected.height == anomalies.height > 0
    # the simulated window ends at midnight: no day is partial
    assert set(joined["status"]) <= {"anomaly", "normal", "insufficient_history"}
    for row in joined.iter_rows(named=True):
        assert row["status"] == row["truth_status"], row
        assert row["baseline_days"] == row["truth_days"], row
        assert row["cost"] == pytest.approx(row["truth_cost"], abs=CENT), row
        if row["truth_baseline"] is None:
            assert row["baseline_cost"] is None and row["robust_z"] is None, row
            continue
        assert row["baseline_cost"] == pytest.approx(row["truth_baseline"], abs=CENT), row
        assert row["baseline_mad_cost"] == pytest.approx(row["truth_mad"], abs=CENT), row
        if row["truth_z"] is None:
            assert row["robust_z"] is None, row
        else:
            assert row["robust_z"] == pytest.approx(row["truth_z"], rel=1e-4, abs=1e-3), row


def test_capacity_by_cluster_sums_to_the_model_totals(warehouse: Path) -> None:
    """Σ over clusters of the additive GPU-hours = the day x provider x model totals of the hour facts."""
    keys = ["day", "provider", "gpu_model"]
    by_cluster = _read(
        warehouse,
        """
        select day, provider, gpu_model, sum(provisioned_gpu_hours) as provisioned,
            sum(allocated_gpu_hours) as allocated, sum(busy_gpu_hours) as busy
        from marts.fct_capacity_daily group by all
        """,
    )
    totals = _read(
        warehouse,
        """
        with allocated as (
            select gpu_id, hour_start, sum(allocated_seconds * share) as seconds
            from marts.fct_gpu_hour_allocations where consumer_type = 'job' group by all
        )
        select cast(timezone('UTC', h.hour_start) as date) as day, h.provider,
            coalesce(g.gpu_model, 'unknown') as gpu_model,
            sum(coalesce(h.provisioned_seconds, 0)) / 3600 as total_provisioned,
            -- time-sliced pods each hold all of a GPU: together they allocate it once, at most
            sum(least(coalesce(a.seconds, 0), coalesce(h.provisioned_seconds, 0))) / 3600 as total_allocated,
            sum(coalesce(h.busy_gpu_hours, 0)) as total_busy
        from marts.fct_gpu_hours h
        left join marts.dim_gpus g using (gpu_id)
        left join allocated a using (gpu_id, hour_start)
        group by all
        """,
    )
    joined = totals.join(by_cluster, on=keys, how="full", coalesce=True)
    assert joined.height == totals.height == by_cluster.height > 0
    for row in joined.iter_rows(named=True):
        assert row["provisioned"] == pytest.approx(row["total_provisioned"], abs=1e-6), row
        assert row["allocated"] == pytest.approx(row["total_allocated"], abs=1e-6), row
        assert row["busy"] == pytest.approx(row["total_busy"], abs=1e-6), row
    clusters = _read(warehouse, "select distinct provider, cluster, gpu_model from marts.fct_capacity_daily")
    # every simulated machine is in a cluster but the standalone VM of a type the catalogue lacks
    unclustered = clusters.filter(pl.col("cluster") == "unknown")
    assert set(unclustered["gpu_model"]) == {"unknown"}, unclustered
    clustered = clusters.filter(pl.col("cluster") != "unknown").select("provider", "cluster").unique()
    assert clustered.height == clustered["cluster"].n_unique() >= 3, clustered
