"""`gpu-ledger validate`: Great Expectations suites over the landed raw tables.

Each suite reads one raw table (big tables through a reservoir sample, so a month of a thousand GPUs
validates in seconds), runs its expectations, stores one row per expectation in
`raw.validation_results` (the app's data health page and `gpu-ledger status` read it), and the run
is rendered as Great Expectations data docs under `<home>/gx/`.

Ingest already refuses what can never be right (a utilisation of -3 %); these suites report what is
suspicious across files: missing keys, values out of the plausible range, times outside the period
a file claims, costs that disagree with rate × quantity.
"""

from __future__ import annotations

import json
import logging
import re
import uuid
import warnings
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import polars as pl

from gpu_ledger.ingest.store import RawStore

# Great Expectations imports PySpark where it is installed (it is, for `build --engine spark`), and PySpark
# warns about the pandas version, which concerns Spark, not these suites
warnings.filterwarnings("ignore", "PySpark does not yet fully support pandas", FutureWarning)
import great_expectations as gx  # noqa: E402
from great_expectations.data_context.types.resource_identifiers import (  # noqa: E402
    ExpectationSuiteIdentifier,
    ValidationResultIdentifier,
)

SAMPLE_ROWS = 200_000
RESULTS = "raw.validation_results"
RESULTS_DDL = f"""
create table if not exists {RESULTS} (
    run_id varchar, run_at timestamptz, suite varchar, table_name varchar, expectation varchar,
    column_name varchar, success boolean, element_count bigint, unexpected_count bigint,
    unexpected_percent double, details varchar
)
"""
UTIL_METRICS = ("DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_MEM_COPY_UTIL")
RATIO_METRICS = ("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE")


@dataclass(frozen=True)
class Suite:
    """Expectations on the rows one query returns from the raw store."""

    name: str
    table: str  # the raw table the suite needs; skipped when it was never landed
    query: str
    expectations: tuple[gx.expectations.Expectation, ...]


def _telemetry_suite(now: datetime) -> Suite:
    e = gx.expectations
    sampled = f"""
        with series as (select distinct on (series_id) * from raw.dcgm_series)
        select s.metric, s.gpu_uuid, s.hostname, x.ts, x.value
        from (select * from raw.dcgm_samples using sample reservoir({SAMPLE_ROWS} rows) repeatable (7)) x
        join series s using (series_id)
    """

    def metric_is(names: tuple[str, ...]) -> dict:
        quoted = ", ".join(f'"{n}"' for n in names)
        return {"row_condition": f"metric in [{quoted}]", "condition_parser": "pandas"}

    return Suite(
        name="dcgm_samples",
        table="dcgm_samples",
        query=sampled,
        expectations=(
            e.ExpectColumnValuesToNotBeNull(column="ts"),
            e.ExpectColumnValuesToNotBeNull(column="value"),
            e.ExpectColumnValuesToNotBeNull(column="hostname"),
            e.ExpectColumnValuesToNotBeNull(column="gpu_uuid", mostly=0.99),
            e.ExpectColumnValuesToMatchRegex(column="gpu_uuid", regex=r"^GPU-[0-9a-fA-F-]{36}$", mostly=0.99),
            e.ExpectColumnValuesToBeBetween(
                column="value", min_value=0, max_value=100, **metric_is(UTIL_METRICS)
            ),
            e.ExpectColumnValuesToBeBetween(
                column="value", min_value=0, max_value=1, **metric_is(RATIO_METRICS)
            ),
            e.ExpectColumnValuesToBeBetween(
                column="value", min_value=0, max_value=2000, **metric_is(("DCGM_FI_DEV_POWER_USAGE",))
            ),
            e.ExpectColumnValuesToBeBetween(
                column="ts", min_value=datetime(2015, 1, 1, tzinfo=UTC), max_value=now
            ),
        ),
    )


def _manifest_suite() -> Suite:
    e = gx.expectations
    return Suite(
        name="ingest_manifest",
        table="ingest_manifest",
        query="select * from raw.ingest_manifest",
        expectations=(
            e.ExpectColumnValuesToBeUnique(column="load_id"),
            e.ExpectColumnValuesToNotBeNull(column="sha256"),
            e.ExpectColumnValuesToBeInSet(
                column="status", value_set=["loaded", "rejected", "replaced", "superseded"]
            ),
            e.ExpectColumnValuesToBeNull(
                column="error", row_condition='status == "loaded"', condition_parser="pandas"
            ),
        ),
    )


def _not_before(later: str, earlier: str) -> gx.expectations.Expectation:
    """`later` is at or after `earlier` on every row that has both."""
    return gx.expectations.ExpectColumnPairValuesAToBeGreaterThanB(
        column_A=later, column_B=earlier, or_equal=True, ignore_row_if="either_value_is_missing"
    )


def _after(later: str, earlier: str) -> gx.expectations.Expectation:
    """`later` is strictly after `earlier` on every row that has both."""
    return gx.expectations.ExpectColumnPairValuesAToBeGreaterThanB(
        column_A=later, column_B=earlier, ignore_row_if="either_value_is_missing"
    )


def _billing_suites() -> list[Suite]:
    e = gx.expectations
    usage = {"row_condition": 'line_item_line_item_type == "Usage"', "condition_parser": "pandas"}
    return [
        Suite(
            name="aws_cur",
            table="aws_cur",
            query=f"""
                select line_item_line_item_type, line_item_usage_account_id, line_item_usage_start_date,
                       line_item_usage_end_date, bill_billing_period_start_date, bill_billing_period_end_date,
                       line_item_unblended_cost,
                       abs(line_item_unblended_cost - line_item_unblended_rate * line_item_usage_amount)
                           as rate_times_quantity_gap
                from raw.aws_cur using sample reservoir({SAMPLE_ROWS} rows) repeatable (7)
            """,
            expectations=(
                e.ExpectColumnValuesToNotBeNull(column="line_item_line_item_type"),
                e.ExpectColumnValuesToNotBeNull(column="line_item_usage_account_id"),
                e.ExpectColumnValuesToNotBeNull(column="line_item_unblended_cost"),
                e.ExpectColumnValuesToNotBeNull(column="line_item_usage_start_date"),
                _not_before("line_item_usage_start_date", "bill_billing_period_start_date"),
                _after("bill_billing_period_end_date", "line_item_usage_start_date"),
                e.ExpectColumnValuesToBeBetween(
                    column="rate_times_quantity_gap", min_value=0, max_value=0.01, **usage
                ),
            ),
        ),
        Suite(
            name="focus",
            table="focus",
            query=f"""
                select ChargeCategory, BilledCost, EffectiveCost, ChargePeriodStart, BillingPeriodStart,
                       BillingPeriodEnd, ProviderName, BillingAccountId
                from raw.focus using sample reservoir({SAMPLE_ROWS} rows) repeatable (7)
            """,
            expectations=(
                e.ExpectColumnValuesToNotBeNull(column="BilledCost"),
                e.ExpectColumnValuesToNotBeNull(column="BillingAccountId"),
                e.ExpectColumnValuesToNotBeNull(column="ProviderName"),
                e.ExpectColumnValuesToBeInSet(
                    column="ChargeCategory", value_set=["Usage", "Purchase", "Tax", "Credit", "Adjustment"]
                ),
                e.ExpectColumnValuesToNotBeNull(column="ChargePeriodStart"),
                _not_before("ChargePeriodStart", "BillingPeriodStart"),
                _after("BillingPeriodEnd", "ChargePeriodStart"),
            ),
        ),
        Suite(
            name="focus_contract_commitments",
            table="focus_contract_commitments",
            query="""
                select ContractCommitmentId, ContractId, ContractCommitmentCost,
                       ContractCommitmentPeriodStart, ContractCommitmentPeriodEnd, ContractPeriodStart,
                       ContractPeriodEnd
                from raw.focus_contract_commitments
            """,
            expectations=(
                e.ExpectColumnValuesToNotBeNull(column="ContractCommitmentId"),
                e.ExpectColumnValuesToBeBetween(column="ContractCommitmentCost", min_value=0),
                _after("ContractCommitmentPeriodEnd", "ContractCommitmentPeriodStart"),
                _after("ContractPeriodEnd", "ContractPeriodStart"),
                _not_before("ContractCommitmentPeriodStart", "ContractPeriodStart"),
            ),
        ),
        Suite(
            name="azure_cost",
            table="azure_cost",
            query="select Date, SubscriptionId, CostInBillingCurrency, PricingModel from raw.azure_cost",
            expectations=(
                e.ExpectColumnValuesToNotBeNull(column="Date"),
                e.ExpectColumnValuesToNotBeNull(column="SubscriptionId"),
                e.ExpectColumnValuesToNotBeNull(column="CostInBillingCurrency"),
                e.ExpectColumnValuesToBeInSet(
                    column="PricingModel", value_set=["OnDemand", "Reservation", "SavingsPlan", "Spot", None]
                ),
            ),
        ),
        Suite(
            name="onprem_assets",
            table="onprem_assets",
            query="select * exclude (_load_id) from raw.onprem_assets",
            expectations=(
                e.ExpectColumnValuesToBeUnique(column="asset_id"),
                e.ExpectColumnValuesToBeBetween(column="purchase_price", min_value=1),
                e.ExpectColumnValuesToBeBetween(column="pue", min_value=1.0, max_value=3.0),
                e.ExpectColumnValuesToBeBetween(column="depreciation_months", min_value=12, max_value=120),
                e.ExpectColumnValuesToBeBetween(column="gpu_count", min_value=1, max_value=16),
            ),
        ),
    ]


def _workload_suites() -> list[Suite]:
    e = gx.expectations
    allocations = {"row_condition": "step_id.isnull()", "condition_parser": "pandas"}
    return [
        Suite(
            name="slurm_sacct",
            table="slurm_sacct",
            query=f"""
                select job_id, step_id, state, state_known, submit_at, start_at, end_at, alloc_gpus, nnodes
                from raw.slurm_sacct using sample reservoir({SAMPLE_ROWS} rows) repeatable (7)
            """,
            expectations=(
                e.ExpectColumnValuesToNotBeNull(column="job_id"),
                e.ExpectColumnValuesToBeInSet(column="state_known", value_set=[True], mostly=0.99),
                e.ExpectColumnValuesToNotBeNull(column="submit_at", **allocations),
                _not_before("start_at", "submit_at"),
                _not_before("end_at", "start_at"),
                e.ExpectColumnValuesToBeBetween(column="alloc_gpus", min_value=0, max_value=1024),
            ),
        ),
        Suite(
            name="k8s_pods",
            table="k8s_pods",
            query="select uid, phase, started_at, finished_at, gpu_request from raw.k8s_pods",
            expectations=(
                e.ExpectColumnValuesToNotBeNull(column="uid"),
                e.ExpectColumnValuesToBeInSet(
                    column="phase", value_set=["Pending", "Running", "Succeeded", "Failed", "Unknown"]
                ),
                _not_before("finished_at", "started_at"),
                e.ExpectColumnValuesToBeBetween(column="gpu_request", min_value=0, max_value=64),
            ),
        ),
        Suite(
            name="k8s_nodes",
            table="k8s_nodes",
            query="select name, provider_id, instance_id, capacity_type, gpu_count from raw.k8s_nodes",
            expectations=(
                e.ExpectColumnValuesToNotBeNull(column="name"),
                e.ExpectColumnValuesToNotBeNull(column="instance_id", mostly=0.95),
                e.ExpectColumnValuesToBeInSet(
                    column="capacity_type", value_set=["on_demand", "spot", "reserved", None]
                ),
            ),
        ),
        Suite(
            name="aws_events",
            table="aws_events",
            query="select detail_type, instance_id, time from raw.aws_events",
            expectations=(
                e.ExpectColumnValuesToNotBeNull(column="time"),
                e.ExpectColumnValuesToMatchRegex(column="instance_id", regex=r"^i-[0-9a-f]{8,17}$"),
            ),
        ),
        Suite(
            name="inference_requests",
            table="inference_requests",
            query="select * exclude (_load_id) from raw.inference_requests",
            expectations=(
                e.ExpectColumnValuesToBeBetween(column="requests", min_value=0),
                e.ExpectCompoundColumnsToBeUnique(
                    column_list=["date", "project", "model", "model_version", "environment"]
                ),
            ),
        ),
        Suite(
            name="business_value",
            table="business_value",
            query="select month, project, value::double as value, currency from raw.business_value",
            expectations=(
                e.ExpectColumnValuesToNotBeNull(column="value"),
                e.ExpectCompoundColumnsToBeUnique(column_list=["month", "project"]),
            ),
        ),
    ]


def suites(now: datetime) -> list[Suite]:
    return [_manifest_suite(), _telemetry_suite(now), *_billing_suites(), *_workload_suites()]


@dataclass
class SuiteResult:
    suite: str
    success: bool
    evaluated: int
    failed: list[str]


def validate(store: RawStore, home: Path) -> tuple[list[SuiteResult], Path]:
    """Run every suite whose table exists; keep the results; build data docs under <home>/gx.

    Returns the suites' results and the data docs' index page."""
    logging.getLogger("great_expectations").setLevel(logging.ERROR)
    warnings.filterwarnings("ignore", module="great_expectations")
    now = datetime.now(UTC)
    run_id = uuid.uuid4().hex
    context = gx.get_context(mode="file", project_root_dir=home)
    context.variables.progress_bars = {"globally": False, "metric_calculations": False}
    source = context.data_sources.add_or_update_pandas("raw")
    store.con.sql(RESULTS_DDL)
    landed = set(store.tables())
    outcomes, rows = [], []
    pages: list[ValidationResultIdentifier | ExpectationSuiteIdentifier] = []  # this run's data docs
    for suite in suites(now):
        if suite.table not in landed:
            continue
        try:
            frame = store.con.sql(suite.query).df()
        except duckdb.BinderException as exc:  # a landed file lacked a column the suite checks
            missing = re.search(r'column "([^"]+)" not found', str(exc))
            what = f"column_present({missing.group(1) if missing else '?'})"
            outcomes.append(SuiteResult(suite.name, False, 0, [what]))
            continue
        asset = (
            source.add_dataframe_asset(suite.name)
            if suite.name not in source.get_asset_names()
            else (source.get_asset(suite.name))
        )
        # one batch definition per suite, reused by every run: the stored validation definition refers
        # to it by name, so a per-run name would leave the next run's lookup pointing at nothing
        batch = next(
            (b for b in asset.batch_definitions if b.name == suite.name), None
        ) or asset.add_batch_definition_whole_dataframe(suite.name)
        expectation_suite = context.suites.add_or_update(
            gx.ExpectationSuite(name=suite.name, expectations=list(suite.expectations))
        )
        definition = context.validation_definitions.add_or_update(
            gx.ValidationDefinition(name=suite.name, data=batch, suite=expectation_suite)
        )
        checkpoint = context.checkpoints.add_or_update(
            gx.Checkpoint(name=suite.name, validation_definitions=[definition], actions=[])
        )
        result = checkpoint.run(batch_parameters={"dataframe": frame})
        pages += [*result.run_results, ExpectationSuiteIdentifier(name=suite.name)]
        failed = []
        for validation in result.run_results.values():
            for r in validation.results:
                config = r.expectation_config
                column = config.kwargs.get("column")
                rows.append(
                    {
                        "run_id": run_id,
                        "run_at": now,
                        "suite": suite.name,
                        "table_name": suite.table,
                        "expectation": config.type,
                        "column_name": column,
                        "success": r.success,
                        "element_count": r.result.get("element_count", len(frame)),
                        "unexpected_count": r.result.get("unexpected_count"),
                        "unexpected_percent": r.result.get("unexpected_percent"),
                        "details": json.dumps(config.kwargs, default=str),
                    }
                )
                if not r.success:
                    failed.append(f"{config.type}({column or ''})")
        outcomes.append(SuiteResult(suite.name, result.success, len(frame), failed))
    if rows:
        frame = pl.DataFrame(rows)  # noqa: F841  (read by name below)
        store.con.sql(f"insert into {RESULTS} by name select * from frame")
    # once, for this run's pages and the index: a site rebuilt after every suite, or in full, costs a
    # second a suite and grows with every run the home keeps
    built = context.build_data_docs(resource_identifiers=pages or None)
    index = Path(next(iter(built.values())).removeprefix("file://"))
    return outcomes, index
