"""The org map seed describes the same company the simulator runs."""

from __future__ import annotations

import polars as pl

from gpu_ledger.simulator.catalogue import SEEDS
from gpu_ledger.simulator.org import NAMESPACES, PROJECTS, SLURM_ACCOUNTS, TEAMS


def _org_map() -> pl.DataFrame:
    return pl.read_csv(SEEDS / "org_map.csv")


def _mapped(source_type: str) -> dict[str, tuple[str, str]]:
    rows = _org_map().filter(pl.col("source_type") == source_type)
    return {r["source_value"]: (r["team"], r["project"]) for r in rows.iter_rows(named=True)}


def test_namespaces_and_accounts_map_as_the_simulator_assumes():
    for source_type, truth in (("k8s_namespace", NAMESPACES), ("slurm_account", SLURM_ACCOUNTS)):
        mapped = _mapped(source_type)
        expected = {k: (PROJECTS[p], p) for k, p in truth.items() if p is not None}
        assert mapped == expected, source_type


def test_every_team_and_project_label_is_known_with_its_cost_centre():
    org = _org_map()
    assert set(_mapped("project_label")) == set(PROJECTS)
    assert set(_mapped("team_label")) == set(TEAMS)
    centres = {r["team"]: r["cost_centre"] for r in org.iter_rows(named=True)}
    assert centres == {name: team.cost_centre for name, team in TEAMS.items()}


def test_unmapped_sources_stay_unmapped():
    """The sandbox namespace and the guest account must reach the marts as `unallocated`."""
    assert "sandbox" not in _mapped("k8s_namespace")
    assert "guest" not in _mapped("slurm_account")
