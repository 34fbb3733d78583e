"""AWS legacy Cost and Usage Report CSV (`lineItem/UsageStartDate` headers), landed into `raw.aws_cur_legacy`.

Recognised by its `category/Column` header (`lineItem/UsageStartDate`, `lineItem/LineItemType` and a
`bill/` or `identity/` column). Columns are renamed to their CUR 2.0 spelling (`lineItem/UsageStartDate`
-> `line_item_usage_start_date`, `reservation/ReservationARN` -> `reservation_reservation_a_r_n`) and typed
by the same rules as `raw.aws_cur`, so one staging model can read both. The per-tag columns
(`resourceTags/user:team`, `resourceTags/aws:createdBy`) become one `resource_tags` MAP keyed by the
tag's name as AWS spells it (`user:team`), an empty cell leaving the key out, as CUR 2.0 does; likewise
`costCategory/*` becomes `cost_category`. Split cost allocation data (`splitLineItem/SplitCost`,
`splitLineItem/ParentResourceId`, ...) lands as CUR 2.0's `split_line_item_*` columns do: every usage,
ratio and cost a DOUBLE (a value that is none refuses the file), the parent resource id text.

Restatement: scope `aws_cur/<payer account>/<YYYY-MM>` (as CUR 2.0: the same bill), version the file's
modification time (legacy manifests carry no export time).
"""

from __future__ import annotations

import re

from gpu_ledger.ingest.base import Format, LoadContext
from gpu_ledger.ingest.columns import Column
from gpu_ledger.ingest.formats.billing import common
from gpu_ledger.ingest.formats.billing.aws_cur import REQUIRED, cur_kind, finish
from gpu_ledger.ingest.formats.billing.common import quote
from gpu_ledger.ingest.sniff import Sniff

TABLE = "aws_cur_legacy"
_MAP_PREFIXES = {"resourceTags/": "resource_tags", "costCategory/": "cost_category"}


def snake(header: str) -> str:
    """`lineItem/UsageStartDate` -> `line_item_usage_start_date`, the way CUR 2.0 renamed columns."""
    out = re.sub(r"([A-Z])", r"_\1", header.replace("/", "_")).lower()
    out = re.sub(r"[^a-z0-9_]+", "_", out)
    return re.sub(r"_+", "_", out).strip("_")


def detect(s: Sniff) -> bool:
    header = common.csv_header(s)
    if not header:
        return False
    names = set(header)
    return (
        "lineItem/UsageStartDate" in names
        and "lineItem/LineItemType" in names
        and any(n.startswith(("bill/", "identity/")) for n in names)
    )


# what landing needs besides the detected columns: finish() scopes a delivery by payer and period
_NEEDED = {
    "line_item_line_item_type": "lineItem/LineItemType",
    "line_item_usage_start_date": "lineItem/UsageStartDate",
    "bill_payer_account_id": "bill/PayerAccountId",
    "bill_billing_period_start_date": "bill/BillingPeriodStartDate",
}


def load(ctx: LoadContext) -> None:
    header = common.read_csv(ctx)
    cols: list[Column] = []
    maps: dict[str, list[tuple[str, str]]] = {}
    seen: dict[str, str] = {}
    for i, name in enumerate(header):
        prefix = next((p for p in _MAP_PREFIXES if name.startswith(p)), None)
        if prefix is not None:
            maps.setdefault(_MAP_PREFIXES[prefix], []).append((name[len(prefix) :], f"c{i}"))
            continue
        out = snake(name)
        if out in seen:
            raise ctx.error(
                f"columns {seen[out]!r} and {name!r} both become {out!r}",
                line=1,
                column=name,
                expected="distinct column names",
            )
        seen[out] = name
        cols.append(Column(out, cur_kind(out), source=f"c{i}", nullable=out not in REQUIRED, label=name))
    present = [legacy for out, legacy in _NEEDED.items() if out in seen]  # however the header spells it
    common.require_columns(ctx, present, list(_NEEDED.values()), "a legacy CUR header with")
    extra = []
    for target in _MAP_PREFIXES.values():
        entries = maps.get(target, [])
        if entries:
            structs = ", ".join(
                f"{{'key': '{key.replace(chr(39), chr(39) * 2)}', 'value': {quote(src)}}}"
                for key, src in entries
            )
            extra.append(
                f"map_from_entries(list_filter([{structs}], lambda e: e.value is not null)) as {target}"
            )
        else:
            extra.append(f"MAP {{}}::MAP(VARCHAR, VARCHAR) as {target}")
    common.materialise(ctx, cols, extra)
    finish(ctx, TABLE)


FORMAT = Format(
    name="aws_cur_legacy",
    group="billing",
    description="AWS legacy Cost and Usage Report CSV (lineItem/... headers, resourceTags/user:... columns)",
    detect=detect,
    load=load,
)
