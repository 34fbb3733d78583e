"""GPU identity from the bill first, the catalogue second, and never silence (interface §2 and §5).

Two homes are built: one that ingests only the real FOCUS 1.0 sample (its g3.4xlarge rows, 1x Tesla
M60, must be GPU cost), and one of hand-made CUR 2.0, FOCUS, Azure cost-details and GCP rows shaped
the way the providers write them, with accelerator instances the catalogue does not know: they must
land flagged (x_IsGpuInstance with x_GpuCount null), keep their cost in fct_gpu_hours as unmonitored,
unknown-model GPUs, show in fct_unknown_accelerators, and the reconciliation must still hold.
"""

from __future__ import annotations

import csv
import json
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from gpu_ledger.home import Home
from tests.conftest import FOCUS_SAMPLE
from tests.warehouse.homes import built_warehouse, query

pytestmark = pytest.mark.minutes(2)


# --------------------------------------------------------------------------- the real FOCUS sample


@pytest.fixture(scope="module")
def focus_sample_warehouse(focus_sample_home: Path) -> Path:
    return Home(focus_sample_home).warehouse


def test_real_focus_sample_g3_cost_is_m60_gpu_cost(samples: Path, focus_sample_warehouse: Path):
    with (samples / FOCUS_SAMPLE).open(newline="") as f:
        g3 = [r for r in csv.DictReader(f) if "g3.4xlarge" in r["ChargeDescription"]]
    assert len(g3) == 2
    billed = sum(Decimal(r["EffectiveCost"]) for r in g3)
    rows = query(
        focus_sample_warehouse,
        """select g.gpu_model, g.gpu_identity_source, bool_and(not h.is_monitored),
                  bool_or(g.is_unknown_accelerator), count(distinct g.instance_id), sum(h.effective_cost)
           from marts.fct_gpu_hours h join marts.dim_gpus g using (gpu_id)
           where g.instance_type = 'g3.4xlarge' group by all""",
    )
    assert rows == [("M60", "catalogue", True, False, len({r["ResourceId"] for r in g3}), billed)]
    focus = query(
        focus_sample_warehouse,
        "select distinct x_GpuModel, x_GpuCount, x_IsGpuInstance from marts.fct_billing_focus "
        "where x_InstanceType = 'g3.4xlarge'",
    )
    assert focus == [("M60", 1, True)]


def test_real_focus_sample_reconciles_every_gpu_dollar(focus_sample_warehouse: Path):
    rows = query(
        focus_sample_warehouse,
        """select provider, billed_gpu_cost, gpu_hours_cost, billing_vs_gpu_hours_difference
           from marts.fct_cost_reconciliation""",
    )
    assert [r[0] for r in rows] == ["aws"]
    assert rows[0][1] == rows[0][2] > 0 and rows[0][3] == 0
    assert query(focus_sample_warehouse, "select count(*) from marts.fct_unknown_accelerators") == [(0,)]


# --------------------------------------------------------------------------- hand-made provider rows

CUR_COLUMNS = [
    "bill_payer_account_id",
    "bill_billing_period_start_date",
    "bill_billing_period_end_date",
    "line_item_line_item_type",
    "line_item_usage_account_id",
    "line_item_usage_start_date",
    "line_item_usage_end_date",
    "line_item_usage_type",
    "line_item_resource_id",
    "line_item_usage_amount",
    "line_item_unblended_rate",
    "line_item_unblended_cost",
    "product_instance_type",
    "product_instance_family",
    "product_region_code",
    "product",
]


def _cur_row(instance: str, instance_type: str, cost: float, family: str, product: dict) -> dict:
    return {
        "bill_payer_account_id": "111111111111",
        "bill_billing_period_start_date": "2026-10-01T00:00:00Z",
        "bill_billing_period_end_date": "2026-11-01T00:00:00Z",
        "line_item_line_item_type": "Usage",
        "line_item_usage_account_id": "222222222222",
        "line_item_usage_start_date": "2026-10-01T00:00:00Z",
        "line_item_usage_end_date": "2026-10-01T01:00:00Z",
        "line_item_usage_type": f"USE1-BoxUsage:{instance_type}",
        "line_item_resource_id": instance,
        "line_item_usage_amount": "1",
        "line_item_unblended_rate": str(cost),
        "line_item_unblended_cost": str(cost),
        "product_instance_type": instance_type,
        "product_instance_family": family,
        "product_region_code": "us-east-1",
        "product": json.dumps({"product_name": "Amazon Elastic Compute Cloud", **product}),
    }


# instance id -> (provider, instance type or null, effective cost, what the warehouse must make of it)
EXPECTED = {
    # CUR 2.0: a family the catalogue does not know yet, by its instance type prefix
    "i-0p7unknown": ("aws", "p7.48xlarge", Decimal("50.00"), "unknown"),
    # CUR 2.0: a type matching no accelerator prefix, flagged by the bill's own instance family
    "i-0asic": ("aws", "x9z.2xlarge", Decimal("3.00"), "unknown"),
    # CUR 2.0: the bill's GPU count (2) wins over the catalogue's (g5.xlarge: 1)
    "i-0g5bill": ("aws", "g5.xlarge", Decimal("2.00"), "bill"),
    # FOCUS (AWS): the instance type read from the charge description
    "i-0p9focus": ("aws", "p9.48xlarge", Decimal("60.00"), "unknown"),
    # FOCUS (OCI): a GPU SKU on an instance, model named (B200), shape and count unknown
    "ocid1.instance.oc1.iad.gpu1": ("oci", None, Decimal("40.00"), "unknown"),
    # Azure cost details: an N-series VM size the catalogue does not know
    "vm-gb300": ("azure", "Standard_ND128isr_GB300_v6", Decimal("24.00"), "unknown"),
    # GCP: a machine type the catalogue does not know, its GPU SKU (8 GPUs) naming no known model
    "gpu-a9": ("gcp", "a9-highgpu-8g", Decimal("90.00"), "unknown"),
}


@pytest.fixture(scope="module")
def handmade_warehouse(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("handmade_bills")
    cur = [
        _cur_row("i-0p7unknown", "p7.48xlarge", 50.0, "", {}),
        _cur_row("i-0asic", "x9z.2xlarge", 3.0, "Machine Learning ASIC Instances", {}),
        _cur_row("i-0g5bill", "g5.xlarge", 2.0, "GPU instance", {"gpu": "2", "gpu_memory": "48 GiB"}),
        _cur_row("i-0cpu", "m5.large", 0.096, "General purpose", {"gpu": ""}),
    ]
    with (folder / "cur2.csv").open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=CUR_COLUMNS)
        writer.writeheader()
        writer.writerows(cur)

    focus_header = [
        "BilledCost", "BillingAccountId", "BillingPeriodStart", "BillingPeriodEnd", "ChargeCategory",
        "ChargeDescription", "ChargePeriodStart", "ChargePeriodEnd", "ConsumedQuantity", "ConsumedUnit",
        "EffectiveCost", "ListCost", "ProviderName", "ResourceId", "SubAccountId",
    ]  # fmt: skip
    focus = [
        ["60", "acct-aws", "2026-10-01T00:00:00Z", "2026-11-01T00:00:00Z", "Usage",
         "$60 per On Demand Linux p9.48xlarge Instance Hour", "2026-10-01T00:00:00Z", "2026-10-01T01:00:00Z",
         "1", "Hours", "60", "60", "AWS", "i-0p9focus", "333333333333"],
        ["40", "tenancy-1", "2026-10-01T00:00:00Z", "2026-11-01T00:00:00Z", "Usage",
         "Compute - GPU - B200", "2026-10-01T00:00:00Z", "2026-10-01T01:00:00Z",
         "8", "GPU Hours", "40", "40", "Oracle", "ocid1.instance.oc1.iad.gpu1", "compartment-1"],
    ]  # fmt: skip
    with (folder / "focus.csv").open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(focus_header)
        writer.writerows(focus)

    azure = {
        "BillingAccountId": "8611537",
        "BillingPeriodStartDate": "10/01/2026",
        "BillingPeriodEndDate": "10/31/2026",
        "SubscriptionId": "sub-gpu",
        "Date": "10/01/2026",
        "ProductName": "Virtual Machines NDGB300v6 Series - ND128isr GB300 v6 - US East",
        "MeterCategory": "Virtual Machines",
        "MeterSubCategory": "NDGB300v6 Series",
        "MeterName": "ND128isr GB300 v6",
        "Quantity": "24",
        "CostInBillingCurrency": "24",
        "UnitPrice": "1",
        "PayGPrice": "1",
        "BillingCurrency": "USD",
        "ResourceLocation": "EastUS",
        "ConsumedService": "Microsoft.Compute",
        "ResourceId": (
            "/subscriptions/sub-gpu/resourceGroups/rg/providers/Microsoft.Compute/virtualMachines/vm-gb300"
        ),
        "AdditionalInfo": json.dumps({"ServiceType": "Standard_ND128isr_GB300_v6", "VMName": "vm-gb300"}),
        "UnitOfMeasure": "1 Hour",
        "ChargeType": "Usage",
        "Frequency": "UsageBased",
        "PricingModel": "OnDemand",
    }
    with (folder / "azure_cost.csv").open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(azure))
        writer.writeheader()
        writer.writerow(azure)

    def gcp(sku: str, amount: float, cost: float, machine: str | None) -> dict:
        return {
            "billing_account_id": "01ABCD-234567-89EFGH",
            "service": {"id": "6F81-5844-456A", "description": "Compute Engine"},
            "sku": {"id": sku[:4], "description": sku},
            "usage_start_time": "2026-10-01T00:00:00Z",
            "usage_end_time": "2026-10-01T01:00:00Z",
            "project": {"id": "ml-train", "name": "ML"},
            "labels": [],
            "system_labels": (
                [{"key": "compute.googleapis.com/machine_spec", "value": machine}] if machine else []
            ),
            "location": {"region": "us-central1", "zone": "us-central1-a"},
            "resource": {"name": "projects/ml-train/zones/us-central1-a/instances/gpu-a9"},
            "export_time": "2026-10-01T05:00:00Z",
            "cost": cost,
            "currency": "USD",
            "usage": {"amount": amount, "unit": "seconds"},
            "credits": [],
            "invoice": {"month": "202610"},
            "cost_type": "regular",
        }

    gcp_rows = [
        gcp("A9 Instance Core running in Americas", 3600 * 224, 10.0, "a9-highgpu-8g"),
        gcp("Nvidia Zeta GPU running in Americas", 3600 * 8, 80.0, None),
    ]
    (folder / "gcp_billing.jsonl").write_text("".join(json.dumps(r) + "\n" for r in gcp_rows))
    return built_warehouse(tmp_path_factory.mktemp("handmade_home"), folder)


def test_unknown_accelerators_land_flagged_in_the_bill(handmade_warehouse: Path):
    rows = query(
        handmade_warehouse,
        """select x_InstanceId, bool_and(x_IsGpuInstance), max(x_GpuCount), max(x_GpuModel)
           from marts.fct_billing_focus where x_InstanceId is not null group by all order by 1""",
    )
    flags = {r[0]: r[1:] for r in rows}
    assert flags["i-0cpu"] == (False, None, None)
    assert flags["i-0g5bill"] == (True, 2, "A10G")
    assert flags["gpu-a9"] == (True, 8, None)
    assert flags["ocid1.instance.oc1.iad.gpu1"] == (True, None, "B200-SXM-180GB")
    for instance in ("i-0p7unknown", "i-0asic", "i-0p9focus", "vm-gb300"):
        assert flags[instance] == (True, None, None), instance


def test_unknown_accelerators_keep_their_cost_in_gpu_hours(handmade_warehouse: Path):
    rows = query(
        handmade_warehouse,
        """select h.instance_id, h.provider, count(distinct gpu_id), sum(h.effective_cost),
                  bool_and(not h.is_monitored), bool_and(h.is_unknown_accelerator), max(g.gpu_identity_source)
           from marts.fct_gpu_hours h join marts.dim_gpus g using (gpu_id) group by all""",
    )
    got = {r[0]: r[1:] for r in rows}
    assert "i-0cpu" not in got
    assert set(got) == set(EXPECTED)
    for instance, (provider, _, cost, source) in EXPECTED.items():
        gpus = {"i-0g5bill": 2, "gpu-a9": 8}.get(instance, 1)
        unknown = instance != "i-0g5bill"
        assert got[instance] == (provider, gpus, cost, True, unknown, source), instance


def test_unknown_accelerators_show_in_data_health(handmade_warehouse: Path):
    rows = query(
        handmade_warehouse,
        """select provider, instance_type, gpu_model, gap, instances, gpus, effective_cost
           from marts.fct_unknown_accelerators order by provider, instance_type""",
    )
    gaps = {(r[0], r[1]): r[2:] for r in rows}
    for instance, (provider, instance_type, cost, _) in EXPECTED.items():
        if instance == "i-0g5bill":
            continue
        model, gap, instances, gpus, effective = gaps[(provider, instance_type)]
        expected_gap = {
            "gpu-a9": "gpu_model_unknown",
            "ocid1.instance.oc1.iad.gpu1": "gpu_count_unknown",
        }.get(instance, "instance_type_unknown")
        assert (gap, instances, effective) == (expected_gap, 1, cost), instance
        assert gpus == (8 if instance == "gpu-a9" else 1)
    assert len(rows) == len(EXPECTED) - 1


def test_every_dollar_of_the_handmade_bills_reconciles(handmade_warehouse: Path):
    rows = query(
        handmade_warehouse,
        """select provider, sum(billed_gpu_cost), sum(gpu_hours_cost),
                  max(abs(billing_vs_gpu_hours_difference) + abs(gpu_hours_vs_consumers_difference))
           from marts.fct_cost_reconciliation group by all order by 1""",
    )
    by_provider: dict[str, Decimal] = {}
    for provider, _, cost, _ in EXPECTED.values():
        by_provider[provider] = by_provider.get(provider, Decimal(0)) + cost
    assert [(r[0], r[1], r[2]) for r in rows] == [(p, c, c) for p, c in sorted(by_provider.items())]
    assert all(r[3] < Decimal("0.01") for r in rows)


# --------------------------------------------------------------------------- the simulated fleet


def test_simulated_uncatalogued_accelerator_keeps_its_cost(sim: Path, warehouse: Path):
    """The simulated fleet bills one accelerator type the catalogue lacks (simulator.catalogue
    UNCATALOGUED), unmonitored: every one of its GPU-hours is in fct_gpu_hours with its ground-truth
    cost, unmonitored and flagged, and nothing else is flagged."""
    with duckdb.connect() as con:
        truth = con.sql(
            f"""select instance_id, count(*), round(sum(effective_cost), 2)
                from read_csv('{sim / "ground_truth" / "gpu_hours.csv"}')
                where is_unknown_accelerator group by all order by 1"""
        ).fetchall()
    assert truth, "the simulated fleet has no uncatalogued accelerator"
    got = query(
        warehouse,
        """select instance_id, count(*), round(sum(effective_cost), 2)::double from marts.fct_gpu_hours
           where is_unknown_accelerator and not is_monitored group by all order by 1""",
    )
    assert got == truth
    gaps = query(
        warehouse,
        "select instance_type, gap, instances, effective_cost::double from marts.fct_unknown_accelerators",
    )
    assert [(t, i) for t, _, i, _ in gaps] == [("g9x.2xlarge", len(truth))]
    assert abs(gaps[0][3] - sum(c for _, _, c in truth)) < 0.01 * len(truth)


def test_status_names_the_unknown_accelerators(handmade_warehouse: Path, capsys):
    from gpu_ledger.cli import main

    assert main(["status", "--home", str(handmade_warehouse.parent)]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("gpu model")]
    assert len(lines) == len(EXPECTED) - 1
    assert lines[0] == (
        "gpu model   gcp a9-highgpu-8g: gpu model unknown on 1 instance, 90.00 kept as unmonitored "
        "unknown-model GPU cost: add the instance type to seeds/gpu_instance_catalogue.csv"
    )
