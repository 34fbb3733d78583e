"""SQL a user types (`gpu-ledger sql` and the app's SQL page): read-only statements, or a refusal.

The app's SQL page runs one statement at a time (`run`); `gpu-ledger sql` runs a script of several,
showing each one's result (`run_each`), and refuses the whole script, before running any of it,
when any statement in it is not a read.

Two walls, one code path for both places. First the text is split and classified by DuckDB's own
parser, the one that will run it, so no trick of comments, string literals or statement separators
reads differently to the check than to the engine; only reads pass (SELECT and everything that parses
as one: WITH, FROM, VALUES, TABLE, DESCRIBE, SHOW, SUMMARIZE; EXPLAIN of such a query; the PRAGMAs
that list tables and columns). Then the statement object the parser returned, not the text again,
runs on the shared read-only snapshot (`gpu_ledger.read.warehouse`): file access off, configuration
locked, over a private copy, so a statement wrongly let through still cannot touch the published file.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import duckdb
import polars as pl

from gpu_ledger.read.warehouse import snapshot

PRAGMA_READS = frozenset({"table_info", "show", "show_tables", "show_tables_expanded"})
ASK = "Type a SELECT query over the marts, e.g. select * from marts.dim_gpus limit 10."


class RejectedQuery(ValueError):
    """A query that is refused or fails, with a reason a user can act on."""


@dataclass
class Result:
    statement: str  # the statement's text, as the parser split it
    frame: pl.DataFrame
    more: bool  # rows beyond the limit were left out


def check_all(sql: str) -> list[duckdb.Statement]:
    """Every statement in `sql`, each a read; else RejectedQuery saying why none will run."""
    statements = _parse(sql)
    if not statements:
        raise RejectedQuery(ASK)
    for statement in statements:
        _refuse_unless_read(statement)
    return statements


def check(sql: str) -> duckdb.Statement:
    """The one read-only statement in `sql`, or RejectedQuery saying why it will not run."""
    statements = check_all(sql)
    if len(statements) > 1:
        raise RejectedQuery("Only one statement at a time: remove the ';' between statements.")
    return statements[0]


def run(warehouse: Path, sql: str, *, limit: int | None = None) -> tuple[pl.DataFrame, bool]:
    """Check and run a user's query; returns at most `limit` rows and whether there were more."""
    return _run(warehouse, check(sql), limit)


def run_each(warehouse: Path, sql: str, *, limit: int | None = None) -> Iterator[Result]:
    """Check every statement of a script, then run them in turn, yielding each one's result as it
    comes (at most `limit` rows each); a statement that fails raises RejectedQuery at its turn."""
    statements = check_all(sql)  # before the first runs: a script with a write in it runs nothing
    return (Result(s.query.strip(), *_run(warehouse, s, limit)) for s in statements)


def _run(warehouse: Path, statement: duckdb.Statement, limit: int | None) -> tuple[pl.DataFrame, bool]:
    try:
        with snapshot(warehouse).cursor() as cur:
            relation = cur.sql(_without_tail(statement))
            frame = relation.pl() if limit is None else relation.limit(limit + 1).pl()
    except duckdb.Error as exc:
        raise RejectedQuery(_explain(exc)) from exc
    if limit is None:
        return frame, False
    return frame.head(limit), frame.height > limit


def _without_tail(statement: duckdb.Statement) -> duckdb.Statement:
    """The statement without the `;` and comments after its last word (`select 1; -- note`): the
    relation that runs it is wrapped in a larger query, where they would cut it short."""
    text = statement.query
    tokens = duckdb.tokenize(text)
    ends = [start for start, _ in tokens[1:]] + [len(text)]
    cut = len(text)
    for (start, kind), end in reversed(list(zip(tokens, ends, strict=True))):
        if kind != duckdb.token_type.comment and text[start:end].strip() != ";":
            break
        cut = start
    if cut == len(text):
        return statement
    return duckdb.extract_statements(text[:cut])[0]


def _parse(sql: str) -> list[duckdb.Statement]:
    try:
        return duckdb.extract_statements(sql)
    except duckdb.Error as exc:
        raise RejectedQuery(str(exc).strip()) from exc


def _refuse_unless_read(statement: duckdb.Statement) -> None:
    kind = statement.type
    if kind == duckdb.StatementType.SELECT:
        return
    words = _leading_words(statement.query)
    if kind == duckdb.StatementType.EXPLAIN:
        _refuse_unless_explained_read(statement.query, words)
        return
    if kind == duckdb.StatementType.PRAGMA and len(words) > 1 and words[1][1] in PRAGMA_READS:
        return
    raise RejectedQuery(
        f"`{words[0][1].upper() if words else kind.name}` is not allowed here: this box is read-only and "
        f"cannot write, attach databases, change settings or read files. {ASK}"
    )


def _refuse_unless_explained_read(text: str, words: list[tuple[int, str]]) -> None:
    """EXPLAIN only plans its query, but EXPLAIN ANALYZE runs it: the query itself must be a read."""
    rest = words[2:] if len(words) > 1 and words[1][1] == "analyze" else words[1:]
    if not rest:
        raise RejectedQuery(ASK)
    inner = _parse(text[rest[0][0] :])
    if len(inner) != 1 or inner[0].type != duckdb.StatementType.SELECT:
        raise RejectedQuery(f"Only a read can be explained here. {ASK}")


def _leading_words(text: str) -> list[tuple[int, str]]:
    """(offset, lower-case text) of the statement's first three tokens, comments skipped."""
    tokens = duckdb.tokenize(text)
    ends = [start for start, _ in tokens[1:]] + [len(text)]
    words = [
        (start, text[start:end].strip().lower())
        for (start, kind), end in zip(tokens, ends, strict=True)
        if kind != duckdb.token_type.comment
    ]
    return words[:3]


def _explain(exc: duckdb.Error) -> str:
    message = str(exc).strip()
    lower = message.lower()
    if "read-only" in lower or "read only" in lower:
        return "The warehouse is opened read-only: this query would write. " + message
    if "external access" in lower or "disabled by configuration" in lower:
        return "Reading or writing files and attaching databases is disabled here. " + message
    return message
