"""The semantic layer: MetricFlow validates its YAML, gpu_ledger.read.metrics answers as MetricFlow's own SQL
does, gpu_spend is fct_cost_by_owner_daily's total_cost, and `gpu-ledger metrics` answers."""

from __future__ import annotations

import json
import math
import shutil
from datetime import date, datetime
from pathlib import Path

import duckdb
import pytest

from gpu_ledger.cli import main
from gpu_ledger.read import metrics
from gpu_ledger.read.warehouse import query

mf = pytest.importorskip("metricflow", reason="dbt-metricflow is not installed")


def _semantic_manifest(warehouse: Path) -> str:
    """The semantic manifest dbt wrote when it built the test warehouse (every build parses the project)."""
    return (warehouse.parent / "dbt" / "target" / "semantic_manifest.json").read_text()


def test_metricflow_validates_the_semantic_layer(warehouse: Path):
    from metricflow_semantic_interfaces.validations.semantic_manifest_validator import (
        SemanticManifestValidator,
    )
    from metricflow_semantics.model.dbt_manifest_parser import parse_manifest_from_dbt_generated_manifest

    manifest = parse_manifest_from_dbt_generated_manifest(_semantic_manifest(warehouse))
    results = SemanticManifestValidator().validate_semantic_manifest(manifest)
    assert not results.errors, [str(e) for e in results.errors]
    assert not results.warnings, [str(w) for w in results.warnings]
    assert {m.name for m in manifest.metrics} == set(metrics.layer().metrics)


class _ExplainOnly:
    """What MetricFlow's engine needs to write DuckDB SQL without a connection of its own."""

    def __init__(self) -> None:
        from metricflow.protocols.sql_client import SqlEngine
        from metricflow.sql.render.duckdb_renderer import DuckDbSqlPlanRenderer

        self.sql_engine_type = SqlEngine.DUCKDB
        self.sql_plan_renderer = DuckDbSqlPlanRenderer()

    def render_bind_parameter_key(self, key: str) -> str:
        return "$" + key


@pytest.fixture(scope="module")
def metricflow(warehouse: Path, tmp_path_factory):
    """(MetricFlow's engine, a connection on a copy of the warehouse named as the build names its
    database, "work", so MetricFlow's relations resolve), in UTC."""
    from metricflow.engine.metricflow_engine import MetricFlowEngine
    from metricflow_semantics.model.dbt_manifest_parser import parse_manifest_from_dbt_generated_manifest
    from metricflow_semantics.model.semantic_manifest_lookup import SemanticManifestLookup

    manifest = parse_manifest_from_dbt_generated_manifest(_semantic_manifest(warehouse))
    engine = MetricFlowEngine(SemanticManifestLookup(manifest), _ExplainOnly())
    copy = tmp_path_factory.mktemp("mf") / "work.duckdb"
    shutil.copyfile(warehouse, copy)
    con = duckdb.connect(str(copy), read_only=True)
    con.execute("set TimeZone = 'UTC'")
    yield engine, con
    con.close()


def _rows(frame_rows, names):
    """{group tuple: metric values}, dates and timestamps as ISO days, numbers as floats."""
    out = {}
    for row in frame_rows:
        keys = tuple(v.date().isoformat() if isinstance(v, datetime) else str(v) for v in row[: len(names)])
        # a division by zero: null here, NaN or infinity in MetricFlow's DuckDB SQL
        out[keys] = tuple(
            None if v is None or not math.isfinite(float(v)) else float(v) for v in row[len(names) :]
        )
    return out


def _close(a, b) -> bool:
    if a is None or b is None:
        return a is None and b is None or (a or 0) == 0 and (b or 0) == 0
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-6)


# (metrics, group-by as MetricFlow names them, the same as gpu-ledger metrics takes them, a where)
QUERIES = [
    (["gpu_spend", "idle_cost", "gpu_hours", "busy_gpu_hours"], ["owner_day__team"], ["team"], None),
    (["gpu_utilisation", "cost_per_busy_gpu_hour"], ["owner_day__workload_class"], ["workload_class"], None),
    (["gpu_spend"], ["metric_time__day", "owner_day__project"], ["metric_time__day", "project"], None),
    (
        ["gpu_spend"],
        ["metric_time__month"],
        ["metric_time__month"],
        "{{ Dimension('owner_day__team') }} = 'vision'",
    ),
    (["amortised_gpu_cost", "billed_gpu_cost", "list_gpu_cost"], ["gpu__gpu_model"], ["gpu_model"], None),
    (["saving_vs_list"], ["gpu_hour__pricing_category"], ["pricing_category"], None),
    (
        ["provisioned_gpu_hours", "fleet_utilisation", "allocation_rate"],
        ["capacity_day__gpu_model"],
        ["gpu_model"],
        None,
    ),
    (["job_cost", "job_attempts", "cost_per_job"], ["job__cost_centre"], ["cost_centre"], None),
    (["idle_cost_within_jobs"], ["job_attempt__team"], ["team"], None),
    (["training_runs", "training_run_cost", "interruption_cost"], ["training_run__team"], ["team"], None),
    (
        ["idle_period_cost", "open_idle_periods", "open_idle_monthly_saving"],
        ["idle_period__team"],
        ["team"],
        None,
    ),
    (
        ["savings_available", "recommendations", "recommendations_saving_rate"],
        ["recommendation__recommendation_type"],
        ["recommendation_type"],
        None,
    ),
    (
        [
            "budget",
            "budget_actual",
            "budget_forecast",
            "budget_consumption",
            "teams_over_budget",
            "teams_at_risk",
        ],
        ["metric_time__month"],
        ["metric_time__month"],
        None,
    ),
    (
        ["roi", "cost_per_training_run", "cost_per_1k_requests", "business_value"],
        ["project_month__project"],
        ["project"],
        None,
    ),
    (
        ["commitment_utilisation", "commitment_unused"],
        ["commitment_month__commitment_type"],
        ["commitment_type"],
        None,
    ),
    (["spot_interruptions", "spot_interruption_cost"], [], [], None),
    (["cost_anomalies"], ["team_day__team"], ["team"], None),
]


@pytest.mark.parametrize(
    ("names", "mf_group_by", "group_by", "where"), QUERIES, ids=[q[0][0] for q in QUERIES]
)
def test_the_layer_answers_as_metricflow_does(metricflow, warehouse, names, mf_group_by, group_by, where):
    from metricflow.engine.metricflow_engine import MetricFlowQueryRequest

    engine, con = metricflow
    request = MetricFlowQueryRequest.create(
        metric_names=names, group_by_names=mf_group_by or None, where_constraints=[where] if where else None
    )
    theirs_sql = engine.explain(request).sql_statement.sql
    cols = [c.lower() for c in mf_group_by]
    theirs = con.sql(f"select {', '.join([*cols, *names])} from ({theirs_sql})").fetchall()
    ours = metrics.run(warehouse, metrics.Query(names, group_by, where=[where] if where else []))
    ours_rows = ours.select([*group_by, *names]).rows()
    expected, got = _rows(theirs, cols), _rows(ours_rows, group_by)
    assert expected, "the query should find data in the simulated fleet"
    assert set(got) == set(expected)
    for key, values in expected.items():
        assert all(_close(a, b) for a, b in zip(got[key], values, strict=True)), (key, got[key], values)


def test_gpu_spend_is_the_owner_marts_total_cost_and_the_fleet_figures_reconcile(warehouse):
    by_team = metrics.run(warehouse, metrics.Query(["gpu_spend", "gpu_hours", "busy_gpu_hours"], ["team"]))
    mart = query(
        warehouse,
        "select team, sum(total_cost) as total_cost from marts.fct_cost_by_owner_daily group by team",
    )
    assert dict(zip(by_team["team"], by_team["gpu_spend"], strict=True)) == dict(mart.rows())
    total = metrics.run(
        warehouse,
        metrics.Query(
            [
                "gpu_spend",
                "amortised_gpu_cost",
                "gpu_hours",
                "provisioned_gpu_hours",
                "busy_gpu_hours",
                "fleet_busy_gpu_hours",
            ]
        ),
    ).row(0, named=True)
    assert float(total["gpu_spend"]) == pytest.approx(float(total["amortised_gpu_cost"]), abs=0.01)
    assert total["busy_gpu_hours"] == pytest.approx(total["fleet_busy_gpu_hours"], rel=1e-9)


def test_gpu_hours_held_by_owners_are_the_fleet_provisioned_gpu_hours(warehouse):
    """Held and idle GPU-hours add up to the fleet's: the simulated fleet's time-slicing node has three pods
    on one GPU all window, each seeing all of it, and they hold one GPU-hour an hour between them."""
    total = metrics.run(warehouse, metrics.Query(["gpu_hours", "provisioned_gpu_hours"])).row(0, named=True)
    assert total["gpu_hours"] == pytest.approx(total["provisioned_gpu_hours"], rel=1e-9)


def test_every_metric_answers_by_each_of_its_dimensions(warehouse):
    layer = metrics.layer()
    for name in layer.metrics:
        assert metrics.run(warehouse, metrics.Query([name])).height == 1, name
        for dimension in layer.dimensions(name):
            metrics.run(warehouse, metrics.Query([name], [dimension], limit=3))


def test_filters_and_dates_narrow_a_metric(warehouse):
    lo = query(warehouse, "select min(day) from marts.fct_cost_by_owner_daily").item()
    start, end = date.fromordinal(lo.toordinal() + 1), date.fromordinal(lo.toordinal() + 3)
    got = metrics.run(
        warehouse, metrics.Query(["gpu_spend"], values={"team": ["vision"]}, start=start, end=end)
    ).item()
    expected = query(
        warehouse,
        f"select sum(total_cost) from marts.fct_cost_by_owner_daily where team = 'vision' "
        f"and day between '{start}' and '{end}'",
    ).item()
    assert got == expected


def test_questions_the_layer_cannot_answer_say_why():
    layer = metrics.layer()
    with pytest.raises(metrics.MetricError, match="unknown metric"):
        layer.compile(metrics.Query(["no_such_metric"]))
    with pytest.raises(metrics.MetricError, match="cannot be grouped by 'provider'"):
        layer.compile(metrics.Query(["gpu_spend"], ["provider"]))


def test_every_metric_has_a_label_unit_and_description():
    for metric in metrics.layer().metrics.values():
        assert metric.label and metric.description and metric.unit in metrics.UNIT_LABELS, metric.name


# --- the command -----------------------------------------------------------------------------------


def test_metrics_list_names_every_metric_with_its_unit(capsys):
    assert main(["metrics", "list", "--format", "json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert {m["name"] for m in listed} == set(metrics.layer().metrics)
    spend = next(m for m in listed if m["name"] == "gpu_spend")
    assert spend["unit"] == metrics.reporting_currency() and "total_cost" in spend["description"]


def test_metrics_query_answers_from_the_published_warehouse(warehouse, capsys):
    home = str(warehouse.parent)
    assert (
        main(
            [
                "metrics",
                "query",
                "--home",
                home,
                "--metrics",
                "gpu_spend",
                "--group-by",
                "team",
                "--format",
                "json",
            ]
        )
        == 0
    )
    rows = json.loads(capsys.readouterr().out)
    mart = dict(
        query(
            warehouse, "select team, sum(total_cost)::double from marts.fct_cost_by_owner_daily group by team"
        ).rows()
    )
    assert {r["team"]: round(r["gpu_spend"], 6) for r in rows} == {t: round(v, 6) for t, v in mart.items()}
    assert (
        main(
            [
                "metrics",
                "query",
                "--home",
                home,
                "--metrics",
                "gpu_spend,gpu_utilisation",
                "--group-by",
                "team",
                "--where",
                "team = 'vision'",
                "--format",
                "csv",
            ]
        )
        == 0
    )
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0] == "team,gpu_spend,gpu_utilisation" and len(lines) == 2 and lines[1].startswith("vision,")
    assert main(["metrics", "query", "--home", home, "--metrics", "gpu_spend"]) == 0
    assert "gpu_spend" in capsys.readouterr().out


def test_metrics_query_refuses_an_unknown_metric_or_dimension(warehouse, capsys):
    home = str(warehouse.parent)
    assert main(["metrics", "query", "--home", home, "--metrics", "nope"]) == 2
    assert "unknown metric 'nope'" in capsys.readouterr().err
    assert main(["metrics", "query", "--home", home, "--metrics", "gpu_spend", "--group-by", "provider"]) == 2
    assert "cannot be grouped by 'provider'" in capsys.readouterr().err
