"""Our own check of a FOCUS 1.3 or 1.4 cost and usage CSV against the column rules, until a validator that
bundles those versions' rules runs offline (focus-validator 2.2.1 bundles only 1.2's).

The rules come from `src/gpu_ledger/focus_columns.yml` (through `gpu_ledger.focus_spec`) and from the
specification's requirement keys where the file has none:

- presence: the header is the version's columns, alphabetical, then extension columns, each prefixed `x_`
  (FOCUS: custom columns carry a consistent prefix);
- nullability: a `not_null` column has a value in every row;
- allowed values: a column with a closed list holds one of its values (ServiceCategory: a FOCUS category;
  ServiceSubcategory: one of those its ServiceCategory allows);
- type and format: Decimal columns (`money`, `number`) hold finite decimal numbers, DateTime columns ISO 8601
  in UTC (`YYYY-MM-DDTHH:MM:SSZ`), JSON and key-value columns JSON objects, integers and booleans as such;
- ContractApplied (1.3/1.4, JsonObjectFormat): an object with an `Elements` array of objects, each with a
  string ContractId and ContractCommitmentId, ContractCommitmentAppliedCost not null when the quantity is,
  ContractCommitmentAppliedUnit null exactly when the quantity is, numbers as numbers, other keys `x_`;
  AllocatedMethodDetails: an object with an `Elements` array of objects.

`violations` returns one line per broken rule (the first 20 rows at most per rule), empty when the file
follows them all. `contract_commitment_violations` does the same for a FOCUS 1.4 Contract Commitment CSV, by
the rules `focus_columns.yml` lists for that dataset (`DATASETS`): presence (its columns, alphabetical, then
`x_` ones), nullability (`not_null`), allowed values, and the format of its types (Decimal, ISO 8601 UTC
date-time, JSON object).
"""

from __future__ import annotations

import csv
import json
import re
from collections import defaultdict
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from gpu_ledger.focus_spec import (
    COLUMNS_1_3,
    COLUMNS_1_4,
    DATASETS,
    SERVICE_SUBCATEGORIES,
    SPEC,
)

EXPECTED = {"1.3": COLUMNS_1_3, "1.4": COLUMNS_1_4}
TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")
CONTRACT_KEYS = (
    "ContractId",
    "ContractCommitmentId",
    "ContractCommitmentAppliedCost",
    "ContractCommitmentAppliedQuantity",
    "ContractCommitmentAppliedUnit",
)
SHOWN = 20
DATASET_KINDS = {"double": "number", "timestamptz": "timestamp", "json": "json", "varchar": "string"}
"""The kind whose format a supporting dataset's column follows, by the type it lands as."""
OBJECTS = ("AllocatedMethodDetails", "ContractApplied")
"""JSON columns whose object schema is checked as a whole (below), not only as a JSON object."""


def column_rules() -> dict[str, dict[str, Any]]:
    """Each column's rule (kind, not_null, allowed_values) from focus_columns.yml: the 1.2 columns and
    extensions, and those 1.3 added. A templated list (AllocatedMethodId's, GPU Ledger's own method id) is
    not a spec rule and is left out."""
    rules = {}
    for column in (*SPEC["columns"], *SPEC["focus_1_3"]):
        allowed = column.get("allowed_values")
        rules[column["name"]] = {
            "kind": column["kind"],
            "not_null": column.get("not_null") == "enforced",
            "allowed": tuple(allowed) if isinstance(allowed, list) else None,
        }
    return rules


def _decimal(value: str) -> bool:
    try:
        return Decimal(value).is_finite()
    except InvalidOperation:
        return False


def _json_object(value: str) -> dict | None:
    try:
        parsed = json.loads(value)
    except ValueError:
        return None
    return parsed if isinstance(parsed, dict) else None


def _format_problem(kind: str, value: str) -> str | None:
    if kind in ("money", "number") and not _decimal(value):
        return "not a decimal number"
    if kind == "timestamp" and not TIMESTAMP.match(value):
        return "not an ISO 8601 UTC date-time (YYYY-MM-DDTHH:MM:SSZ)"
    if kind in ("json", "tags") and _json_object(value) is None:
        return "not a JSON object"
    if kind == "integer" and not re.fullmatch(r"-?\d+", value):
        return "not an integer"
    if kind == "boolean" and value not in ("true", "false"):
        return "not a boolean"
    return None


def _elements(value: str) -> list | None:
    parsed = _json_object(value)
    elements = parsed.get("Elements") if parsed else None
    if not isinstance(elements, list) or not elements or not all(isinstance(e, dict) for e in elements):
        return None
    return elements


def _contract_applied_problem(value: str) -> str | None:
    elements = _elements(value)
    if elements is None:
        return "not an object with an Elements array of objects"
    for element in elements:
        missing = [key for key in CONTRACT_KEYS if key not in element]
        if missing:
            return f"an element lacks {', '.join(missing)}"
        if not all(isinstance(element[key], str) and element[key] for key in CONTRACT_KEYS[:2]):
            return "ContractId and ContractCommitmentId must be non-empty strings"
        cost, quantity, unit = (element[key] for key in CONTRACT_KEYS[2:])
        if cost is None and quantity is None:
            return "ContractCommitmentAppliedCost and ContractCommitmentAppliedQuantity are both null"
        if (unit is None) != (quantity is None):
            return "ContractCommitmentAppliedUnit must be null exactly when the quantity is"
        if any(
            v is not None and (isinstance(v, bool) or not isinstance(v, int | float))
            for v in (cost, quantity)
        ):
            return "an applied cost or quantity is not a number"
        if [key for key in element if key not in CONTRACT_KEYS and not key.startswith("x_")]:
            return "a custom key without the x_ prefix"
    return None


def _read(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    with path.open(newline="") as f:
        reader = csv.DictReader(f)
        return list(reader.fieldnames or []), list(reader)


def _presence(header: list[str], expected: list[str], title: str) -> list[str]:
    problems = []
    present = [name for name in header if not name.startswith("x_")]
    if present != expected:
        missing = sorted(set(expected) - set(present))
        extra = sorted(set(present) - set(expected))
        problems.append(f"columns: missing {missing}, not {title} nor x_ {extra}, or out of order")
    first_extension = next((i for i, name in enumerate(header) if name.startswith("x_")), len(header))
    if any(not name.startswith("x_") for name in header[first_extension:]):
        problems.append("columns: a FOCUS column after the x_ extensions")
    return problems


def _value_problems(name: str, rule: dict[str, Any], value: str) -> list[str]:
    """What a value breaks of its column's rule: nullability, allowed values, format."""
    if value == "":
        return [f"{name}: null in a not-null column"] if rule["not_null"] else []
    problems = []
    if rule["allowed"] is not None and value not in rule["allowed"]:
        problems.append(f"{name}: {value!r} is not one of {list(rule['allowed'])}")
    if name not in OBJECTS and (problem := _format_problem(rule["kind"], value)):
        problems.append(f"{name}: {problem}")
    return problems


def _report(broken: dict[str, list[int]]) -> list[str]:
    return [
        f"{rule} (lines {', '.join(map(str, lines[:SHOWN]))}{' ...' if len(lines) > SHOWN else ''}; "
        f"{len(lines)} rows)"
        for rule, lines in broken.items()
    ]


def violations(path: Path, version: str) -> list[str]:
    """The rules `path`, a FOCUS `version` (1.3 or 1.4) cost and usage CSV, breaks: one line each."""
    rules = column_rules()
    header, rows = _read(path)
    problems = _presence(header, list(EXPECTED[version]), f"FOCUS {version}")
    broken: dict[str, list[int]] = defaultdict(list)
    for line, row in enumerate(rows, start=2):
        for name in header:
            if (rule := rules.get(name)) is None:  # an extension beyond focus_columns.yml: a string
                continue
            for problem in _value_problems(name, rule, row[name]):
                broken[problem].append(line)
        category, subcategory = row.get("ServiceCategory", ""), row.get("ServiceSubcategory", "")
        if category and category not in SERVICE_SUBCATEGORIES:
            broken[f"ServiceCategory: {category!r} is not a FOCUS service category"].append(line)
        elif subcategory and subcategory not in SERVICE_SUBCATEGORIES.get(category, ()):
            broken[f"ServiceSubcategory: {subcategory!r} is not allowed under {category!r}"].append(line)
        if row.get("ContractApplied") and (problem := _contract_applied_problem(row["ContractApplied"])):
            broken[f"ContractApplied: {problem}"].append(line)
        if row.get("AllocatedMethodDetails") and _elements(row["AllocatedMethodDetails"]) is None:
            broken["AllocatedMethodDetails: not an object with an Elements array of objects"].append(line)
    return problems + _report(broken)


def contract_commitment_rules() -> dict[str, dict[str, Any]]:
    """Each FOCUS 1.4 Contract Commitment column's rule (kind, not_null, allowed_values), from
    focus_columns.yml."""
    return {
        column["name"]: {
            "kind": DATASET_KINDS[column["landed"]],
            "not_null": bool(column.get("not_null")),
            "allowed": tuple(column["allowed_values"]) if column.get("allowed_values") else None,
        }
        for column in DATASETS["contract_commitment"]
    }


def contract_commitment_violations(path: Path) -> list[str]:
    """The rules `path`, a FOCUS 1.4 Contract Commitment CSV, breaks: one line each."""
    rules = contract_commitment_rules()
    header, rows = _read(path)
    problems = _presence(header, sorted(rules), "FOCUS 1.4 Contract Commitment")
    broken: dict[str, list[int]] = defaultdict(list)
    for line, row in enumerate(rows, start=2):
        for name in header:
            if (rule := rules.get(name)) is not None:
                for problem in _value_problems(name, rule, row[name]):
                    broken[problem].append(line)
    return problems + _report(broken)
