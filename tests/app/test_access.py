"""access.yml, the scope it gives each identity, the proxy's headers, and the audit trail."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

from gpu_ledger.app import access, audit
from gpu_ledger.app.access import AccessError, Scope, load_access, scope_of
from gpu_ledger.home import Home

FINANCE = "grants: [{role: finance, users: [a]}]"
CONFIG = """
sign_in: {mode: proxy, header: X-Forwarded-Email, groups_header: X-Forwarded-Groups,
          proxies: [127.0.0.1, 10.0.4.0/24]}
grants:
  - {role: finance, groups: [finance], users: [cfo@example.com]}
  - {role: lead, users: [Alice@example.com], teams: [nlp-research, vision]}
  - {role: member, groups: [nlp], teams: [nlp-research]}
  - {role: member, users: [alice@example.com], teams: [speech]}
accounts:
  bob@example.com: [bob, bob2]
"""


def _load(tmp_path: Path, text: str):
    path = tmp_path / "access.yml"
    path.write_text(text)
    return load_access(path)


def test_a_config_gives_each_identity_its_scope(tmp_path):
    config = _load(tmp_path, CONFIG)
    assert config.mode == "proxy" and config.proxies == ("127.0.0.1", "10.0.4.0/24")
    assert scope_of(config, "CFO@example.com").everything
    assert scope_of(config, "carol@example.com", ("finance",)).everything
    # a lead of two teams and a member of a third: the lead's jobs, the three teams' figures
    assert scope_of(config, "alice@example.com") == Scope(
        who="alice@example.com",
        role="lead",
        teams=("nlp-research", "speech", "vision"),
        job_teams=("nlp-research", "vision"),
    )
    assert scope_of(config, "bob@example.com", ("nlp",)) == Scope(
        who="bob@example.com", role="member", teams=("nlp-research",), accounts=("bob", "bob2")
    )
    assert scope_of(config, "mallory@example.com", ("other",)).role == "none"
    assert scope_of(config, "  ").role == "none"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("sign_in: [", "while parsing"),
        ("- a", "expected a mapping with sign_in and grants"),
        (
            "sign_in: {mode: saml}\ngrants: [{role: finance, users: [a]}]",
            "sign_in.mode must be one of oidc, proxy",
        ),
        (
            "sign_in: {mode: proxy, header: X-Email, proxies: [10.0.0.0/33]}\n" + FINANCE,
            "sign_in.proxies: '10.0.0.0/33' is not an address or network",
        ),
        (
            "sign_in: {mode: proxy, header: X-Email}\ngrants: [{role: finance, users: [a]}]",
            "sign_in.proxies must list the proxy's addresses",
        ),
        (
            "sign_in: {mode: oidc, issuer: http://login.example.com, client_id: x, client_secret_env: S, "
            "redirect_uri: https://app.example.com/oauth2callback}\ngrants: [{role: finance, users: [a]}]",
            "sign_in.issuer must be an https:// URL",
        ),
        (
            "sign_in: {mode: oidc, issuer: https://x}\ngrants: [{role: finance, users: [a]}]",
            "sign_in.client_id is required for oidc",
        ),
        (
            "sign_in: {mode: proxy, header: X, proxies: ['::1'], issuer: https://x}\n" + FINANCE,
            "sign_in.issuer is not a proxy setting",
        ),
        (
            "sign_in: {mode: proxy, header: X, proxies: ['::1']}\ngrants: []",
            "grants must be a non-empty list",
        ),
        (
            "sign_in: {mode: proxy, header: X, proxies: ['::1']}\ngrants: [{role: boss, users: [a]}]",
            "grants[1].role must be one of finance, lead, member",
        ),
        (
            "sign_in: {mode: proxy, header: X, proxies: ['::1']}\ngrants: [{role: lead, users: [a]}]",
            "grants[1] is a lead of no team: list its teams",
        ),
        (
            "sign_in: {mode: proxy, header: X, proxies: ['::1']}\ngrants: [{role: finance}]",
            "grants[1] names no users or groups",
        ),
        (
            "sign_in: {mode: proxy, header: X, proxies: ['::1']}\ngrants: [{role: finance, user: [a]}]",
            "grants[1].user is not a grant key",
        ),
        (
            "sign_in: {mode: proxy, header: X, proxies: ['::1']}\nroles: {}\n" + FINANCE,
            "unknown key 'roles'",
        ),
    ],
)
def test_a_bad_config_is_refused_in_one_line(tmp_path, text, message):
    with pytest.raises(AccessError) as caught:
        _load(tmp_path, text)
    assert message in str(caught.value) and "\n" not in str(caught.value), str(caught.value)
    assert str(caught.value).startswith(str(tmp_path / "access.yml"))


def test_the_proxys_header_counts_only_from_the_proxy(tmp_path):
    config = _load(tmp_path, CONFIG)
    headers = {"X-Forwarded-Email": "bob@example.com", "X-Forwarded-Groups": "nlp, staff"}
    assert access.from_proxy(config, headers, "10.0.4.7") == ("bob@example.com", ("nlp", "staff"))
    assert access.from_proxy(config, headers, None) == ("bob@example.com", ("nlp", "staff"))  # loopback
    assert access.from_proxy(config, headers, "10.0.5.7") is None  # not the proxy: anyone's header
    assert access.from_proxy(config, headers, "::1") is None
    assert access.from_proxy(config, {}, "10.0.4.7") is None  # the proxy let someone through unsigned
    from streamlit.runtime.context import StreamlitHeaders  # what st.context.headers is

    twice = StreamlitHeaders(
        [("x-forwarded-email", "cfo@example.com"), ("X-Forwarded-Email", "bob@example.com")]
    )
    assert (
        access.from_proxy(config, twice, "10.0.4.7") is None
    )  # the browser's copy passed on beside the proxy's
    once = StreamlitHeaders([("x-forwarded-email", "bob@example.com")])
    assert access.from_proxy(config, once, "10.0.4.7") == ("bob@example.com", ())


OIDC = (
    "sign_in: {mode: oidc, issuer: 'https://login.example.com/realms/x/', client_id: ledger, %s"
    "client_secret_env: S, redirect_uri: 'https://app.example.com/oauth2callback'}\n" + FINANCE
)


def test_the_oidc_secrets_name_the_issuers_discovery(tmp_path):
    import tomllib

    config = _load(tmp_path, OIDC % "")
    with pytest.raises(AccessError, match="S is not set"):
        access.secrets_toml(config, {})
    auth = tomllib.loads(access.secrets_toml(config, {"S": 'se"cret'}))["auth"]
    assert auth["client_secret"] == 'se"cret' and auth["client_id"] == "ledger"
    assert (
        auth["server_metadata_url"] == "https://login.example.com/realms/x/.well-known/openid-configuration"
    )
    assert len(auth["cookie_secret"]) >= 32
    assert auth["client_kwargs"] == {"scope": "openid email profile"}
    groups = _load(tmp_path, OIDC % "scopes: [openid, email, groups], ")
    auth = tomllib.loads(access.secrets_toml(groups, {"S": "x"}))["auth"]
    assert auth["client_kwargs"] == {"scope": "openid email groups"}
    with pytest.raises(AccessError, match="sign_in.scopes must include openid and email"):
        _load(tmp_path, OIDC % "scopes: [openid], ")


def _parse(sql: str) -> dict:
    with duckdb.connect() as con:
        return json.loads(con.execute("select json_serialize_sql(?)", [sql]).fetchone()[0])


def test_the_scope_rewrites_every_mart_a_query_reads():
    lead = Scope(who="a", role="lead", teams=("nlp", "o'brien"), job_teams=("nlp",))
    sql = (
        "with t as (select team, sum(cost) as c from marts.fct_cost_by_owner_daily where day >= ? "
        "group by 1) "
        "select * from t join marts.fct_job_costs as j using (team) join marts.dim_gpus g on true"
    )
    scoped = access.scoped(sql, lead, _parse)
    assert (
        "(select * from marts.\"fct_cost_by_owner_daily\" where team in ('nlp', 'o''brien')) "
        'as "fct_cost_by_owner_daily"' in scoped
    )
    assert (
        '(select * from marts."fct_job_costs" where job_key in (select job_key from marts.dim_jobs' in scoped
    )
    assert scoped.endswith('(select * from marts."dim_gpus" where true) as "g" on true')
    assert access.scoped(sql, access.EVERYTHING, _parse) == sql
    # DuckDB counts the places of tables in bytes: text before them that is not ASCII moves nothing
    euro = access.scoped("select '€ – ✓' as unit, * from marts.dim_jobs where name <> 'é'", lead, _parse)
    assert euro.startswith(
        "select '€ – ✓' as unit, * from (select * from marts.\"dim_jobs\" where (team in ('nlp')"
    )
    assert euro.endswith(") as \"dim_jobs\" where name <> 'é'")
    assert "where false" in access.scoped("select * from marts.fct_data_loads", lead, _parse)
    for refused in (
        "select * from intermediate.int_x",
        "select * from marts.dim_gpus g(a)",
        "pivot marts.x on y",
    ):
        with pytest.raises(access.ScopeError):
            access.scoped(refused, lead, _parse)


def test_the_audit_trail_is_one_json_line_a_read(tmp_path):
    home = Home(tmp_path)
    audit.record(home, "bob@example.com", "Overview", filters={"teams": ("nlp",)})
    audit.record(home, "cfo@example.com", "SQL", sql="select 1\nfrom marts.dim_gpus")
    lines = (tmp_path / "audit" / "app.jsonl").read_text().splitlines()
    first, second = (json.loads(line) for line in lines)
    assert first["who"] == "bob@example.com" and first["page"] == "Overview"
    assert first["filters"] == {"teams": ["nlp"]} and "sql" not in first
    assert second["sql"] == "select 1\nfrom marts.dim_gpus" and second["at"].endswith("+00:00")
    assert (tmp_path / "audit" / "app.jsonl").stat().st_mode & 0o077 == 0


class _Context:
    """What st.context gives the app of a connection: its headers and its peer's address."""

    def __init__(self, headers: dict, ip_address: str | None) -> None:
        self.headers, self.ip_address = headers, ip_address


def test_proxy_mode_trusts_the_header_only_where_the_server_keeps_each_peers_address(tmp_path, monkeypatch):
    import streamlit as st

    path = tmp_path / "access.yml"
    path.write_text(CONFIG)
    monkeypatch.setenv("GPU_LEDGER_ACCESS", str(path))
    headers = {"X-Forwarded-Email": "bob@example.com", "X-Forwarded-Groups": "nlp"}
    monkeypatch.setattr(st, "context", _Context(headers, "10.0.4.9"))
    monkeypatch.delenv("FORWARDED_ALLOW_IPS", raising=False)  # uvicorn would rewrite a loopback peer
    assert access.current() == access.NOBODY
    monkeypatch.setenv("FORWARDED_ALLOW_IPS", "")  # as gpu-ledger app starts it (app.server.environment)
    assert access.current().accounts == ("bob", "bob2") and access.current().role == "member"
    monkeypatch.setattr(st, "context", _Context(headers, "192.0.2.1"))  # straight to the app, header forged
    assert access.current() == access.NOBODY
    monkeypatch.delenv("GPU_LEDGER_ACCESS")
    assert access.current() == access.EVERYTHING  # served without an access config: loopback or --no-auth


def test_the_app_behind_a_proxy_shows_nothing_to_a_connection_without_its_header(tmp_path, monkeypatch):
    from streamlit.testing.v1 import AppTest

    from gpu_ledger.app.server import APP

    path = tmp_path / "access.yml"
    path.write_text(CONFIG)
    monkeypatch.setenv("GPU_LEDGER_ACCESS", str(path))
    monkeypatch.setenv("GPU_LEDGER_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("FORWARDED_ALLOW_IPS", "")
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert [e.value for e in at.error] == ["Not signed in: open GPU Ledger through its sign-in proxy."]
    assert not at.metric and not at.sidebar.multiselect and not at.warning  # not even "no warehouse yet"
