"""The audit trail under OIDC sign-in (AppTest, the ID token's claims as Streamlit's st.user states
them): one sign-in line per ID token, and the Audit trail page, finance's only, filterable by person,
event, date and text."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from gpu_ledger.app import audit
from gpu_ledger.app.server import APP
from gpu_ledger.home import Home
from tests.app.apptest import open_page, window

ISSUER = "https://login.example.com"
NOW = int(time.time())  # a sign-in is good for SIGN_IN_HOURS from its ID token's iat


@pytest.fixture
def trail(warehouse: Path, tmp_path: Path, monkeypatch) -> Path:
    """The app under an oidc access config with a finance user and a lead, in a home of its own; the
    audit trail's path."""
    home = tmp_path / "home"
    home.mkdir()
    shutil.copyfile(warehouse, home / "warehouse.duckdb")
    monkeypatch.setenv("GPU_LEDGER_HOME", str(home))
    config = tmp_path / "access.yml"
    config.write_text(
        f"""
sign_in: {{mode: oidc, issuer: {ISSUER}, client_id: ledger, client_secret_env: S,
          redirect_uri: 'https://ledger.example.com/oauth2callback'}}
grants:
  - {{role: finance, groups: [finance]}}
  - {{role: lead, users: [lead@example.com], teams: ['{window(warehouse)[2]}']}}
"""
    )
    monkeypatch.setenv("GPU_LEDGER_ACCESS", str(config))
    return home / "audit" / "app.jsonl"


def signed_in(email: str, issued_at: int, *groups: str) -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.user = {"is_logged_in": True, "email": email, "groups": list(groups), "iss": ISSUER, "iat": issued_at}
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _events(path: Path) -> list[tuple[str, str]]:
    return [(e["who"], e["event"]) for e in map(json.loads, path.read_text().splitlines())]


def test_a_sign_in_is_recorded_once_per_id_token(trail):
    signed_in("lead@example.com", NOW - 900)
    signed_in("lead@example.com", NOW - 900)  # another tab, the same sign-in
    signed_in("lead@example.com", NOW)  # signed in again: a new ID token
    sign_ins = [e for e in _events(trail) if e[1] == "sign-in"]
    assert sign_ins == [("lead@example.com", "sign-in")] * 2
    first = json.loads(trail.read_text().splitlines()[0])
    assert (first["event"], first["role"]) == ("sign-in", "lead")
    assert _events(trail)[1] == ("lead@example.com", "page")  # then the page it opened


def test_finance_reads_and_filters_the_trail(trail):
    signed_in("lead@example.com", NOW - 200)
    cfo = signed_in("cfo@example.com", NOW - 100, "finance")
    cfo = open_page(cfo, "sql")
    cfo.text_area(key="sql_query").set_value("select count(*) from marts.dim_gpus")
    cfo.button(key="sql_run").click().run()
    cfo = open_page(cfo, "audit_trail")
    shown = cfo.dataframe[0].value
    assert set(shown["who"]) == {"lead@example.com", "cfo@example.com"}
    assert {"sign-in", "page", "sql"} <= set(shown["event"])
    assert list(shown["at"]) == sorted(shown["at"], reverse=True)  # newest first

    cfo.multiselect(key="audit_who").set_value(["lead@example.com"]).run()
    shown = cfo.dataframe[0].value
    assert set(shown["who"]) == {"lead@example.com"}
    assert list(shown["event"]) == ["page", "sign-in"]  # what the lead did, newest first
    assert set(shown.loc[shown["event"] == "sign-in", "role"]) == {"lead"}

    cfo.multiselect(key="audit_who").set_value([])
    cfo.multiselect(key="audit_events").set_value(["sql"]).run()
    assert list(cfo.dataframe[0].value["sql"]) == ["select count(*) from marts.dim_gpus"]

    cfo.multiselect(key="audit_events").set_value([])
    cfo.text_input(key="audit_text").set_value("DIM_GPUS").run()  # any case, in the SQL
    assert set(cfo.dataframe[0].value["event"]) == {"sql"}
    cfo.text_input(key="audit_text").set_value("nothing like this").run()
    assert cfo.dataframe[0].value.empty


def test_a_lead_cannot_open_or_read_the_trail(trail):
    lead = signed_in("lead@example.com", NOW)
    with pytest.raises(ValueError, match="Could not find a navigation page"):
        lead.switch_page("views/audit_trail.py")  # not registered: no link, no URL reaches it


def test_the_trail_reads_back_every_kind_of_line(tmp_path):
    """As written by this version and the one before it (no `event` key), a line cut short left out;
    read without an access config (everyone is finance)."""
    home = Home(tmp_path)
    audit.record(home, "cfo@example.com", "", event="sign-in", role="finance")
    audit.record(home, "cfo@example.com", "Overview", filters={"teams": ["nlp"]})
    with audit.path(home).open("a") as old:
        old.write('{"at": "2026-11-28T07:00:00+00:00", "page": "SQL", "sql": "select 1", "who": "a@x"}\n')
        old.write('{"at": "2026-11-28T07:00:01+00:00", "page": "Overview", "who": "a@x"}\n')
        old.write('{"at": "2026-11-28T07:00:02+00:00", "pa')
    frame = audit.trail(home)
    assert list(frame["event"]) == ["sign-in", "page", "sql", "page"]
    assert list(frame["role"]) == ["finance", "", "", ""]
    assert frame["filters"][1] == '{"teams": ["nlp"]}' and frame["sql"][2] == "select 1"
    assert str(frame["at"].dt.tz) == "UTC"


def test_the_trail_is_read_for_finance_only(tmp_path, monkeypatch):
    """The data layer refuses it too, not only the navigation: here nobody is signed in."""
    config = tmp_path / "access.yml"
    config.write_text(
        f"""
sign_in: {{mode: oidc, issuer: {ISSUER}, client_id: ledger, client_secret_env: S,
          redirect_uri: 'https://ledger.example.com/oauth2callback'}}
grants:
  - {{role: finance, groups: [finance]}}
"""
    )
    monkeypatch.setenv("GPU_LEDGER_ACCESS", str(config))
    home = Home(tmp_path)
    audit.record(home, "cfo@example.com", "SQL", sql="select 1")
    with pytest.raises(ValueError, match="for finance only"):
        audit.trail(home)
