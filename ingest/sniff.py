"""A first look at a file, enough for formats to recognise themselves by content, never by name alone."""

from __future__ import annotations

import gzip
import io
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import BinaryIO

HEAD_BYTES = 64 * 1024
GZIP_MAGIC = b"\x1f\x8b"
PARQUET_MAGIC = b"PAR1"


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


def open_text(path: Path) -> io.TextIOWrapper:
    """The file as text: UTF-8 with an optional byte-order mark, gunzipped transparently."""
    return io.TextIOWrapper(open_binary(path), encoding="utf-8-sig", newline="")


@dataclass
class Sniff:
    """The file's first bytes (decompressed) and what can be told from them cheaply."""

    path: Path
    head: bytes

    @classmethod
    def of(cls, path: Path) -> Sniff:
        with open_binary(path) as f:
            return cls(path, f.read(HEAD_BYTES))

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
