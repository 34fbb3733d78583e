"""The Owners page: what `notify` sent each owner, after a real delivery to an SMTP server, with the
message's figures to the cent; the setup hint when nothing has been sent."""

from __future__ import annotations

import email
import json
from datetime import date
from decimal import Decimal
from email import policy
from pathlib import Path

import pytest

from gpu_ledger.app.figures import TILE_CHARS
from gpu_ledger.home import Home
from gpu_ledger.notify.send import notify
from gpu_ledger.read.formats import money
from tests.app.apptest import app, metric, open_page

pytestmark = [pytest.mark.slow, pytest.mark.minutes(1)]

FIRST, LAST = date(2026, 10, 1), date(2026, 10, 7)


def _figure(body: str, label: str) -> str:
    """The figure after `label: ` in a plain-text digest."""
    (line,) = [line for line in body.splitlines() if line.startswith(f"{label}: ")]
    return line.removeprefix(f"{label}: ").split(" (")[0]


def test_the_page_lists_what_each_owner_was_sent_with_the_message_figures(
    fleet_home: Path, smtp, tmp_path, monkeypatch
) -> None:
    box, port = smtp
    owners = tmp_path / "owners.yml"
    owners.write_text(
        f"timezone: Europe/Berlin\nsmtp: {{host: 127.0.0.1, port: {port}}}\n"
        "owners:\n  vision-lead:\n    teams: [vision]\n    email: [lead@example.com]\n"
    )
    summary = notify(Home(fleet_home), owners, FIRST, LAST)
    assert summary.failed == 0 and len(box.messages) == 1
    mail = email.message_from_bytes(box.messages[0], policy=policy.default)
    body = mail.get_body(("plain",)).get_content()
    sent = {label: _figure(body, label) for label in ("Spend", "Utilisation", "Idle GPUs no job used")}

    monkeypatch.setenv("GPU_LEDGER_HOME", str(fleet_home))
    at = open_page(app(), "owners")

    assert [h.value for h in at.subheader] == ["vision-lead"]
    (table,) = [t.value for t in at.dataframe if "Address" in t.value.columns]
    row = table.iloc[0]
    assert (row["Period"], row["Time zone"]) == ("2026-10-01 to 2026-10-07", "Europe/Berlin")
    assert (row["Channel"], row["Address"]) == ("email", "lead@example.com")
    assert "2026-10-01 to 2026-10-07 (Europe/Berlin)" in " ".join(m.value for m in at.markdown)
    for label, figure in sent.items():
        assert metric(at, label) == figure, label  # the exact figure (a long one is compact, exact in help)
    assert all(len(m.value) <= TILE_CHARS for m in at.metric)
    assert not at.warning  # the warehouse has not changed since: the figures the log kept agree
    # the log keeps what the page needs, beside the time: the owners file, the scope, the figures as sent
    (entry,) = json.loads((fleet_home / "notify" / "sent.json").read_text()).values()
    assert entry["config"] == str(owners.resolve()) and entry["teams"] == ["vision"]
    assert money(Decimal(entry["figures"]["spend"])) == sent["Spend"]


def test_with_nothing_sent_the_page_says_how_to_set_up_notify(fleet_home: Path, monkeypatch) -> None:
    monkeypatch.setenv("GPU_LEDGER_HOME", str(fleet_home))
    at = open_page(app(), "owners")
    (hint,) = at.info
    assert "Nothing has been sent from this home yet" in hint.value and "owners.yml" in hint.value
    assert "gpu-ledger notify --config owners.yml" in hint.value
    assert not at.subheader and not at.metric


def test_a_sent_log_of_times_alone_still_lists_what_was_sent(fleet_home: Path, monkeypatch) -> None:
    """A log written before it kept the owner's scope: the page lists the delivery, says why no figures."""
    log = fleet_home / "notify" / "sent.json"
    log.parent.mkdir()
    fact = "digest|ml-lead|2026-10-01..2026-10-07 UTC|slack http://x/y"
    log.write_text(json.dumps({fact: "2026-10-08T06:00:00+00:00"}))
    monkeypatch.setenv("GPU_LEDGER_HOME", str(fleet_home))
    at = open_page(app(), "owners")
    assert [h.value for h in at.subheader] == ["ml-lead"]
    (table,) = [t.value for t in at.dataframe if "Address" in t.value.columns]
    assert table.iloc[0]["Sent (UTC)"] == "2026-10-08 06:00" and table.iloc[0]["Channel"] == "slack"
    assert any("cannot be shown again" in c.value for c in at.caption)
