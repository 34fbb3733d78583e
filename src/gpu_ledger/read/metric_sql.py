"""The SQL text the semantic layer (`gpu_ledger.read.metrics`) writes its queries with: names quoted and
canonical, a model's columns qualified by its alias, a derived metric's division safe from zero."""

from __future__ import annotations

import re


def canonical(name: str) -> str:
    name = name.strip()
    return "metric_time__day" if name == "metric_time" else name


def quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def order_term(name: str) -> str:
    descending = name.startswith("-")
    return quote(canonical(name.lstrip("-"))) + (" desc" if descending else "")


def is_column(expr: str) -> bool:
    return re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", expr) is not None


SQL_WORDS = frozenset(
    [
        "case",
        "when",
        "then",
        "else",
        "end",
        "and",
        "or",
        "not",
        "is",
        "null",
        "true",
        "false",
        "in",
        "as",
        "cast",
        "double",
        "integer",
        "varchar",
        "date",
        "distinct",
        "between",
        "like",
        "coalesce",
        "nullif",
    ]
)


def qualify(expr: str, alias: str) -> str:
    """Prefix the bare column names of a model's SQL expression with the model's alias."""
    if is_column(expr):
        return f"{alias}.{expr}"
    out, pos = [], 0
    for match in re.finditer(r"'[^']*'|\b[A-Za-z_][A-Za-z0-9_]*\b(?!\s*\()", expr):
        out.append(expr[pos : match.start()])
        token = match.group(0)
        is_name = not token.startswith("'") and token.lower() not in SQL_WORDS and not token.isdigit()
        out.append(f"{alias}.{token}" if is_name else token)
        pos = match.end()
    out.append(expr[pos:])
    return "".join(out)


def safe_division(expr: str) -> str:
    """A derived metric's division by a metric that is zero is null: `a / b` becomes `a / nullif(b, 0)`."""
    return re.sub(r"/\s*([A-Za-z_][A-Za-z0-9_]*)\b", r"/ nullif(\1, 0)", expr)
