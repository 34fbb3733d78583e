"""Where a build works: a private folder of its own in the home, files replaced atomically, and the
machine's cache of what one home's build saves for the next.

Every dbt run of a home (a build on either engine, the demo's parse ahead, `gpu-ledger publish`) works
in its own `<home>/builds/<pid>-<token>/`, so no two of them share a file and a killed one's folder is
recognised by its dead pid.
"""

from __future__ import annotations

import os
import secrets
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from gpu_ledger.home import Home
from gpu_ledger.lock import alive


@contextmanager
def private_folder(home: Home) -> Iterator[Path]:
    """A folder of this process's own, `<home>/builds/<pid>-<token>/`, removed afterwards (a killed
    process's is removed by the next build: `remove_dead_builds`). Every dbt run of a home runs in one."""
    folder = home.root / "builds" / f"{os.getpid()}-{secrets.token_hex(4)}"
    folder.mkdir(parents=True)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def remove_dead_builds(home: Home) -> None:
    """Remove the folders of builds killed before they could clean up (their pid is gone).

    Called under the home lock, so no live build of this home is missed; the pid check keeps a build
    from deleting anything but its own or a dead one's files even so.
    """
    for folder in (home.root / "builds").glob("*-*"):
        pid = folder.name.split("-", 1)[0]
        if pid.isdigit() and not alive(int(pid)):
            shutil.rmtree(folder, ignore_errors=True)


def fsync(path: Path) -> None:
    """Flush a file's or a folder's entries to disk, so a rename survives a power cut."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def replace_atomically(source: Path, destination: Path) -> None:
    """Copy `source` over `destination` so that a reader meanwhile (another home's build) sees the old
    file or the new one, whole."""
    destination.parent.mkdir(parents=True, exist_ok=True)
    staged = destination.with_name(f"{destination.name}.{os.getpid()}-{secrets.token_hex(4)}")
    shutil.copyfile(source, staged)
    os.replace(staged, destination)


def machine_cache(kind: str) -> Path:
    """`$XDG_CACHE_HOME/gpu-ledger/<kind>` (`~/.cache` without XDG_CACHE_HOME): what one home's build
    saves for the next home's on this machine."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "gpu-ledger" / kind
