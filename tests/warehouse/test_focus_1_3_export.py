"""`gpu-ledger export focus --focus-version 1.3` on the simulated fleet: every GPU charge GPU Ledger
attributes is replaced by its allocated charges (FOCUS 1.3 split-cost allocation), which sum to it to the
cent and give each team the GPU cost the marts give it; every other charge passes through whole; the 1.2
export is as it was.

The FinOps Foundation's focus-validator 2.2.1 cannot check a 1.3 file here: it bundles only the FOCUS 1.2
requirements model and with `--block-download` (no network, as in CI) it refuses `--validate-version 1.3`
("FOCUS version 1.3 not supported. Supported versions: local ['1.2.0.1']"). A test pins that, so the day a
validator bundles 1.3 it fails and says to validate with it. Until then the 1.3 rules of the columns 1.3
added (presence, types, nulls, allowed values, the split's JSON objects) are checked below, and the 1.2
columns of the 1.3 dataset are those the validator accepts in the 1.2 export (tests/warehouse/
test_focus_validator.py).
"""

from __future__ import annotations

import csv
import json
import subprocess
from collections import defaultdict
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from gpu_ledger.focus_spec import AI_EXTENSIONS, COLUMNS, COLUMNS_1_3, SUMMABLE, WAREHOUSE_COLUMNS
from gpu_ledger.read.export import ExportError, export_focus

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
METHOD_ID = "GpuLedger-HeldGpuTimeShare-1"
TAG_PREFIX = "gpu-ledger/"
EXTENSIONS = [c["name"] for c in WAREHOUSE_COLUMNS if c["name"].startswith("x_")]
ALLOCATED = ["AllocatedMethodDetails", "AllocatedMethodId", "AllocatedResourceId", "AllocatedResourceName"]
CHARGE_KEY = (
    "x_Source || '|' || coalesce(x_LoadId, '') || '|' || coalesce(cast(x_SourceRow as varchar), '') || '|' "
    "|| cast(ChargePeriodStart as varchar) || '|' || ChargeCategory"
)
GPU_USAGE = (
    "x_IsGpuInstance and x_InstanceId is not null and ChargeCategory = 'Usage' "
    "and coalesce(CommitmentDiscountStatus, '') <> 'Unused'"
)


def _read(warehouse: Path, sql: str) -> list[tuple]:
    with duckdb.connect(str(warehouse), read_only=True) as con:
        con.execute("set TimeZone = 'UTC'")
        return con.execute(sql).fetchall()


@pytest.fixture(scope="module")
def export_1_3(warehouse: Path, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("focus_1_3") / "focus.csv"
    rows = export_focus(warehouse, out, "1.3")
    assert rows == _read(warehouse, "select count(*) from marts.fct_billing_focus_allocated")[0][0]
    return out


def _rows(export: Path) -> tuple[list[str], list[dict[str, str]]]:
    with export.open(newline="") as f:
        reader = csv.DictReader(f)
        return list(reader.fieldnames or []), list(reader)


def test_split_rows_sum_to_each_billed_charge_to_the_cent(warehouse: Path):
    sums = ", ".join(f"sum({name})" for name in SUMMABLE)
    origin = {
        row[0]: row[1:]
        for row in _read(
            warehouse, f"select {CHARGE_KEY}, {', '.join(SUMMABLE)}, 1 from marts.fct_billing_focus"
        )
    }
    allocated = {
        row[0]: row[1:]
        for row in _read(
            warehouse,
            f"select {CHARGE_KEY}, {sums}, count(*) from marts.fct_billing_focus_allocated group by 1",
        )
    }
    assert allocated.keys() == origin.keys()
    split = {key for key, row in allocated.items() if row[-1] > 1}
    assert len(split) > 10, "the simulated fleet's GPU charges should be split among several consumers"
    for key, row in origin.items():
        for name, want, got in zip(SUMMABLE, row[:-1], allocated[key][:-1], strict=True):
            assert abs((want or Decimal(0)) - (got or Decimal(0))) < Decimal("0.005"), (key, name, want, got)
    ratios = _read(
        warehouse,
        f"""select {CHARGE_KEY}, sum(cast(json_extract(AllocatedMethodDetails, '$.Elements[0].AllocatedRatio')
            as double)) from marts.fct_billing_focus_allocated
            where AllocatedMethodId is not null group by 1""",
    )
    assert ratios and all(abs(total - 1) < 1e-9 for _, total in ratios)


def test_every_gpu_charge_is_split_and_every_other_charge_passes_through_whole(warehouse: Path):
    gpu, other = _read(
        warehouse,
        f"select count(*) filter (where {GPU_USAGE}), count(*) filter (where not ({GPU_USAGE})) "
        "from marts.fct_billing_focus",
    )[0]
    assert gpu > 0 and other > 0
    split_origins = _read(
        warehouse,
        f"select count(distinct {CHARGE_KEY}), count(*) filter (where not ({GPU_USAGE})) "
        "from marts.fct_billing_focus_allocated where AllocatedMethodId is not null",
    )[0]
    assert split_origins == (gpu, 0), "a GPU usage row left whole, or another row split"
    # the rows that are not split are fct_billing_focus's, column for column
    focus_columns = ", ".join(f'"{name}"' for name in (*COLUMNS, *EXTENSIONS) if name != "Tags")
    unchanged = f"""
        select {focus_columns}, cast(Tags as varchar) from marts.fct_billing_focus where not ({GPU_USAGE})
        except all
        select {focus_columns}, cast(Tags as varchar) from marts.fct_billing_focus_allocated
        where AllocatedMethodId is null
    """
    assert _read(warehouse, unchanged) == []
    assert _read(
        warehouse,
        "select count(*) from marts.fct_billing_focus_allocated where AllocatedMethodId is null and ("
        + " or ".join(f"{name} is not null" for name in (*ALLOCATED, "AllocatedTags", *AI_EXTENSIONS))
        + ")",
    ) == [(0,)]


def test_each_team_gets_the_gpu_cost_the_marts_give_it(warehouse: Path):
    """Split rows grouped by AllocatedTags' team equal fct_gpu_hour_allocations' cost per team, less the
    on-prem power that the marts add from DCGM energy and no bill carries."""
    from_focus = dict(
        _read(
            warehouse,
            """select json_extract_string(AllocatedTags, '$."gpu-ledger/team"'), sum(EffectiveCost)
               from marts.fct_billing_focus_allocated where AllocatedMethodId is not null group by 1""",
        )
    )
    from_marts = dict(
        _read(
            warehouse,
            """select allocations.team,
                      sum(allocations.cost
                          - cast(hours.power_cost * allocations.cost_share as decimal(38, 10)))
               from marts.fct_gpu_hour_allocations as allocations
               inner join marts.fct_gpu_hours as hours using (gpu_id, hour_start)
               where hours.is_billed group by 1""",
        )
    )
    assert len(from_focus) > 2 and None not in from_focus
    assert from_focus.keys() == from_marts.keys()
    for team, cost in from_marts.items():
        assert abs(from_focus[team] - cost) < Decimal("0.01"), team


def test_the_1_3_export_follows_the_rules_of_the_columns_1_3_added(warehouse: Path, export_1_3: Path):
    header, rows = _rows(export_1_3)
    assert header == [*COLUMNS_1_3, *EXTENSIONS, *AI_EXTENSIONS]
    jobs = dict(_read(warehouse, "select job_key, sharing_mode from marts.dim_jobs"))
    consumers: dict[str, int] = defaultdict(int)
    commitments: dict[str, int] = defaultdict(int)
    for line, row in enumerate(rows, start=2):
        assert row["ServiceProviderName"] and row["HostProviderName"], f"line {line}: a provider name is null"
        assert row["ServiceProviderName"] == row["ProviderName"], f"line {line}"
        covered = row["ChargeCategory"] == "Usage" and row["CommitmentDiscountStatus"] == "Used"
        if covered and row["CommitmentDiscountId"]:
            (applied,) = json.loads(row["ContractApplied"])["Elements"]
            assert applied["ContractCommitmentId"] == row["CommitmentDiscountId"] and applied["ContractId"]
            assert applied["ContractCommitmentAppliedCost"] == pytest.approx(
                float(row["EffectiveCost"]),
                abs=5e-7,  # to 6 decimals
            )
            commitments[row["CommitmentDiscountId"]] += 1
        else:
            assert row["ContractApplied"] == "", f"line {line}"
        if not row["AllocatedMethodId"]:
            assert [row[name] for name in (*ALLOCATED, "AllocatedTags")] == ["", "", "", "", ""], (
                f"line {line}"
            )
            continue
        assert row["AllocatedMethodId"] == METHOD_ID, f"line {line}"
        details = json.loads(row["AllocatedMethodDetails"])
        assert list(details) == ["Elements"] and len(details["Elements"]) == 1
        (element,) = details["Elements"]
        assert isinstance(element["AllocatedRatio"], float | int) and 0 < element["AllocatedRatio"] <= 1
        assert element["UsageUnit"] == "GPU-Hours" and element["UsageQuantity"] >= 0
        assert all(
            key in ("AllocatedRatio", "UsageUnit", "UsageQuantity") or key.startswith("x_") for key in element
        )
        tags = json.loads(row["AllocatedTags"])
        resource_tags = json.loads(row["Tags"]) if row["Tags"] else {}
        assert tags and all(key.startswith(TAG_PREFIX) for key in tags)
        assert not set(tags) & set(resource_tags)
        assert all(isinstance(value, str) and value for value in tags.values())
        # FOCUS: the resource id (and name) is null exactly on the unallocated portion, here idle
        # and how the consumer shared the GPU is the job's sharing mode (the idle part: unallocated)
        if tags[TAG_PREFIX + "consumer"] == "idle":
            assert row["AllocatedResourceId"] == row["AllocatedResourceName"] == ""
            assert element["x_SharingMode"] == "unallocated", f"line {line}"
        else:
            assert row["AllocatedResourceId"] in jobs and row["AllocatedResourceName"]
            assert element["x_SharingMode"] == jobs[row["AllocatedResourceId"]], f"line {line}"
        consumers[tags[TAG_PREFIX + "consumer"]] += 1
    assert consumers["job"] > 0 and consumers["idle"] > 0
    # the AWS RI and Savings Plan and the Azure reservation each applied to the usage they covered
    assert len(commitments) == 3, commitments


def test_serving_pods_charges_carry_their_models_tokens(warehouse: Path):
    """x_ModelId / x_InputTokens / x_OutputTokens (FOCUS 1.5 draft names): each serving pod's day of tokens is
    spread over its allocated charges that day, so per model they add up to the inference servers' counters
    (fct_model_inference_daily; every simulated serving pod runs on billed GPUs)."""
    exported = _read(
        warehouse,
        "select x_ModelId, sum(x_InputTokens), sum(x_OutputTokens) from marts.fct_billing_focus_allocated"
        " where x_InputTokens is not null group by 1 order by 1",
    )
    counted = _read(
        warehouse,
        "select model, sum(input_tokens), sum(output_tokens) from marts.fct_model_inference_daily"
        " group by 1 order by 1",
    )
    assert [model for model, *_ in exported] == [model for model, *_ in counted] and len(counted) >= 2
    for (model, input_tokens, output_tokens), (_, input_counted, output_counted) in zip(
        exported, counted, strict=True
    ):
        assert abs(input_tokens - input_counted) < 1 and abs(output_tokens - output_counted) < 1, model


def test_the_1_3_export_as_parquet_keeps_the_types(warehouse: Path, tmp_path: Path, export_1_3: Path):
    parquet = tmp_path / "focus.parquet"
    rows = export_focus(warehouse, parquet, "1.3")
    with duckdb.connect() as con:
        described = dict(
            con.execute(
                f"select column_name, column_type from (describe select * from '{parquet}')"
            ).fetchall()
        )
        total = con.execute(
            f"select count(*), sum(EffectiveCost), count(AllocatedMethodId) from '{parquet}'"
        ).fetchall()[0]
        from_csv = con.execute(
            "select count(*), sum(cast(EffectiveCost as decimal(38, 10))), count(AllocatedMethodId) "
            f"from read_csv('{export_1_3}', all_varchar=true, "
            "header=true) ",
        ).fetchall()[0]
    assert list(described) == [*COLUMNS_1_3, *EXTENSIONS, *AI_EXTENSIONS]
    assert described["EffectiveCost"] == "DECIMAL(38,10)"
    assert described["ChargePeriodStart"] == "TIMESTAMP WITH TIME ZONE"
    assert described["AllocatedResourceId"] == "VARCHAR"
    assert total[0] == rows == from_csv[0] and total[2] == from_csv[2] > 0
    billed = _read(warehouse, "select sum(EffectiveCost) from marts.fct_billing_focus")[0][0]
    assert abs(total[1] - billed) < Decimal("0.01")


def test_the_1_2_export_stays_the_default_and_unchanged(warehouse: Path, tmp_path: Path):
    default, explicit = tmp_path / "default.csv", tmp_path / "v12.csv"
    rows = export_focus(warehouse, default)
    assert export_focus(warehouse, explicit, "1.2") == rows
    assert default.read_bytes() == explicit.read_bytes()
    header, _ = _rows(default)
    assert header == [*COLUMNS, *EXTENSIONS]
    assert rows == _read(warehouse, "select count(*) from marts.fct_billing_focus")[0][0]


def test_an_unknown_focus_version_is_refused_before_anything_is_written(warehouse: Path, tmp_path: Path):
    out = tmp_path / "focus.csv"
    with pytest.raises(ExportError, match=r"cannot export FOCUS 1\.5: the versions are 1\.2, 1\.3, 1\.4"):
        export_focus(warehouse, out, "1.5")
    assert not out.exists()


def test_the_bundled_focus_validator_cannot_check_1_3_offline(export_1_3: Path, tmp_path: Path):
    """When this fails, the validator bundles FOCUS 1.3: validate the 1.3 export with it, as the 1.2 one
    is."""
    validator = ROOT / ".venv-focus" / "bin" / "focus-validator"
    if not validator.is_file():
        pytest.skip("focus-validator is not installed: `make focus-validator` (needs Python >= 3.12)")
    command = [
        str(validator),
        "--data-file",
        str(export_1_3),
        "--validate-version",
        "1.3",
        "--block-download",
    ]
    run = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert "FOCUS version 1.3 not supported" in run.stderr, run.stderr[-2000:]
