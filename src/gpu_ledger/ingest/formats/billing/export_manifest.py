"""Manifests that billing exports write beside their data, landed into `raw.billing_export_manifests`.

They are not billing data, but a folder of exports always holds them, and rejecting them would make every
`gpu-ledger ingest <export folder>` end with an error. Landing them instead records each delivery (which
execution, when, for which period, how many rows it announced), which is what one needs to see that a
month was restated or a delivery is missing. The data loaders read the same manifests for versions.

Recognised by their keys: AWS CUR 2.0 (`exportArn`, `exportTime`), legacy CUR (`assemblyId`,
`reportKeys`), Azure Cost Management exports (`manifestVersion`, `exportConfig`, `runInfo`).
One row per manifest: provider, kind, export_name, execution_id, export_time, billing_period_start,
billing_period_end (TIMESTAMPTZ), row_count, data_files (VARCHAR[]), manifest (the document as JSON
text), `_source_file`, `_source_row` (1). No restatement scope: every delivery is history worth keeping.
"""

from __future__ import annotations

import json
import re

import polars as pl

from gpu_ledger.ingest.base import Format, LoadContext
from gpu_ledger.ingest.formats.billing import common
from gpu_ledger.ingest.sniff import Sniff, read_bytes

TABLE = "billing_export_manifests"


def _kind(text: str) -> str | None:
    head = text[:16384]
    if '"exportArn"' in head and '"exportTime"' in head:
        return "aws_cur2"
    if '"assemblyId"' in head and '"reportKeys"' in head:
        return "aws_cur_legacy"
    if '"manifestVersion"' in head and '"exportConfig"' in head and '"runInfo"' in head:
        return "azure_export"
    return None


def detect(s: Sniff) -> bool:
    return s.text.lstrip().startswith("{") and _kind(s.text) is not None


def _time(value: object):  # noqa: ANN202  (datetime | None)
    return common.parse_time(str(value)) if value else None


def load(ctx: LoadContext) -> None:
    try:
        doc = json.loads(read_bytes(ctx.path).decode("utf-8-sig"))
    except ValueError as exc:
        raise ctx.error(f"not valid JSON: {exc}", expected="an export manifest (JSON object)") from exc
    kind = _kind(json.dumps(doc)) if isinstance(doc, dict) else None
    if kind is None:
        raise ctx.error("not an export manifest", expected="a CUR or Azure export manifest object")
    if kind == "azure_export":
        config, run = doc.get("exportConfig") or {}, doc.get("runInfo") or {}
        row = dict(
            provider="azure",
            export_name=config.get("exportName"),
            execution_id=run.get("runId"),
            export_time=_time(run.get("submittedTime")),
            billing_period_start=_time(run.get("startDate")),
            billing_period_end=_time(run.get("endDate")),
            row_count=doc.get("dataRowCount"),
            data_files=[str(b.get("blobName")) for b in doc.get("blobs") or [] if isinstance(b, dict)],
        )
    else:
        period = doc.get("billingPeriod") or {}
        legacy = kind == "aws_cur_legacy"
        row = dict(
            provider="aws",
            export_name=doc.get("reportName") if legacy else doc.get("exportName"),
            execution_id=doc.get("assemblyId") if legacy else doc.get("executionId"),
            export_time=None if legacy else _time(doc.get("exportTime")),
            billing_period_start=_time(period.get("start")),
            billing_period_end=_time(period.get("end")),
            row_count=doc.get("rowCount"),
            data_files=[str(k) for k in (doc.get("reportKeys") if legacy else doc.get("dataFiles")) or []],
        )
    if row["export_name"] is None and isinstance(doc.get("exportArn"), str):
        row["export_name"] = re.sub(r".*export/", "", doc["exportArn"])
    frame = pl.DataFrame(
        [
            {
                "provider": row["provider"],
                "kind": kind,
                **{k: row[k] for k in ("export_name", "execution_id")},
                **{k: row[k] for k in ("export_time", "billing_period_start", "billing_period_end")},
                "row_count": row["row_count"] if isinstance(row["row_count"], int) else None,
                "data_files": row["data_files"],
                "manifest": json.dumps(doc),
                "_source_file": str(ctx.path.resolve()),
                "_source_row": 1,
            }
        ],
        schema={
            "provider": pl.Utf8,
            "kind": pl.Utf8,
            "export_name": pl.Utf8,
            "execution_id": pl.Utf8,
            "export_time": pl.Datetime("us", "UTC"),
            "billing_period_start": pl.Datetime("us", "UTC"),
            "billing_period_end": pl.Datetime("us", "UTC"),
            "row_count": pl.Int64,
            "data_files": pl.List(pl.Utf8),
            "manifest": pl.Utf8,
            "_source_file": pl.Utf8,
            "_source_row": pl.Int64,
        },
    )
    ctx.land(TABLE, frame)


FORMAT = Format(
    name="billing_export_manifest",
    group="billing",
    description="AWS CUR / Data Exports and Azure Cost Management export manifests (deliveries, not costs)",
    detect=detect,
    load=load,
)
