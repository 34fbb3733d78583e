"""Who is looking, and what they may see: the access config (access.yml, docs/access.md) and the scope
every read of the app runs under.

Kept beside the business CSVs, as owners.yml is:

    sign_in:
      mode: oidc                     # Streamlit's own st.login; .streamlit/secrets.toml [auth] holds
      issuer: https://login.example.com   # the same issuer, client id and secret (docs/access.md)
      client_id: gpu-ledger
      client_secret_env: GPU_LEDGER_OIDC_SECRET
      redirect_uri: https://gpu-ledger.example.com/oauth2callback
      scopes: [openid, email, profile, groups]   # optional; openid email profile by default
    # or
    sign_in:
      mode: proxy                    # behind oauth2-proxy or a cloud identity proxy
      header: X-Forwarded-Email
      groups_header: X-Forwarded-Groups     # optional
      proxies: [127.0.0.1, 10.0.4.0/24]     # only connections from these may set the headers
    grants:
      - {role: finance, groups: [finance, gpu-admins]}
      - {role: lead, users: [alice@example.com], teams: [nlp-research]}
      - {role: member, groups: [nlp], teams: [nlp-research]}
    accounts:                        # a signed-in identity's scheduler user names: their own jobs
      bob@example.com: [bob]

finance sees everything and the SQL page; a lead their teams' figures and every job of their teams; a
member their teams' figures and their own jobs. Someone no grant names sees nothing.
"""

from __future__ import annotations

import functools
import ipaddress
import json
import os
import secrets
import time
from dataclasses import dataclass
from pathlib import Path

import streamlit as st
import yaml

ROLES = ("finance", "lead", "member")  # most powerful first
SIGN_IN_HOURS = 12  # an OIDC sign-in (its ID token's iat) is good for a working day, then Sign in again
MODES = ("oidc", "proxy")


class AccessError(ValueError):
    """access.yml is missing, is not YAML, or says something this module cannot use."""


@dataclass(frozen=True)
class Grant:
    role: str
    users: tuple[str, ...] = ()
    groups: tuple[str, ...] = ()
    teams: tuple[str, ...] = ()


@dataclass(frozen=True)
class Access:
    mode: str
    grants: tuple[Grant, ...]
    accounts: dict[str, tuple[str, ...]]
    issuer: str = ""
    client_id: str = ""
    client_secret_env: str = ""
    redirect_uri: str = ""
    scopes: tuple[str, ...] = ()
    header: str = ""
    groups_header: str = ""
    proxies: tuple[str, ...] = ()


@dataclass(frozen=True)
class Scope:
    """What one signed-in person may read: everything, or the figures of `teams`, every job of
    `job_teams`, and the jobs run under their own scheduler `accounts`."""

    who: str
    role: str
    teams: tuple[str, ...] = ()
    job_teams: tuple[str, ...] = ()
    accounts: tuple[str, ...] = ()

    @property
    def everything(self) -> bool:
        return self.role == "finance"


EVERYTHING = Scope(who="", role="finance")  # the app served without an access config
NOBODY = Scope(who="", role="none")


def load_access(path: Path) -> Access:
    """Read and check access.yml; an AccessError names the file and what is wrong, in one line."""
    try:
        spec = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise AccessError(f"{path}: {' '.join(str(exc).split())}") from exc
    if not isinstance(spec, dict):
        raise AccessError(f"{path}: expected a mapping with sign_in and grants")
    unknown = set(spec) - {"sign_in", "grants", "accounts"}
    if unknown:
        raise AccessError(f"{path}: unknown key {sorted(unknown)[0]!r} (sign_in, grants, accounts)")
    sign_in = spec.get("sign_in")
    if not isinstance(sign_in, dict) or sign_in.get("mode") not in MODES:
        raise AccessError(f"{path}: sign_in.mode must be one of {', '.join(MODES)}")
    grants = spec.get("grants")
    if not isinstance(grants, list) or not grants:
        raise AccessError(f"{path}: grants must be a non-empty list")
    accounts = spec.get("accounts") or {}
    if not isinstance(accounts, dict):
        raise AccessError(f"{path}: accounts must map a signed-in identity to scheduler user names")
    return Access(
        grants=tuple(_grant(path, n, g) for n, g in enumerate(grants, 1)),
        accounts={str(who).lower(): _names(path, f"accounts.{who}", v) for who, v in accounts.items()},
        **_sign_in(path, sign_in),
    )


def _sign_in(path: Path, spec: dict) -> dict:
    mode = spec["mode"]
    keys = {
        "oidc": ("issuer", "client_id", "client_secret_env", "redirect_uri", "scopes"),
        "proxy": ("header", "groups_header", "proxies"),
    }[mode]
    unknown = set(spec) - {"mode", *keys}
    if unknown:
        raise AccessError(f"{path}: sign_in.{sorted(unknown)[0]} is not a {mode} setting ({', '.join(keys)})")
    if mode == "oidc":
        scopes = _names(path, "sign_in.scopes", spec.get("scopes")) or ("openid", "email", "profile")
        if not {"openid", "email"} <= set(scopes):
            raise AccessError(f"{path}: sign_in.scopes must include openid and email")
        for key in keys[:-1]:
            if not isinstance(spec.get(key), str) or not spec[key].strip():
                raise AccessError(f"{path}: sign_in.{key} is required for oidc")
        for key in ("issuer", "redirect_uri"):
            if not spec[key].startswith(("https://", "http://localhost", "http://127.0.0.1")):
                raise AccessError(f"{path}: sign_in.{key} must be an https:// URL")
        return {"mode": mode, "scopes": scopes, **{key: spec[key].strip() for key in keys[:-1]}}
    if not isinstance(spec.get("header"), str) or not spec["header"].strip():
        raise AccessError(f"{path}: sign_in.header is required for proxy (e.g. X-Forwarded-Email)")
    proxies = _names(path, "sign_in.proxies", spec.get("proxies"))
    if not proxies:
        raise AccessError(f"{path}: sign_in.proxies must list the proxy's addresses")
    for proxy in proxies:
        try:
            ipaddress.ip_network(proxy)
        except ValueError:
            raise AccessError(f"{path}: sign_in.proxies: {proxy!r} is not an address or network") from None
    return {
        "mode": mode,
        "header": spec["header"].strip(),
        "groups_header": str(spec.get("groups_header") or "").strip(),
        "proxies": proxies,
    }


def _grant(path: Path, number: int, spec) -> Grant:
    where = f"grants[{number}]"
    if not isinstance(spec, dict):
        raise AccessError(f"{path}: {where} must be a mapping with role, users or groups, teams")
    unknown = set(spec) - {"role", "users", "groups", "teams"}
    if unknown:
        key = sorted(unknown)[0]
        raise AccessError(f"{path}: {where}.{key} is not a grant key (role, users, groups, teams)")
    if spec.get("role") not in ROLES:
        raise AccessError(f"{path}: {where}.role must be one of {', '.join(ROLES)}")
    grant = Grant(
        role=spec["role"],
        users=tuple(u.lower() for u in _names(path, f"{where}.users", spec.get("users"))),
        groups=_names(path, f"{where}.groups", spec.get("groups")),
        teams=_names(path, f"{where}.teams", spec.get("teams")),
    )
    if not grant.users and not grant.groups:
        raise AccessError(f"{path}: {where} names no users or groups")
    if grant.role != "finance" and not grant.teams:
        raise AccessError(f"{path}: {where} is a {grant.role} of no team: list its teams")
    return grant


def _names(path: Path, where: str, value) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str | int) and str(v).strip() for v in value):
        raise AccessError(f"{path}: {where} must be a list of names")
    return tuple(str(v).strip() for v in value)


def secrets_toml(access: Access, environ: dict) -> str:
    """The `[auth]` section Streamlit's st.login reads, from an oidc config: the client secret from the
    environment variable it names, a fresh cookie-signing secret (a restart signs everyone out)."""
    secret = environ.get(access.client_secret_env)
    if not secret:
        raise AccessError(f"{access.client_secret_env} is not set: it holds the OIDC client secret")
    values = {
        "redirect_uri": access.redirect_uri,
        "cookie_secret": secrets.token_urlsafe(32),
        "client_id": access.client_id,
        "client_secret": secret,
        "server_metadata_url": access.issuer.rstrip("/") + "/.well-known/openid-configuration",
    }
    lines = [f"{key} = {json.dumps(value)}" for key, value in values.items()]
    lines.append(f"client_kwargs = {{ scope = {json.dumps(' '.join(access.scopes))} }}")
    return "\n".join(["[auth]", *lines, ""])


def scope_of(access: Access, who: str, groups: tuple[str, ...] = ()) -> Scope:
    """The scope of a signed-in identity (an email, as the provider or the proxy states it) and its
    groups: the most powerful role any grant gives it, with the teams of every grant."""
    who = who.strip().lower()
    if not who:
        return NOBODY
    mine = [g for g in access.grants if who in g.users or set(groups) & set(g.groups)]
    if not mine:
        return Scope(who=who, role="none")
    role = min((g.role for g in mine), key=ROLES.index)
    if role == "finance":
        return Scope(who=who, role=role)
    return Scope(
        who=who,
        role=role,
        teams=_union(g.teams for g in mine),
        job_teams=_union(g.teams for g in mine if g.role == "lead"),
        accounts=access.accounts.get(who, ()),
    )


def _union(lists) -> tuple[str, ...]:
    return tuple(sorted({name for names in lists for name in names}))


def from_proxy(access: Access, headers, peer: str | None) -> tuple[str, tuple[str, ...]] | None:
    """The identity and groups the proxy's headers state, or None: None too when the connection came
    from an address that is not one of the configured proxies (the headers are then anyone's).

    `peer` is the connection's address; Streamlit gives None for a loopback connection."""
    try:
        address = ipaddress.ip_address(peer or "127.0.0.1")
    except ValueError:
        return None
    if not any(address in ipaddress.ip_network(p) for p in access.proxies):
        return None
    who = (_one(headers, access.header) or "").strip()
    if not who:
        return None
    raw = _one(headers, access.groups_header) if access.groups_header else None
    groups = tuple(g.strip() for g in (raw or "").split(",") if g.strip())
    return who, groups


def _one(headers, name: str) -> str | None:
    """The header's value; None when it is missing or repeated (a browser's own copy passed on beside
    the proxy's: which is which cannot be told)."""
    values = (
        headers.get_all(name) if hasattr(headers, "get_all") else [headers[name]] if name in headers else []
    )
    return values[0] if len(values) == 1 else None


# --- the scope applied to SQL ----------------------------------------------------------------------

TEAM_COLUMN = {  # marts of team figures: the column naming the team
    "fct_cost_by_owner_daily": "team",
    "fct_budget_status": "team",
    "fct_team_cost_anomalies": "team",
    "fct_gpu_hours": "owner_team",
    "fct_inference_pool_hours": "team",
    "fct_purchasing_recommendations": "team",
    "fct_idle_machine_recommendations": "team",
    "fct_inference_pool_recommendations": "team",
    "fct_rightsizing_recommendations": "team",
    "fct_spot_move_recommendations": "team",
}
JOB_KEY = {  # marts of jobs: the column the job's dim_jobs row is found by
    "fct_job_costs": "job_key",
    "fct_gpu_hour_allocations": "job_key",
    "fct_rightsizing_candidates": "job_key",
    "fct_idle_gpu_periods": "job_key",
    "fct_training_run_costs": "run_key",
}
SCOPED_PAGES = frozenset({"overview", "showback", "budgets", "waste", "jobs"})  # pages for leads and members
FLEET = frozenset({"dim_dates", "dim_gpus", "fct_capacity_daily", "fct_data_freshness"})  # no team's data


class ScopeError(ValueError):
    """A query the scope cannot be applied to: it is refused rather than run unscoped."""


def _quoted(names: tuple[str, ...]) -> str:
    return ", ".join("'" + name.replace("'", "''") + "'" for name in names) or "null"


def mart_filter(scope: Scope, mart: str) -> str:
    """The predicate that keeps what `scope` may read of marts.<mart> (`false` for a mart it may not)."""
    if scope.everything or mart in FLEET:
        return "true"
    mine = f'"user" in ({_quoted(scope.accounts)})'
    if mart == "dim_jobs":
        return f"(team in ({_quoted(scope.job_teams)}) or {mine})"
    if mart in JOB_KEY:
        key = JOB_KEY[mart]
        jobs = f"select {key} from marts.dim_jobs where team in ({_quoted(scope.job_teams)}) or {mine}"
        return f"{key} in ({jobs})"
    if mart in TEAM_COLUMN:
        return f"{TEAM_COLUMN[mart]} in ({_quoted(scope.teams)})"
    return "false"


def scoped(sql: str, scope: Scope, parse) -> str:
    """`sql` with every mart it reads replaced by the rows `scope` may see of it.

    `parse(sql)` is DuckDB's own parse of the statement (`json_serialize_sql`): the tables are found
    where DuckDB finds them, and the text is otherwise left as written. A table outside `marts`, or a
    statement DuckDB cannot serialise, raises ScopeError."""
    if scope.everything:
        return sql
    tree = parse(sql)
    if tree.get("error"):
        raise ScopeError(f"the query cannot be scoped: {tree.get('error_message', 'not a select')}")
    spans: list[tuple[int, int, str, str]] = []
    _tables(tree, scope, spans)
    text = sql.encode()  # DuckDB's query locations count bytes of UTF-8, not characters
    for start, end, name, replacement in sorted(spans, reverse=True):
        if name.lower() not in text[start:end].decode(errors="replace").lower():
            raise ScopeError(f"the query cannot be scoped: marts.{name} is not where DuckDB says")
        text = text[:start] + replacement.encode() + text[end:]
    return text.decode()


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _tables(node, scope: Scope, spans: list) -> None:
    if isinstance(node, list):
        for item in node:
            _tables(item, scope, spans)
        return
    if not isinstance(node, dict):
        return
    if node.get("type") == "BASE_TABLE":
        schema, name = node["schema_name"], node["table_name"]
        if schema == "" and node["catalog_name"] == "":
            return  # a common table expression: marts are always named with their schema
        if schema != "marts" or node["column_name_alias"]:
            raise ScopeError(f"{schema}.{name} cannot be read here")
        start = node["query_location"]
        rows = f"(select * from marts.{_ident(name)} where {mart_filter(scope, name)})"
        spans.append(
            (start, start + node["query_location_length"], name, f"{rows} as {_ident(node['alias'] or name)}")
        )
        return
    for value in node.values():
        _tables(value, scope, spans)


# --- the signed-in person, in a Streamlit session ---------------------------------------------------

ACCESS_ENV = "GPU_LEDGER_ACCESS"  # the access config's path, set by `gpu-ledger app --access`
TRUSTED_FORWARDERS_ENV = "FORWARDED_ALLOW_IPS"  # uvicorn's: empty, it keeps every connection's own address


def config() -> Access | None:
    """The access config the app was started with, or None: served without one (loopback or --no-auth)."""
    path = os.environ.get(ACCESS_ENV)
    if not path:
        return None
    return _load(path, Path(path).stat().st_mtime_ns)


@functools.lru_cache(maxsize=4)
def _load(path: str, version: int) -> Access:
    del version  # part of the cache key only
    return load_access(Path(path))


def current() -> Scope:
    """The scope of whoever this session's browser is: everything without an access config, NOBODY
    when no one is signed in or the sign-in cannot be trusted."""
    access = config()
    if access is None:
        return EVERYTHING
    if access.mode == "oidc":
        user = st.user
        issuer = str(user.get("iss") or access.issuer).rstrip("/")
        if not user.get("is_logged_in") or issuer != access.issuer.rstrip("/"):
            return NOBODY  # signed in at another provider than the config names
        issued = user.get("iat")  # every ID token has one (Authlib refuses a token without)
        if isinstance(issued, int | float) and time.time() - issued > SIGN_IN_HOURS * 3600:
            return NOBODY  # Streamlit's cookie would keep it for 30 days: sign in again
        groups = user.get("groups")
        groups = tuple(str(g) for g in groups) if isinstance(groups, list) else ()
        return scope_of(access, str(user.get("email") or ""), groups)
    if os.environ.get(TRUSTED_FORWARDERS_ENV) != "":
        return NOBODY  # uvicorn would take the address from X-Forwarded-For: the peer is not known
    found = from_proxy(access, st.context.headers, st.context.ip_address)
    return NOBODY if found is None else scope_of(access, *found)


def token_issued_at() -> int | None:
    """When the signed-in person's ID token was issued (its `iat`: a new one at every sign-in), with
    OIDC; None behind a proxy, or served without an access config."""
    access = config()
    if access is None or access.mode != "oidc":
        return None
    issued = st.user.get("iat")
    return issued if isinstance(issued, int) else None


def gate() -> Scope:
    """Stop the page for anyone who may see nothing, saying why (and offering the sign-in)."""
    scope = current()
    access = config()
    if scope.role in ROLES:
        if scope.who:
            st.sidebar.caption(f"Signed in as {scope.who} ({scope.role})")
        if scope.who and access is not None and access.mode == "oidc":
            st.sidebar.button("Sign out", on_click=st.logout, icon=":material/logout:", key="access_sign_out")
        return scope
    if access is not None and access.mode == "oidc" and not scope.who:
        st.title("GPU Ledger")
        st.button("Sign in", on_click=st.login, icon=":material/login:", key="access_sign_in")
    elif scope.who:
        st.error(f"{scope.who} is not granted any view of GPU Ledger: ask its administrators.")
    else:
        st.error("Not signed in: open GPU Ledger through its sign-in proxy.")
    st.stop()
    return scope
