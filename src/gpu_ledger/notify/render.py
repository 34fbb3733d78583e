"""A digest written for each channel: plain text and HTML for mail, Slack blocks, a Teams Adaptive
Card and a generic JSON document. Every form names the owner, the period and its time zone, and
states money to the cent in the reporting currency."""

from __future__ import annotations

from html import escape

from gpu_ledger.notify.digest import Digest
from gpu_ledger.read.formats import money, pct
from gpu_ledger.read.metrics import reporting_currency


def subject(d: Digest) -> str:
    return f"GPU digest for {d.owner.name}, {d.period.describe()}: {money(d.spend)} spent"


def _headline(d: Digest) -> list[str]:
    return [
        f"Spend: {money(d.spend)}",
        f"Utilisation: {pct(d.utilisation_pct)} ({d.busy_gpu_hours:,.1f} busy of"
        f" {d.held_gpu_hours:,.1f} GPU-hours your jobs held)",
        f"Idle GPUs no job used: {money(d.unused_cost)}",
    ]


def _job_line(j) -> str:
    return (
        f"{j.label} ({j.user or j.team}): idle {money(j.idle_cost)} of {money(j.cost)},"
        f" utilisation {pct(j.utilisation_pct)} - {j.action}"
    )


def _budget_line(b) -> str:
    scope = f"{b.team}/{b.project}" if b.project else b.team
    breach = f", forecast breach on {b.breach_date}" if b.breach_date else ""
    return (
        f"{scope} {b.month:%Y-%m}: {b.status.replace('_', ' ')} - forecast {money(b.forecast)}"
        f" of {money(b.budget)} ({pct(b.forecast_pct)}), {money(b.actual)} to date{breach}"
    )


def _anomaly_line(a) -> str:
    return f"{a.day} {a.team}: cost {a.direction} to {money(a.cost)} against a usual {money(a.baseline)}"


def _sections(d: Digest) -> list[tuple[str, list[str]]]:
    return [
        ("Top wasteful jobs", [_job_line(j) for j in d.jobs] or ["none over your threshold"]),
        ("Budgets at risk", [_budget_line(b) for b in d.budgets] or ["none"]),
        ("Cost anomalies", [_anomaly_line(a) for a in d.anomalies] or ["none"]),
    ]


FOOTNOTE = "Budgets and anomalies follow UTC days, as the warehouse keeps them."


def plain(d: Digest) -> str:
    lines = [f"GPU digest for {d.owner.name}", f"Period: {d.period.describe()}", ""]
    lines += _headline(d)
    for title, items in _sections(d):
        lines += ["", f"{title}:"] + [f"  - {item}" for item in items]
    return "\n".join([*lines, "", FOOTNOTE, ""])


def html(d: Digest) -> str:
    parts = [
        f"<h2>GPU digest for {escape(d.owner.name)}</h2>",
        f"<p><strong>Period:</strong> {escape(d.period.describe())}</p>",
        "<ul>" + "".join(f"<li>{escape(line)}</li>" for line in _headline(d)) + "</ul>",
    ]
    for title, items in _sections(d):
        parts.append(f"<h3>{escape(title)}</h3><ul>")
        parts += [f"<li>{escape(item)}</li>" for item in items]
        parts.append("</ul>")
    parts.append(f"<p><small>{escape(FOOTNOTE)}</small></p>")
    return "<html><body>" + "".join(parts) + "</body></html>"


def slack(d: Digest) -> dict:
    """Slack Block Kit: a header, the headline figures, one section per list."""
    blocks = [
        {"type": "header", "text": {"type": "plain_text", "text": f"GPU digest for {d.owner.name}"}},
        {"type": "context", "elements": [{"type": "mrkdwn", "text": f"Period: {d.period.describe()}"}]},
        {"type": "section", "text": {"type": "mrkdwn", "text": "\n".join(_headline(d))}},
    ]
    for title, items in _sections(d):
        text = f"*{title}*\n" + "\n".join(f"• {item}" for item in items)
        blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": text}})
    blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": FOOTNOTE}]})
    return {"text": subject(d), "blocks": blocks}


def teams(d: Digest) -> dict:
    """A Microsoft Teams message holding an Adaptive Card (what Teams workflows' webhooks take)."""
    body = [
        {"type": "TextBlock", "size": "Large", "weight": "Bolder", "text": f"GPU digest for {d.owner.name}"},
        {"type": "TextBlock", "isSubtle": True, "text": f"Period: {d.period.describe()}"},
        {"type": "FactSet", "facts": [{"title": k, "value": v} for k, v in _facts(d)]},
    ]
    for title, items in _sections(d):
        body.append({"type": "TextBlock", "weight": "Bolder", "text": title, "wrap": True})
        body += [{"type": "TextBlock", "text": f"- {item}", "wrap": True} for item in items]
    body.append({"type": "TextBlock", "isSubtle": True, "text": FOOTNOTE, "wrap": True})
    card = {
        "$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
        "type": "AdaptiveCard",
        "version": "1.4",
        "body": body,
    }
    attachment = {"contentType": "application/vnd.microsoft.card.adaptive", "content": card}
    return {"type": "message", "summary": subject(d), "attachments": [attachment]}


def _facts(d: Digest) -> list[tuple[str, str]]:
    return [
        ("Spend", money(d.spend)),
        ("Utilisation", pct(d.utilisation_pct)),
        ("Idle GPUs no job used", money(d.unused_cost)),
    ]


def as_json(d: Digest) -> dict:
    """The digest as data: money as decimal strings to the cent, dates in ISO 8601."""
    return {
        "owner": d.owner.name,
        "period": {
            "first_day": d.period.first.isoformat(),
            "last_day": d.period.last.isoformat(),
            "timezone": d.period.timezone,
        },
        "currency": reporting_currency(),
        "spend": str(d.spend),
        "held_gpu_hours": round(d.held_gpu_hours, 4),
        "busy_gpu_hours": round(d.busy_gpu_hours, 4),
        "utilisation_pct": None if d.utilisation_pct is None else round(d.utilisation_pct, 2),
        "unused_cost": str(d.unused_cost),
        "wasteful_jobs": [
            {
                "job_key": j.job_key,
                "job": j.label,
                "user": j.user,
                "team": j.team,
                "cost": str(j.cost),
                "idle_cost": str(j.idle_cost),
                "action": j.action,
            }
            for j in d.jobs
        ],
        "budgets_at_risk": [
            {
                "team": b.team,
                "project": b.project,
                "month": b.month.isoformat(),
                "status": b.status,
                "budget": str(b.budget),
                "actual_to_date": str(b.actual),
                "forecast_month_end": str(b.forecast),
                "projected_breach_date": b.breach_date.isoformat() if b.breach_date else None,
            }
            for b in d.budgets
        ],
        "anomalies": [
            {
                "day": a.day.isoformat(),
                "team": a.team,
                "direction": a.direction,
                "cost": str(a.cost),
                "baseline_cost": str(a.baseline),
            }
            for a in d.anomalies
        ],
    }


WEBHOOK_BODIES = {"slack": slack, "teams": teams, "json": as_json}
