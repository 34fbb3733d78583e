"""A first look at a file, enough for formats to recognise themselves by content, never by name alone."""

from __future__ import annotations

import gzip
import io
import json
import re
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import BinaryIO

from gpu_ledger.ingest.errors import IngestError

HEAD_BYTES = 64 * 1024
GZIP_MAGIC = b"\x1f\x8b"
PARQUET_MAGIC = b"PAR1"
CORRUPT_GZIP = "the gzip stream is corrupt or truncated"


def is_gzip(path: Path) -> bool:
    with path.open("rb") as f:
        return f.read(2) == GZIP_MAGIC


def content_size(path: Path) -> int:
    """Bytes of the file's content once gunzipped: gzip's trailer records it (modulo 4 GiB)."""
    size = path.stat().st_size
    if not is_gzip(path):
        return size
    with path.open("rb") as f:
        f.seek(-4, 2)
        recorded = int.from_bytes(f.read(4), "little")
    # a member over 4 GiB wraps around; the content is at least as large as the compressed file
    while recorded < size:
        recorded += 1 << 32
    return recorded


def open_binary(path: Path) -> BinaryIO:
    """The file's bytes, gunzipped transparently."""
    return gzip.open(path, "rb") if is_gzip(path) else path.open("rb")


def read_bytes(path: Path) -> bytes:
    with open_binary(path) as f:
        return f.read()


class _Text(io.TextIOWrapper):
    """Text whose undecodable bytes or broken gzip stream are an IngestError naming the file, not a
    UnicodeDecodeError or EOFError from deep inside a format. (Text is decoded ahead in chunks, so the
    line that holds the bad byte is not known here.)"""

    def __init__(self, path: Path) -> None:
        super().__init__(open_binary(path), encoding="utf-8-sig", newline="")
        self.path = path

    def _error(self, exc: Exception) -> IngestError:
        if isinstance(exc, UnicodeDecodeError):
            byte = exc.object[exc.start : exc.start + 1].hex()
            return IngestError(
                self.path, f"not UTF-8 text: byte 0x{byte} cannot be decoded", expected="UTF-8"
            )
        return IngestError(self.path, f"{CORRUPT_GZIP}: {exc}", expected="a complete gzip stream")

    def __next__(self) -> str:
        try:
            return super().__next__()
        except (UnicodeDecodeError, gzip.BadGzipFile, EOFError, zlib.error) as exc:
            raise self._error(exc) from exc

    def read(self, size: int | None = -1) -> str:
        try:
            return super().read(size)
        except (UnicodeDecodeError, gzip.BadGzipFile, EOFError, zlib.error) as exc:
            raise self._error(exc) from exc


def open_text(path: Path) -> io.TextIOWrapper:
    """The file as text: UTF-8 with an optional byte-order mark, gunzipped transparently."""
    return _Text(path)


@dataclass
class Sniff:
    """The file's first bytes (decompressed) and what can be told from them cheaply."""

    path: Path
    head: bytes

    @classmethod
    def of(cls, path: Path) -> Sniff:
        try:
            with open_binary(path) as f:
                return cls(path, f.read(HEAD_BYTES))
        except (gzip.BadGzipFile, EOFError, zlib.error) as exc:
            raise IngestError(path, f"{CORRUPT_GZIP}: {exc}", expected="a complete gzip stream") from exc

    @property
    def is_parquet(self) -> bool:
        return self.head[:4] == PARQUET_MAGIC

    @cached_property
    def text(self) -> str:
        """The head as text (BOM removed); empty for binary content."""
        if self.is_parquet:
            return ""
        return self.head.decode("utf-8-sig", errors="replace")

    @cached_property
    def first_line(self) -> str:
        return self.text.split("\n", 1)[0].rstrip("\r")

    @property
    def name(self) -> str:
        """The file name without compression suffix."""
        return self.path.name.removesuffix(".gz")


# ------------------------------------------------------------------------------------------ describe
# what a file that no format recognised looks like, so that its rejection says what was found
_MAGIC = (
    (b"PK\x03\x04", "a ZIP archive (an Excel workbook?)"),
    (b"%PDF", "a PDF document"),
    (b"\x89PNG", "a PNG image"),
    (b"\x7fELF", "an executable (ELF)"),
    (b"SQLite format 3\x00", "an SQLite database"),
    (b"BZh", "bzip2-compressed data (only gzip is read)"),
    (b"\xfd7zXZ\x00", "xz-compressed data (only gzip is read)"),
    (b"(\xb5/\xfd", "zstd-compressed data (only gzip is read)"),
    (b"\xff\xfe", "UTF-16 text"),
    (b"\xfe\xff", "UTF-16 text"),
)
# a Prometheus series key: `name{label="` or `{__name__="` (a tsdb dump, an exposition line)
_SERIES = re.compile(r'^\s*[a-zA-Z_:]?[a-zA-Z0-9_:]*\{\s*[a-zA-Z_][a-zA-Z0-9_]*\s*=\s*"')
DELIMITERS = {",": "comma", ";": "semicolon", "\t": "tab", "|": "pipe"}


def _clip(text: str, limit: int = 60) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "...")


def parquet_footer_ok(path: Path) -> bool:
    """A Parquet file ends with its footer: a 4-byte length and the magic again."""
    with open_binary(path) as f:
        tail = b""
        while block := f.read(1 << 20):
            tail = (tail + block)[-8:]
    return tail[-4:] == PARQUET_MAGIC


def _describe_json(text: str, complete: bool) -> str | None:
    stripped = text.strip()
    if not stripped.startswith(("{", "[")):
        return None
    try:
        doc = json.loads(stripped) if complete else None
    except json.JSONDecodeError as exc:
        return f"JSON that does not parse ({exc.msg} at line {exc.lineno} column {exc.colno})"
    if doc is None:
        return "a JSON document"
    if doc in ({}, []):
        return f"empty JSON ({stripped})"
    if isinstance(doc, list):
        return f"a JSON array of {len(doc)} items"
    if not isinstance(doc, dict):
        return "a JSON value"
    if doc.get("status") == "error":
        return (
            f"a Prometheus error answer ({doc.get('errorType', 'no errorType')}: "
            f"{_clip(str(doc.get('error', '')), 120)}), not data"
        )
    data = doc.get("data")
    if doc.get("status") == "success" and isinstance(data, dict) and "resultType" in data:
        return f"a Prometheus answer of resultType {data['resultType']!r}, not a query_range matrix"
    return "a JSON object with keys " + ", ".join(_clip(str(k), 30) for k in list(doc)[:6])


def describe(sniff: Sniff, redetect: Callable[[Sniff], str | None]) -> str:
    """What the file looks like, in words: for the message of a file no format recognised.

    `redetect` names the format that would recognise a head (or None): a delimited file is tried with
    its delimiter swapped for each other one, to say "a `;`-delimited billing file" rather than nothing.
    """
    head = sniff.head
    if sniff.is_parquet:
        if not parquet_footer_ok(sniff.path):
            return "a truncated Parquet file (it starts with PAR1 but has no footer)"
        return "a Parquet file whose columns match no known format"
    for magic, what in _MAGIC:
        if head.startswith(magic):
            return what
    if not head.strip():
        return "blank: only whitespace"
    if b"\x00" in head[:4096]:
        return f"binary data (starts with bytes {head[:8].hex(' ')})"
    try:
        text = head.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        if exc.start < len(head) - 4:  # not merely a character cut at the end of the head
            return f"text that is not UTF-8 (byte 0x{head[exc.start]:02x} at offset {exc.start})"
        text = head[: exc.start].decode("utf-8-sig")
    complete = len(head) < HEAD_BYTES
    stripped = text.lstrip().lower()
    if stripped.startswith(("<!doctype html", "<html")):
        title = re.search(r"<title[^>]*>(.*?)</title>", text, re.I | re.S)
        return "an HTML page" + (f" titled {_clip(title.group(1).strip())}" if title else "")
    if stripped.startswith("<?xml"):
        return "an XML document"
    first = text.split("\n", 1)[0].rstrip("\r")
    if _SERIES.match(first):
        return f"Prometheus text whose first sample line {_clip(first)} fits none of its shapes"
    described = _describe_json(text, complete)
    if described:
        return described
    counts = {d: first.count(d) for d in DELIMITERS}
    found = max(counts, key=lambda d: counts[d])
    if counts[found] >= 2:
        lines = text[:8192]
        for other in DELIMITERS:
            if other == found:
                continue
            name = redetect(Sniff(sniff.path, lines.replace(found, other).encode()))
            if name:
                return (
                    f"{DELIMITERS[found]}-delimited text that would be {name} if it were "
                    f"{DELIMITERS[other]}-delimited"
                )
        return (
            f"{DELIMITERS[found]}-delimited text ({counts[found] + 1} fields) whose first line "
            f"{_clip(first)} matches no known header"
        )
    return f"text starting {_clip(first)}"
