"""`notify` on the simulated fleet: digests delivered to a real SMTP server and a webhook receiver,
their figures equal to the marts to the cent; sent once; a dry run; failures one line each."""

from __future__ import annotations

import email
from datetime import date
from decimal import Decimal
from email import policy
from pathlib import Path

import pytest

from gpu_ledger.cli import main
from gpu_ledger.home import Home
from gpu_ledger.notify.send import notify
from gpu_ledger.notify.text import cents
from gpu_ledger.read.formats import money
from gpu_ledger.read.warehouse import query

from .conftest import REFUSED, free_port

pytestmark = pytest.mark.slow

TEAM = "vision"
FIRST, LAST = date(2026, 10, 1), date(2026, 10, 7)
PERIOD = "2026-10-01 to 2026-10-07 (UTC)"


def config(tmp_path: Path, smtp_port: int, hooks: str) -> Path:
    dead = f"http://127.0.0.1:{free_port()}/nobody-listens"
    path = tmp_path / "owners.yml"
    path.write_text(
        f"""
smtp: {{host: 127.0.0.1, port: {smtp_port}, sender: gpu-ledger@example.com}}
owners:
  vision-lead:
    teams: [{TEAM}]
    email: [lead@example.com, {REFUSED}]
    webhooks:
      - {{kind: slack, url: "{hooks}/slack"}}
      - {{kind: teams, url: "{hooks}/teams"}}
      - {{kind: json, url: "{hooks}/json"}}
      - {{kind: json, url: "{dead}"}}
    thresholds: {{top_jobs: 3}}
"""
    )
    return path


def expected(warehouse: Path) -> dict:
    """The figures as the marts hold them: showback (default idle policy own_consumer), budgets, jobs."""
    showback = query(
        warehouse,
        "select sum(total_cost) as spend, sum(case when workload_class = 'idle' then cost end) as unused"
        " from marts.fct_cost_by_owner_daily where team = ? and day between ? and ?",
        [TEAM, FIRST, LAST],
    ).row(0, named=True)
    budget = query(
        warehouse,
        "select * from marts.fct_budget_status where team = ? and month_start = '2026-10-01'"
        " and status in ('at_risk', 'over_budget') order by project nulls first limit 1",
        [TEAM],
    ).row(0, named=True)
    job = query(
        warehouse,
        "select c.* from marts.fct_job_costs as c join marts.dim_jobs as j using (job_key)"
        " where j.team = ? and c.idle_cost_within_job > 0 and j.started_at < '2026-10-08'"
        " and (j.ended_at is null or (j.ended_at >= '2026-10-01' and j.ended_at < '2026-10-08'))"
        " order by c.idle_cost_within_job desc, job_key limit 1",
        [TEAM],
    ).row(0, named=True)
    return {
        "spend": cents(showback["spend"]),
        "unused": cents(showback["unused"]),
        "budget": budget,
        "job": job,
    }


def test_digests_delivered_once_with_the_marts_figures(fleet_home: Path, smtp, webhooks, tmp_path) -> None:
    box, port = smtp
    received, hooks = webhooks
    owners = config(tmp_path, port, hooks)
    want = expected(fleet_home / "warehouse.duckdb")
    spend, unused = money(want["spend"]), money(want["unused"])
    forecast, breach = money(want["budget"]["forecast_month_end"]), want["budget"]["projected_breach_date"]
    idle_job = money(want["job"]["idle_cost_within_job"])

    summary = notify(Home(fleet_home), owners, FIRST, LAST)

    lines = summary.text().splitlines()
    assert lines[0] == f"notify {PERIOD}: 4 sent, 0 written, 0 already sent, 2 failed"
    assert len([line for line in lines if REFUSED in line]) == 1
    assert len([line for line in lines if "nobody-listens" in line]) == 1
    assert all(line.startswith("failed") for line in lines if REFUSED in line or "nobody-listens" in line)

    # the mail a client receives: multipart/alternative, plain text then HTML, both with the figures
    (raw,) = box.messages
    message = email.message_from_bytes(raw, policy=policy.default)
    assert message["To"] == "lead@example.com" and PERIOD in message["Subject"]
    assert message.get_content_type() == "multipart/alternative"
    text = message.get_body(("plain",)).get_content()
    page = message.get_body(("html",)).get_content()
    for body in (text, page):
        assert PERIOD in body
        assert f"Spend: {spend}" in body and f"Idle GPUs no job used: {unused}" in body
        assert forecast in body and idle_job in body
        if breach:
            assert f"forecast breach on {breach}" in body

    payloads = dict(received)
    assert set(payloads) == {"/slack", "/teams", "/json"}
    slack = str(payloads["/slack"]["blocks"])
    assert PERIOD in slack and f"Spend: {spend}" in slack and forecast in slack
    card = payloads["/teams"]["attachments"][0]["content"]
    assert card["type"] == "AdaptiveCard" and PERIOD in str(card["body"])
    assert {"title": "Spend", "value": spend} in card["body"][2]["facts"]
    data = payloads["/json"]
    assert data["period"] == {"first_day": "2026-10-01", "last_day": "2026-10-07", "timezone": "UTC"}
    assert Decimal(data["spend"]) == want["spend"] and Decimal(data["unused_cost"]) == want["unused"]
    assert data["wasteful_jobs"][0]["job_key"] == want["job"]["job_key"]
    assert Decimal(data["wasteful_jobs"][0]["idle_cost"]) == cents(want["job"]["idle_cost_within_job"])
    assert Decimal(data["budgets_at_risk"][0]["forecast_month_end"]) == cents(
        want["budget"]["forecast_month_end"]
    )

    # a repeated run sends nothing new: the four deliveries are remembered, the two failures retried
    again = notify(Home(fleet_home), owners, FIRST, LAST).text().splitlines()
    assert again[0] == f"notify {PERIOD}: 0 sent, 0 written, 4 already sent, 2 failed"
    assert len(box.messages) == 1 and len(received) == 3


def test_dry_run_writes_every_message_and_sends_none(fleet_home: Path, smtp, webhooks, tmp_path) -> None:
    box, port = smtp
    received, hooks = webhooks
    folder = tmp_path / "out"
    summary = notify(Home(fleet_home), config(tmp_path, port, hooks), FIRST, LAST, dry_run=folder)
    assert summary.text().splitlines()[0] == f"notify {PERIOD}: 0 sent, 6 written, 0 already sent, 0 failed"
    assert sorted(p.name for p in (folder / "vision-lead").iterdir()) == [
        "email-lead@example.com.eml",
        f"email-{REFUSED}.eml",
        "webhook-1-slack.json",
        "webhook-2-teams.json",
        "webhook-3-json.json",
        "webhook-4-json.json",
    ]
    eml = (folder / "vision-lead" / "email-lead@example.com.eml").read_bytes()
    mail = email.message_from_bytes(eml, policy=policy.default)
    assert PERIOD in mail["Subject"]
    assert box.messages == [] and received == []
    assert not (fleet_home / "notify").exists()  # nothing recorded: the real run still sends all


def test_a_day_in_another_time_zone_with_a_user_and_an_anomaly(fleet_home: Path, webhooks, tmp_path) -> None:
    """A Berlin day is 22:00 to 22:00 UTC in October: the spend is summed over those hours, a user's
    jobs in another team count, and the team's anomaly of that (UTC) day is in the digest."""
    received, hooks = webhooks
    path = tmp_path / "owners.yml"
    path.write_text(
        "timezone: Europe/Berlin\nowners:\n  search-lead:\n    teams: [search]\n    users: [pdubois]\n"
        f"    webhooks: [{{kind: json, url: '{hooks}/json'}}, {{kind: slack, url: '{hooks}/slack'}}]\n"
    )
    warehouse = fleet_home / "warehouse.duckdb"
    spend = query(
        warehouse,
        "select sum(cost) as spend from marts.fct_gpu_hour_allocations"
        " where hour_start >= '2026-10-07 22:00:00+00' and hour_start < '2026-10-08 22:00:00+00'"
        " and (team = 'search'"
        "      or job_key in (select job_key from marts.dim_jobs where \"user\" = 'pdubois'))",
    )["spend"][0]
    anomaly = query(
        warehouse,
        "select * from marts.fct_team_cost_anomalies where team = 'search' and day = '2026-10-08'",
    ).row(0, named=True)
    assert anomaly["is_anomaly"], "the simulated fleet plants a spike for search on 2026-10-08"

    summary = notify(Home(fleet_home), path, date(2026, 10, 8), date(2026, 10, 8))

    assert (
        summary.text().splitlines()[0]
        == "notify 2026-10-08 (Europe/Berlin): 2 sent, 0 written, 0 already sent, 0 failed"
    )
    payloads = dict(received)
    data = payloads["/json"]
    assert data["period"] == {
        "first_day": "2026-10-08",
        "last_day": "2026-10-08",
        "timezone": "Europe/Berlin",
    }
    assert Decimal(data["spend"]) == cents(spend)
    assert data["anomalies"] == [
        {
            "day": "2026-10-08",
            "team": "search",
            "direction": anomaly["direction"],
            "cost": str(cents(anomaly["cost"])),
            "baseline_cost": str(cents(anomaly["baseline_cost"])),
        }
    ]
    slack = str(payloads["/slack"])
    assert "2026-10-08 (Europe/Berlin)" in slack and f"to {money(anomaly['cost'])}" in slack


def test_the_notify_command_writes_the_dry_run_and_says_the_summary(
    fleet_home: Path, smtp, webhooks, tmp_path, capsys
):
    """`gpu-ledger notify` is the function behind a command line: the same summary, exit 0; a config it
    cannot use and a period backwards are one line, exit 2."""
    _, port = smtp
    _, hooks = webhooks
    owners, folder = config(tmp_path, port, hooks), tmp_path / "out"
    period = ["--from", FIRST.isoformat(), "--to", LAST.isoformat()]
    home = ["--home", str(fleet_home)]
    assert main([*home, "notify", "--config", str(owners), *period, "--dry-run", str(folder)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == f"notify {PERIOD}: 0 sent, 6 written, 0 already sent, 0 failed"
    assert len(list((folder / "vision-lead").iterdir())) == 6

    (tmp_path / "bad.yml").write_text("owners: {x: {teams: [a], colour: red}}\n")
    assert main([*home, "notify", "--config", str(tmp_path / "bad.yml"), *period]) == 2
    assert main([*home, "notify", "--config", str(owners), "--from", "2026-10-09", "--to", "2026-10-01"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and "bad.yml" in err[0] and "after --to" in err[1], err
