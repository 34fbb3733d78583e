"""GPU Ledger's on-prem asset register CSV (schema in `simulator/writers/onprem_assets.py`), landed into
`raw.onprem_assets`.

Owned servers have no bill; the register is what finance knows to cost their hours, so its numbers are
checked harder than a cloud bill's: every column of the schema must be present, `asset_id` must be
unique and filled, money, counts and months must not be negative, `gpu_count` and
`depreciation_months` are whole numbers, `pue` is at least 1. Types: counts BIGINT, money and ratios
DOUBLE, `purchase_date` DATE, the rest VARCHAR; the optional `owner_team` and `owner_project` (who owns
a server's idle time) and any unknown extra columns are kept as text.

Restatement: the register is a snapshot of the sites it lists, so a newer register of the same sites
replaces the older: scope `onprem_assets/<sorted distinct site>`, version the file's modification time.
"""

from __future__ import annotations

from gpu_ledger.ingest.base import Format, LoadContext
from gpu_ledger.ingest.columns import Column
from gpu_ledger.ingest.formats.billing import common
from gpu_ledger.ingest.sniff import Sniff

TABLE = "onprem_assets"
KINDS = {
    "asset_id": "varchar",
    "hostname": "varchar",
    "cluster": "varchar",
    "site": "varchar",
    "vendor_model": "varchar",
    "gpu_model": "varchar",
    "gpu_count": "bigint",
    "purchase_price": "double",
    "purchase_date": "date",
    "depreciation_months": "bigint",
    "facility_cost_per_month": "double",
    "staff_cost_per_month": "double",
    "pue": "double",
    "electricity_price_per_kwh": "double",
    "currency": "varchar",
}
NON_NEGATIVE = {k for k, v in KINDS.items() if v in ("bigint", "double")}
SIGNATURE = {"asset_id", "gpu_count", "purchase_price", "depreciation_months"}


def detect(s: Sniff) -> bool:
    header = common.csv_header(s)
    return header is not None and common.lower_set(header) >= SIGNATURE


def load(ctx: LoadContext) -> None:
    header = common.read_csv(ctx)
    names = [h.lower() for h in header]
    missing = [k for k in KINDS if k not in names]
    if missing:
        raise ctx.error(
            f"the header lacks {', '.join(missing)}",
            line=1,
            column=missing[0],
            expected="the asset register columns: " + ", ".join(KINDS),
        )
    cols = [
        Column(
            n,
            KINDS.get(n, "varchar"),
            source=f"c{i}",
            non_negative=n in NON_NEGATIVE,
            nullable=n != "asset_id",
            label=header[i],
        )
        for i, n in enumerate(names)
    ]
    common.validate(ctx, cols)
    con = ctx.store.con
    asset = common.quote(f"c{names.index('asset_id')}")
    pue = next(c for c in cols if c.name == "pue")
    bad = con.sql(
        f"select min(_source_row) filter (where ({common.typed_expr(pue)}) < 1), "
        f"arg_min({common.quote(pue.source)}, _source_row) filter (where ({common.typed_expr(pue)}) < 1) "
        f"from {common.SRC}"
    ).fetchall()[0]
    if bad[0] is not None:
        raise common.row_error(
            ctx, bad[0], "pue", f"{bad[1]!r} is below 1", "a ratio >= 1 (facility / IT energy)"
        )
    dup = con.sql(
        f"select {asset}, min(_source_row), max(_source_row) from {common.SRC} "
        f"group by 1 having count(*) > 1 order by 3 limit 1"
    ).fetchall()
    if dup:
        value, first, row = dup[0]
        raise common.row_error(
            ctx,
            row,
            "asset_id",
            f"{value!r} is listed again (first at data row {first})",
            "one row per asset",
        )
    common.materialise(ctx, cols)
    sites = con.sql(f"select distinct site from {common.TYPED}").fetchall()
    ctx.scope = (
        common.scope_of("onprem_assets", [(",".join(sorted(str(s[0]) for s in sites)),)]) if sites else None
    )
    ctx.version = common.mtime_version(ctx.path)
    common.land_typed(ctx, TABLE)


FORMAT = Format(
    name="onprem_assets",
    group="billing",
    description="GPU Ledger on-prem asset register CSV (purchase price, depreciation, facility, power)",
    detect=detect,
    load=load,
)
