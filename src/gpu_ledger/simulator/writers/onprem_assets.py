"""On-prem asset register CSV: what finance knows about each owned GPU server, to cost its hours.

Owned servers have no bill; their cost per hour comes from the purchase price spread over the
depreciation period, plus facility, staff and power. This file is GPU Ledger's own format (there is
no upstream standard), written to `out/billing/onprem/asset_register.csv`, one row per server.

Schema (header row, comma-separated, UTF-8, no BOM; dates ISO 8601 `YYYY-MM-DD`; numbers plain
decimals, never scientific notation, `.` as decimal mark; an empty field is unknown):

| column | type | unit | meaning |
|---|---|---|---|
| asset_id | text | | asset tag; the same id the fleet uses as the node's instance id |
| hostname | text | | node name as Slurm, Kubernetes and DCGM (`Hostname`) know it |
| cluster | text | | cluster the server belongs to |
| site | text | | data centre / site |
| vendor_model | text | | system model, e.g. `NVIDIA DGX H100` |
| gpu_model | text | | GPU model, catalogue key, e.g. `H100-SXM5-80GB` |
| gpu_count | integer | GPUs | GPUs in the server |
| purchase_price | decimal | currency | capital cost of the server |
| purchase_date | date | | depreciation starts on this day |
| depreciation_months | integer | months | straight-line depreciation period; no depreciation after it |
| facility_cost_per_month | decimal | currency / month | rack space, cooling and network share |
| staff_cost_per_month | decimal | currency / month | operations staff share for the server |
| pue | decimal | ratio (≥ 1) | power usage effectiveness: facility energy / IT energy |
| electricity_price_per_kwh | decimal | currency / kWh | price of energy at the site |
| currency | text | ISO 4217 | currency of every money column in the row |
| owner_team | text | | team that owns the server's idle time (optional; like a cloud instance's `team` tag) |
| owner_project | text | | project charged for the server's idle time (optional) |

Hourly cost of a server (what the warehouse derives): purchase_price / depreciation_months spread
over the hours of each month while depreciating, plus (facility + staff) per month spread over the
month's hours, plus measured GPU energy × pue × electricity price.
"""

from __future__ import annotations

from pathlib import Path

from gpu_ledger.simulator.model import ONPREM_ASSETS_SCHEMA, Fleet

COLUMNS = list(ONPREM_ASSETS_SCHEMA)
"""The register's columns, in file order (the model's, so the two cannot drift apart)."""


def write_onprem_assets(fleet: Fleet, out: Path) -> Path:
    """Write the asset register (header only when there is no on-prem server) and return its path."""
    path = Path(out) / "billing" / "onprem" / "asset_register.csv"
    path.parent.mkdir(parents=True, exist_ok=True)
    assets = fleet.onprem_assets.select(COLUMNS).sort("asset_id")
    assets.write_csv(path, date_format="%Y-%m-%d", float_scientific=False)
    return path
