"""Signing in with OpenID Connect for real: an OpenID provider on loopback (oidc-provider-mock: discovery,
keys, client registration, the code flow with a nonce), `gpu-ledger app --access access.yml`, and a
headless Chromium that signs in through the provider's own pages. Each role sees what its grant allows,
the audit trail records each sign-in, and no forged, misaddressed or expired ID token, nor a cookie
made without the app's secret, signs anyone in."""

from __future__ import annotations

import base64
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from gpu_ledger.app.figures import compact
from tests.app.apptest import scalar, window
from tests.app.test_browser import ARGS, CHROMIUM

pytestmark = pytest.mark.slow
oidc_provider_mock = pytest.importorskip(
    "oidc_provider_mock", reason="pip oidc-provider-mock is not installed"
)

FINANCE, LEAD, MEMBER = "cfo@example.com", "lead@example.com", "member@example.com"
STRANGER = "late@example.com"  # the forged tokens' address: finance, were any of them believed


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _unpadded(part: str) -> bytes:
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


class ForgedSignature:
    """The provider, except that the ID token it issues to `sub` is signed again with a key of the
    forger's own (claims unchanged, a key the provider's JWKS does not publish)."""

    def __init__(self, provider, sub: str):
        from joserfc.jwk import RSAKey

        self.provider, self.sub, self.key = provider, sub, RSAKey.generate_key(2048)

    def __call__(self, environ, start_response):
        if environ.get("PATH_INFO") != "/oauth2/token":
            return self.provider(environ, start_response)
        said: dict = {}

        def keep(status, headers, exc_info=None):
            said.update(status=status, headers=headers)

        body = b"".join(self.provider(environ, keep))
        reply = json.loads(body) if said["status"].startswith("200") else {}
        if "id_token" in reply and json.loads(_unpadded(reply["id_token"].split(".")[1]))["sub"] == self.sub:
            from joserfc import jwt

            claims = json.loads(_unpadded(reply["id_token"].split(".")[1]))
            reply["id_token"] = jwt.encode({"alg": "RS256"}, claims, self.key)
            body = json.dumps(reply).encode()
        headers = [(k, v) for k, v in said["headers"] if k.lower() != "content-length"]
        start_response(said["status"], [*headers, ("Content-Length", str(len(body)))])
        return [body]


@contextmanager
def provider(users) -> Iterator[str]:
    """An OpenID provider on a free port of 127.0.0.1 that knows `users`, requires clients to register
    and a nonce on every request; yields its issuer URL."""
    import werkzeug.serving

    app = oidc_provider_mock.app(require_client_registration=True, require_nonce=True, user_claims=users)
    server = werkzeug.serving.make_server("127.0.0.1", 0, ForgedSignature(app, "forged"), threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        thread.join(10)


def register(issuer: str, redirect_uri: str) -> dict:
    """Register a web client with the provider (RFC 7591), as an administrator registers GPU Ledger."""
    request = urllib.request.Request(
        f"{issuer}/oauth2/clients",
        data=json.dumps({"redirect_uris": [redirect_uri]}).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10) as reply:
        return json.load(reply)


@contextmanager
def app_signing_in_at(home: Path, issuer: str, grants: str, tmp_path: Path) -> Iterator[str]:
    """`gpu-ledger app --access access.yml` over `home` on a free port, signing in at `issuer` with a
    client registered there; yields its URL once it answers /_stcore/health."""
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    client = register(issuer, f"{url}/oauth2callback")
    config = tmp_path / "access.yml"
    config.write_text(
        f"""
sign_in:
  mode: oidc
  issuer: '{issuer}'
  client_id: '{client["client_id"]}'
  client_secret_env: TEST_OIDC_SECRET
  redirect_uri: '{url}/oauth2callback'
{grants}"""
    )
    env = {**os.environ, "TEST_OIDC_SECRET": client["client_secret"], "GPU_LEDGER_HOME": str(home)}
    env.pop("GPU_LEDGER_ACCESS", None)
    command = [sys.executable, "-m", "gpu_ledger.cli", "app", "--port", str(port), "--access", str(config)]
    log = tmp_path / "app.log"
    with log.open("wb") as out:
        server = subprocess.Popen(
            command, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2):
                    break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"gpu-ledger app did not start: {log.read_text()[-3000:]}") from None
                time.sleep(0.5)
        yield url
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)


@pytest.fixture(scope="module")
def browser():
    if not CHROMIUM.exists():
        pytest.skip(f"no Chromium at {CHROMIUM}")
    sync_api = pytest.importorskip("playwright.sync_api", reason="pip playwright is not installed")
    with sync_api.sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=ARGS)
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def site(warehouse: Path, tmp_path_factory, browser) -> Iterator[dict]:
    """The provider and the app: a finance user, a lead and a member of the fleet's busiest team (the
    member runs that team's most jobs), and four who sign in with tokens the app must refuse."""
    from gpu_ledger.read.warehouse import query

    User = oidc_provider_mock.User
    team = window(warehouse)[2]
    account = query(
        warehouse,
        'select "user" from marts.dim_jobs where team = ? group by 1 order by count(*) desc, 1 limit 1',
        [team],
    ).item()
    finance = {"email": STRANGER, "groups": ["finance"]}
    users = [
        User(sub="cfo", claims={"email": FINANCE, "groups": ["finance"]}),
        User(sub="lead", claims={"email": LEAD, "groups": []}),
        User(sub="member", claims={"email": MEMBER, "groups": ["staff"]}),
        User(sub="forged", claims=finance),  # re-signed with another key (ForgedSignature)
        User(sub="elsewhere", claims={**finance, "aud": "another-client"}),  # issued to another client
        User(sub="impostor", claims={**finance, "iss": "https://login.evil.example.com"}),
        User(sub="expired", claims={**finance, "exp": int(time.time()) - 3600}),
    ]
    tmp = tmp_path_factory.mktemp("oidc")
    home = tmp / "home"
    home.mkdir()
    shutil.copyfile(warehouse, home / "warehouse.duckdb")
    grants = f"""grants:
  - {{role: finance, groups: [finance]}}
  - {{role: lead, users: ['{LEAD}'], teams: ['{team}']}}
  - {{role: member, groups: [staff], teams: ['{team}']}}
accounts:
  '{MEMBER}': ['{account}']
"""
    with provider(users) as issuer, app_signing_in_at(home, issuer, grants, tmp) as url:
        yield {"url": url, "issuer": issuer, "team": team, "audit": home / "audit" / "app.jsonl"}


def sign_in(browser, site: dict, sub: str, path: str = ""):
    """A fresh browser that opens the app, presses Sign in, and picks `sub` on the provider's page;
    returns the page, back on the app with the first page drawn, and its context."""
    context = browser.new_context()
    page = context.new_page()
    page.goto(site["url"] + "/", wait_until="domcontentloaded")
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(site["issuer"] + "/**", timeout=30_000)
    page.get_by_role("button", name=sub, exact=True).click()
    page.wait_for_url(site["url"] + "/**", timeout=30_000)
    if path:
        page.goto(site["url"] + path, wait_until="domcontentloaded")
    page.locator("[data-testid='stMetric'], [data-testid='stButton']").first.wait_for(timeout=60_000)
    page.wait_for_timeout(1500)  # the rest of the page's figures
    assert page.locator("[data-testid='stException']").count() == 0
    return page, context


def _spend(warehouse: Path, where: str = "true") -> str:
    """The Overview's GPU spend tile as shown, from the mart filtered by hand."""
    return compact(
        "currency",
        scalar(warehouse, f"select sum(total_cost) from marts.fct_cost_by_owner_daily where {where}"),
    )


def _shown_once_drawn(page, figure: str, seconds: float = 30) -> str:
    """The page's text once `figure` is drawn in it, or as it stands after `seconds`: a loaded
    machine draws the Overview's tiles one by one."""
    deadline = time.monotonic() + seconds
    while figure not in (shown := page.inner_text("body")) and time.monotonic() < deadline:
        page.wait_for_timeout(500)
    return shown


def _sign_ins(site: dict) -> list[tuple[str, str]]:
    lines = site["audit"].read_text().splitlines() if site["audit"].exists() else []
    return [(e["who"], e["role"]) for e in map(json.loads, lines) if e.get("event") == "sign-in"]


def test_each_role_signs_in_and_sees_what_its_grant_allows(site, browser, warehouse):
    team = site["team"]
    page, context = sign_in(browser, site, "cfo")
    shown = _shown_once_drawn(page, _spend(warehouse))
    assert _spend(warehouse) in shown and "SQL" in shown.split() and "Audit trail" in shown
    page.goto(site["url"] + "/sql", wait_until="domcontentloaded")
    page.get_by_text("Run query").first.wait_for(timeout=60_000)  # finance's SQL page, still signed in
    context.close()

    for sub in ("lead", "member"):
        page, context = sign_in(browser, site, sub)
        shown = _shown_once_drawn(page, _spend(warehouse, f"team = '{team}'"))
        assert "GPU spend" in shown and _spend(warehouse, f"team = '{team}'") in shown, sub
        assert "SQL" not in shown.split() and "Audit trail" not in shown, sub
        page.goto(site["url"] + "/sql", wait_until="domcontentloaded")  # not a page of theirs by URL
        page.locator("[data-testid='stMetric']").first.wait_for(timeout=60_000)
        page.wait_for_timeout(1500)
        assert "Run query" not in page.inner_text("body"), sub
        context.close()

    assert _sign_ins(site) == [(FINANCE, "finance"), (LEAD, "lead"), (MEMBER, "member")]


@pytest.mark.parametrize("sub", ["forged", "elsewhere", "impostor", "expired"])
def test_a_forged_misaddressed_or_expired_id_token_signs_no_one_in(site, browser, sub):
    """Another key's signature, another client's audience, another issuer, an expiry passed: each
    token comes back from the provider's token endpoint, and the app still shows only Sign in."""
    page, context = sign_in(browser, site, sub)
    assert page.get_by_role("button", name="Sign in").count() == 1
    assert "GPU spend" not in page.inner_text("body")
    assert not [c for c in context.cookies() if c["name"].startswith("_streamlit_user")]
    assert STRANGER not in {who for who, _ in _sign_ins(site)}
    context.close()


def test_a_cookie_made_without_the_apps_secret_signs_no_one_in(site, browser):
    """Streamlit keeps the ID token's claims in a signed cookie: one that claims the finance group,
    signed with any key but the app's own (new at every start), is not believed."""
    from itsdangerous import URLSafeTimedSerializer

    page, context = sign_in(browser, site, "member")
    (real,) = [c for c in context.cookies() if c["name"] == "_streamlit_user"]
    claims = {"email": MEMBER, "groups": ["staff", "finance"], "iss": site["issuer"], "is_logged_in": True}
    forged = URLSafeTimedSerializer("guessed", salt="_streamlit_user").dumps(json.dumps(claims))
    context.add_cookies([{**real, "value": forged}])
    page.goto(site["url"] + "/", wait_until="domcontentloaded")
    page.get_by_role("button", name="Sign in").wait_for(timeout=60_000)
    assert "GPU spend" not in page.inner_text("body")
    context.close()
