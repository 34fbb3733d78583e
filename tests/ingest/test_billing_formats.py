"""Billing formats: real upstream samples and simulator exports are recognised by content and land typed,
restated deliveries replace each other, reloads change nothing, and bad files are named precisely."""

from __future__ import annotations

import csv
import json
import os
import shutil
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import polars as pl
import pytest

from gpu_ledger.ingest import registry
from gpu_ledger.ingest.runner import ingest
from gpu_ledger.ingest.sniff import Sniff
from gpu_ledger.ingest.store import RawStore
from gpu_ledger.simulator.generate import simulate
from gpu_ledger.simulator.model import SimulationConfig

BILLING = "billing"


def _store(tmp_path: Path) -> RawStore:
    return RawStore(tmp_path / "home" / "landed.duckdb")


def _one(store: RawStore, sql: str) -> tuple:
    return store.con.sql(sql).fetchall()[0]


def _run(store: RawStore, *paths: Path) -> dict[str, object]:
    """Ingest and index outcomes by file name (names are unique within each test)."""
    return {o.path.name: o for o in ingest(list(paths), store, progress=False)}


# --------------------------------------------------------------------------- real upstream samples
SAMPLES = [
    # file, format, raw table, rows
    ("aws_cur_legacy_csv_anonymized_1281rows.csv", "aws_cur_legacy", "aws_cur_legacy", 1281),
    ("azure_ea_amortized_cost_small_28rows.csv", "azure_cost", "azure_cost", 28),
    ("azure_ea_usage_details_anonymized_27rows.csv", "azure_cost", "azure_cost", 27),
    ("focus1.0_sample_1000rows_aws_azure_oci.csv", "focus", "focus", 1000),
    ("focus1.2_spec_example_commitment_flexibility_2_resources.csv", "focus", "focus", 3),
]


@pytest.mark.parametrize(("name", "fmt", "table", "rows"), SAMPLES)
def test_real_sample_is_detected_and_lands_every_row(
    samples: Path, tmp_path: Path, name: str, fmt: str, table: str, rows: int
):
    path = samples / BILLING / name
    assert registry.detect(Sniff.of(path)).name == fmt
    with _store(tmp_path) as store:
        outcome = _run(store, path)[name]
        assert (outcome.status, outcome.format, outcome.rows, outcome.error) == ("loaded", fmt, rows, None)
        count, first, last, files = _one(
            store,
            f"select count(*), min(_source_row), max(_source_row), count(distinct _source_file) "
            f"from raw.{table}",
        )
        assert (count, first, last, files) == (rows, 1, rows, 1)


def test_focus_1_0_sample_quirks(samples: Path, tmp_path: Path):
    with _store(tmp_path) as store:
        _run(store, samples / BILLING / "focus1.0_sample_1000rows_aws_azure_oci.csv")
        providers = dict(store.con.sql("select ProviderName, count(*) from raw.focus group by 1").fetchall())
        assert providers == {"AWS": 942, "Microsoft": 51, "Oracle": 7}
        # NULL strings are nulls, not text
        assert _one(
            store, "select count(*) from raw.focus where 'NULL' in (AvailabilityZone, ChargeClass)"
        ) == (0,)
        assert _one(store, "select count(*) from raw.focus where AvailabilityZone is null")[0] > 0
        # both spellings of ChargeFrequency become the spec's
        freq = {r[0] for r in store.con.sql("select distinct ChargeFrequency from raw.focus").fetchall()}
        assert "Usage-based" not in freq and "Usage-Based" in freq
        # `2024-09-18 22:00:00` is UTC, typed
        types = dict(
            store.con.sql(
                "select column_name, data_type from information_schema.columns where table_name = 'focus'"
            ).fetchall()
        )
        assert types["ChargePeriodStart"] == "TIMESTAMP WITH TIME ZONE"
        assert types["BilledCost"] == "DOUBLE"
        assert types["Tags"] == "MAP(VARCHAR, VARCHAR)"
        assert types["Id"] == "VARCHAR"  # the extra non-FOCUS column is kept
        first = _one(
            store,
            "select epoch(ChargePeriodStart), epoch(BillingPeriodEnd) from raw.focus where _source_row = 1",
        )
        assert first == (
            datetime(2024, 9, 18, 22, tzinfo=UTC).timestamp(),
            datetime(2024, 10, 1, tzinfo=UTC).timestamp(),
        )
        gpu = _one(
            store,
            "select count(*), min(ListUnitPrice) from raw.focus where ChargeDescription like '%g5.4xlarge%'",
        )
        assert gpu == (8, 1.624)
        assert _one(store, "select Tags['environment'] from raw.focus where _source_row = 2") == ("dev",)
        scope = _one(store, "select scope from raw.ingest_manifest")[0]
        assert scope.startswith("focus/AWS/1234567890123/2024-09+") and "Oracle" in scope


def test_focus_1_2_spec_example_quirks(samples: Path, tmp_path: Path):
    with _store(tmp_path) as store:
        _run(store, samples / BILLING / "focus1.2_spec_example_commitment_flexibility_2_resources.csv")
        rows = store.con.sql(
            "select ChargeCategory, ConsumedQuantity, CommitmentDiscountStatus, SkuPriceId, EffectiveCost, "
            "x_CommitmentDiscountUnitPrice from raw.focus order by _source_row"
        ).fetchall()
        # lower-case `null` is null, `SkuPriceid` lands under the spec's name, blank lines are no rows
        assert rows[0] == ("Purchase", None, None, "VM_XLARGE_COMMITTED_PURCHASE_NO_UPFRONT", 0.0, 2.0)
        assert [r[0] for r in rows] == ["Purchase", "Usage", "Usage"]
        assert _one(store, "select sum(EffectiveCost), sum(BilledCost) from raw.focus") == (2.0, 2.0)
        # no provider and no account: nothing to say what it restates
        assert _one(store, "select scope from raw.ingest_manifest") == (None,)


def test_legacy_cur_sample_columns_are_cur2_spelled_and_typed(samples: Path, tmp_path: Path):
    path = samples / BILLING / "aws_cur_legacy_csv_anonymized_1281rows.csv"
    expected = pl.read_csv(path, infer_schema_length=0).select(
        pl.col("lineItem/UnblendedCost").cast(pl.Float64).sum()
    )[0, 0]
    with _store(tmp_path) as store:
        _run(store, path)
        total, types = _one(
            store,
            "select sum(line_item_unblended_cost), "
            "typeof(any_value(line_item_usage_start_date)) || ' ' || typeof(any_value(resource_tags)) "
            "from raw.aws_cur_legacy",
        )
        assert total == pytest.approx(expected)
        assert types == "TIMESTAMP WITH TIME ZONE MAP(VARCHAR, VARCHAR)"
        kinds = dict(
            store.con.sql(
                "select line_item_line_item_type, count(*) from raw.aws_cur_legacy group by 1"
            ).fetchall()
        )
        assert set(kinds) == {"Usage", "Tax"}
        assert _one(store, "select scope from raw.ingest_manifest") == ("aws_cur/123412340534/2023-11",)


def test_legacy_cur_tag_columns_become_one_map(tmp_path: Path):
    path = tmp_path / "cur.csv"
    path.write_text(
        "identity/LineItemId,bill/PayerAccountId,bill/BillingPeriodStartDate,lineItem/LineItemType,"
        "lineItem/UsageStartDate,lineItem/UnblendedCost,product/instanceType,resourceTags/user:team,"
        "resourceTags/aws:createdBy\n"
        "a,111,2024-01-01T00:00:00Z,Usage,2024-01-01T00:00:00Z,3.5,p4d.24xlarge,ml,root\n"
        "b,111,2024-01-01T00:00:00Z,Usage,2024-01-01T01:00:00Z,1.5,p4d.24xlarge,,\n"
    )
    with _store(tmp_path) as store:
        assert _run(store, path)["cur.csv"].status == "loaded"
        rows = store.con.sql(
            "select resource_tags, product_instance_type from raw.aws_cur_legacy order by _source_row"
        ).fetchall()
        assert rows == [({"user:team": "ml", "aws:createdBy": "root"}, "p4d.24xlarge"), ({}, "p4d.24xlarge")]


def test_azure_amortised_sample_quirks(samples: Path, tmp_path: Path):
    path = samples / BILLING / "azure_ea_amortized_cost_small_28rows.csv"
    assert path.read_bytes()[:3] == b"\xef\xbb\xbf"
    with _store(tmp_path) as store:
        _run(store, path)
        # the BOM did not end up in the first column's name; `Cost` lands as CostInBillingCurrency
        assert (
            _one(
                store,
                "select count(distinct BillingAccountId), sum(CostInBillingCurrency) from raw.azure_cost",
            )[0]
            == 1
        )
        models = {r[0] for r in store.con.sql("select distinct PricingModel from raw.azure_cost").fetchall()}
        assert models == {"OnDemand", "Reservation", "SavingsPlan"}
        vm = store.con.sql(
            "select distinct vm_size from raw.azure_cost where vm_size is not null order by 1"
        ).fetchall()
        assert vm == [("Standard_B2s",), ("Standard_D2s_v3",), ("Standard_DS2_v2",)]
        first = _one(
            store,
            "select Date, BillingPeriodStartDate, Tags['env'], cost_view from raw.azure_cost "
            "where _source_row = 1",
        )
        assert first == (datetime(2023, 9, 22).date(), datetime(2023, 9, 1).date(), "prod", "amortized")


def test_azure_usage_details_sample_quirks(samples: Path, tmp_path: Path):
    path = samples / BILLING / "azure_ea_usage_details_anonymized_27rows.csv"
    expected = sum(float(r["CostInBillingCurrency"]) for r in csv.DictReader(path.open()))
    with _store(tmp_path) as store:
        _run(store, path)
        spot, total, tags = _one(
            store,
            "select count(*) filter (where PricingModel = 'Spot'), sum(CostInBillingCurrency), "
            "any_value(Tags) from raw.azure_cost",
        )
        assert (spot, tags) == (3, {"tagA": "valueA", "tagB": "valueB", "tagC": "valueC"})
        assert total == pytest.approx(expected)  # `5.64902E-05` is a number
        assert _one(store, "select min(Date), max(BillingPeriodEndDate) from raw.azure_cost") == (
            datetime(2023, 9, 2).date(),
            datetime(2023, 9, 30).date(),
        )


# --------------------------------------------------------------------------- simulator exports
@pytest.fixture(scope="module")
def sim_billing(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small simulated fleet over a month boundary (two billing periods), its billing files only."""
    out = tmp_path_factory.mktemp("sim")
    config = SimulationConfig(
        out=out, gpus=70, days=6, interval_s=1800, seed=7, start=datetime(2026, 9, 27, tzinfo=UTC)
    )
    simulate(config, show_progress=False)
    return out / "billing"


def _cur_files(sim: Path) -> dict[str, list[Path]]:
    """CUR 2.0 data files per billing period, oldest delivery first."""
    by_period: dict[str, list[Path]] = {}
    for path in sorted((sim / "aws").rglob("*.parquet")):
        by_period.setdefault(path.parent.parent.name.removeprefix("BILLING_PERIOD="), []).append(path)
    return by_period


def test_simulator_billing_folder_lands_every_file(sim_billing: Path, tmp_path: Path):
    with _store(tmp_path) as store:
        outcomes = ingest([sim_billing], store, progress=False)
        assert {o.status for o in outcomes} == {"loaded"}
        formats = sorted(o.format for o in outcomes)
        periods = _cur_files(sim_billing)
        assert len(periods) == 2
        assert formats.count("aws_cur") == 4 and formats.count("billing_export_manifest") == 6
        assert formats.count("focus") == 2 and formats.count("onprem_assets") == 1
        # CUR: only the final delivery of each period remains, exactly its rows
        final_rows = sum(pl.read_parquet(files[-1]).height for files in periods.values())
        assert _one(store, "select count(*) from raw.aws_cur") == (final_rows,)
        manifests = [json.loads(p.read_text()) for p in (sim_billing / "azure").rglob("manifest.json")]
        assert _one(store, "select count(*) from raw.focus") == (sum(m["dataRowCount"] for m in manifests),)
        assets = pl.read_csv(sim_billing / "onprem" / "asset_register.csv")
        got = _one(store, "select count(*), sum(purchase_price), sum(gpu_count) from raw.onprem_assets")
        assert got == (assets.height, assets["purchase_price"].sum(), assets["gpu_count"].sum())
        kinds = store.con.sql(
            "select kind, count(*), count(export_time), sum(row_count) from raw.billing_export_manifests "
            "group by 1 order by 1"
        ).fetchall()
        prelim_rows = sum(pl.read_parquet(files[0]).height for files in periods.values())
        assert kinds == [
            ("aws_cur2", 4, 4, final_rows + prelim_rows),
            ("azure_export", 2, 2, sum(m["dataRowCount"] for m in manifests)),
        ]


def test_cur2_types_match_the_parquet(sim_billing: Path, tmp_path: Path):
    final = _cur_files(sim_billing)["2026-09"][-1]
    source = pl.read_parquet(final)
    with _store(tmp_path) as store:
        _run(store, final)
        row = _one(
            store,
            "select typeof(any_value(line_item_usage_start_date)), typeof(any_value(resource_tags)), "
            "typeof(any_value(line_item_unblended_rate)), sum(line_item_unblended_cost), "
            "count(*) filter (where resource_tags['user_team'] is not null) from raw.aws_cur",
        )
        tagged = duckdb.sql(
            f"select count(*) from read_parquet('{final}') where cardinality(resource_tags) > 0"
        ).fetchall()[0][0]
        assert row[:3] == ("TIMESTAMP WITH TIME ZONE", "MAP(VARCHAR, VARCHAR)", "DOUBLE")
        assert row[3] == pytest.approx(source["line_item_unblended_cost"].sum())
        assert row[4] == tagged > 0
        start = _one(store, "select epoch(min(line_item_usage_start_date)) from raw.aws_cur")[0]
        assert start == source["line_item_usage_start_date"].min().replace(tzinfo=UTC).timestamp()


@pytest.mark.parametrize("order", ["preliminary_first", "final_first"])
def test_cur_restatement_keeps_exactly_the_final_delivery(sim_billing: Path, tmp_path: Path, order: str):
    prelim, final = _cur_files(sim_billing)["2026-09"]
    final_rows = pl.read_parquet(final)
    assert pl.read_parquet(prelim).height != final_rows.height
    first, second = (prelim, final) if order == "preliminary_first" else (final, prelim)
    with _store(tmp_path) as store:
        assert ingest([first], store, progress=False)[0].status == "loaded"
        late = ingest([second], store, progress=False)[0]
        assert late.status == ("loaded" if order == "preliminary_first" else "superseded")
        got = _one(
            store,
            "select count(*), sum(line_item_unblended_cost), count(distinct _load_id), "
            "any_value(_source_file) from raw.aws_cur",
        )
        assert got[0] == final_rows.height
        assert got[1] == pytest.approx(final_rows["line_item_unblended_cost"].sum())
        assert got[2:] == (1, str(final.resolve()))
        versions = store.con.sql(
            "select status, version from raw.ingest_manifest where format = 'aws_cur' order by version"
        ).fetchall()
        assert [s for s, _ in versions] == [
            "replaced" if order == "preliminary_first" else "superseded",
            "loaded",
        ]


def test_cur_version_falls_back_to_the_execution_folder_then_mtime(sim_billing: Path, tmp_path: Path):
    final = _cur_files(sim_billing)["2026-10"][-1]
    run = tmp_path / "copy" / final.parent.name
    run.mkdir(parents=True)
    shutil.copy(final, run / final.name)  # no manifest beside it
    bare = tmp_path / "bare" / final.name
    bare.parent.mkdir()
    shutil.copy(final, bare)
    os.utime(bare, (datetime(2030, 1, 2, 3, 4, 5, tzinfo=UTC).timestamp(),) * 2)
    with _store(tmp_path) as store:
        _run(store, run / final.name)
        folder_version = _one(store, "select version from raw.ingest_manifest")[0]
        stamp = datetime.strptime(final.parent.name[:16], "%Y%m%dT%H%M%SZ")
        assert folder_version == stamp.strftime("%Y-%m-%dT%H:%M:%S.000000Z")
    with RawStore(tmp_path / "h2" / "landed.duckdb") as store:
        _run(store, bare)
        assert _one(store, "select version from raw.ingest_manifest") == ("2030-01-02T03:04:05.000000Z",)


def test_reingesting_the_billing_folder_changes_nothing(sim_billing: Path, tmp_path: Path):
    tables = ("aws_cur", "focus", "focus_contract_commitments", "onprem_assets", "billing_export_manifests")

    def totals(store: RawStore) -> list[tuple]:
        return [_one(store, f"select count(*), count(distinct _load_id) from raw.{t}") for t in tables] + [
            # rounded: a double sum over several Parquet files read in parallel varies in its last digits
            _one(store, "select round(sum(line_item_unblended_cost), 6) from raw.aws_cur"),
            _one(store, "select round(sum(BilledCost), 6) from raw.focus"),
        ]

    with _store(tmp_path) as store:
        ingest([sim_billing], store, progress=False)
        before = totals(store)
        manifest_rows = store.manifest().height
        again = ingest([sim_billing], store, progress=False)
        # the preliminary CUR deliveries, replaced by the loaded finals, would only be superseded again:
        # they too are unchanged, and the manifest gains no row
        assert {o.status for o in again} == {"unchanged"}
        assert store.manifest().height == manifest_rows
        assert totals(store) == before
        # 11 billing files and the FOCUS 1.4 Contract Commitment dataset
        assert _one(store, "select count(*) from raw.ingest_manifest where status = 'loaded'") == (12,)


def _cur_csv(parquet: Path, target: Path) -> None:
    """The same CUR 2.0 delivery as a CSV export writes it: maps as JSON objects, times ISO with Z."""
    con = duckdb.connect()
    con.sql(
        f"copy (select * replace ("
        "to_json(resource_tags)::varchar as resource_tags, to_json(product)::varchar as product, "
        "to_json(cost_category)::varchar as cost_category, to_json(discount)::varchar as discount, "
        "strftime(line_item_usage_start_date, '%Y-%m-%dT%H:%M:%SZ') as line_item_usage_start_date) "
        f"from read_parquet('{parquet}')) to '{target}' (header, delimiter ',')"
    )
    con.close()


def test_cur2_csv_lands_like_the_parquet(sim_billing: Path, tmp_path: Path):
    final = _cur_files(sim_billing)["2026-10"][-1]
    target = tmp_path / "cur2.csv"
    _cur_csv(final, target)
    assert registry.detect(Sniff.of(target)).name == "aws_cur"
    with _store(tmp_path) as store:
        _run(store, final)
        parquet = _one(
            store,
            "select count(*), sum(line_item_unblended_cost), sum(cardinality(resource_tags)), "
            "min(line_item_usage_start_date) from raw.aws_cur",
        )
    with RawStore(tmp_path / "h2" / "landed.duckdb") as store:
        outcome = _run(store, target)["cur2.csv"]
        assert outcome.status == "loaded", outcome.error
        from_csv = _one(
            store,
            "select count(*), sum(line_item_unblended_cost), sum(cardinality(resource_tags)), "
            "min(line_item_usage_start_date) from raw.aws_cur",
        )
    assert from_csv[0] == parquet[0] and from_csv[2:] == parquet[2:]
    assert from_csv[1] == pytest.approx(parquet[1])


def test_focus_restatement_by_file_time(sim_billing: Path, tmp_path: Path):
    """A FOCUS export re-run for the same provider, account and month replaces the earlier run."""
    part = next((sim_billing / "azure").rglob("part_0_0001.csv"))
    old, new = tmp_path / "run1" / "export.csv", tmp_path / "run2" / "export.csv"
    for path in (old, new):
        path.parent.mkdir()
    rows = part.read_text().splitlines(keepends=True)
    old.write_text("".join(rows[:-10]))  # the earlier run knew fewer rows
    new.write_text("".join(rows))
    os.utime(old, (1_800_000_000, 1_800_000_000))
    os.utime(new, (1_800_000_100, 1_800_000_100))
    with _store(tmp_path) as store:
        ingest([old, new], store, progress=False)
        assert _one(store, "select count(*), count(distinct _source_file) from raw.focus") == (
            len(rows) - 1,
            1,
        )


# --------------------------------------------------------------------------- GCP
GCP_ROWS = [
    {
        "billing_account_id": "01ABCD-234567-89EFGH",
        "service": {"id": "6F81-5844-456A", "description": "Compute Engine"},
        "sku": {"id": "A4C8-1B2C-3D4E", "description": "Nvidia Tesla A100 GPU running in Americas"},
        "usage_start_time": "2024-09-01 00:00:00 UTC",
        "usage_end_time": "2024-09-01 01:00:00 UTC",
        "project": {
            "id": "ml-train",
            "number": "1234",
            "name": "ML",
            "labels": [{"key": "team", "value": "ml"}],
        },
        "labels": [{"key": "team", "value": "ml"}, {"key": "job", "value": "llm"}],
        "system_labels": [{"key": "compute.googleapis.com/machine_spec", "value": "a2-highgpu-1g"}],
        "location": {
            "location": "us-central1",
            "country": "US",
            "region": "us-central1",
            "zone": "us-central1-a",
        },
        "resource": {"name": "projects/ml-train/instances/gpu-1", "global_name": "//compute/gpu-1"},
        "export_time": "2024-09-01 05:12:00.123456 UTC",
        "cost": 2.934,
        "currency": "USD",
        "currency_conversion_rate": 1.0,
        "usage": {"amount": 3600, "unit": "seconds", "amount_in_pricing_units": 1, "pricing_unit": "hour"},
        "credits": [
            {"name": "Committed use discount", "amount": -1.1, "type": "COMMITTED_USAGE_DISCOUNT"},
            {"name": "Sustained use discount", "amount": -0.2, "type": "SUSTAINED_USAGE_DISCOUNT"},
        ],
        "invoice": {"month": "202409"},
        "cost_type": "regular",
    },
    {
        "billing_account_id": "01ABCD-234567-89EFGH",
        "service": {"id": "6F81-5844-456A", "description": "Compute Engine"},
        "sku": {"id": "B1", "description": "A2 Instance Core running in Americas"},
        "usage_start_time": "2024-09-01T00:00:00Z",
        "usage_end_time": "2024-09-01T01:00:00Z",
        "labels": [],
        "resource": {"name": "projects/ml-train/instances/gpu-1"},
        "export_time": "2024-09-01T06:00:00Z",
        "cost": 0.5,
        "currency": "USD",
        "credits": [],
        "invoice": {"month": "202409"},
        "cost_type": "regular",
    },
]


def _gcp_csv(path: Path) -> None:
    flat = []
    for row in GCP_ROWS:
        flat.append(
            {
                "billing_account_id": row["billing_account_id"],
                "service.description": row["service"]["description"],
                "sku.id": row["sku"]["id"],
                "sku.description": row["sku"]["description"],
                "usage_start_time": row["usage_start_time"],
                "usage_end_time": row["usage_end_time"],
                "resource.name": row["resource"]["name"],
                "labels": json.dumps(row["labels"]),
                "export_time": row["export_time"],
                "cost": row["cost"],
                "currency": row["currency"],
                "credits": json.dumps(row["credits"]),
                "invoice.month": row["invoice"]["month"],
            }
        )
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(flat[0]))
        writer.writeheader()
        writer.writerows(flat)


@pytest.mark.parametrize("container", ["jsonl", "parquet", "csv"])
def test_gcp_export_lands_flattened(tmp_path: Path, container: str):
    jsonl = tmp_path / "export.jsonl"
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in GCP_ROWS))
    path = jsonl
    if container == "parquet":
        path = tmp_path / "export.parquet"
        con = duckdb.connect()
        con.sql(
            f"copy (select * from read_json('{jsonl}', format='newline_delimited')) "
            f"to '{path}' (format parquet)"
        )
        con.close()
        jsonl.unlink()
    elif container == "csv":
        path = tmp_path / "export.csv"
        _gcp_csv(path)
        jsonl.unlink()
    assert registry.detect(Sniff.of(path)).name == "gcp_billing"
    with _store(tmp_path) as store:
        outcome = _run(store, path)[path.name]
        assert (outcome.status, outcome.rows, outcome.error) == ("loaded", 2, None)
        rows = store.con.sql(
            "select sku_description, cost, credits_amount, labels, epoch(usage_start_time), resource_name "
            "from raw.gcp_billing order by _source_row"
        ).fetchall()
        assert rows[0][0] == "Nvidia Tesla A100 GPU running in Americas"
        assert rows[0][1:3] == (2.934, pytest.approx(-1.3))
        assert rows[0][3] == {"team": "ml", "job": "llm"}
        assert rows[0][4] == rows[1][4] == datetime(2024, 9, 1, tzinfo=UTC).timestamp()
        assert rows[1][2:4] == (0.0, {})
        assert {r[5] for r in rows} == {"projects/ml-train/instances/gpu-1"}
        assert _one(store, "select scope, version from raw.ingest_manifest") == (
            "gcp_billing/01ABCD-234567-89EFGH/202409",
            "2024-09-01T06:00:00.000000Z",
        )


# --------------------------------------------------------------------------- detection does not collide
def test_formats_do_not_claim_each_others_files(samples: Path, sim_billing: Path, tmp_path: Path):
    billing = {f.name for f in registry.FORMATS if f.group == "billing"}
    files = [samples / BILLING / name for name, *_ in SAMPLES] + [
        p for p in sim_billing.rglob("*") if p.is_file()
    ]
    for path in files:
        claims = [f.name for f in registry.FORMATS if f.name in billing and f.detect(Sniff.of(path))]
        assert len(claims) == 1, (path.name, claims)
    other = tmp_path / "jobs.csv"
    other.write_text("job_id,team,cost\n1,ml,3.0\n")
    assert not [f.name for f in registry.FORMATS if f.name in billing and f.detect(Sniff.of(other))]


def test_azure_focus_export_with_x_columns_is_focus_not_azure(tmp_path: Path):
    path = tmp_path / "anything.csv"  # the name says nothing
    path.write_text(
        "BilledCost,BillingPeriodStart,ChargeCategory,ChargePeriodStart,x_SkuMeterCategory,x_SkuDetails\n"
        '1.0,2024-09-01T00:00:00Z,Usage,2024-09-01T00:00:00Z,Virtual Machines,"{""ServiceType"": ""NC""}"\n'
    )
    assert registry.detect(Sniff.of(path)).name == "focus"


# --------------------------------------------------------------------------- bad input
FOCUS_HEADER = (
    "BilledCost,BillingAccountId,BillingPeriodStart,ChargeCategory,ChargePeriodStart,"
    "EffectiveCost,ProviderName,BillingPeriodEnd"
)
FOCUS_ROW = "1.5,acct-{n},2024-09-01T00:00:00Z,Usage,2024-09-0{d}T00:00:00Z,1.5,Acme,2024-10-01T00:00:00Z"
ASSET_HEADER = (
    "asset_id,hostname,cluster,site,vendor_model,gpu_model,gpu_count,purchase_price,purchase_date,"
    "depreciation_months,facility_cost_per_month,staff_cost_per_month,pue,electricity_price_per_kwh,currency"
)
ASSET_ROW = "A-{n},h{n},c,s,DGX,H100-SXM5-80GB,8,{price},2024-06-15,48,2400,1500,1.35,0.21,USD"


def _focus(n: int) -> str:
    return FOCUS_ROW.format(n=n, d=n)


def test_bad_files_are_named_precisely_and_the_rest_of_the_batch_lands(tmp_path: Path):
    d = tmp_path / "batch"
    d.mkdir()
    good = d / "a_good.csv"
    good.write_text("\n".join([FOCUS_HEADER, _focus(1), _focus(2)]) + "\n")
    truncated = d / "b_truncated.csv"
    truncated.write_text("\n".join([FOCUS_HEADER, _focus(3), _focus(4)])[:-40])
    wrong_type = d / "c_wrong_type.csv"
    wrong_type.write_text(
        "\n".join([FOCUS_HEADER, _focus(5), _focus(6).replace("1.5,acct", "1.5O,acct")]) + "\n"
    )
    negative = d / "d_negative.csv"
    negative.write_text(
        "\n".join([ASSET_HEADER, ASSET_ROW.format(n=1, price=1000), ASSET_ROW.format(n=2, price=-5)]) + "\n"
    )
    repeated = d / "e_repeated_header.csv"
    repeated.write_text("\n".join([FOCUS_HEADER, _focus(7), FOCUS_HEADER, _focus(8)]) + "\n")
    twice = d / "f_column_twice.csv"
    twice.write_text(FOCUS_HEADER + ",BilledCost\n" + _focus(9) + ",2\n")
    with _store(tmp_path) as store:
        outcomes = _run(store, d)
        errors = {name: o.error for name, o in outcomes.items()}
        assert outcomes["a_good.csv"].status == "loaded" and errors["a_good.csv"] is None
        assert errors["b_truncated.csv"] == (
            f"{truncated}:3: malformed CSV: the record has 5 fields (truncated or shifted line?) "
            "(expected 8 fields, as many as the header)"
        )
        assert errors["c_wrong_type.csv"] == (
            f"{wrong_type}:3: column 'BilledCost': data row 2: '1.5O' is not a finite decimal number "
            "(expected a finite decimal number)"
        )
        assert errors["d_negative.csv"] == (
            f"{negative}:3: column 'purchase_price': data row 2: '-5' is negative (expected a value >= 0)"
        )
        assert errors["e_repeated_header.csv"] == (
            f"{repeated}:3: column 'BilledCost': data row 2 repeats the header (files concatenated?) "
            "(expected one header line, then data)"
        )
        assert errors["f_column_twice.csv"] == (
            f"{twice}:1: column 'BilledCost': the header names this column twice (fields 1 and 9) "
            "(expected each column once)"
        )
        assert {o.status for n, o in outcomes.items() if n != "a_good.csv"} == {"rejected"}
        assert _one(store, "select count(*), sum(BilledCost) from raw.focus") == (2, 3.0)
        assert _one(store, "select count(*) from raw.ingest_manifest where status = 'rejected'") == (5,)


def test_bad_timestamp_tags_and_cur_rate_name_row_and_column(tmp_path: Path):
    bad_time = tmp_path / "t.csv"
    bad_time.write_text(
        FOCUS_HEADER + "\n" + _focus(1).replace("2024-09-01T00:00:00Z,Usage", "yesterday,Usage") + "\n"
    )
    bad_tags = tmp_path / "g.csv"
    bad_tags.write_text(FOCUS_HEADER + ",Tags\n" + _focus(1) + ',"{""a"": 1}"\n' + _focus(2) + ",not json\n")
    bad_rate = tmp_path / "r.csv"
    bad_rate.write_text(
        "bill_payer_account_id,bill_billing_period_start_date,line_item_line_item_type,"
        "line_item_usage_start_date,line_item_unblended_rate,line_item_unblended_cost\n"
        "111,2024-09-01T00:00:00Z,Usage,2024-09-01T00:00:00Z,0.5,1\n"
        "111,2024-09-01T00:00:00Z,Usage,2024-09-01T01:00:00Z,n/a,1\n"
    )
    with _store(tmp_path) as store:
        errors = {n: o.error for n, o in _run(store, bad_time, bad_tags, bad_rate).items()}
    assert errors["t.csv"] == (
        f"{bad_time}:2: column 'BillingPeriodStart': data row 1: 'yesterday' is not a timestamp such as "
        "2024-09-01T00:00:00Z or 2024-09-01 00:00:00 (expected a timestamp such as 2024-09-01T00:00:00Z or "
        "2024-09-01 00:00:00)"
    )
    assert errors["g.csv"].startswith(
        f"{bad_tags}:3: column 'Tags': data row 2: 'not json' is not a JSON object"
    )
    assert errors["r.csv"].startswith(f"{bad_rate}:3: column 'line_item_unblended_rate': data row 2: 'n/a'")


def test_asset_register_rules(tmp_path: Path):
    dup = tmp_path / "dup.csv"
    dup.write_text(
        "\n".join([ASSET_HEADER, ASSET_ROW.format(n=1, price=1), ASSET_ROW.format(n=1, price=2)]) + "\n"
    )
    pue = tmp_path / "pue.csv"
    pue.write_text(ASSET_HEADER + "\n" + ASSET_ROW.format(n=1, price=1).replace(",1.35,", ",0.9,") + "\n")
    missing = tmp_path / "missing.csv"
    missing.write_text(ASSET_HEADER.replace(",pue", "") + "\n")
    with _store(tmp_path) as store:
        errors = {n: o.error for n, o in _run(store, dup, pue, missing).items()}
    assert errors["dup.csv"] == (
        f"{dup}:3: column 'asset_id': data row 2: 'A-1' is listed again (first at data row 1) "
        "(expected one row per asset)"
    )
    assert errors["pue.csv"] == (
        f"{pue}:2: column 'pue': data row 1: '0.9' is below 1 (expected a ratio >= 1 (facility / IT energy))"
    )
    assert errors["missing.csv"].startswith(f"{missing}:1: column 'pue': the header lacks pue")


def test_a_large_csv_numbers_its_rows_in_file_order(tmp_path: Path):
    """Each landed row's `_source_row` is its data row in the file, also for a file large enough (some
    16 MB) that a parallel read would append its parts out of order (the store does not keep insertion
    order): error messages and the row keys built on it must not change from one ingest to the next."""
    path = tmp_path / "large_focus.csv"
    description = "x" * 900
    rows = [FOCUS_HEADER + ",ChargeDescription"] + [
        FOCUS_ROW.format(n=n, d=1) + f",{description}" for n in range(1, 18_001)
    ]
    path.write_text("\n".join(rows) + "\n")
    assert path.stat().st_size > 16_000_000
    cut = tmp_path / "cut_focus.csv"  # its read fails inside the block that keeps the reading order
    cut.write_text("\n".join(rows[:3])[: -(len(description) + 40)])  # its last line ends early
    with _store(tmp_path) as store:
        outcomes = _run(store, path, cut)
        assert outcomes["large_focus.csv"].status == "loaded"
        assert outcomes["cut_focus.csv"].status == "rejected"
        misnumbered = store.con.sql(
            "select count(*) from raw.focus where BillingAccountId <> 'acct-' || _source_row"
        ).fetchall()
        # and the store lets rows be stored in any order again, as it was opened
        order_kept = store.con.sql("select current_setting('preserve_insertion_order')").fetchall()
    assert misnumbered == [(0,)]
    assert order_kept == [(False,)]
