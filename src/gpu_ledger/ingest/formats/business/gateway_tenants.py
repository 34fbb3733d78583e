"""Who a gateway's callers are: each tenant's team and project (`gateway_tenants.csv`).

GPU Ledger's own format: the gateway logs an API key (LiteLLM: its hash), a user or a team id; finance
charges teams and projects. A row maps one of those, as the log spells it, to the team and project
that pay for it. A request's tenant is looked up first, then its gateway team id (LiteLLM's `team_id`,
the generic log's `team`). Lands in `raw.gateway_tenants`.

| column | type | meaning |
|---|---|---|
| tenant | text | the API key (hash), user, team id or tenant name as the gateway logs it |
| team | text | the team that pays for its requests |
| project | text, may be empty | the project, where the team charges by project |
"""

from __future__ import annotations

from gpu_ledger.ingest.columns import Column
from gpu_ledger.ingest.typed_csv import csv_format

COLUMNS = [
    Column("tenant", "varchar"),
    Column("team", "varchar"),
    Column("project", "varchar", in_header=False, nullable=True),
]

FORMAT = csv_format(
    "gateway_tenants_csv",
    "business",
    "gateway_tenants",
    COLUMNS,
    "the team and project of each LLM gateway tenant (API key, user or team id; documented CSV)",
)
