"""Split cost allocation data in a legacy CUR (`splitLineItem/*` headers) reads as CUR 2.0's.

A legacy Cost and Usage Report with split cost allocation data on carries, beside the instance's own
line, a zero-cost usage line per pod, hour and resource whose money is in `splitLineItem/SplitCost`,
`splitLineItem/UnusedCost` and the parent instance in `splitLineItem/ParentResourceId` (AWS CUR data
dictionary, "Split line item details"). A hand-made file in that shape lands typed, a bad split value
refuses the file in one line, and its pod lines leave the bill's lines for the split staging. Then the
simulated fleet's CUR 2.0 export, rewritten as the legacy CUR it would be, reconciles with our split
exactly as the CUR 2.0 export does.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import polars as pl
import pytest

from gpu_ledger.ingest.formats.billing.aws_cur_legacy import snake
from gpu_ledger.ingest.runner import ingest
from gpu_ledger.ingest.store import RawStore
from tests.warehouse.homes import built_warehouse, query

pytestmark = pytest.mark.minutes(4)

POD = "arn:aws:eks:us-west-2:111122223333:pod/eks-ml/train/trainer-0/6c1f7a52-93d4-4b6e-a7f1-0e2b58c1d9aa"
HEADER = (
    "identity/LineItemId,identity/TimeInterval,bill/InvoiceId,bill/BillingEntity,bill/BillType,"
    "bill/PayerAccountId,bill/BillingPeriodStartDate,bill/BillingPeriodEndDate,lineItem/UsageAccountId,"
    "lineItem/LineItemType,lineItem/UsageStartDate,lineItem/UsageEndDate,lineItem/ProductCode,"
    "lineItem/UsageType,lineItem/Operation,lineItem/AvailabilityZone,lineItem/ResourceId,"
    "lineItem/UsageAmount,lineItem/CurrencyCode,lineItem/UnblendedRate,lineItem/UnblendedCost,"
    "lineItem/LineItemDescription,product/ProductName,product/instanceType,product/gpu,product/region,"
    "pricing/unit,splitLineItem/ActualUsage,splitLineItem/ParentResourceId,"
    "splitLineItem/PublicOnDemandSplitCost,splitLineItem/PublicOnDemandUnusedCost,"
    "splitLineItem/ReservedUsage,splitLineItem/SplitCost,splitLineItem/SplitUsage,"
    "splitLineItem/SplitUsageRatio,splitLineItem/UnusedCost"
)
_BILL = (
    "2026-10-01T10:00:00Z/2026-10-01T11:00:00Z,,AWS,Anniversary,111122223333,2026-10-01T00:00:00Z,"
    "2026-11-01T00:00:00Z,444455556666"
)
_HOUR = "2026-10-01T10:00:00Z,2026-10-01T11:00:00Z"
LINES = (
    # the instance-hour: the bill
    f"kq3v,{_BILL},Usage,{_HOUR},AmazonEC2,USW2-BoxUsage:g5.12xlarge,RunInstances,us-west-2a,"
    "i-0a1b2c3d4e5f60718,1,USD,5.672,5.672,$5.672 per On Demand Linux g5.12xlarge Instance Hour,"
    "Amazon Elastic Compute Cloud,g5.12xlarge,4,us-west-2,Hrs,,,,,,,,,",
    # the pod's GPU, vCPU and memory splits of it: no cost on the line, the money in splitLineItem/*
    f"p7xa,{_BILL},Usage,{_HOUR},AmazonEKS,USW2-EKS-EC2-GPU-Hours,EKSPod-EC2,us-west-2a,{POD},"
    "2,USD,0.0,0,GPU split of the pod's EC2 instance,Amazon Elastic Kubernetes Service,,,us-west-2,"
    "GPU-Hours,2,i-0a1b2c3d4e5f60718,2.9541666667,1.3784722222,2,2.9541666667,2,0.5,1.3784722222",
    f"p7xb,{_BILL},Usage,{_HOUR},AmazonEKS,USW2-EKS-EC2-vCPU-Hours,EKSPod-EC2,us-west-2a,{POD},"
    "16,USD,0.0,0,vCPU split of the pod's EC2 instance,Amazon Elastic Kubernetes Service,,,us-west-2,"
    "vCPU-Hours,16,i-0a1b2c3d4e5f60718,0.5908333333,0.2756944444,16,0.5908333333,16,0.3333333333,"
    "0.2756944444",
)
SAMPLE = "\n".join((HEADER, *LINES)) + "\n"


def _land(tmp_path: Path, text: str):
    path = tmp_path / "cur-legacy-00001.csv"
    path.write_text(text)
    store = RawStore(tmp_path / "landed.duckdb")
    (outcome,) = ingest([path], store, progress=False)
    return path, store, outcome


def test_legacy_split_columns_land_typed_under_their_cur2_names(tmp_path: Path):
    _, store, outcome = _land(tmp_path, SAMPLE)
    with store:
        assert outcome.status == "loaded", outcome.error
        rows = store.con.sql(
            "select split_line_item_parent_resource_id, split_line_item_split_cost, "
            "split_line_item_unused_cost, split_line_item_split_usage_ratio, "
            "typeof(split_line_item_split_cost) "
            "from raw.aws_cur_legacy order by _source_row"
        ).fetchall()
    assert rows == [
        (None, None, None, None, "DOUBLE"),
        ("i-0a1b2c3d4e5f60718", 2.9541666667, 1.3784722222, 0.5, "DOUBLE"),
        ("i-0a1b2c3d4e5f60718", 0.5908333333, 0.2756944444, 0.3333333333, "DOUBLE"),
    ]


def test_a_split_cost_that_is_no_number_refuses_the_file_in_one_line(tmp_path: Path):
    bad = SAMPLE.replace(",2.9541666667,2,0.5,", ",n/a,2,0.5,")
    path, store, outcome = _land(tmp_path, bad)
    with store:
        assert outcome.status == "rejected"
        assert "\n" not in outcome.error
        assert outcome.error.startswith(f"{path}:3: column 'splitLineItem/SplitCost': data row 2:"), (
            outcome.error
        )
        assert "aws_cur_legacy" not in str(store.tables())


@pytest.mark.slow
def test_legacy_split_lines_leave_the_bill_for_the_split_staging(tmp_path: Path):
    path = tmp_path / "in" / "cur-legacy-00001.csv"
    path.parent.mkdir()
    path.write_text(SAMPLE)
    warehouse = built_warehouse(tmp_path / "home", path.parent)
    bill = query(
        warehouse,
        "select count(*), sum(BilledCost) from intermediate.int_billing__focus_lines "
        "where x_Source = 'aws_cur_legacy'",
    )
    assert [(n, float(cost)) for n, cost in bill] == [(1, 5.672)]  # the instance-hour, not the pods
    splits = query(
        warehouse,
        "select split_source, consumer, namespace, consumer_name, parent_resource_id, gpu_request_hours, "
        "round(split_cost + unused_cost, 10) "
        "from intermediate.int_billing__provider_splits order by source_row",
    )
    consumer = "kubernetes:eks-ml:6c1f7a52-93d4-4b6e-a7f1-0e2b58c1d9aa"
    assert splits == [
        ("aws_cur", consumer, "train", "trainer-0", "i-0a1b2c3d4e5f60718", 2.0, 4.3326388889),
        ("aws_cur", consumer, "train", "trainer-0", "i-0a1b2c3d4e5f60718", 0.0, 0.8665277777),
    ]


# ------------------------------------------------------------------------ the simulated fleet as legacy CUR

_CATEGORIES = ("split_line_item", "savings_plan", "reservation", "line_item", "identity", "pricing", "bill")


def legacy_name(name: str) -> str:
    """A CUR 2.0 column's legacy header (`split_line_item_split_cost` -> `splitLineItem/SplitCost`)."""
    category = next((c for c in _CATEGORIES if name.startswith(c + "_")), name.split("_")[0])
    rest = name[len(category) + 1 :]
    head = category.split("_")[0] + "".join(w.capitalize() for w in category.split("_")[1:])
    if category == "product":
        return f"product/{rest}"  # the legacy product columns keep AWS's attribute names
    out = f"{head}/" + "".join(w.upper() if len(w) == 1 else w.capitalize() for w in rest.split("_"))
    assert snake(out) == name, (name, out)
    return out


_MAP_HEADERS = {
    "product": "product",
    "resource_tags": "resourceTags",
    "cost_category": "costCategory",
    "discount": "discount",
}


def legacy_cur(cur2: Path, out: Path) -> None:
    """Rewrite one CUR 2.0 Parquet delivery as the legacy CUR CSV of the same lines: `category/Column`
    headers, each map as one column per key (`resource_tags` `user_team` -> `resourceTags/user:team`),
    ISO 8601 UTC timestamps."""
    lines = pl.read_parquet(cur2)
    columns: dict[str, pl.Expr] = {}
    for name, dtype in lines.schema.items():
        if isinstance(dtype, pl.Map):
            keys = sorted({key for m in lines.get_column(name).to_list() for key in m or {}})
            for key in keys:
                tag = key.replace("_", ":", 1) if name == "resource_tags" else key
                header = f"{_MAP_HEADERS[name]}/{tag}"
                if snake(header) not in lines.columns:  # CUR 2.0 also has it as a column of its own
                    columns[header] = pl.col(name).map_elements(
                        lambda m, k=key: m.get(k), return_dtype=pl.Utf8
                    )
        elif isinstance(dtype, pl.Datetime):
            columns[legacy_name(name)] = pl.col(name).dt.strftime("%Y-%m-%dT%H:%M:%SZ")
        else:
            columns[legacy_name(name)] = pl.col(name)
    lines.select(**columns).write_csv(out)


@pytest.fixture(scope="module")
def legacy_warehouse(sim: Path, tmp_path_factory) -> Path:
    """The simulated fleet with its AWS bill delivered as a legacy CUR (each period's final delivery)."""
    legacy = tmp_path_factory.mktemp("legacy-cur")
    for period in sorted((sim / "billing" / "aws").glob("*/data/BILLING_PERIOD=*")):
        final = sorted(period.iterdir())[-1]
        legacy_cur(next(final.glob("*.parquet")), legacy / f"{period.name}.csv")
    inputs = [p for p in sim.iterdir() if p.name not in ("billing", "ground_truth")]
    inputs += [p for p in (sim / "billing").iterdir() if p.name != "aws"]
    return built_warehouse(tmp_path_factory.mktemp("legacy-home"), *inputs, legacy)


@pytest.mark.slow
def test_a_legacy_cur_fleet_reconciles_as_its_cur2_export(legacy_warehouse: Path, warehouse: Path):
    sql = (
        "select charge_date, parent_resource_id, consumer, reason, provider_cost, our_cost "
        "from marts.fct_provider_split_reconciliation order by all"
    )
    bill = (
        "select count(*), sum(EffectiveCost) from intermediate.int_billing__focus_lines "
        "where x_Source in ('aws_cur', 'aws_cur_legacy')"
    )
    with duckdb.connect(str(warehouse), read_only=True) as con:
        cur2 = con.execute(sql).fetchall()
        cur2_bill = con.execute(bill).fetchone()
    with duckdb.connect(str(legacy_warehouse), read_only=True) as con:
        legacy = con.execute(sql).fetchall()
        legacy_bill = con.execute(bill).fetchone()
        raw_splits = con.execute(
            "select count(*) from intermediate.int_billing__provider_splits where split_source = 'aws_cur'"
        ).fetchone()[0]
    assert raw_splits > 100
    assert len(cur2) > 50
    assert legacy == cur2
    assert legacy_bill == cur2_bill  # the pod lines are in neither bill
