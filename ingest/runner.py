"""`gpu-ledger ingest`: expand paths, land each file in its own transaction, record the outcome.

The promises of CONTRACT §3 live here:
- idempotent: a file already loaded with the same content (or already found superseded) is skipped;
  a changed file replaces its earlier load;
- restatement-aware: a format may give a file a scope (provider, account, billing period) and a
  version; the newest version of a scope replaces the others, an older one arriving late is
  recorded as superseded and lands nothing;
- all or nothing per file: the load, the replacement and the manifest row commit together;
- bad input: an `IngestError` naming file, line, column and expectation; the batch goes on.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from tqdm import tqdm

from ingest import registry
from ingest.base import Format, LoadContext, Options
from ingest.errors import IngestError
from ingest.sniff import Sniff
from ingest.store import RawStore


@dataclass
class Outcome:
    path: Path
    status: str  # loaded | unchanged | superseded | rejected
    format: str | None = None
    rows: int = 0
    error: str | None = None
    replaced: list[str] = field(default_factory=list)


def expand(paths: Iterable[Path]) -> Iterator[Path]:
    """Files under the given paths, folders recursed in name order, hidden files skipped."""
    for path in paths:
        if path.is_dir():
            for child in sorted(path.rglob("*")):
                if child.is_file() and not any(
                    part.startswith(".") for part in child.relative_to(path).parts
                ):
                    yield child
        elif path.exists():
            yield path
        else:
            raise FileNotFoundError(f"{path}: no such file or folder")


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def ingest(
    paths: Iterable[Path],
    store: RawStore,
    *,
    format_name: str | None = None,
    options: Options | None = None,
    progress: bool = True,
) -> list[Outcome]:
    """Land every file under `paths`; never raises for a bad file, reports it in its Outcome."""
    forced = registry.by_name(format_name) if format_name else None
    files = list(expand(paths))
    outcomes = []
    total = sum(f.stat().st_size for f in files)
    with tqdm(total=total, unit="B", unit_scale=True, desc="ingest", disable=not progress) as bar:
        for path in files:
            outcomes.append(ingest_file(path, store, forced, options or Options()))
            bar.update(path.stat().st_size)
    return outcomes


def ingest_file(path: Path, store: RawStore, forced: Format | None, options: Options) -> Outcome:
    size = path.stat().st_size
    digest = sha256_of(path)
    record = dict(load_id=uuid.uuid4().hex, path=str(path.resolve()), size_bytes=size, sha256=digest)
    if store.settled(record["path"], digest):
        return Outcome(path, "unchanged")
    fmt = forced
    con = store.con
    con.begin()
    try:
        if size == 0:
            raise IngestError(path, "the file is empty", expected="at least a header or one record")
        sniff = Sniff.of(path)
        fmt = fmt or registry.detect(sniff)
        ctx = LoadContext(path=path, sniff=sniff, store=store, load_id=record["load_id"], options=options)
        fmt.load(ctx)
        replaced = [old for old in store.loads(path=record["path"])]
        if ctx.scope is not None:
            rivals = [old for old in store.loads(scope=ctx.scope) if old["path"] != record["path"]]
            if any((old["version"] or "") > (ctx.version or "") for old in rivals):
                con.rollback()
                con.begin()
                store.record(
                    **record,
                    format=fmt.name,
                    rows=0,
                    tables=[],
                    scope=ctx.scope,
                    version=ctx.version,
                    status="superseded",
                    error="a newer delivery of this scope is already loaded",
                )
                con.commit()
                return Outcome(path, "superseded", fmt.name)
            replaced += rivals
        for old in replaced:
            store.delete_load(old["load_id"], list(old["tables"] or []))
            store.set_status(old["load_id"], "replaced")
        store.record(
            **record,
            format=fmt.name,
            rows=ctx.rows,
            tables=sorted(ctx.tables),
            scope=ctx.scope,
            version=ctx.version,
            status="loaded",
        )
        con.commit()
        return Outcome(path, "loaded", fmt.name, ctx.rows, replaced=[old["path"] for old in replaced])
    except Exception as exc:
        con.rollback()
        error = exc if isinstance(exc, IngestError) else IngestError(path, f"could not be landed: {exc}")
        con.begin()
        store.record(
            **record, format=fmt.name if fmt else None, rows=0, tables=[], status="rejected", error=str(error)
        )
        con.commit()
        return Outcome(path, "rejected", fmt.name if fmt else None, error=str(error))
