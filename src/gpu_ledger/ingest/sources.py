"""What `gpu-ledger ingest` reads: the paths it is given, expanded into inputs (files, streams, and what
cannot be read at all, each to be rejected on its own), a stream's bytes spooled to a file, and a file's
digest, which identifies its content in the manifest.
"""

from __future__ import annotations

import errno
import hashlib
import os
import shutil
import stat
import sys
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from gpu_ledger.ingest.errors import path_text

STDIN = Path("-")
# a folder holding a file of this name is not an input (e.g. the simulator's ground truth); ingest skips it
IGNORE_MARKER = ".gpu-ledger-ignore"


@dataclass(frozen=True)
class Source:
    """One input: `path` as named or found; `local` the regular file holding its bytes (a stream's
    temporary copy); `problem` why it is not a file that can be read at all."""

    path: Path
    local: Path | None = None
    stream: bool = False
    problem: str | None = None

    @property
    def key(self) -> str:
        """The path the manifest records (`path_text`): for a file, absolute, and by the names it was found
        under (a link is not followed: a link loop has no end, a dangling link no target); for a stream,
        as named."""
        if self.path == STDIN:
            return "<stdin>"
        return path_text(self.path if self.stream else os.path.abspath(self.path))


def _kind(mode: int) -> str | None:
    """Why a file of this mode is not one ingest reads, or None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISSOCK(mode):
        return "a socket, not a file"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device, not a file"
    return "not a regular file"


def _classify(path: Path, *, named: bool) -> Source:
    """A path that is not a folder: a file, a stream, or a problem.

    A named pipe is read as a stream when named on the command line; found in a folder, it is
    rejected, since opening it would wait for a writer that may never come.
    """
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        if path.is_symlink():
            return Source(path, problem=f"a symbolic link to {os.readlink(path)}, which does not exist")
        return Source(path, problem="vanished before it could be read")
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return Source(
                path, problem=f"a symbolic link loop: a link to {os.readlink(path)}, which leads back to it"
            )
        return Source(path, problem=f"cannot be read: {exc.strerror or exc}")
    if stat.S_ISFIFO(mode):
        if named:
            return Source(path, stream=True)
        return Source(path, problem="a named pipe in a folder (name it on the command line to read it)")
    kind = _kind(mode)
    return Source(path, problem=kind) if kind else Source(path, local=path)


def _walk(
    folder: Path, seen: set[tuple[int, int]], within: frozenset[tuple[int, int]] = frozenset()
) -> Iterator[Source]:
    """Files under a folder in name order, hidden ones skipped, linked folders followed once, folders
    marked with IGNORE_MARKER skipped.

    A sub-folder that cannot be listed is a rejection (a problem Source), never silently skipped; so is
    a link to a folder it lies in (`within`: the folders above this one), a loop.
    """
    try:
        st = folder.stat()
        here = (st.st_dev, st.st_ino)
        if here in seen:
            if here in within:
                yield Source(folder, problem="a symbolic link loop: a link to a folder it lies in")
            return
        seen.add(here)
        with os.scandir(folder) as it:
            entries = sorted(it, key=lambda e: e.name)
    except OSError as exc:
        yield Source(folder, problem=f"the folder cannot be read: {exc.strerror or exc}")
        return
    if any(entry.name == IGNORE_MARKER for entry in entries):
        return
    for entry in entries:
        if entry.name.startswith("."):
            continue
        path = Path(entry.path)
        try:
            is_dir = entry.is_dir()
        except OSError:
            is_dir = False
        if is_dir:
            yield from _walk(path, seen, within | {here})
        else:
            yield _classify(path, named=False)


def expand(paths: Iterable[Path]) -> Iterator[Source]:
    """Every input under the given paths, folders recursed in name order, hidden files skipped.

    A path named on the command line that does not exist raises FileNotFoundError (a usage error);
    anything found but unreadable becomes a Source with its problem, to be rejected on its own.
    """
    for path in paths:
        if path == STDIN:
            yield Source(path, stream=True)
            continue
        try:
            is_dir = path.is_dir()
            exists = is_dir or path.exists() or path.is_symlink()
        except OSError as exc:
            yield Source(path, problem=f"cannot be read: {exc.strerror or exc}")
            continue
        if not exists:
            raise FileNotFoundError(f"{path}: no such file or folder")
        yield from _walk(path, set()) if is_dir else [_classify(path, named=True)]


def spool(source: Source, folder: Path) -> Source:
    """A stream's bytes, read once into a temporary file that every later pass reads."""
    copy = folder / uuid.uuid4().hex / ("stdin" if source.path == STDIN else source.path.name)
    copy.parent.mkdir()
    try:
        with copy.open("wb") as out:
            if source.path == STDIN:
                shutil.copyfileobj(sys.stdin.buffer, out)
            else:
                with source.path.open("rb") as stream:
                    shutil.copyfileobj(stream, out)
    except OSError as exc:
        return replace(source, problem=f"the stream cannot be read: {exc.strerror or exc}")
    return replace(source, local=copy)


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def size(source: Source) -> int:
    try:
        return source.local.stat().st_size if source.local else 0
    except OSError:
        return 0
