"""`gpu-ledger build`: dbt build into a private working file, then publish a verified copy atomically.

The whole build holds the home's writer lock (`gpu_ledger.lock`), so no ingest or second build runs
beside it. Each build still works only in files of its own, in `<home>/builds/<pid>-<token>/`: it
starts from a copy of `<home>/work.duckdb`, the state the last passing build left (which is what lets
incremental models add a day without rebuilding the month), and deletes nothing but that folder.
A build that passes (models, seeds and tests) makes a copy without the staging views, opens it to check
that every mart dbt built is in it, and renames it over `<home>/warehouse.duckdb`; its working file
becomes the next build's `work.duckdb`. A reader sees the old warehouse or the new one, never a
half-built or empty one. A build that fails or is killed leaves both `warehouse.duckdb` and
`work.duckdb` as they were; a later build removes the folder a killed one left.

A production build runs seeds, models and data tests, not dbt's unit tests: those test the SQL, not
the data, and run in `make test` (tests/test_dbt_unit_tests.py).

A build whose inputs are those of the published warehouse does nothing and says so. The inputs are the
landed store's bookkeeping (the ingest manifest, which changes with every load, replacement or
rejection, and the validation results the data-health marts show), every file of the dbt project, the
dbt arguments (vars included) and the dbt, adapter and DuckDB versions. A passing build records their
fingerprint in `<home>/warehouse.json` after it publishes, with the published file's identity, so a
warehouse replaced by anything else is rebuilt. `--full-refresh` always builds.

dbt runs in a child process of its own (`gpu_ledger.build.dbt_runner`), tethered (`gpu_ledger.tether`):
killing the build, even with kill -9, kills dbt with it. dbt ignores Ctrl+C, which the build turns
into killing it. The child streams dbt's events back, which the command line draws as progress.

`select` and `exclude` are dbt's node selection. A selected build starts, as every build does, from
the last passing build's working file, which holds every model it built: the nodes selected are
rebuilt over that state and the rest are kept as they were, so the file published afterwards is a
whole warehouse (every mart this run built is checked to be in it, the others are there from before).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import shutil
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path

import duckdb
import yaml

from gpu_ledger.build import dbt_runner
from gpu_ledger.build.engine import BuildResult
from gpu_ledger.build.publish import PublishRefused, built_marts, publish
from gpu_ledger.build.workspace import (
    fsync,
    machine_cache,
    private_folder,
    remove_dead_builds,
    replace_atomically,
)
from gpu_ledger.home import Home
from gpu_ledger.ingest.store import RawStore
from gpu_ledger.lock import home_lock
from gpu_ledger.project import PROJECT_DIR
from gpu_ledger.tether import tethered

FINGERPRINT = "warehouse.json"
# what dbt reads besides the folders dbt_project.yml names (dbt's defaults where it names none)
PROJECT_FILES = ("dbt_project.yml", "profiles.yml", "packages.yml", "dependencies.yml")
PROJECT_FOLDERS = {
    "model-paths": ["models"],
    "seed-paths": ["seeds"],
    "macro-paths": ["macros"],
    "test-paths": ["tests"],
    "snapshot-paths": ["snapshots"],
    "analysis-paths": ["analyses"],
}
VERSIONED = ("dbt-core", "dbt-adapters", "dbt-duckdb", "duckdb")
# the landed store's bookkeeping that models read; the landed data changes only with the manifest
LANDED_INPUTS = ("raw.ingest_manifest", "raw.validation_results")

logger = logging.getLogger("gpu_ledger.build")


def build(
    home: Home,
    *,
    project_dir: Path = PROJECT_DIR,
    full_refresh: bool = False,
    dbt_vars: str | None = None,
    wait: float | None = None,
    select: list[str] | None = None,
    exclude: list[str] | None = None,
    on_event: Callable[[dbt_runner.Event], None] | None = None,
) -> BuildResult:
    """Build and publish under the home's lock, unless the published warehouse was built from the same
    inputs; `dbt_vars` is dbt's --vars (YAML); `wait` seconds to queue behind another writer;
    `select`/`exclude` dbt's node selection; `on_event` is called with each of dbt's progress events
    (`gpu_ledger.build.dbt_runner`).

    Raises `gpu_ledger.lock.HomeBusy` when another writer holds the home (beyond `wait`).
    """
    home = Home(home.root.resolve())  # dbt runs in the build's folder: every other path it gets is absolute
    arguments = ["build", "--exclude-resource-type", "unit_test"]
    if dbt_vars is not None:
        arguments += ["--vars", dbt_vars]
    for option, values in (("--select", select), ("--exclude", exclude)):
        if values:
            arguments += [option, *values]
    with home_lock(home.root, "build", wait=wait):
        with RawStore(home.raw_db) as store:  # an empty landed store still builds: every source is absent
            inputs = fingerprint(store.con, project_dir, arguments)
        published_at = None if full_refresh else _published_from(home, inputs)
        if published_at is not None:
            return BuildResult(True, home.warehouse, home.root / "dbt" / "logs" / "dbt.log", "", published_at)
        remove_dead_builds(home)
        with private_folder(home) as private:
            result = _build_in(home, private, project_dir, arguments, full_refresh, on_event)
            if result.success:
                _record(home, inputs)
                write_docs(home, private, project_dir, _docs_digest(inputs))
        return result


def _build_in(
    home: Home,
    private: Path,
    project_dir: Path,
    arguments: list[str],
    full_refresh: bool,
    on_event: Callable[[dbt_runner.Event], None] | None = None,
) -> BuildResult:
    state = home.root / "work.duckdb"
    work = private / "work.duckdb"  # the same file name as the state keeps dbt's catalog name "work"
    if state.exists() and not full_refresh:
        for suffix in ("", ".wal"):
            if Path(f"{state}{suffix}").exists():
                shutil.copyfile(f"{state}{suffix}", f"{work}{suffix}")
    logs = home.root / "dbt"
    if full_refresh:
        arguments = [*arguments, "--full-refresh"]
    done = run_dbt(home, work, logs, project_dir, arguments, on_event)
    log = logs / "logs" / "dbt.log"
    if done.returncode != 0:
        return BuildResult(False, None, log, done.stdout + done.stderr)
    try:
        publish(work, private / "warehouse.duckdb", home.warehouse, built_marts(logs / "target"))
    except PublishRefused as exc:
        return BuildResult(False, None, log, f"{done.stdout}\n{exc}")
    Path(f"{state}.wal").unlink(missing_ok=True)  # an old state's log must not replay onto the new one
    os.replace(work, state)
    return BuildResult(True, home.warehouse, log, done.stdout)


DOCS = "docs.html"


def write_docs(home: Home, private: Path, project_dir: Path, digest: str) -> Path | None:
    """The dbt docs site of the project, as one static HTML file `<home>/docs.html` (the app's SQL page
    links it). The site describes the project, not the data: it is written again only when the project's
    files or dbt's version changed (`digest`, see `_docs_digest`), and a home that has none takes the
    site another home's build saved on this machine for the same digest (`saved_docs`). Otherwise it is
    `dbt docs generate --static` from the parse the build saved, run in the build's `private` folder,
    without compiling or querying the catalog (every column's type is in the models' YAML). A failure
    is logged and never fails the build."""
    page, stamp = home.root / DOCS, home.root / f"{DOCS}.project"
    if page.exists() and stamp.exists() and stamp.read_text() == digest:
        return page
    saved = saved_docs(digest)
    if not saved.exists():
        arguments = ["docs", "generate", "--static", "--no-compile", "--empty-catalog"]
        command, env = _dbt(home, private / "work.duckdb", home.root / "dbt", project_dir, arguments)
        done = dbt_runner.run(command, env=env, cwd=private)
        generated = home.root / "dbt" / "target" / "static_index.html"
        if done.returncode != 0 or not generated.exists():
            logger.warning(
                "dbt docs generate failed (the build is published): %s", (done.stdout + done.stderr)[-2000:]
            )
            return None
        replace_atomically(generated, saved)
    replace_atomically(saved, page)
    stamp.write_text(digest)
    return page


def _docs_digest(inputs: dict[str, str]) -> str:
    """What the docs site is made from: the project's files and the versions that render them."""
    return hashlib.sha256(f"{inputs['project']}\0{inputs['versions']}".encode()).hexdigest()


def saved_docs(digest: str) -> Path:
    """The docs site of a project digest, saved on this machine for every home's first build."""
    return machine_cache("dbt-docs") / f"{digest[:16]}.html"


def run_dbt(
    home: Home,
    database: Path,
    logs: Path,
    project_dir: Path,
    arguments: list[str],
    on_event: Callable[[dbt_runner.Event], None] | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run a dbt command (`arguments`, e.g. ["build", ...]) on `database`, reading the home's landed store;
    target/ and logs/ go under `logs`; `on_event` gets dbt's progress events as they come. Returns dbt's
    exit status and, as `stdout`, what it printed.

    dbt runs in the database's folder, `<home>/builds/<pid>-<token>/`, and is given both databases by
    paths relative to it (`work.duckdb`, `../../landed.duckdb`). The connection, which dbt hashes to
    decide whether it may reuse a saved parse, is then the same for every build of every home, so a build
    parses only what changed since the last parse: its home's own, or, for a home that has none yet, the
    last one saved on this machine (`saved_parse`).
    """
    command, env = _dbt(home, database, logs, project_dir, arguments)
    target = logs / "target"
    _reuse_saved_parse(target, project_dir)
    logger.info("dbt %s in %s", " ".join(arguments), database.parent)
    done = dbt_runner.run(command, env=env, cwd=database.parent, on_event=on_event)
    _save_parse(target, project_dir)
    return done


@contextmanager
def parsing_ahead(home: Home, project_dir: Path = PROJECT_DIR) -> Iterator[subprocess.Popen[bytes]]:
    """dbt parsing the project as the home's next build would, which then reuses the parse: wait for the
    process before building (it writes the home's dbt target folder); it is killed if still running when
    the block ends.

    Parsing is single-threaded Python (some 10 s): the demo does it on the core its simulator leaves
    idle, for a machine that has no saved parse yet.
    """
    home = Home(home.root.resolve())
    with private_folder(home) as private:
        command, env = _dbt(home, private / "work.duckdb", home.root / "dbt", project_dir, ["parse"])
        target = home.root / "dbt" / "target"
        _reuse_saved_parse(target, project_dir)
        process = subprocess.Popen(
            tethered(dbt_runner.command(command)),
            env=env,
            cwd=private,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            yield process
        finally:
            process.kill()
            if process.wait() == 0:
                _save_parse(target, project_dir)


def _dbt(
    home: Home, database: Path, logs: Path, project_dir: Path, arguments: list[str]
) -> tuple[list[str], dict[str, str]]:
    """dbt's arguments and environment to run in `database`'s folder (see `run_dbt`).

    dbt's log file (`<home>/dbt/logs/dbt.log`) is kept at info level: each node's result, warnings and
    errors, as the console shows them. At dbt's default, debug, it takes every statement's SQL and
    three lines around it, some 50,000 lines for a build: formatting them is a tenth of a build's CPU
    with no data. DBT_LOG_LEVEL_FILE=debug in the environment keeps them (each node's SQL is also in
    `<home>/dbt/target/run/`)."""
    env = {
        "DBT_LOG_LEVEL_FILE": "info",
        **os.environ,
        "GPU_LEDGER_BUILD_DB": database.name,
        "GPU_LEDGER_LANDED_DB": os.path.relpath(home.raw_db, database.parent),
        "GPU_LEDGER_BUILD_THREADS": os.environ.get("GPU_LEDGER_BUILD_THREADS") or str(os.cpu_count() or 1),
        "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
    }
    command = [
        *arguments,
        "--project-dir",
        str(project_dir.resolve()),
        "--profiles-dir",
        str(project_dir.resolve()),
        "--target-path",
        str(logs.resolve() / "target"),
        "--log-path",
        str(logs.resolve() / "logs"),
    ]
    return command, env


PARSE = "partial_parse.msgpack"  # where in its target folder dbt saves the parse it reuses


def saved_parse(project_dir: Path) -> Path:
    """The last parse of the project saved on this machine, for homes without one of their own:
    `$XDG_CACHE_HOME/gpu-ledger/dbt-parse/<project>.msgpack` (`~/.cache` without XDG_CACHE_HOME).
    dbt checks a parse before it reuses it (its version, the profile, the vars, every file's checksum)
    and parses again what does not match, so an old one is only slower, never wrong."""
    project = hashlib.sha256(str(project_dir.resolve()).encode()).hexdigest()[:16]
    return machine_cache("dbt-parse") / f"{project}.msgpack"


def _reuse_saved_parse(target: Path, project_dir: Path) -> None:
    saved = saved_parse(project_dir)
    if not (target / PARSE).exists() and saved.exists():
        target.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(saved, target / PARSE)


def _save_parse(target: Path, project_dir: Path) -> None:
    if not (target / PARSE).exists():
        return
    replace_atomically(target / PARSE, saved_parse(project_dir))


def fingerprint(landed: duckdb.DuckDBPyConnection, project_dir: Path, arguments: list[str]) -> dict[str, str]:
    """What a build computes from: digests of the landed bookkeeping and of the project's files, the dbt
    arguments and the versions of what runs them. Equal fingerprints build equal warehouses."""
    tables = landed.sql("select table_schema || '.' || table_name from information_schema.tables")
    present = {name for (name,) in tables.fetchall()}
    digests = {
        table: landed.sql(
            f"select coalesce(md5(string_agg(t::varchar, chr(10) order by t::varchar)), '') from {table} t"
        ).fetchall()[0][0]
        for table in LANDED_INPUTS
        if table in present
    }
    return {
        "landed": json.dumps(digests, sort_keys=True),
        "project": _project_digest(project_dir),
        "arguments": json.dumps(arguments),
        "versions": json.dumps({name: version(name) for name in VERSIONED}),
    }


def _project_digest(project_dir: Path) -> str:
    settings = yaml.safe_load((project_dir / "dbt_project.yml").read_text())
    folders = {folder for key, default in PROJECT_FOLDERS.items() for folder in settings.get(key, default)}
    files = [project_dir / name for name in PROJECT_FILES]
    files += [path for folder in folders for path in (project_dir / folder).rglob("*")]
    digest = hashlib.sha256()
    for path in sorted(path for path in files if path.is_file()):
        digest.update(
            f"{path.relative_to(project_dir)}\0{hashlib.sha256(path.read_bytes()).hexdigest()}\n".encode()
        )
    return digest.hexdigest()


def _published_from(home: Home, inputs: dict[str, str]) -> datetime | None:
    """When the published warehouse was built, if it was built from these inputs and is still in place."""
    try:
        record = json.loads((home.root / FINGERPRINT).read_text())
        in_place = record["warehouse"] == _identity(home.warehouse) and (home.root / "work.duckdb").exists()
        if in_place and record["inputs"] == inputs:
            return datetime.fromisoformat(record["published_at"])
    except (OSError, ValueError, KeyError, TypeError):
        pass  # never built, or built before fingerprints were recorded: build
    return None


def _record(home: Home, inputs: dict[str, str]) -> None:
    """Write the published build's fingerprint beside the warehouse, atomically."""
    record = {
        "published_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "warehouse": _identity(home.warehouse),
        "inputs": inputs,
    }
    staged = home.root / f"{FINGERPRINT}.new"  # writers hold the lock: one name, a killed one's is replaced
    staged.write_text(json.dumps(record, indent=2) + "\n")
    fsync(staged)
    os.replace(staged, home.root / FINGERPRINT)
    fsync(home.root)


def _identity(path: Path) -> list[int]:
    """The published file's inode, size and modification time: another file in its place differs."""
    stat = path.stat()
    return [stat.st_ino, stat.st_size, stat.st_mtime_ns]


def unmatched_selectors(output: str) -> list[str]:
    """The --select/--exclude criteria dbt said match no node of the project, from its output."""
    return re.findall(r"The selection criterion '([^']*)' does not match any enabled nodes", output)
