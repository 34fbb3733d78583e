"""AWS Cost and Usage Report 2.0 (Data Exports) writer: the AWS share of the fleet, billed as AWS bills it.

The warehouse must ingest real CUR 2.0 exports, so the simulator renders its AWS instances in that
format rather than in a friendlier one: snake_case columns with CUR 2.0's types (rates are strings,
costs doubles, tags and product attributes in `map<string,string>` columns), the line item types that
commitments produce, and the restated deliveries that make naive ingestion double count.

Line items (one billing period per calendar month the simulated window touches):

| source | `line_item_line_item_type` | notes |
|---|---|---|
| instance hour, OnDemand | `Usage` | usage type `BoxUsage:<type>`; outside us-east-1 prefixed (`USW2-…`) |
| instance hour, Spot | `Usage` | `[<prefix>-]SpotUsage:<type>` |
| instance hour, Reserved | `DiscountedUsage` | unblended 0; `reservation_effective_cost` = amortised |
| instance hour, SavingsPlan | `SavingsPlanCoveredUsage`, `SavingsPlanNegation` | on-demand, then cancelled |
| commitment hour, RI | `RIFee` | recurring fee; unused amortised upfront and recurring fee |
| commitment hour, savings plan | `SavingsPlanRecurringFee` | commitment to date and used commitment |
| bought in the window, upfront | `Fee` (RI, with ARN) / `SavingsPlanUpfrontFee` | the purchase itself |
| `fleet.charges`, provider aws | `Tax` / `Credit` / `Fee` / `Usage` | as the charge says |
| EKS pod-hour, per resource | `Usage` | split cost allocation data (`aws_cur_split`), cost in `split_*` |

Unlike AWS, which writes one `RIFee` line per reservation per month, `RIFee` lines here are hourly like
the savings plan fee lines, so that every commitment hour's unused cost can be checked against the bill.

Amortised cost (the standard CUR formula) reproduces `instance_hours.effective_cost` per instance-hour
and `commitment_hours.unused_cost` per commitment-hour:

    SavingsPlanCoveredUsage  -> savings_plan_savings_plan_effective_cost
    SavingsPlanRecurringFee  -> savings_plan_total_commitment_to_date - savings_plan_used_commitment
    SavingsPlanNegation, SavingsPlanUpfrontFee -> 0
    DiscountedUsage          -> reservation_effective_cost
    RIFee                    -> reservation_unused_amortized_upfront_fee_for_billing_period
                                + reservation_unused_recurring_fee
    Fee with a reservation_reservation_a_r_n -> 0   (the upfront is already amortised into usage)
    anything else            -> line_item_unblended_cost

`line_item_unblended_cost` summed over a billing period is the invoice. Timestamps are Parquet
timestamps without a zone (UTC, as AWS writes them). User tags are in `resource_tags` under keys
`user_<tag key>` (`user_team`, `user_project`, `user_environment`); an untagged key is absent from
the map, never an empty string.

Files, as a Data Export with "overwrite" off (create new versions) delivers them, under
`out/billing/aws/` (the bucket root; the export has no prefix):

    gpu-ledger-cur2/data/BILLING_PERIOD=YYYY-MM/<run>/gpu-ledger-cur2-00001.snappy.parquet
    gpu-ledger-cur2/metadata/BILLING_PERIOD=YYYY-MM/<run>/gpu-ledger-cur2-Manifest.json

where `<run>` is `<YYYYMMDDTHHMMSSZ>-<execution id>`, the export time (UTC) and the execution.

Restatement. Each billing period is delivered twice: a preliminary version (the export as it stood
two thirds into the part of the window that falls in that period: only lines starting before that
cutoff, no `Tax` line yet, no `bill_invoice_id`) and the final version. Both carry the same
`bill_billing_period_start_date` and `bill_payer_account_id`, so an ingester must keep only the newest
delivery per (billing period, payer account) and replace what an older one loaded. The newest is the
one whose manifest has the latest `exportTime` (equivalently: the execution folder name, whose
leading UTC timestamp sorts lexicographically); file modification times agree (the final version's
files are newer) and are the fallback when no manifest is at hand. `identity_line_item_id` is stable
across the two versions of a line, which is how AWS lets one diff them, but it is no dedup key across
versions because lines also disappear and appear (`Tax`). The final version of a month that was still
open at the end of the window has no `bill_invoice_id` either, as in a real month-to-date export.
"""

from __future__ import annotations

import uuid
from datetime import timedelta
from pathlib import Path

import numpy as np
import polars as pl

from gpu_ledger.simulator.model import Fleet
from gpu_ledger.simulator.provider_split import provider_split
from gpu_ledger.simulator.writers.aws_cur_files import EXPORT_NAME, deliver
from gpu_ledger.simulator.writers.aws_cur_lines import (
    charge_lines,
    commitment_fee_lines,
    upfront_lines,
    usage_lines,
)
from gpu_ledger.simulator.writers.aws_cur_split import split_lines
from gpu_ledger.simulator.writers.billing_periods import BillingPeriod, billing_periods

LEGAL_ENTITY = "Amazon Web Services, Inc."


def write_aws_cur(fleet: Fleet, out: Path) -> list[Path]:
    """Write the AWS CUR 2.0 export (preliminary and final version per billing period).

    Returns the data files and manifests written, preliminary before final within each period.
    Writes nothing and returns [] when the fleet has nothing billed by AWS.
    """
    inst = fleet.instances.filter(pl.col("provider") == "aws")
    commitments = fleet.commitments.filter(pl.col("provider") == "aws")
    charges = fleet.charges.filter(pl.col("provider") == "aws")
    if inst.is_empty() and commitments.is_empty() and charges.is_empty():
        return []
    accounts = _accounts(inst, commitments, charges)
    payer_id = min(accounts)
    rng = np.random.default_rng([fleet.config.seed, 0xC052])
    export_arn = f"arn:aws:bcm-data-exports:us-east-1:{payer_id}:export/{EXPORT_NAME}-{_uuid(rng)}"
    root = Path(out) / "billing" / "aws" / EXPORT_NAME
    com_info = _commitment_info(commitments)
    pod_lines = split_lines(provider_split(fleet), fleet.instances)
    written: list[Path] = []
    for period in billing_periods(fleet.config.start, fleet.config.end):
        prelim_id, final_id = _uuid(rng), _uuid(rng)
        invoice_id = str(rng.integers(10**9, 10**10))
        lines = _period_lines(fleet, inst, com_info, charges, pod_lines, period)
        lines = lines.with_columns(
            pl.lit(payer_id).alias("bill_payer_account_id"),
            pl.lit(accounts[payer_id]).alias("bill_payer_account_name"),
            pl.col("line_item_usage_account_id")
            .replace_strict(accounts, default=None, return_dtype=pl.Utf8)
            .alias("line_item_usage_account_name"),
        )
        prelim = lines.filter(
            (pl.col("line_item_usage_start_date") < period.cutoff)
            & (pl.col("line_item_line_item_type") != "Tax")
        )
        closed = period.end <= fleet.config.end
        final = lines.with_columns(pl.lit(invoice_id if closed else None, pl.Utf8).alias("bill_invoice_id"))
        versions = [
            (prelim, period.cutoff + timedelta(hours=6), prelim_id),
            (final, period.window_end + timedelta(days=1), final_id),
        ]
        for frame, exported_at, execution_id in versions:
            written += deliver(root, period, frame, exported_at, execution_id, export_arn)
    return written


def _accounts(inst: pl.DataFrame, commitments: pl.DataFrame, charges: pl.DataFrame) -> dict[str, str | None]:
    """Account id → name, names from the instances (the only frame that knows them)."""
    names: dict[str, str | None] = {}
    for acc, name in inst.select("account_id", "account_name").unique().sort("account_id").iter_rows():
        if names.get(acc) is None:
            names[acc] = name
    for frame in (commitments, charges):
        for acc in frame.get_column("account_id").drop_nulls().unique().to_list():
            names.setdefault(acc, None)
    return names


def _commitment_info(commitments: pl.DataFrame) -> pl.DataFrame:
    """Per commitment: the upfront share of its hourly commitment and the labels CUR shows for it.

    The hourly commitment is recurring fee plus amortised upfront; splitting it by the upfront share
    keeps every amortised figure consistent with `commitment_hours` however the plan was paid.
    """
    term_hours = pl.col("term_months").cast(pl.Float64) * 730.0
    upfront_hourly = pl.col("upfront_fee").fill_null(0.0) / term_hours
    share = (
        pl.when(pl.col("hourly_commitment") > 0)
        .then((upfront_hourly / pl.col("hourly_commitment")).clip(0.0, 1.0))
        .otherwise(0.0)
    )
    return commitments.with_columns(
        share.fill_nan(0.0).fill_null(0.0).alias("_upfront_share"),
        pl.when(pl.col("term_months") >= 36).then(pl.lit("3yr")).otherwise(pl.lit("1yr")).alias("_term"),
    ).with_columns(
        pl.when(pl.col("_upfront_share") <= 0)
        .then(pl.lit("No Upfront"))
        .when(pl.col("_upfront_share") >= 0.999999)
        .then(pl.lit("All Upfront"))
        .otherwise(pl.lit("Partial Upfront"))
        .alias("_payment_option"),
        pl.col("starts_at").dt.strftime("%Y-%m-%dT%H:%M:%S.000Z").alias("_start_str"),
        pl.col("ends_at").dt.strftime("%Y-%m-%dT%H:%M:%S.000Z").alias("_end_str"),
    )


def _period_lines(
    fleet: Fleet,
    inst: pl.DataFrame,
    com_info: pl.DataFrame,
    charges: pl.DataFrame,
    pod_lines: pl.DataFrame,
    period: BillingPeriod,
) -> pl.DataFrame:
    """Every line item of one billing period (the final version), in a stable order."""
    in_period = (pl.col("hour_start") >= period.start) & (pl.col("hour_start") < period.end)
    ih = fleet.instance_hours.filter(in_period)
    ch = fleet.commitment_hours.filter(in_period)
    starts = pl.col("line_item_usage_start_date")
    parts = [
        usage_lines(ih, inst, com_info),
        commitment_fee_lines(ch, com_info),
        upfront_lines(com_info, period),
        charge_lines(charges, period),
        pod_lines.filter((starts >= period.start) & (starts < period.end)) if pod_lines.height else pod_lines,
    ]
    lines = (
        pl.concat([p for p in parts if p.height], how="diagonal_relaxed")
        if any(p.height for p in parts)
        else pl.DataFrame(schema={"line_item_usage_start_date": pl.Datetime("us", "UTC")})
    )
    lines = lines.with_columns(
        pl.lit("Anniversary").alias("bill_bill_type"),
        pl.lit("AWS").alias("bill_billing_entity"),
        pl.lit(period.start).dt.cast_time_unit("us").alias("bill_billing_period_start_date"),
        pl.lit(period.end).dt.cast_time_unit("us").alias("bill_billing_period_end_date"),
        pl.lit(LEGAL_ENTITY).alias("bill_invoicing_entity"),
        pl.lit(LEGAL_ENTITY).alias("line_item_legal_entity"),
        pl.lit("USD").alias("line_item_currency_code"),
        pl.lit("USD").alias("pricing_currency"),
    )
    if "line_item_unblended_cost" not in lines.columns:
        return lines
    lines = lines.with_columns(
        pl.col("line_item_unblended_cost").alias("line_item_blended_cost"),
        pl.col("line_item_unblended_rate").alias("line_item_blended_rate"),
        pl.format(
            "{}/{}",
            pl.col("line_item_usage_start_date").dt.strftime("%Y-%m-%dT%H:%M:%SZ"),
            pl.col("line_item_usage_end_date").dt.strftime("%Y-%m-%dT%H:%M:%SZ"),
        ).alias("identity_time_interval"),
    )
    lines = lines.sort(
        "line_item_usage_start_date", "line_item_line_item_type", "line_item_resource_id", nulls_last=True
    )
    return lines.with_columns(_line_item_ids(lines, fleet.config.seed).alias("identity_line_item_id"))


def _line_item_ids(lines: pl.DataFrame, seed: int) -> pl.Series:
    """Stable 26-character base32 ids: the same line has the same id in every version of the export."""
    key = pl.concat_str(
        [
            pl.col("line_item_line_item_type"),
            pl.col("line_item_usage_account_id").fill_null(""),
            pl.coalesce(
                "line_item_resource_id",
                "reservation_reservation_a_r_n",
                "savings_plan_savings_plan_a_r_n",
                pl.lit(""),
            ),
            pl.col("line_item_usage_start_date").dt.strftime("%Y%m%d%H%M%S"),
            pl.col("line_item_usage_type").fill_null(""),
            pl.col("line_item_line_item_description").fill_null(""),
        ],
        separator="|",
    )
    cols = [
        c
        for c in ("reservation_reservation_a_r_n", "savings_plan_savings_plan_a_r_n")
        if c not in lines.columns
    ]
    frame = lines.with_columns(pl.lit(None, pl.Utf8).alias(c) for c in cols)
    hashes = frame.select(key.hash(seed=seed).alias("a"), key.hash(seed=seed + 1).alias("b"))
    alphabet = np.frombuffer(b"abcdefghijklmnopqrstuvwxyz234567", dtype=np.uint8)
    digits = []
    for col in ("a", "b"):
        h = hashes.get_column(col).to_numpy().astype(np.uint64)
        digits += [(h >> np.uint64(5 * i)) & np.uint64(31) for i in range(13)]
    chars = alphabet[np.stack(digits, axis=1).astype(np.intp)]
    text = np.ascontiguousarray(chars).view("S26").ravel().astype("U26")
    return pl.Series("identity_line_item_id", text, dtype=pl.Utf8)


def _uuid(rng: np.random.Generator) -> str:
    return str(uuid.UUID(bytes=rng.bytes(16), version=4))
