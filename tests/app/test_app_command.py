"""`gpu-ledger app` beyond loopback: refused without sign-in, served with an access config or --no-auth."""

from __future__ import annotations

import socket
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from gpu_ledger.cli import main
from tests.terminal import gpu_ledger

PROXY = """
sign_in: {mode: proxy, header: X-Forwarded-Email, proxies: [10.0.4.2]}
grants:
  - {role: finance, users: [cfo@example.com]}
"""
OIDC = """
sign_in:
  mode: oidc
  issuer: https://login.example.com/
  client_id: gpu-ledger
  client_secret_env: TEST_OIDC_SECRET
  redirect_uri: https://gpu-ledger.example.com/oauth2callback
grants:
  - {role: finance, groups: [finance]}
"""


@pytest.fixture
def served(monkeypatch) -> list[tuple[list[str], dict]]:
    """What `gpu-ledger app` would run, and with which environment, instead of running it."""
    calls: list[tuple[list[str], dict]] = []

    def call(command, env):
        secrets = command[command.index("--secrets.files") + 1] if "--secrets.files" in command else None
        calls.append((command, env, Path(secrets).read_text() if secrets else None))
        return 0

    monkeypatch.setattr(subprocess, "call", call)
    return calls


def _free_port() -> str:
    with socket.socket() as sock:
        sock.bind(("", 0))
        return str(sock.getsockname()[1])


@dataclass
class Result:
    exit_code: int
    output: str
    stderr: str


@pytest.fixture
def app(tmp_path, capsys):
    """`gpu-ledger app ARGS...` in this process (gpu_ledger.cli.main): its exit status and output."""

    def run(*args: str) -> Result:
        code = main(["app", "--home", str(tmp_path / "home"), "--port", _free_port(), *args])
        out, err = capsys.readouterr()
        return Result(code, out + err, err)

    return run


@pytest.mark.parametrize("address", ["0.0.0.0", "::", "10.1.2.3", ""])
def test_serving_beyond_loopback_without_sign_in_is_refused(tmp_path, app, served, address):
    result = app("--address", address)
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "without sign-in" in lines[0] and "--no-auth" in lines[0], result.stderr
    assert not served


@pytest.mark.parametrize("address", ["127.0.0.1", "127.0.0.2", "::1", "localhost"])
def test_loopback_needs_no_sign_in(tmp_path, app, served, address):
    result = app("--address", address)
    assert result.exit_code == 0, result.output
    ((command, env, secrets),) = served
    assert "GPU_LEDGER_ACCESS" not in env and secrets is None
    assert env["FORWARDED_ALLOW_IPS"] == ""  # every connection keeps its own address


def test_no_auth_serves_everyone_beyond_loopback(tmp_path, app, served):
    assert app("--address", "0.0.0.0", "--no-auth").exit_code == 0
    assert len(served) == 1 and "GPU_LEDGER_ACCESS" not in served[0][1]


def test_a_proxy_config_is_passed_to_the_app(tmp_path, app, served):
    config = tmp_path / "access.yml"
    config.write_text(PROXY)
    result = app("--address", "0.0.0.0", "--access", str(config))
    assert result.exit_code == 0, result.output
    ((command, env, secrets),) = served
    assert env["GPU_LEDGER_ACCESS"] == str(config.resolve()) and secrets is None


def test_an_oidc_config_becomes_streamlits_auth_section(tmp_path, app, served, monkeypatch):
    config = tmp_path / "access.yml"
    config.write_text(OIDC)
    result = app("--address", "0.0.0.0", "--access", str(config))
    assert result.exit_code == 2 and "TEST_OIDC_SECRET is not set" in result.stderr, result.output
    monkeypatch.setenv("TEST_OIDC_SECRET", "s3cret")
    assert app("--address", "0.0.0.0", "--access", str(config)).exit_code == 0
    ((command, env, secrets),) = served
    assert secrets.startswith("[auth]\n") and 'client_secret = "s3cret"' in secrets
    assert 'server_metadata_url = "https://login.example.com/.well-known/openid-configuration"' in secrets
    assert 'redirect_uri = "https://gpu-ledger.example.com/oauth2callback"' in secrets


def test_a_bad_access_config_is_one_line(tmp_path, app, served):
    config = tmp_path / "access.yml"
    config.write_text("sign_in: {mode: saml}\ngrants: []\n")
    result = app("--address", "0.0.0.0", "--access", str(config))
    assert result.exit_code == 2 and not served
    assert result.stderr.strip() == f"gpu-ledger app: {config}: sign_in.mode must be one of oidc, proxy"


def test_the_refusal_from_a_real_process(tmp_path):
    result = gpu_ledger("app", "--home", str(tmp_path), "--address", "0.0.0.0", "--port", _free_port())
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "refusing to serve on 0.0.0.0 without sign-in" in result.stderr


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ((), "refusing to serve on 0.0.0.0 without sign-in"),
        (("--access", "{config}"), "sign_in.mode must be one of oidc, proxy"),
        (("--access", "{config}", "--no-auth"), "--access and --no-auth contradict each other"),
    ],
)
def test_the_demo_refuses_to_serve_unguarded_before_it_simulates(
    tmp_path, capsys, monkeypatch, extra, message
):
    """`demo --address` beyond loopback is refused in one line before minutes of simulating and building."""
    from gpu_ledger.cli import simulate

    monkeypatch.setattr(simulate, "run", lambda *args: pytest.fail("the demo simulated before refusing"))
    config = tmp_path / "access.yml"
    config.write_text("sign_in: {mode: saml}\ngrants: []\n")
    home = tmp_path / "home"
    args = [arg.format(config=config) for arg in extra]
    code = main(["demo", "--home", str(home), "--address", "0.0.0.0", "--port", _free_port(), *args])
    lines = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and message in lines[0], lines
    assert not (home / "simulated").exists()
