"""Shared fixtures: the real upstream samples live outside the repo and are optional.

`make test` runs the suite on two pytest-xdist workers, each with its own session. A fleet or a built
home that many modules read is made once for the whole run (`made_once`): the first worker that asks
makes it under a file lock, the other waits for it and reads the same folder.
"""

from __future__ import annotations

import fcntl
import gzip
import json
import shutil
import sys
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from gpu_ledger.simulator.generate import build_fleet, simulate
from gpu_ledger.simulator.model import Fleet, SimulationConfig

SAMPLES = Path(__file__).resolve().parents[1].parent / "shared" / "samples"
FOCUS_SAMPLE = "billing/focus1.0_sample_1000rows_aws_azure_oci.csv"  # 1,000 rows of FOCUS 1.0


def pytest_configure(config: pytest.Config) -> None:
    """An xdist worker's `__main__` is execnet's bootstrap, with neither a file nor a spec; pyspark's
    Spark Connect package, which great_expectations imports, takes such a `__main__` for its own doctest
    run and exits the process. The worker's `__main__` is given the file of the loop it runs."""
    main = sys.modules["__main__"]
    if hasattr(config, "workerinput") and getattr(main, "__spec__", None) is None:
        import xdist.remote

        main.__file__ = getattr(main, "__file__", xdist.remote.__file__)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The longest modules first, by their `minutes(n)` mark (the others after them, as collected).

    `make test` hands each worker a whole module in this order (--dist loadscope --no-loadscope-reorder):
    a long module started last would keep one worker busy after the others have finished."""

    def minutes(item: pytest.Item) -> float:
        mark = item.get_closest_marker("minutes")
        return mark.args[0] if mark else 0

    items.sort(key=minutes, reverse=True)  # a stable sort: a module's tests stay together and in order


def made_once(tmp_path_factory, worker_id: str, name: str, make: Callable[[Path], None]) -> Path:
    """The folder `name`, filled by `make(folder)` once per test run, however many workers ask for it.

    Tests read it and never change it (copy it to change it)."""
    if worker_id == "master":  # one process: the session's own temporary folder
        folder = tmp_path_factory.mktemp(name)
        make(folder)
        return folder
    run = tmp_path_factory.getbasetemp().parent  # the run's folder, shared by its workers
    folder, done = run / name, run / f"{name}.done"
    with (run / f"{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, or the worker dies
        if not done.exists():
            shutil.rmtree(folder, ignore_errors=True)  # a worker that failed making it left a part
            folder.mkdir()
            make(folder)
            done.touch()
    return folder


@pytest.fixture(scope="session", autouse=True)
def machine_cache(tmp_path_factory, worker_id: str) -> Iterator[Path]:
    """The run's own XDG_CACHE_HOME, shared by its workers: the dbt parse a build saves for the machine's
    next new home (`gpu_ledger.build.duckdb_engine.saved_parse`) is the run's, never the user's."""
    base = tmp_path_factory.getbasetemp()
    cache = (base if worker_id == "master" else base.parent) / "cache"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(cache))
        yield cache


@pytest.fixture(scope="session")
def samples() -> Path:
    """`../shared/samples`, or a clean skip when a fresh clone has no such folder."""
    if not SAMPLES.is_dir():
        pytest.skip(f"real upstream samples not found at {SAMPLES}")
    return SAMPLES


@pytest.fixture(scope="session")
def sim(tmp_path_factory, worker_id: str) -> Path:
    """A small simulated fleet shared by the tests: 80 GPUs over 8 days (a weekend) at 5-minute samples."""

    def make(out: Path) -> None:
        simulate(_sim_config(out), show_progress=False)

    return made_once(tmp_path_factory, worker_id, "sim", make)


def _sim_config(out: Path) -> SimulationConfig:
    return SimulationConfig(
        out=out, gpus=80, days=8, interval_s=300, seed=11, start=datetime(2026, 10, 1, tzinfo=UTC)
    )


@pytest.fixture(scope="session")
def sim_fleet(tmp_path_factory) -> Fleet:
    """The simulator's model of the `sim` fleet (the same config), without its files."""
    return build_fleet(_sim_config(tmp_path_factory.mktemp("sim_fleet")))[0]


def mig_gpu_uuids(sim: Path) -> set[str]:
    """The simulated GPUs split into MIG slices, as their DCGM series say (a GPU_I_PROFILE label): their
    busy time is in their slices' series, not in a whole-GPU DCGM_FI_DEV_GPU_UTIL."""
    return {
        series["metric"]["UUID"]
        for path in sim.glob("telemetry/prometheus/*/DCGM_FI_DEV_FB_USED/*.json.gz")
        for series in json.loads(gzip.decompress(path.read_bytes()))["data"]["result"]
        if "GPU_I_PROFILE" in series["metric"]
    }


@pytest.fixture(scope="session")
def warehouse(sim: Path, tmp_path_factory, worker_id: str) -> Path:
    """The simulated fleet ingested, validated and built (as `make demo` does): the published warehouse
    file (read it read-only)."""
    from gpu_ledger.build.duckdb_engine import build
    from gpu_ledger.home import Home
    from gpu_ledger.ingest.runner import ingest
    from gpu_ledger.ingest.store import RawStore
    from gpu_ledger.ingest.validate import validate

    def make(root: Path) -> None:
        home = Home(root)
        with RawStore(home.raw_db) as store:
            outcomes = ingest([sim], store, progress=False)  # the whole output: its ground truth is skipped
            rejected = [o.error for o in outcomes if o.status == "rejected"]
            assert not rejected, rejected
            suites, _ = validate(store, home.root)
        failed = [(s.suite, s.failed) for s in suites if not s.success]
        assert not failed, failed
        result = build(home)
        assert result.success, result.output[-3000:]

    return Home(made_once(tmp_path_factory, worker_id, "home", make)).warehouse


@pytest.fixture(scope="session")
def built_home(tmp_path_factory, worker_id: str) -> Path:
    """A home built once with nothing landed (seeds and every model over empty sources, a quick but
    complete build): read it, or copy it (`home_copy`) to change it."""
    from gpu_ledger.build.duckdb_engine import build
    from gpu_ledger.home import Home

    def make(root: Path) -> None:
        result = build(Home(root))
        assert result.success, result.output[-3000:]

    return made_once(tmp_path_factory, worker_id, "built-home", make)


@pytest.fixture(scope="session")
def focus_sample_home(samples: Path, tmp_path_factory, worker_id: str) -> Path:
    """A home with the real FOCUS 1.0 sample (AWS, Azure, OCI; `FOCUS_SAMPLE`) landed alone and built:
    read it, never change it."""
    from gpu_ledger.build.duckdb_engine import build
    from gpu_ledger.home import Home
    from gpu_ledger.ingest.runner import ingest
    from gpu_ledger.ingest.store import RawStore

    def make(root: Path) -> None:
        home = Home(root)
        with RawStore(home.raw_db) as store:
            outcomes = ingest([samples / FOCUS_SAMPLE], store, progress=False)
        assert [o.status for o in outcomes] == ["loaded"], [o.error for o in outcomes]
        result = build(home)
        assert result.success, result.output[-3000:]

    return made_once(tmp_path_factory, worker_id, "focus-sample-home", make)


@pytest.fixture
def home_copy(built_home: Path, tmp_path: Path) -> Path:
    """A private copy of the built empty home."""
    root = tmp_path / "home"
    shutil.copytree(built_home, root)
    return root
