"""The dbt project stays portable (interface §7): DuckDB-only SQL is written in the `default__` (or
`<adapter>__`) implementation of an adapter.dispatch macro, never inline in a model.

A scan, not a parser. Each model's .sql, with its Jinja comments and SQL comments removed, must match
none of the PATTERNS below (string literals are kept, so DuckDB SQL handed to a macro as an argument,
`utc_midnight("strptime(...)")`, is caught too). List and struct literals and subscripts are looked for
as brackets and braces outside Jinja tags and string literals. The same holds for the body of every
macro that is not an adapter implementation. Not covered, on purpose: interval literals
(`interval 1 hour`), type names (varchar, double), `is [not] distinct from` and greatest / least, which
the engines this project may move to spell alike.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MODELS = ROOT / "models"
MACROS = ROOT / "macros"


def _call(*names: str) -> str:
    """A call of one of the functions `names` (regular expressions), not a macro of a longer name
    (`inventory_unnest(`) nor a dbt cross-database macro (`dbt.split_part(`)."""
    return r"(?<![\w.])(?:" + "|".join(names) + r")\s*\("


# DuckDB's functions (and a few that only some engines share), by kind: regular expressions of names
FUNCTIONS: dict[str, tuple[tuple[str, ...], str]] = {
    "unnest / range / generate_series": (
        ("unnest", "range", "generate_series"),
        "unnest_rows, integer_rows, unnest_hour_starts",
    ),
    "DuckDB regular expression or split function": (
        (
            r"regexp_(?:extract(?:_all)?|matches|full_match|replace|split_to_\w+)",
            r"string_split(?:_regex)?",
            "str_split",
            "split_part",
        ),
        "regexp_contains, regexp_group, regexp_int, dbt.split_part",
    ),
    "DuckDB string function": (
        ("starts_with", "ends_with", "contains", "strlen", "prefix", "suffix"),
        "like, length(), or a macro",
    ),
    "DuckDB list function": (
        (r"list_\w+", r"array_(?!agg\b)\w+", "list", "flatten", "len"),
        "a macro in macros/lists",
    ),
    "DuckDB map or struct function": (
        (
            "map",
            r"map_(?:from_entries|extract|keys|values|entries|concat|contains\w*)",
            "element_at",
            "cardinality",
            r"struct_(?:pack|extract|insert)",
            "struct",
            "row",
        ),
        "map_value, string_map, as_string_map",
    ),
    "DuckDB JSON function": (
        (
            r"json_(?:extract\w*|valid|transform\w*|keys|array\w*|structure|group_\w+|object|merge_patch|type)",
            r"json_(?:contains|exists|value|serialize\w*|deserialize\w*|pretty|quote)",
            "json",
            "to_json",
            "from_json",
        ),
        "json_text, is_json, map_to_json",
    ),
    "DuckDB time function": (
        (
            "strptime",
            "try_strptime",
            "strftime",
            r"epoch\w*",
            "make_timestamp(?:tz)?",
            "time_bucket",
            "timezone",
            r"to_(?:seconds|minutes|hours|days|weeks|months|years|milliseconds|microseconds|timestamp)",
            "last_day",
            r"dayof\w+",
            "isodow",
            "isoyear",
            "weekday",
            "date_diff",
            "date_sub",
            "date_add",
            "datediff",
            "datesub",
        ),
        "the macros in macros/time (seconds_between, add_seconds, utc_trunc, utc_date, month_key, ...)",
    ),
    "DuckDB aggregate": (
        (
            "quantile",
            "quantile_cont",
            "quantile_disc",
            "median",
            "arg_max",
            "arg_min",
            "max_by",
            "min_by",
            "arbitrary",
            "any_value",
            "first",
            "last",
            "count_if",
            "bool_or",
            "bool_and",
            "histogram",
        ),
        "percentile_cont(...) within group, dbt.bool_or, or a macro",
    ),
    "try_cast": (("try_cast", "try"), "a macro (regexp_int, ...)"),
    "file read": ((r"read_\w+",), "a dbt source"),
}

# (what, pattern, what to write instead)
PATTERNS: list[tuple[str, str, str]] = [
    ("group by all", r"\bgroup\s+by\s+all\b", "name the grouped columns"),
    ("qualify", r"\bqualify\b", "filter a row_number() column in an outer select"),
    ("star modifier", r"\*\s*(?:exclude|replace|rename)\s*\(", "list the columns"),
    ("columns() expression", _call("columns"), "list the columns"),
    (":: cast", r"::", "cast(x as type)"),
    ("similar to", r"\bsimilar\s+to\b", "regexp_contains"),
    ("ilike", r"\bilike\b", "lower(x) like ..."),
    ("at time zone", r"\bat\s+time\s+zone\b", "the time macros (utc_date, utc_trunc, ...)"),
    ("lambda", r"\blambda\b", "a macro in macros/lists"),
    *((what, _call(*names), instead) for what, (names, instead) in FUNCTIONS.items()),
]

# list literals and subscripts (`[x]`, `xs[1]`, `varchar[]`) and struct literals (`{'k': v}`): looked
# for outside Jinja tags and string literals
BRACKETS = ("list or struct literal, or subscript", r"[\[\]{}]", "first_item, one_item_list, map_value, ...")

_JINJA_COMMENT = re.compile(r"\{#.*?#\}", re.DOTALL)
_SQL_COMMENT = re.compile(r"--[^\n]*|/\*.*?\*/", re.DOTALL)
_JINJA_TAG = re.compile(r"\{\{.*?\}\}|\{%.*?%\}", re.DOTALL)
_STRING = re.compile(r"'(?:[^']|'')*'|\"[^\"]*\"")


def _blank(match: re.Match[str]) -> str:
    """The match as spaces, keeping its line breaks so that line numbers still count."""
    return re.sub(r"[^\n]", " ", match.group(0))


def findings(sql: str) -> list[str]:
    """`line N: what (instead: ...): the line` for every DuckDB-only construct written inline."""
    code = _SQL_COMMENT.sub(_blank, _JINJA_COMMENT.sub(_blank, sql))
    bare = _STRING.sub(_blank, _JINJA_TAG.sub(_blank, code))
    found = []
    for (what, pattern, instead), text in [*((p, code) for p in PATTERNS), (BRACKETS, bare)]:
        for match in re.finditer(pattern, text, re.IGNORECASE):
            line = text.count("\n", 0, match.start()) + 1
            source = sql.splitlines()[line - 1].strip()
            found.append((line, f"line {line}: {what} (instead: {instead}): {source}"))
    return [message for _, message in sorted(found)]


def _relative(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


@pytest.mark.parametrize("model", sorted(MODELS.rglob("*.sql")), ids=_relative)
def test_models_keep_duckdb_sql_behind_dispatched_macros(model: Path):
    assert findings(model.read_text()) == [], f"{_relative(model)} writes engine-specific SQL inline"


_MACRO = re.compile(
    r"\{%-?\s*(macro|test)\s+(\w+)\s*\(.*?%\}(.*?)\{%-?\s*end(?:macro|test)\s*-?%\}", re.DOTALL
)


def _macros() -> list[tuple[str, str, str]]:
    """(file, name, body) of every macro and generic test."""
    return [
        (_relative(path), match.group(2), match.group(3))
        for path in sorted(MACROS.rglob("*.sql"))
        for match in _MACRO.finditer(path.read_text())
    ]


def test_only_adapter_implementations_of_macros_write_duckdb_sql():
    """A macro that is not an adapter's implementation (`default__x`, `duckdb__x`) is as portable as a
    model: it composes dispatched macros and plain SQL."""
    offending = {
        f"{file}: {name}": found
        for file, name, body in _macros()
        if "__" not in name and (found := findings(body))
    }
    assert offending == {}


def test_every_dispatched_macro_has_a_default_implementation():
    names = {name for _, name, _ in _macros()}
    dispatched = {
        dispatched_name
        for _, _, body in _macros()
        for dispatched_name in re.findall(r"adapter\.dispatch\(\s*'(\w+)'\s*,\s*'gpu_ledger'\s*\)", body)
    }
    assert dispatched, "the scan found no dispatched macro"
    assert sorted(n for n in dispatched if f"default__{n}" not in names) == []


@pytest.mark.parametrize(
    "line",
    [
        "select team, sum(cost) from x group by all",
        "select * from x qualify row_number() over (partition by a order by b) = 1",
        "select x.* exclude (a) from x",
        "select a::integer from x",
        "select unnest(hostnames) as host from x",
        "select nullif(regexp_extract(p, '([^/]+)$', 1), '') from x",
        "select regexp_matches(usage_type, 'SpotUsage') from x",
        "select split_part(a, '_', 1) from x",
        "select list_contains(hostnames, 'h') from x",
        "select hostnames[1] from x",
        "select [node_name] from x",
        "select cast([] as varchar[]) from x",
        "select map_from_entries([{'key': 'team', 'value': t}]) from x",
        "select list_filter(xs, lambda v: v is not null) from x",
        "select strftime(month_start, '%Y-%m') from x",
        """select {{ utc_midnight("strptime(invoice_month, '%Y%m')") }} from x""",
        "select epoch_us(a) from x",
        "select quantile_cont(u, 0.95) from x",
        "select arg_max(a, b) from x",
        "select bool_or(is_spot) from x",
        "select any_value(resource_name) over () from x",
        "select try_cast(a as integer) from x",
        "select json_extract_string(j, '$.a') from x",
        "select cast(x at time zone 'UTC' as date) from x",
        "select name ilike '%gpu%' from x",
        "select ns similar to '.*dev.*' from x",
        "select * from read_csv('/etc/passwd')",
    ],
)
def test_the_scan_finds_inline_duckdb_sql(line: str):
    assert findings(line), line


@pytest.mark.parametrize(
    "line",
    [
        "select {{ unnest_rows('t.items', 'item_rows', 'item') }} from t",
        "select {{ dbt.split_part('host', \"'.'\", 1) }}, {{ dbt.bool_or('is_spot') }} from x",
        "select {{ inventory_unnest('node_names', 'host') }}, {{ first_item('hostnames') }} from x",
        "select {{ regexp_group('usage_type', ':([a-z0-9-]+\\.[a-z0-9-]+)$') }} from x",
        "select {{ map_value('Tags', \"'team'\") }}, {{ map_to_json('Tags') }} from x",
        "select {{ json_text('j', '$.a') }}, {{ is_json('j') }}, {{ string_map([('team', 't')]) }} from x",
        "select percentile_cont(0.95) within group (order by u), first_value(a) over (order by b) from x",
        "select {{ has_prefix('consumer', \"'pod:'\") }}, {{ value_at_max('team', 'seconds') }} from x",
        "select {{ day_of_week('day') }}, {{ unnest_dates('a', 'b') }}, {{ utc_iso_text('t') }} from x",
        "select lower(name) like '%gpu%', length(name) from x where a is not distinct from b",
        "-- unnest(hostnames) in a comment, and group by all\nselect 1",
        "{#- strftime(ts, '%Y') in a Jinja comment -#}\nselect 1",
        "{%- set parts = ['a', 'b'] %}\nselect '[not a list]' as label",
    ],
)
def test_the_scan_lets_portable_sql_through(line: str):
    assert findings(line) == [], line
