"""Publishing a built DuckDB file: checked to hold every mart dbt built, then renamed over
`<home>/warehouse.duckdb`, so a reader sees the old warehouse or the new one, never a half-built one.

`gpu-ledger build` publishes what its own dbt run built (`built_marts`); `gpu-ledger publish` publishes
the working file of a `dbt build` an analytics engineer ran by hand, once `dbt_build_marts` has read
from that run's run_results.json that it was a build and that it passed.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import duckdb

from gpu_ledger.build.workspace import fsync, private_folder, remove_dead_builds
from gpu_ledger.home import Home

MARTS = "marts"


class PublishRefused(Exception):
    """The built file is not a complete warehouse, so it is not published."""


class NothingToPublish(Exception):
    """There is no passing dbt build to publish: no run in the target folder, or its last command was
    not a build."""


def built_marts(target: Path) -> set[str]:
    """The marts this dbt run built, from its run_results.json and manifest.json."""
    results = json.loads((target / "run_results.json").read_text())["results"]
    nodes = json.loads((target / "manifest.json").read_text())["nodes"]
    built = {r["unique_id"] for r in results if r["status"] == "success"}
    return {
        node.get("alias") or node["name"]
        for unique_id, node in nodes.items()
        if unique_id in built and node["resource_type"] == "model" and node["schema"] == MARTS
    }


def dbt_build_marts(target: Path) -> set[str]:
    """Every mart of the project (ephemeral models aside), once the last dbt command in `target` is found
    to be a `dbt build` that passed.

    Raises `NothingToPublish` when `target` holds no run or its last command was not a build, and
    `PublishRefused` when the build had failures.
    """
    try:
        run = json.loads((target / "run_results.json").read_text())
        nodes = json.loads((target / "manifest.json").read_text())["nodes"]
    except (OSError, ValueError, KeyError) as exc:
        raise NothingToPublish(
            f"no dbt run to check in {target} ({exc}): pass --target-path, or run `dbt build` again"
        ) from exc
    command = run.get("args", {}).get("which")
    if command != "build":
        raise NothingToPublish(
            f"the last dbt command in {target} was `dbt {command}`, not a build: run `dbt build`, "
            "then publish (dbt docs generate after publishing)"
        )
    failed = sorted(r["unique_id"] for r in run["results"] if r["status"] in ("error", "fail"))
    if failed:
        raise PublishRefused(
            f"the last dbt build had {len(failed)} failures ({', '.join(failed[:3])}): nothing published, "
            "the warehouse is unchanged"
        )
    return {
        node.get("alias") or node["name"]
        for node in nodes.values()
        if node["resource_type"] == "model"
        and node["schema"] == MARTS
        and node.get("config", {}).get("materialized") != "ephemeral"
    }


def publish_work(home: Home, work: Path, marts: set[str]) -> None:
    """Publish `work` (a file dbt built) as the home's warehouse, staged in a private folder; the caller
    holds the home's writer lock."""
    remove_dead_builds(home)
    with private_folder(home) as private:
        publish(work, private / "warehouse.duckdb", home.warehouse, marts)


def publish(work: Path, staged: Path, warehouse: Path, marts: set[str]) -> None:
    """Copy the working file, make the copy self-contained, check it holds every mart, rename it into place.

    Staging views read the landed store through an attachment that readers of the published file do
    not have, so the published copy keeps only tables (seeds, intermediate models and marts), and not
    the build's own record of the days its incremental models rewrote and of their inputs'
    fingerprints (schema build_state, which the working file keeps for the next build).
    """
    if not marts:
        raise PublishRefused("dbt reported no marts built: nothing published, the warehouse is unchanged")
    with duckdb.connect(str(work)) as con:
        con.sql("checkpoint")
    shutil.copyfile(work, staged)
    with duckdb.connect(str(staged)) as con:
        con.sql("drop schema if exists staging cascade")
        con.sql("drop schema if exists build_state cascade")
        con.sql("checkpoint")
    with duckdb.connect(str(staged), read_only=True) as con:
        present = {
            name
            for (name,) in con.execute(
                "select table_name from information_schema.tables "
                "where table_schema = ? and table_type = 'BASE TABLE'",
                [MARTS],
            ).fetchall()
        }
    missing = sorted(marts - present)
    if missing:
        raise PublishRefused(
            f"the built file lacks {len(missing)} of {len(marts)} marts ({', '.join(missing[:5])}): "
            "nothing published, the warehouse is unchanged"
        )
    fsync(staged)
    os.replace(staged, warehouse)
    fsync(warehouse.parent)
