"""One null rule and one typing layer for every billing format, CSV and Parquet alike.

Providers write `''` where a column does not apply (AWS Data Exports and FOCUS as Parquet; the same
values are empty fields in CSV), blanks, or `NULL`. Each such value lands as NULL; a value a mart's test
would reject (an unknown FOCUS category, a missing charge period) rejects its file at ingest with the
row and column, so it can never stop a build that publishes every other source.
"""

from __future__ import annotations

import csv
import math
import re
from itertools import count
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpu_ledger.focus_spec import ALLOWED_VALUES
from gpu_ledger.ingest.formats.billing.common import NULL_TEXT
from gpu_ledger.ingest.runner import ingest
from gpu_ledger.ingest.store import RawStore

ROOT = Path(__file__).resolve().parents[2]


def _write(path: Path, rows: list[dict[str, str | None]]) -> Path:
    """The rows as CSV (None as an empty field) or, for a .parquet path, as Parquet of string columns."""
    if path.suffix == ".parquet":
        names = list(rows[0])
        pq.write_table(pa.table({n: pa.array([r[n] for r in rows], pa.string()) for n in names}), path)
    else:
        with path.open("w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
    return path


def _land(store: RawStore, path: Path):
    (outcome,) = ingest([path], store, progress=False)
    return outcome


CUR2 = {
    "bill_payer_account_id": "111122223333",
    "bill_billing_period_start_date": "2026-10-01T00:00:00Z",
    "line_item_line_item_type": "Usage",
    "line_item_usage_start_date": "2026-10-01T00:00:00Z",
    "line_item_usage_end_date": "2026-10-01T01:00:00Z",
    "line_item_resource_id": "i-0abc",
    "product_instance_type": "p5.48xlarge",
    "line_item_usage_amount": "1",
    "line_item_unblended_rate": "98.32",
    "line_item_unblended_cost": "98.32",
    "line_item_net_unblended_rate": "97.1",
    "reservation_reservation_a_r_n": "arn:aws:ec2:us-east-1:111122223333:reserved-instances/x",
    "pricing_public_on_demand_rate": "98.32",
}
FOCUS = {
    "BilledCost": "1.5",
    "BillingAccountId": "acct-1",
    "BillingPeriodStart": "2026-10-01T00:00:00Z",
    "BillingPeriodEnd": "2026-11-01T00:00:00Z",
    "ChargeCategory": "Usage",
    "ChargePeriodStart": "2026-10-01T00:00:00Z",
    "ChargePeriodEnd": "2026-10-01T01:00:00Z",
    "CommitmentDiscountCategory": "Usage",
    "CommitmentDiscountId": "ri-1",
    "PricingCategory": "Committed",
    "ListUnitPrice": "2.0",
    "EffectiveCost": "1.5",
    "ProviderName": "Acme Cloud",
}


def test_cur2_parquet_with_empty_strings_lands_them_as_null(tmp_path: Path):
    """AWS Data Exports write '' for a rate that does not apply (no net pricing on the account)."""
    rows = [CUR2, {**CUR2, "line_item_net_unblended_rate": "", "reservation_reservation_a_r_n": ""}]
    with RawStore(tmp_path / "landed.duckdb") as store:
        outcome = _land(store, _write(tmp_path / "cur.parquet", rows))
        assert outcome.status == "loaded", outcome.error
        got = store.con.sql(
            "select line_item_net_unblended_rate, reservation_reservation_a_r_n "
            "from raw.aws_cur order by _source_row"
        ).fetchall()
    assert got == [(97.1, CUR2["reservation_reservation_a_r_n"]), (None, None)]


SPLIT = {
    "line_item_resource_id": "arn:aws:eks:us-east-1:111122223333:pod/eks-ml/ns/pod-a/uid-1",
    "line_item_usage_type": "EKS-EC2-GPU-Hours",
    "line_item_unblended_cost": "0",
    "split_line_item_parent_resource_id": "i-0abc",
    "split_line_item_split_usage_ratio": "0.125",
    "split_line_item_split_usage": "1.0",
    "split_line_item_split_cost": "8.5",
    "split_line_item_unused_cost": "1.25",
}


def test_cur2_split_cost_allocation_columns_land_as_numbers_beside_their_parent(tmp_path: Path):
    """EKS split cost allocation data (CUR 2.0 `split_line_item_*`): every usage, ratio and cost a DOUBLE,
    the parent instance text, and blank on the lines it does not apply to, CSV or Parquet alike."""
    blank = {k: "" if k.startswith("split_") else CUR2.get(k, "") for k in SPLIT}
    rows = [{**CUR2, **blank}, {**CUR2, **SPLIT}]
    for name in ("cur.csv", "cur.parquet"):
        folder = tmp_path / name.replace(".", "_")
        folder.mkdir()
        with RawStore(folder / "landed.duckdb") as store:
            outcome = _land(store, _write(folder / name, rows))
            assert outcome.status == "loaded", outcome.error
            got = store.con.sql(
                "select split_line_item_parent_resource_id, split_line_item_split_usage_ratio, "
                "split_line_item_split_cost + split_line_item_unused_cost "
                "from raw.aws_cur order by _source_row"
            ).fetchall()
        assert got == [(None, None, None), ("i-0abc", 0.125, 9.75)], name


# a vertical tab is blank to Python's `\s` but not to DuckDB's (RE2): NULL_TEXT spells its blanks out
@pytest.mark.parametrize("blank", ["", "   ", "NULL", "null", "\x0b", " \t\x0b\fnull "])
def test_focus_parquet_and_csv_with_blanks_land_the_same(tmp_path: Path, blank: str):
    """The same charges as Parquet ('' for not applicable) and as CSV (empty fields) land equal."""
    rows = [FOCUS, {**FOCUS, "CommitmentDiscountCategory": blank, "PricingCategory": blank}]
    landed = {}
    for suffix in (".csv", ".parquet"):
        with RawStore(tmp_path / f"{suffix[1:]}.duckdb") as store:
            outcome = _land(store, _write(tmp_path / f"focus{suffix}", rows))
            assert outcome.status == "loaded", outcome.error
            landed[suffix] = store.con.sql(
                'select "CommitmentDiscountCategory", "PricingCategory", "BilledCost" '
                "from raw.focus order by _source_row"
            ).fetchall()
    assert landed[".csv"] == landed[".parquet"] == [("Usage", "Committed", 1.5), (None, None, 1.5)]


def test_focus_closed_lists_take_the_spec_spelling(tmp_path: Path):
    rows = [
        {**FOCUS, "ChargeCategory": "usage", "PricingCategory": "Spot", "CommitmentDiscountCategory": "SPEND"}
    ]
    with RawStore(tmp_path / "landed.duckdb") as store:
        assert _land(store, _write(tmp_path / "focus.parquet", rows)).status == "loaded"
        got = store.con.sql(
            'select "ChargeCategory", "PricingCategory", "CommitmentDiscountCategory" from raw.focus'
        ).fetchall()
    assert got == [("Usage", "Dynamic", "Spend")]


@pytest.mark.parametrize(
    ("column", "value", "message"),
    [
        ("ChargeCategory", "Refund", "'Refund' is not one of Usage, Purchase, Tax, Credit, Adjustment"),
        ("CommitmentDiscountCategory", "Hours", "'Hours' is not one of Spend, Usage"),
        ("PricingCategory", "Free", "'Free' is not one of Standard, Dynamic, Committed, Other"),
        ("BilledCost", "", "the value is missing"),
        ("ChargePeriodStart", " ", "the value is missing"),
        ("BilledCost", "NaN", "'NaN' is not a finite decimal number"),
        ("ListUnitPrice", "inf", "'inf' is not a finite decimal number"),
    ],
)
def test_a_value_a_mart_would_reject_rejects_its_file_with_row_and_column(
    tmp_path: Path, column: str, value: str, message: str
):
    bad = _write(tmp_path / "bad.csv", [FOCUS, FOCUS, {**FOCUS, column: value}])
    with RawStore(tmp_path / "landed.duckdb") as store:
        outcome = _land(store, bad)
        assert outcome.status == "rejected"
        assert outcome.error.startswith(f"{bad}:4: column '{column}': data row 3: {message}")
        assert "raw.focus" not in str(store.tables())


LEGACY_CUR = {
    "identity/LineItemId": "abc",
    "bill/PayerAccountId": "111122223333",
    "bill/BillingPeriodStartDate": "2026-10-01T00:00:00Z",
    "lineItem/LineItemType": "Usage",
    "lineItem/UsageStartDate": "2026-10-01T00:00:00Z",
    "lineItem/UsageAmount": "1",
    "lineItem/UnblendedCost": "3.06",
    "resourceTags/user:team": "nlp",
}
AZURE = {
    "Date": "10/01/2026",
    "SubscriptionId": "sub-1",
    "MeterCategory": "Virtual Machines",
    "ChargeType": "Usage",
    "PricingModel": "OnDemand",
    "Quantity": "1",
    "CostInBillingCurrency": "3.67",
    "AdditionalInfo": '{"ServiceType": "Standard_NC24ads_A100_v4"}',
}
ASSETS = {
    "asset_id": "A-1",
    "hostname": "dgx-01",
    "cluster": "hpc",
    "site": "fra",
    "vendor_model": "DGX H100",
    "gpu_model": "H100-SXM5-80GB",
    "gpu_count": "8",
    "purchase_price": "382000",
    "purchase_date": "2024-06-15",
    "depreciation_months": "48",
    "facility_cost_per_month": "2400",
    "staff_cost_per_month": "1500",
    "pue": "1.35",
    "electricity_price_per_kwh": "0.21",
    "currency": "USD",
}


# ----------------------------------------------------------------------------- property: any value
FORMATS = {
    # format: (base row, the typed columns to spoil, the raw table)
    "aws_cur": (
        CUR2,
        [
            "bill_billing_period_start_date",
            "line_item_usage_start_date",
            "line_item_usage_amount",
            "line_item_unblended_cost",
            "line_item_net_unblended_rate",
            "pricing_public_on_demand_rate",
            "line_item_line_item_type",
        ],
        "aws_cur",
    ),
    "focus": (
        FOCUS,
        [
            "BilledCost",
            "BillingPeriodStart",
            "ChargePeriodStart",
            "ChargePeriodEnd",
            "ChargeCategory",
            "PricingCategory",
            "CommitmentDiscountCategory",
            "ListUnitPrice",
        ],
        "focus",
    ),
    "aws_cur_legacy": (
        LEGACY_CUR,
        [
            "bill/BillingPeriodStartDate",
            "lineItem/UsageStartDate",
            "lineItem/UsageAmount",
            "lineItem/UnblendedCost",
        ],
        "aws_cur_legacy",
    ),
    "azure_cost": (AZURE, ["Date", "Quantity", "CostInBillingCurrency", "AdditionalInfo"], "azure_cost"),
    "onprem_assets": (
        ASSETS,
        ["gpu_count", "purchase_price", "purchase_date", "depreciation_months", "pue", "asset_id"],
        "onprem_assets",
    ),
}
LANDED_AS = {  # columns a format renames as it lands them
    "bill/BillingPeriodStartDate": "bill_billing_period_start_date",
    "lineItem/UsageStartDate": "line_item_usage_start_date",
    "lineItem/UsageAmount": "line_item_usage_amount",
    "lineItem/UnblendedCost": "line_item_unblended_cost",
}
CONTAINERS = [(fmt, ".csv") for fmt in FORMATS] + [("aws_cur", ".parquet"), ("focus", ".parquet")]
SPOILERS = st.one_of(
    st.sampled_from(
        [
            "",
            " ",
            "\t",
            "NULL",
            "null",
            "None",
            "NaN",
            "inf",
            "-Infinity",
            "-1",
            "-0",
            "1e308",
            "1e309",
            "-1e400",
            "9" * 40,
            "0x10",
            "1,5",
            "2026-13-45",
            "2026-10-01 25:00:00",
            "☃",
            '"',
            "usage",
        ]
    ),
    st.text(max_size=8),
)
_names = count()


@pytest.mark.parametrize(("fmt", "suffix"), CONTAINERS)
def test_any_value_in_any_typed_column_lands_with_its_meaning_or_rejects_in_one_line(
    tmp_path: Path, fmt: str, suffix: str
):
    base, columns, table = FORMATS[fmt]
    with RawStore(tmp_path / "landed.duckdb") as store:

        @settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
        @given(column=st.sampled_from(columns), value=SPOILERS)
        def check(column: str, value: str) -> None:
            if suffix == ".csv" and any(c in value for c in "\r\n\x00"):
                value = value.replace("\r", "").replace("\n", "").replace("\x00", "")
            path = _write(tmp_path / f"{fmt}-{next(_names)}{suffix}", [base, {**base, column: value}])
            outcome = _land(store, path)
            assert outcome.status in ("loaded", "rejected", "unchanged"), outcome
            if outcome.status == "unchanged":  # the same content was drawn before and is landed already
                return
            if outcome.status == "rejected":
                assert "\n" not in outcome.error and outcome.error.startswith(str(path)), outcome.error
                return
            landed_as = LANDED_AS.get(column, column)
            rows = store.con.sql(
                f'select "{landed_as}"::varchar, typeof("{landed_as}") from raw.{table} '
                "where _source_file = $f order by _source_row",
                params={"f": str(path.resolve())},
            ).fetchall()
            landed, landed_type = rows[1]
            if re.fullmatch(NULL_TEXT, value):
                assert landed is None, f"{value!r} means no value, landed as {landed!r}"
            elif landed is not None and landed_type in ("DOUBLE", "BIGINT"):
                assert math.isfinite(float(landed)), f"{value!r} landed as the non-number {landed!r}"

        check()


def test_ingest_checks_the_closed_lists_the_focus_mart_tests():
    """Ingest's lists are the mart's accepted values (its column_values test): a value ingest lets through
    never fails the build."""
    spec = yaml.safe_load(
        (ROOT / "models" / "marts" / "infrastructure_cost" / "_infrastructure_cost__models.yml").read_text()
    )
    (mart,) = [m for m in spec["models"] if m["name"] == "fct_billing_focus"]
    (rules,) = [test["column_values"]["arguments"] for test in mart["data_tests"] if "column_values" in test]
    accepted = {
        column: tuple(values)
        for column, values in rules["accepted_values"].items()
        if not column.startswith("x_")
    }
    assert {k: v for k, v in accepted.items() if k != "ServiceCategory"} == ALLOWED_VALUES
