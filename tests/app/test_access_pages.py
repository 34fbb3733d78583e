"""The pages under sign-in (AppTest, OIDC as Streamlit's st.user states it): each role sees exactly its
scope, figures checked against the marts filtered by hand."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from gpu_ledger.app.server import APP
from gpu_ledger.read.formats import money
from gpu_ledger.read.warehouse import query
from tests.app.apptest import frame_with, metric, open_page, scalar, window

ISSUER = "https://login.example.com"


@pytest.fixture
def people(warehouse: Path, tmp_path: Path, monkeypatch) -> dict:
    """An access config over the session's fleet: a finance user, a lead and a member of its busiest
    team (the member runs that team's most jobs), and the app pointed at it, in a home of its own (the
    audit trail is written there)."""
    home = tmp_path / "home"
    home.mkdir()
    shutil.copyfile(warehouse, home / "warehouse.duckdb")
    monkeypatch.setenv("GPU_LEDGER_HOME", str(home))
    team = window(warehouse)[2]
    account = query(
        warehouse,
        'select "user" from marts.dim_jobs where team = ? group by 1 order by count(*) desc, 1 limit 1',
        [team],
    ).item()
    config = tmp_path / "access.yml"
    config.write_text(
        f"""
sign_in: {{mode: oidc, issuer: {ISSUER}, client_id: ledger, client_secret_env: S,
          redirect_uri: 'https://ledger.example.com/oauth2callback'}}
grants:
  - {{role: finance, groups: [finance]}}
  - {{role: lead, users: [lead@example.com], teams: ['{team}']}}
  - {{role: member, groups: [staff], teams: ['{team}']}}
accounts:
  member@example.com: ['{account}']
"""
    )
    monkeypatch.setenv("GPU_LEDGER_ACCESS", str(config))
    return {"team": team, "account": account, "audit": home / "audit" / "app.jsonl"}


def signed_in(email: str, *groups: str, query_params: dict | None = None) -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.user = {"is_logged_in": True, "email": email, "groups": list(groups), "iss": ISSUER}
    at.query_params = query_params or {}
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _team_spend(warehouse: Path, team: str) -> str:
    return money(
        scalar(warehouse, f"select sum(total_cost) from marts.fct_cost_by_owner_daily where team = '{team}'")
    )


def _jobs(at: AppTest) -> set[str]:
    return set(frame_with(open_page(at, "jobs"), "user", "job_key")["job_key"])


def _job_keys(warehouse: Path, where: str) -> set[str]:
    return set(query(warehouse, f"select job_key from marts.dim_jobs where {where}")["job_key"])


def test_a_member_sees_their_teams_figures_and_only_their_own_jobs(people, warehouse):
    team, account = people["team"], people["account"]
    other = query(warehouse, "select min(team) from marts.dim_jobs where team <> ?", [team]).item()
    at = signed_in("member@example.com", "staff", query_params={"team": other})  # another team by URL
    assert metric(at, "GPU spend") == _team_spend(warehouse, team)
    assert metric(at, "GPU spend") != _team_spend(warehouse, other)
    assert at.multiselect(key="filter_teams").options == [team]
    assert _jobs(at) == _job_keys(warehouse, f"\"user\" = '{account}'") != set()
    mine = _job_keys(warehouse, f"\"user\" = '{account}'")
    assert mine < _job_keys(warehouse, f"team = '{team}'")  # not the team's other jobs
    for page in ("showback", "budgets", "waste"):  # every page of theirs runs under the scope
        open_page(at, page)
    read = [json.loads(line) for line in people["audit"].read_text().splitlines()]
    assert {entry["who"] for entry in read} == {"member@example.com"}
    assert [e["page"] for e in read][-4:] == ["Jobs & training runs", "Showback", "Budgets", "Waste"]


def test_a_member_gets_no_sql_page_and_no_fleet_pages(people, warehouse):
    at = signed_in("member@example.com", "staff")
    open_page(at, "jobs")  # a page of theirs
    for page in ("sql", "owners", "data_health", "purchasing", "business", "ai_spend", "capacity"):
        with pytest.raises(ValueError, match="Could not find a navigation page"):
            at.switch_page(f"views/{page}.py")  # not registered: no link, no URL reaches it


def test_a_lead_sees_every_job_of_their_teams(people, warehouse):
    team = people["team"]
    at = signed_in("lead@example.com")
    assert metric(at, "GPU spend") == _team_spend(warehouse, team)
    assert _jobs(at) == _job_keys(warehouse, f"team = '{team}'")
    for page in ("showback", "budgets", "waste"):
        open_page(at, page)


def test_finance_sees_everything_and_the_sql_page(people, warehouse):
    at = signed_in("cfo@example.com", "finance")
    assert metric(at, "GPU spend") == money(
        scalar(warehouse, "select sum(total_cost) from marts.fct_cost_by_owner_daily")
    )
    teams = query(warehouse, "select distinct team from marts.fct_cost_by_owner_daily order by 1")["team"]
    assert at.multiselect(key="filter_teams").options == list(teams)  # not a member's cached choices
    at = open_page(at, "sql")
    at.text_area(key="sql_query").set_value("select count(*) from marts.dim_jobs")
    at.button(key="sql_run").click()
    at.run()
    assert int(at.dataframe[0].value.iloc[0, 0]) == int(
        scalar(warehouse, "select count(*) from marts.dim_jobs")
    )
    last = json.loads(people["audit"].read_text().splitlines()[-1])
    assert (last["who"], last["page"], last["sql"]) == (
        "cfo@example.com",
        "SQL",
        "select count(*) from marts.dim_jobs",
    )


def test_no_one_signed_in_is_offered_the_sign_in_and_nothing_else(people):
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.user = {"is_logged_in": False}
    at.run()
    assert [b.label for b in at.button] == ["Sign in"] and not at.metric
    stranger = signed_in("mallory@example.com", "contractors")
    assert "mallory@example.com is not granted" in stranger.error[0].value and not stranger.metric
    forged = signed_in("cfo@example.com", "finance")
    forged.user = {**forged.user, "iss": "https://evil.example.com"}  # signed in at another provider
    forged.run()
    assert not forged.metric


def test_the_data_layer_refuses_sql_outside_a_signed_in_finance_session(people):
    from gpu_ledger.app import data
    from gpu_ledger.app.access import ScopeError

    with pytest.raises(ScopeError, match="finance only"):
        data.run_user_sql("select 1")
