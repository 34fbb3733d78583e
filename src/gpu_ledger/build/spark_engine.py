"""`gpu-ledger build --engine spark`: the same dbt project on Apache Spark, published as the same warehouse.

dbt runs on the profile's `spark` target: dbt-spark's session method, PySpark in dbt's own process
(local mode, every core of `GPU_LEDGER_SPARK_CORES`, a driver of `GPU_LEDGER_SPARK_MEMORY`). Spark reads
the landed Parquet under `<home>/landed` (macro register_landed makes a view in schema `raw` of every
table folder that holds data) and writes its tables as Parquet under `<home>/spark/warehouse`, catalogued
in the session's memory. Each Spark build starts from an empty `<home>/spark`, so it is a full build and a
killed one leaves nothing a later one trips on.

The marts Spark wrote are then copied into a new DuckDB file (schema `marts`), checked to hold every
mart dbt built, and renamed over `<home>/warehouse.duckdb`, as the DuckDB build publishes: the app,
`gpu-ledger sql` and finance's DuckDB clients read it unchanged, and a failed or killed build leaves the
published warehouse as it was. The build holds the home's writer lock throughout.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import duckdb
import yaml

from gpu_ledger.build import dbt_runner
from gpu_ledger.build.engine import BuildResult, EngineUnavailable
from gpu_ledger.build.publish import MARTS, PublishRefused, built_marts
from gpu_ledger.build.workspace import fsync, private_folder, remove_dead_builds
from gpu_ledger.home import Home
from gpu_ledger.ingest.store import RawStore
from gpu_ledger.lock import home_lock
from gpu_ledger.project import PROJECT_DIR

JAVA_17 = Path("/usr/lib/jvm/java-17-openjdk-amd64")  # Debian's openjdk-17-jre-headless (make system-deps)


class SparkUnavailable(EngineUnavailable):
    """No Java runtime to run Spark with."""


def java_home() -> Path:
    """$JAVA_HOME when it holds a java, else Debian's OpenJDK 17."""
    for candidate in (os.environ.get("JAVA_HOME"), JAVA_17):
        if candidate and (Path(candidate) / "bin" / "java").is_file():
            return Path(candidate)
    raise SparkUnavailable(
        f"Spark needs Java 17 and none was found at $JAVA_HOME or {JAVA_17}: run `make system-deps`"
    )


def landed_tables(landed: Path) -> list[str]:
    """The table folders under `<home>/landed` that hold at least one data file (names starting with `.` or
    `_`, such as `.pending`, are not data)."""
    if not landed.is_dir():
        return []
    return sorted(
        folder.name
        for folder in landed.iterdir()
        if folder.is_dir()
        and not folder.name.startswith((".", "_"))
        and any(not path.name.startswith((".", "_")) for path in folder.rglob("*.parquet"))
    )


def build(
    home: Home,
    *,
    project_dir: Path = PROJECT_DIR,
    full_refresh: bool = False,
    dbt_vars: str | None = None,
    wait: float | None = None,
    on_event: Callable[[dbt_runner.Event], None] | None = None,
) -> BuildResult:
    """Build on Spark and publish under the home's lock; the arguments are the DuckDB engine's
    (`gpu_ledger.build.engine`; no node selection: a Spark build starts from nothing, so it builds
    everything).

    Every Spark build is a full one, so `full_refresh` changes nothing; `dbt_vars` is dbt's --vars (YAML).
    Raises `SparkUnavailable` when there is no Java, `gpu_ledger.lock.HomeBusy` when another writer
    holds the home (beyond `wait`).
    """
    java = java_home()
    home = Home(home.root.resolve())  # dbt runs inside the home: every path it is given must be absolute
    with home_lock(home.root, "build", wait=wait):
        # opening the store finishes or discards what a killed ingest left, before Spark lists the files
        RawStore(home.raw_db).close()
        remove_dead_builds(home)
        with private_folder(home) as private:
            return _build_in(home, private, project_dir, java, dbt_vars, on_event)


def _build_in(
    home: Home,
    private: Path,
    project_dir: Path,
    java: Path,
    dbt_vars: str | None,
    on_event: Callable[[dbt_runner.Event], None] | None = None,
) -> BuildResult:
    spark = home.root / "spark"
    shutil.rmtree(spark, ignore_errors=True)
    spark.mkdir()
    logs = spark / "dbt"
    done = run_dbt(home, java, logs, project_dir, dbt_vars, on_event)
    log = logs / "logs" / "dbt.log"
    if done.returncode != 0:
        return BuildResult(False, None, log, done.stdout + done.stderr)
    try:
        target = logs / "target"
        publish(
            spark / "warehouse",
            private / "warehouse.duckdb",
            home.warehouse,
            built_marts(target),
            not_null_columns(target),
        )
    except PublishRefused as exc:
        return BuildResult(False, None, log, f"{done.stdout}\n{exc}")
    return BuildResult(True, home.warehouse, log, done.stdout)


def run_dbt(
    home: Home,
    java: Path,
    logs: Path,
    project_dir: Path,
    dbt_vars: str | None,
    on_event: Callable[[dbt_runner.Event], None] | None = None,
) -> subprocess.CompletedProcess[str]:
    """`dbt build` on the spark target (unit tests excluded, as the DuckDB build does), with the landed
    tables to register passed as vars beside the user's."""
    landed = home.root / "landed"
    variables = yaml.safe_load(dbt_vars) if dbt_vars else {}
    if not isinstance(variables, dict):
        raise ValueError(f"--vars must be a YAML mapping, got {dbt_vars!r}")
    variables |= {"landed_dir": str(landed), "landed_tables": landed_tables(landed)}
    env = {
        **os.environ,
        "GPU_LEDGER_HOME": str(home.root),
        "JAVA_HOME": str(java),
        "TZ": "UTC",  # PySpark hands timestamps to dbt as naive datetimes in the process's time zone
        "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
    }
    arguments = [
        "build",
        "--exclude-resource-type",
        "unit_test",
        "--target",
        "spark",
        "--vars",
        json.dumps(variables),
        "--project-dir",
        str(project_dir),
        "--profiles-dir",
        str(project_dir),
        "--target-path",
        str(logs / "target"),
        "--log-path",
        str(logs / "logs"),
    ]
    return dbt_runner.run(arguments, env=env, cwd=home.root, on_event=on_event)


def not_null_columns(target: Path) -> dict[str, list[str]]:
    """Each mart's columns that its enforced contract declares not null, from the run's manifest.json."""
    nodes = json.loads((target / "manifest.json").read_text())["nodes"]
    marts = [node for node in nodes.values() if node["resource_type"] == "model" and node["schema"] == MARTS]
    contracted = [node for node in marts if node["config"]["contract"]["enforced"]]
    columns = {
        node.get("alias") or node["name"]: [
            name
            for name, column in node["columns"].items()
            if any(constraint["type"] == "not_null" for constraint in column["constraints"])
        ]
        for node in contracted
    }
    return {mart: names for mart, names in columns.items() if names}


def publish(
    spark_warehouse: Path, staged: Path, warehouse: Path, marts: set[str], not_null: dict[str, list[str]]
) -> None:
    """Copy every mart Spark wrote into a new DuckDB file's schema `marts`, check the columns `not_null`
    names hold no null, then rename the file into place.

    Tables, not views over the Parquet: readers open the warehouse with file access disabled. dbt-spark
    does not enforce a contract's constraints (DuckDB refuses a null as it writes), so the copy checks them.
    """
    if not marts:
        raise PublishRefused("dbt reported no marts built: nothing published, the warehouse is unchanged")
    missing, nulls = [], []
    with duckdb.connect(str(staged)) as con:
        con.sql(f"create schema {MARTS}")
        for mart in sorted(marts):
            files = spark_warehouse / f"{MARTS}.db" / mart
            if not any(files.glob("*.parquet")):
                missing.append(mart)
                continue
            con.execute(
                f"create table {MARTS}.{mart} as select * from read_parquet(?)", [str(files / "*.parquet")]
            )
            if columns := not_null.get(mart):
                counts = ", ".join(f'count(*) filter (where "{column}" is null)' for column in columns)
                (found,) = con.sql(f"select {counts} from {MARTS}.{mart}").fetchall()
                counted = zip(columns, found, strict=True)
                nulls += [f"{mart}.{column} ({n:,} rows)" for column, n in counted if n]
        con.sql("checkpoint")
    if missing:
        raise PublishRefused(
            f"Spark wrote no files for {len(missing)} of {len(marts)} marts ({', '.join(missing[:5])}): "
            "nothing published, the warehouse is unchanged"
        )
    if nulls:
        raise PublishRefused(
            f"Spark wrote nulls into columns the marts' contracts declare not null: {', '.join(nulls[:5])}; "
            "nothing published, the warehouse is unchanged"
        )
    fsync(staged)
    os.replace(staged, warehouse)
    fsync(warehouse.parent)
