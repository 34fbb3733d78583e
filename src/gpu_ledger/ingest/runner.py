"""`gpu-ledger ingest`: expand paths, land each file in its own transaction, record the outcome.

The promises of interface §3 live here:
- idempotent by content: a file whose content is already landed (or was found superseded) is skipped
  wherever it now lies, and adds no manifest row; a changed file replaces its earlier load at that
  path. Snapshots whose content carries no time (kubectl, dcgm-exporter scrapes) are identified by
  content and observation time together (`Format.observed_at`, `RawStore.settled`);
- restatement-aware: a format may give a file a scope (provider, account, billing period) and a
  version; the newest version of a scope replaces the others, an older one arriving late is
  recorded as superseded and lands nothing;
- all or nothing per file: the load, the replacement and the manifest row commit together (the
  load's Parquet files count from that commit: `ingest.store`). Files of an independent format
  (telemetry, Kubernetes snapshots) are parsed and written ahead of their turn, side by side on
  every core, but each still commits on its own, in the order given, so the manifest ends as a
  one-by-one ingest leaves it. Small files are handed to the lanes in batches; a format that can
  (`Format.load_many`) lands a batch's files with shared statements, and any file of it with a
  problem is loaded again alone, so its rejection reads as it would have;
- bad input: an `IngestError` naming file, line, column and expectation; the batch goes on. That
  includes what is not a readable file at all: a file or folder this user may not read, a dangling
  link, a loop of links, a socket or device, a file that vanished. A rejection repeated on unchanged
  input is reported again but not recorded twice;
- streams (`-` for standard input, `/dev/fd/N` from `<(...)`, named pipes) are read once into a
  temporary file, since detection, hashing and loading each read the file.
"""

from __future__ import annotations

import gzip
import logging
import os
import sys
import tempfile
import threading
import uuid
import zlib
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from tqdm import tqdm

from gpu_ledger.ingest import registry
from gpu_ledger.ingest.base import Format, LoadContext, Options
from gpu_ledger.ingest.errors import IngestError, path_text
from gpu_ledger.ingest.sniff import CORRUPT_GZIP, Sniff
from gpu_ledger.ingest.sources import Source, expand, sha256_of, size, spool
from gpu_ledger.ingest.store import UNREADABLE, RawStore

READABLE = "a file or folder this user may read"

logger = logging.getLogger(__name__)


@dataclass
class Outcome:
    path: Path
    status: str  # loaded | unchanged | superseded | rejected
    format: str | None = None
    rows: int = 0
    error: str | None = None
    replaced: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what the format assumed (LoadContext.note)


def ingest(
    paths: Iterable[Path],
    store: RawStore,
    *,
    format_name: str | None = None,
    options: Options | None = None,
    progress: bool = True,
) -> list[Outcome]:
    """Land every file under `paths`; never raises for a bad file, reports it in its Outcome.

    Files are settled one by one in the order given, each in its own transaction, so the manifest
    ends as a one-by-one ingest leaves it. Files of an independent format (`Format.independent`:
    telemetry, the bulk, and Kubernetes snapshots) are parsed and written ahead, side by side on
    every core, each on a DuckDB connection of its own; what they wrote counts only when their turn
    comes and it commits.
    """
    forced = registry.by_name(format_name) if format_name else None
    options = options or Options()
    sources = list(expand(paths))
    outcomes = []
    with (
        tempfile.TemporaryDirectory(prefix="gpu-ledger-streams-") as spooled,
        ThreadPoolExecutor(WORKERS, thread_name_prefix="ingest") as pool,
    ):
        sources = [spool(s, Path(spooled)) if s.stream and not s.problem else s for s in sources]
        total = sum(size(s) for s in sources)
        lanes = _Lanes(store)
        if len(sources) > 1:
            _one_thread_per_statement(store)
        ahead: deque[Future[list[Prepared]]] = deque()
        with tqdm(total=total, unit="B", unit_scale=True, desc="ingest", disable=not progress) as bar:

            def settle_next() -> None:
                for prepared in ahead.popleft().result():
                    outcomes.append(_settle(store, prepared, options))
                    bar.update(size(prepared.source))
                    _log(outcomes[-1])

            try:
                for batch in _batches(sources):
                    ahead.append(pool.submit(lanes.prepare, batch, forced, options))
                    if len(ahead) == LOOKAHEAD:
                        settle_next()
                while ahead:
                    settle_next()
            finally:
                for future in ahead:  # interrupted: what was loaded ahead never counts
                    future.cancel()
                pool.shutdown(wait=True)
                lanes.close()
                store.con.sql("reset threads")
    return outcomes


def _log(outcome: Outcome) -> None:
    if outcome.status == "rejected":
        logger.info("rejected %s", outcome.error)
        return
    kind = f" as {outcome.format}" if outcome.format else ""
    rows = f", {outcome.rows:,} rows" if outcome.status == "loaded" else ""
    logger.info("%s %s%s%s", outcome.status, outcome.path, kind, rows)
    for path in outcome.replaced:
        logger.info("  replacing the earlier load of %s", path)


# batches parsed and written ahead of their turn: one per core, and as many again waiting to settle
WORKERS = max(1, min(4, os.cpu_count() or 1))
LOOKAHEAD = 2 * WORKERS
# a batch: consecutive files, at most this many and this many bytes together (a larger file goes alone)
BATCH_FILES = 16
BATCH_BYTES = 8 * 2**20


def _batches(sources: list[Source]) -> Iterator[list[Source]]:
    """The sources in order, in runs of small files (a lane takes a run at a time)."""
    batch: list[Source] = []
    held = 0
    for source in sources:
        n = size(source)
        if batch and (len(batch) == BATCH_FILES or held + n > BATCH_BYTES):
            yield batch
            batch, held = [], 0
        batch.append(source)
        held += n
    if batch:
        yield batch


def _one_thread_per_statement(store: RawStore) -> None:
    """DuckDB runs each statement on the thread that issued it, with no helpers of its own.

    A batch's parallelism is across files: the lanes land files side by side, one per core. Statements
    that also fanned out over every core would leave more threads than cores contending for them
    (telemetry at 100 GPUs x 30 days landed about a fifth slower that way). A file loaded in its turn
    rather than ahead, alone on the store's connection, gets every core back (`_every_core`).
    """
    store.con.sql("set threads = 1")


@dataclass
class Prepared:
    """A file identified (and, for an independent format, landed in pending files) ahead of its turn."""

    source: Source
    size: int = 0
    digest: str = UNREADABLE
    fmt: Format | None = None
    sniff: Sniff | None = None
    observed: datetime | None = None
    load_id: str = ""
    ctx: LoadContext | None = None  # set when the file was loaded ahead
    error: Exception | None = None  # why it cannot land
    settled: bool = False  # its content is landed already


class _Lanes:
    """One DuckDB connection per worker thread, for the files loaded ahead."""

    def __init__(self, store: RawStore) -> None:
        self.store = store
        self.local = threading.local()
        self.opened: list[RawStore] = []
        self.lock = threading.Lock()

    def lane(self) -> RawStore:
        lane = getattr(self.local, "lane", None)
        if lane is None:
            with self.lock:
                lane = self.local.lane = self.store.lane()
                self.opened.append(lane)
        return lane

    def close(self) -> None:
        for lane in self.opened:
            lane.con.close()

    def prepare(self, sources: list[Source], forced: Format | None, options: Options) -> list[Prepared]:
        """Identify the files; load those of an independent format whose content is new into pending
        files: several of one format together where it can (`Format.load_many`), the others alone."""
        batch = [_identify(source, forced, options) for source in sources]
        lane = self.lane()
        ready: dict[Format, list[Prepared]] = {}
        for prepared in batch:
            if prepared.error is not None:
                continue
            prepared.settled = lane.settled(prepared.digest, prepared.observed)
            if not prepared.settled and prepared.fmt.independent:
                ready.setdefault(prepared.fmt, []).append(prepared)
        for fmt, group in ready.items():
            alone = _load_many(lane, fmt, group, options) if fmt.load_many and len(group) > 1 else group
            for prepared in alone:
                try:
                    prepared.ctx = _load(lane, prepared, options)
                except Exception as exc:
                    lane.discard_load(prepared.load_id)
                    prepared.error = exc
        return batch


def _identify(source: Source, forced: Format | None, options: Options) -> Prepared:
    prepared = Prepared(source, load_id=uuid.uuid4().hex)
    if source.problem or source.local is None:
        prepared.error = IngestError(source.path, source.problem or "not a file", expected=READABLE)
        return prepared
    path = source.local
    try:
        prepared.size = path.stat().st_size
        prepared.digest = sha256_of(path)
    except OSError as exc:
        prepared.error = IngestError(source.path, f"cannot be read: {exc.strerror or exc}", expected=READABLE)
        return prepared
    if path_text(path) != str(path):
        prepared.error = _unnamed(source)
        return prepared
    prepared.fmt = forced
    try:
        if prepared.size == 0:
            raise IngestError(path, "the file is empty", expected="at least a header or one record")
        prepared.sniff = Sniff.of(path)
        prepared.fmt = prepared.fmt or registry.detect(prepared.sniff)
        if prepared.fmt.observed_at:
            prepared.observed = prepared.fmt.observed_at(path, options)
    except Exception as exc:
        prepared.error = exc
    return prepared


def _unnamed(source: Source) -> IngestError:
    """A file DuckDB cannot open: it takes a file's name as UTF-8 text, and this str of it is not its
    name in UTF-8 (a byte that is not UTF-8, or a process that decodes names otherwise)."""
    try:
        os.fsencode(source.local).decode()
    except UnicodeDecodeError:
        return IngestError(
            source.path, "its name is not UTF-8: rename the file", expected="a UTF-8 file name"
        )
    return IngestError(
        source.path,
        f"this process reads file names as {sys.getfilesystemencoding()}, not UTF-8: "
        "run it under a UTF-8 locale, e.g. LANG=C.UTF-8",
        expected="UTF-8 file names",
    )


def _context(store: RawStore, prepared: Prepared, options: Options) -> LoadContext:
    assert prepared.source.local is not None and prepared.sniff is not None
    return LoadContext(
        path=prepared.source.local,
        sniff=prepared.sniff,
        store=store,
        load_id=prepared.load_id,
        options=options,
    )


def _load(store: RawStore, prepared: Prepared, options: Options) -> LoadContext:
    assert prepared.fmt is not None
    ctx = _context(store, prepared, options)
    prepared.fmt.load(ctx)
    return ctx


def _load_many(lane: RawStore, fmt: Format, group: list[Prepared], options: Options) -> list[Prepared]:
    """Land the group's files together; returns those to load alone (all of them if the batch failed)."""
    pairs = [(prepared, _context(lane, prepared, options)) for prepared in group]
    try:
        unlanded = {id(ctx) for ctx in fmt.load_many([ctx for _, ctx in pairs])}
    except Exception:  # a file the batch could not read at all: each file alone says which
        unlanded = {id(ctx) for _, ctx in pairs}
    alone = []
    for prepared, ctx in pairs:
        if id(ctx) in unlanded:
            lane.discard_load(prepared.load_id)
            alone.append(prepared)
        else:
            prepared.ctx = ctx
    return alone


@contextmanager
def _every_core(store: RawStore) -> Iterator[None]:
    """For a file loaded in its turn, alone on the store's connection: statements fan out over every core.

    Outside any transaction: a setting cannot change in a transaction that a failed load aborted.
    """
    threads = store.con.sql("select current_setting('threads')").fetchall()[0][0]
    store.con.sql("reset threads")
    try:
        yield
    finally:
        store.con.sql(f"set threads = {threads}")


def _settle(store: RawStore, prepared: Prepared, options: Options) -> Outcome:
    """The file's turn: record it, in a transaction of its own, as loaded, unchanged, superseded or rejected.

    A file not loaded ahead is loaded here, inside the transaction (its format may keep state in
    landed.duckdb, e.g. a saved sacct field list, that a later file of the batch reads), with every core.
    """
    source, fmt = prepared.source, prepared.fmt
    if prepared.error is not None:
        store.discard_load(prepared.load_id)
        return _reject(store, prepared, _as_error(source, prepared.error, fmt))
    # again here: an identical file earlier in this batch may have landed since it was identified
    if prepared.settled or store.settled(prepared.digest, prepared.observed):
        store.discard_load(prepared.load_id)
        return Outcome(source.path, "unchanged", fmt.name)
    record = dict(
        load_id=prepared.load_id,
        path=source.key,
        size_bytes=prepared.size,
        sha256=prepared.digest,
        observed_at=prepared.observed,
    )
    with nullcontext() if prepared.ctx else _every_core(store):
        return _commit(store, prepared, record, options)


def _commit(store: RawStore, prepared: Prepared, record: dict, options: Options) -> Outcome:
    """Load the file (unless loaded ahead) and commit it with its manifest row: loaded or superseded."""
    source, fmt = prepared.source, prepared.fmt
    con = store.con
    con.begin()
    try:
        ctx = prepared.ctx or _load(store, prepared, options)
        # a stream has no lasting path: a later stream under the same name is another file
        replaced = [] if source.stream else store.loads(path=record["path"])
        if ctx.scope is not None:
            rivals = [old for old in store.loads(scope=ctx.scope) if old["path"] != record["path"]]
            if any((old["version"] or "") > (ctx.version or "") for old in rivals):
                con.rollback()
                store.discard_load(record["load_id"])
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
                return Outcome(source.path, "superseded", fmt.name)
            replaced += rivals
        for old in replaced:
            store.set_status(old["load_id"], "replaced")
        store.record(
            **record,
            format=fmt.name,
            rows=ctx.rows,
            tables=sorted(ctx.tables),
            scope=ctx.scope,
            version=ctx.version,
            status="loaded",
            nan_readings_dropped=ctx.nan_readings_dropped,
        )
        store.place_load(record["load_id"])
        con.commit()
    except Exception as exc:
        con.rollback()
        store.discard_load(record["load_id"])
        return _reject(store, prepared, _as_error(source, exc, fmt))
    # committed: the load counts. Should this fail (or the process die), the next RawStore deletes
    # the replaced files.
    store.remove_replaced(replaced)
    return Outcome(
        source.path, "loaded", fmt.name, ctx.rows, replaced=[old["path"] for old in replaced], notes=ctx.notes
    )


def _as_error(source: Source, exc: Exception, fmt: Format | None = None) -> IngestError:
    """The exception as an IngestError naming the file as the user named it (not a stream's copy), and
    saying what was expected: the format's own description where the error did not say."""
    if isinstance(exc, IngestError):
        if source.stream:
            exc.path = path_text(source.path)
        if exc.expected is None and fmt is not None:
            exc.expected = fmt.description
        return exc
    if isinstance(exc, (gzip.BadGzipFile, EOFError, zlib.error)):
        return IngestError(source.path, f"{CORRUPT_GZIP}: {exc}", expected="a complete gzip stream")
    if isinstance(exc, OSError) and exc.errno is not None:
        return IngestError(source.path, f"cannot be read: {exc.strerror or exc}", expected=READABLE)
    if isinstance(exc, UnicodeDecodeError):
        byte = exc.object[exc.start : exc.start + 1].hex()
        return IngestError(source.path, f"not UTF-8 text: byte 0x{byte} cannot be decoded", expected="UTF-8")
    return IngestError(source.path, f"could not be landed: {type(exc).__name__}: {exc}")


def _reject(store: RawStore, prepared: Prepared, error: IngestError) -> Outcome:
    """Record a rejection, unless the path's latest entry is this very rejection of this very content."""
    source, digest, fmt = prepared.source, prepared.digest, prepared.fmt
    message = str(error)
    latest = store.latest(source.key)
    repeated = (
        latest is not None
        and latest["status"] == "rejected"
        and latest["sha256"] == digest
        and latest["error"] == message
    )
    if not repeated:
        store.con.begin()
        store.record(
            load_id=uuid.uuid4().hex,
            path=source.key,
            size_bytes=prepared.size,
            sha256=digest,
            format=fmt.name if fmt else None,
            rows=0,
            tables=[],
            status="rejected",
            error=message,
        )
        store.con.commit()
    return Outcome(source.path, "rejected", fmt.name if fmt else None, error=message)
