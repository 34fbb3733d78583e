"""A billing provider is a plug-in: docs/adding.md "Add a billing provider", done on a copy of the project.

A toy provider (Toy Cloud, a usage CSV) is added to a copy of the project with exactly the files
docs/adding.md names: a parser module, a staging model with its source and model YAML, one FOCUS mapping model
with its YAML, and its entry in the billing provider registry (dbt_project.yml). The FOCUS columns of the
mapping's YAML are written by `python -m gpu_ledger.focus_codegen`. No other file changes; a toy bill ingested
and built on the copy shows in fct_billing_focus, fct_gpu_hours and the reconciliation, every dollar
attributed.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import textwrap
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
PROJECT = ("src", "models", "macros", "seeds", "tests/dbt", "dbt_project.yml", "profiles.yml")

PARSER = '''\
"""Toy Cloud's usage export: a CSV of machine-hours (`account_id`, `machine_id`, `machine_type`, `gpu_count`,
`gpu_model`, `usage_start`, `usage_hours`, `cost_usd`), landed into `raw.toy_cloud`."""

from __future__ import annotations

from gpu_ledger.ingest.base import Format, LoadContext
from gpu_ledger.ingest.columns import Column
from gpu_ledger.ingest.formats.billing import common
from gpu_ledger.ingest.sniff import Sniff

TABLE = "toy_cloud"
KINDS = {
    "account_id": "varchar",
    "machine_id": "varchar",
    "machine_type": "varchar",
    "gpu_count": "bigint",
    "gpu_model": "varchar",
    "usage_start": "timestamptz",
    "usage_hours": "double",
    "cost_usd": "double",
}


def detect(s: Sniff) -> bool:
    header = common.csv_header(s)
    return header is not None and common.lower_set(header) >= {"machine_id", "usage_hours", "cost_usd"}


def load(ctx: LoadContext) -> None:
    header = common.read_csv(ctx)
    names = [h.lower() for h in header]
    common.require_columns(ctx, names, list(KINDS), "the Toy Cloud usage columns")
    cols = [
        Column(
            n,
            KINDS.get(n, "varchar"),
            source=f"c{i}",
            nullable=n not in ("account_id", "usage_start"),
            label=header[i],
        )
        for i, n in enumerate(names)
    ]
    common.materialise(ctx, cols)
    ctx.version = common.mtime_version(ctx.path)
    common.land_typed(ctx, TABLE)


FORMAT = Format(
    name="toy_cloud",
    group="billing",
    description="Toy Cloud usage export CSV (machine-hours)",
    detect=detect,
    load=load,
)
'''

SOURCES = """\
version: 2
sources:
  - name: toy_cloud
    description: Toy Cloud usage exports, as landed by src/gpu_ledger/ingest/formats/billing/toy_cloud.py.
    database: "{{ 'raw' if target.type == 'spark' else 'landed' }}"
    schema: raw
    tables:
      - name: toy_cloud
        description: One row per machine-hour billed.
        columns:
          - {name: account_id, data_type: varchar, description: Toy Cloud account.}
          - {name: machine_id, data_type: varchar, description: The machine billed.}
          - {name: machine_type, data_type: varchar, description: Its machine type.}
          - {name: gpu_count, data_type: bigint, description: GPUs on the machine (0 for none).}
          - {name: gpu_model, data_type: varchar, description: GPU model of the machine.}
          - {name: usage_start, data_type: timestamptz, description: Start of the usage.}
          - {name: usage_hours, data_type: double, description: Hours of usage.}
          - {name: cost_usd, data_type: double, description: Cost in USD.}
          - {name: _source_row, data_type: bigint, description: Row of the file.}
          - {name: _load_id, data_type: varchar, description: The ingest load.}
"""

STAGING_YAML = """\
version: 2
models:
  - name: stg_toy_cloud__charges
    description: "Toy Cloud usage rows, renamed. Grain: one row per machine-hour billed."
    data_tests:
      - column_values:
          arguments:
            grain: [load_id, source_row]
    columns:
      - {name: account_id, description: Toy Cloud account.}
      - {name: machine_id, description: The machine billed.}
      - {name: machine_type, description: Its machine type.}
      - {name: gpu_count, description: GPUs on the machine (0 for none).}
      - {name: gpu_model, description: GPU model of the machine.}
      - {name: usage_start_at, description: Start of the usage.}
      - {name: usage_hours, description: Hours of usage.}
      - {name: cost, description: Cost in USD.}
      - {name: source_row, description: Row of the file.}
      - {name: load_id, description: The ingest load.}
"""

STAGING = """\
with source as (
    select * from {{ billing_source('toy_cloud', 'toy_cloud') }}
),

renamed as (
    select
        account_id,
        machine_id,
        machine_type,
        gpu_model,
        gpu_count,
        usage_hours,
        cost_usd as cost,
        usage_start as usage_start_at,
        _source_row as source_row,
        _load_id as load_id
    from source
)

select * from renamed
"""

MAPPING = """\
-- grain: one row per Toy Cloud usage row (a machine-hour)
with charges as (
    select * from {{ ref('stg_toy_cloud__charges') }}
),

final as (
    select
        {{ focus_part_columns({
            'BilledCost': 'cost',
            'BillingAccountId': 'account_id',
            'BillingCurrency': "'USD'",
            'BillingPeriodStart': utc_trunc('month', 'usage_start_at'),
            'BillingPeriodEnd': utc_trunc('month', 'usage_start_at') ~ ' + interval 1 month',
            'ChargeCategory': "'Usage'",
            'ChargeFrequency': "'Usage-Based'",
            'ChargePeriodStart': 'usage_start_at',
            'ChargePeriodEnd': add_seconds('usage_start_at', 'usage_hours * 3600'),
            'ContractedCost': 'cost',
            'EffectiveCost': 'cost',
            'ListCost': 'cost',
            'PricingCategory': "'Standard'",
            'ProviderName': "'Toy Cloud'",
            'PublisherName': "'Toy Cloud'",
            'ResourceId': 'machine_id',
            'ServiceCategory': "'Compute'",
            'ServiceName': "'Toy Compute'",
            'SubAccountId': 'account_id',
            'x_Source': "'toy_cloud'",
            'x_LoadId': 'load_id',
            'x_SourceRow': 'source_row',
            'x_InstanceType': 'machine_type',
            'x_InstanceId': 'machine_id',
            'x_GpuModel': 'gpu_model',
            'x_GpuCount': 'nullif(gpu_count, 0)',
            'x_IsGpuInstance': 'case when gpu_count > 0 then true end',
            'x_UsageSeconds': 'usage_hours * 3600',
            'x_DepreciationCost': '0',
            'x_FacilityCost': '0',
            'x_StaffCost': '0',
        }) }}
    from charges
)

select * from final
"""

MAPPING_YAML = """\
version: 2
models:
- name: int_billing__toy_focus_lines
  description: 'Toy Cloud usage rows in FOCUS 1.2 columns. Grain: one row per machine-hour billed.'
  data_tests:
  - column_values:
      arguments:
        grain: [x_Source, x_LoadId, x_SourceRow, ChargePeriodStart, ChargeCategory]
  columns:
  # >>> focus columns: part
  # <<< focus columns
"""

REGISTRY = (
    "    - {model: int_billing__onprem_focus_lines, formats: [onprem_assets], usage_window: false}\n",
    "    - {model: int_billing__toy_focus_lines, formats: [toy_cloud]}\n",
    "    onprem: {names: [On-premises]}\n",
    "    toy: {names: [Toy Cloud]}\n",
)

BILL = """\
account_id,machine_id,machine_type,gpu_count,gpu_model,usage_start,usage_hours,cost_usd
toy-1,tc-gpu-1,tc.h100x8,8,H100-SXM5-80GB,2026-10-01T00:00:00Z,1,80.0
toy-1,tc-gpu-1,tc.h100x8,8,H100-SXM5-80GB,2026-10-01T01:00:00Z,1,80.0
toy-1,tc-gpu-1,tc.h100x8,8,H100-SXM5-80GB,2026-10-01T02:00:00Z,1,80.0
toy-1,tc-cpu-1,tc.cpu4,0,,2026-10-01T00:00:00Z,3,1.5
"""

DOCUMENTED = {
    "src/gpu_ledger/ingest/formats/billing/toy_cloud.py": PARSER,
    "models/staging/toy_cloud/_toy_cloud__sources.yml": SOURCES,
    "models/staging/toy_cloud/_stg_toy_cloud__models.yml": STAGING_YAML,
    "models/staging/toy_cloud/stg_toy_cloud__charges.sql": STAGING,
    "models/intermediate/billing/providers/int_billing__toy_focus_lines.sql": MAPPING,
    "models/intermediate/billing/providers/_int_billing__toy_focus_lines__models.yml": MAPPING_YAML,
}

RUN = textwrap.dedent(
    """
    import sys
    from pathlib import Path

    from gpu_ledger.build.duckdb_engine import build
    from gpu_ledger.home import Home
    from gpu_ledger.ingest.runner import ingest
    from gpu_ledger.ingest.store import RawStore

    home = Home(Path(sys.argv[1]))
    with RawStore(home.raw_db) as store:
        outcomes = ingest([Path(sys.argv[2])], store, progress=False)
    print("loads:", [(o.format, o.status, o.error) for o in outcomes])
    result = build(home)
    print(result.output[-4000:])
    sys.exit(0 if result.success else 1)
    """
)


def _files(root: Path) -> dict[str, str]:
    return {
        str(path.relative_to(root)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in root.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    }


def _copy_project(target: Path) -> None:
    for name in PROJECT:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, target / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(source, target / name)


def _add_toy_provider(project: Path) -> None:
    """What docs/adding.md "Add a billing provider" asks for, and nothing else."""
    for name, text in DOCUMENTED.items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(text)
    registry = (project / "dbt_project.yml").read_text()
    for anchor, addition in zip(REGISTRY[::2], REGISTRY[1::2], strict=True):
        assert anchor in registry
        registry = registry.replace(anchor, anchor + addition, 1)
    (project / "dbt_project.yml").write_text(registry)


def _run(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(project / "src")}
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env, cwd=project)


@pytest.fixture(scope="module")
def toy(tmp_path_factory) -> tuple[Path, set[str]]:
    """The project copy with the toy provider added and built: (published warehouse, files changed)."""
    project = tmp_path_factory.mktemp("project")
    _copy_project(project)
    before = _files(project)
    _add_toy_provider(project)
    generated = _run(project, "-m", "gpu_ledger.focus_codegen")
    assert generated.returncode == 0, generated.stdout + generated.stderr
    after = _files(project)
    changed = {name for name in after.keys() | before.keys() if before.get(name) != after.get(name)}
    bill = tmp_path_factory.mktemp("bills") / "toy-2026-10.csv"
    bill.write_text(BILL)
    home = tmp_path_factory.mktemp("home")
    built = _run(project, "-c", RUN, str(home), str(bill))
    assert built.returncode == 0, built.stdout[-6000:] + built.stderr[-3000:]
    assert "('toy_cloud', 'loaded', None)" in built.stdout
    return home / "warehouse.duckdb", changed


def _rows(warehouse: Path, sql: str) -> list[tuple]:
    with duckdb.connect(str(warehouse), read_only=True) as con:
        return con.sql(sql).fetchall()


def test_adding_a_provider_touches_only_the_documented_files(toy):
    _, changed = toy
    assert changed == {*DOCUMENTED, "dbt_project.yml"}


def test_the_toy_bill_is_in_fct_billing_focus(toy):
    warehouse, _ = toy
    rows = _rows(
        warehouse,
        """select x_InstanceId, count(*), sum(BilledCost), sum(EffectiveCost), bool_and(x_IsGpuInstance),
                  max(x_GpuCount), max(x_GpuModel), max(ServiceSubcategory), max(InvoiceId)
           from marts.fct_billing_focus where x_Source = 'toy_cloud' group by all order by 1""",
    )
    assert rows == [
        ("tc-cpu-1", 1, Decimal("1.5"), Decimal("1.5"), False, None, None, "Other (Compute)",
         "provisional-toy-toy-1-2026-10"),
        ("tc-gpu-1", 3, Decimal("240"), Decimal("240"), True, 8, "H100-SXM5-80GB", "Other (Compute)",
         "provisional-toy-toy-1-2026-10"),
    ]  # fmt: skip


def test_the_toy_gpus_carry_their_cost_in_fct_gpu_hours(toy):
    warehouse, _ = toy
    rows = _rows(
        warehouse,
        """select provider, account_id, count(distinct gpu_id), count(distinct hour_start), count(*),
                  sum(effective_cost), bool_and(not is_monitored)
           from marts.fct_gpu_hours group by all""",
    )
    assert rows == [("toy", "toy-1", 8, 3, 24, Decimal("240"), True)]
    gpus = _rows(
        warehouse, "select distinct provider, instance_type, gpu_model, ownership from marts.dim_gpus"
    )
    assert gpus == [("toy", "tc.h100x8", "H100-SXM5-80GB", "cloud")]


def test_every_toy_gpu_dollar_reconciles(toy):
    warehouse, _ = toy
    rows = _rows(
        warehouse,
        """select billing_period, provider, account_id, billed_gpu_cost, gpu_hours_cost,
                  billing_vs_gpu_hours_difference, gpu_hours_vs_consumers_difference
           from marts.fct_cost_reconciliation""",
    )
    assert rows == [("2026-10", "toy", "toy-1", Decimal("240"), Decimal("240"), Decimal("0"), Decimal("0"))]


def test_the_toy_load_counts_as_billing(toy):
    warehouse, _ = toy
    rows = _rows(warehouse, "select format, source_group, status, rows_landed from marts.fct_data_loads")
    assert rows == [("toy_cloud", "billing", "loaded", 4)]
