"""The FOCUS columns as the specification names and types them, read from `focus_columns.yml`.

That file is the one list of FOCUS columns: this module, the dbt macro `focus_columns()`, the columns' doc
blocks and the FOCUS columns in the models' YAML all come from it (`python -m gpu_ledger.focus_codegen`
writes the dbt ones; tests/test_focus_codegen.py fails while they differ). Everything that writes or reads
FOCUS in Python uses the names below: the simulator's Azure export, the ingest loaders and the FOCUS export
of `fct_billing_focus`.
"""

from __future__ import annotations

from typing import Any

import yaml

from gpu_ledger.project import FOCUS_COLUMNS

SPEC_FILE = FOCUS_COLUMNS
# libyaml's loader: read on every command's start, 50 ms in pure Python, 7 ms this way
SPEC: dict[str, Any] = yaml.load(SPEC_FILE.read_text(), Loader=yaml.CSafeLoader)

WAREHOUSE_COLUMNS: tuple[dict[str, Any], ...] = tuple(SPEC["columns"])
"""Every column of a normalised billing row, FOCUS 1.2 then the x_ extensions, each with its kind,
description and tests (see the file's header)."""

_FOCUS = tuple(c for c in WAREHOUSE_COLUMNS if not c["name"].startswith("x_"))

# date/time columns (ISO 8601, UTC)
TIMESTAMPS = tuple(c["name"] for c in _FOCUS if c["kind"] == "timestamp")
# decimal columns: costs, prices and quantities
NUMBERS = tuple(c["name"] for c in _FOCUS if c["kind"] in ("money", "number"))
# a JSON object of key-value pairs
KEY_VALUES = tuple(c["name"] for c in _FOCUS if c["kind"] == "tags")
# everything else is a string
STRINGS = tuple(c["name"] for c in _FOCUS if c["kind"] in ("string", "json"))

COLUMNS = tuple(sorted(c["name"] for c in _FOCUS))
"""All 57 columns in the order the specification lists them (alphabetical)."""

ALLOWED_VALUES = {c["name"]: tuple(c["allowed_values"]) for c in _FOCUS if "allowed_values" in c}
"""The closed lists of FOCUS 1.2 columns (the values `fct_billing_focus` accepts)."""

SPELLINGS = {
    "ChargeFrequency": {"usage-based": "Usage-Based", "usage_based": "Usage-Based", "one_time": "One-Time"},
    "PricingCategory": {
        "on-demand": "Standard",
        "ondemand": "Standard",
        "spot": "Dynamic",
        "commitment-based": "Committed",
    },
}
"""Spellings of those values met in real exports and pre-1.0 drafts, and the value each means."""


def _landed_kind(sql_type: str) -> str:
    return "map" if sql_type.startswith("map") else sql_type


ADDED_IN_1_3 = {c["name"]: _landed_kind(c["landed"]) for c in SPEC["focus_1_3"]}
"""Cost and Usage columns FOCUS 1.3 added (split-cost allocation, contract commitments applied, and the
service/host provider names that replace ProviderName and PublisherName), with the kind each lands as."""

DATASETS: dict[str, tuple[dict[str, Any], ...]] = {
    key: tuple(SPEC[key]) for key in ("contract_commitment", "billing_period", "invoice_detail")
}
"""FOCUS's supporting datasets, each column with its landed type, `not_null`, `allowed_values`, `since`
(the version that added it) and `conditional`: Contract Commitment (1.3, grown by 1.4: the terms of each
commitment, which charges name in their ContractApplied), Billing Period and Invoice Detail (1.4)."""

ADDED_IN_1_4 = ("CommitmentProgramEligibilityDetails", "InvoiceDetailId")
"""Cost and Usage columns FOCUS 1.4 added; a file naming one is a 1.4 file. They land as text, as the
export's other columns the warehouse does not read."""

SERVICE_SUBCATEGORIES: dict[str, tuple[str, ...]] = {
    category: tuple(children) for category, children in SPEC["service_subcategories"].items()
}
"""FOCUS 1.2 ServiceCategory values and the ServiceSubcategory values allowed under each."""

COLUMNS_1_3 = tuple(sorted((*COLUMNS, *ADDED_IN_1_3)))
"""The FOCUS columns of the 1.3 export (fct_billing_focus_allocated), alphabetical as the specification lists
them: the 1.2 columns (ProviderName and PublisherName, deprecated by 1.3, still present) and those 1.3
added."""

COLUMNS_1_4 = tuple(sorted({*COLUMNS_1_3, *ADDED_IN_1_4} - {"ProviderName", "PublisherName"}))
"""The columns of the FOCUS 1.4 Cost and Usage dataset, alphabetical: 1.3's without ProviderName and
PublisherName (which 1.4 removes: ServiceProviderName and HostProviderName carry the provider), and the two
1.4 added."""

SUMMABLE = tuple(c["name"] for c in WAREHOUSE_COLUMNS if c.get("summable"))
"""The metrics a split-cost allocation divides: the split rows of a charge sum to it in each of these."""

AI_EXTENSIONS = ("x_ModelId", "x_InputTokens", "x_OutputTokens")
"""The extension columns the 1.3 and 1.4 exports (fct_billing_focus_allocated) write after the others: the
model a serving pod's allocated charge served and its input and output tokens, named after the FOCUS 1.5
working draft (SkuPriceDetails' ModelId; ConsumedQuantity in Tokens by TokenDirection Input / Output), so
that moving to 1.5 is a rename."""
