"""`notify`: every owner of owners.yml gets the digest of a period, once per address and webhook.

Deliveries go one at a time; each is recorded in the home's sent log (`state`) as soon as it is
delivered, and a fact already there is skipped, so a repeated run sends nothing new and a killed run
resends at most the message in flight. A delivery that fails is one line of the summary and the run
goes on with the next. With `dry_run`, every message is written to that folder instead (an `.eml`
file per email, a `.json` file per webhook) and nothing is recorded.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from gpu_ledger.home import Home
from gpu_ledger.notify import channels, render
from gpu_ledger.notify.config import Config, Owner, load_config
from gpu_ledger.notify.digest import Digest, Period, digest
from gpu_ledger.notify.state import detail, sent_log


@dataclass(frozen=True)
class Outcome:
    owner: str
    target: str  # "email <address>" or "<kind> <url>"
    status: str  # sent, written (dry run), already_sent, failed
    detail: str = ""

    def line(self) -> str:
        return f"{self.status:<12} {self.owner}: {self.target}" + (f" ({self.detail})" if self.detail else "")


@dataclass(frozen=True)
class Summary:
    period: Period
    outcomes: tuple[Outcome, ...]

    @property
    def failed(self) -> int:
        return sum(o.status == "failed" for o in self.outcomes)

    def text(self) -> str:
        counts = {s: sum(o.status == s for o in self.outcomes) for s in ("sent", "written", "already_sent")}
        head = (
            f"notify {self.period.describe()}: {counts['sent']} sent, {counts['written']} written,"
            f" {counts['already_sent']} already sent, {self.failed} failed"
        )
        return "\n".join([head, *(o.line() for o in self.outcomes)])


def notify(home: Home, config_path: Path, first: date, last: date, dry_run: Path | None = None) -> Summary:
    """Send (or, with `dry_run`, write) each owner's digest of the days first..last in the config's
    time zone; the summary has one line per address and webhook."""
    config = load_config(config_path)
    period = Period(first, last, config.timezone)
    reports = [digest(home.warehouse, owner, period) for owner in config.owners]
    deliveries = [
        (report, *delivery) for report in reports for delivery in _deliveries(config, report.owner, report)
    ]
    outcomes = []
    if dry_run is not None:
        for report, target, _, write in deliveries:
            write(dry_run / _slug(report.owner.name))
            outcomes.append(Outcome(report.owner.name, target, "written"))
        return Summary(period, tuple(outcomes))
    with sent_log(home) as sent:
        for report, target, deliver, _ in deliveries:
            owner = report.owner.name
            fact = f"digest|{owner}|{period.key}|{target}"
            if fact in sent:
                outcomes.append(Outcome(owner, target, "already_sent"))
                continue
            try:
                deliver()
            except channels.DeliveryError as exc:
                outcomes.append(Outcome(owner, target, "failed", str(exc)))
                continue
            sent.record(fact, detail(config_path, report))
            outcomes.append(Outcome(owner, target, "sent"))
    return Summary(period, tuple(outcomes))


Delivery = tuple[str, Callable[[], None], Callable[[Path], None]]


def _deliveries(config: Config, owner: Owner, report: Digest) -> list[Delivery]:
    """(target, send it, write it to a folder) for each address and webhook of the owner."""
    found: list[Delivery] = []
    for address in owner.email:
        message = channels.email(
            config.smtp, address, render.subject(report), render.plain(report), render.html(report)
        )
        found.append(
            (
                f"email {address}",
                lambda m=message: channels.send_email(config.smtp, m),
                lambda folder, m=message, a=address: _write(folder / f"email-{_slug(a)}.eml", m.as_bytes()),
            )
        )
    for n, hook in enumerate(owner.webhooks, 1):
        payload = render.WEBHOOK_BODIES[hook.kind](report)
        found.append(
            (
                f"{hook.kind} {hook.url}",
                lambda u=hook.url, p=payload: channels.post_webhook(u, p),
                lambda folder, p=payload, k=hook.kind, i=n: _write(
                    folder / f"webhook-{i}-{k}.json", json.dumps(p, indent=1).encode()
                ),
            )
        )
    return found


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._@-]+", "_", name)
