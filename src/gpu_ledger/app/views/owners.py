"""Owners: what `gpu-ledger notify` sent each owner (period, time zone, address or webhook, when), and
each digest's figures as the message had them: computed again by `gpu_ledger.notify.digest` for the
owner's scope the sent log kept, and checked against the figures it recorded as sent."""

from __future__ import annotations

from decimal import Decimal

import pandas as pd
import streamlit as st

from gpu_ledger.app import data, figures, filters
from gpu_ledger.notify.digest import Digest
from gpu_ledger.notify.state import Sent
from gpu_ledger.read.formats import money, number, pct

SETUP = (
    "**Nothing has been sent from this home yet** (no `{log}`). To tell each GPU owner what their GPUs "
    "cost: write an `owners.yml` beside the business CSVs naming each owner's teams or users and their "
    "email addresses or webhooks (docs/notify.md), look at the messages with "
    "`gpu-ledger notify --config owners.yml --dry-run out/`, then send them with "
    "`gpu-ledger notify --config owners.yml` (from cron: `gpu-ledger run`). Every digest sent appears "
    "here, with its figures."
)


def deliveries(sent: list[Sent]) -> pd.DataFrame:
    rows = []
    for s in sorted(sent, key=lambda s: (s.period.first, s.sent_at), reverse=True):
        channel, address = s.target.split(" ", 1)
        rows.append(
            {
                "Period": s.period.describe().rsplit(" (", 1)[0],
                "Time zone": s.period.timezone,
                "Channel": channel,
                "Address": address,
                "Sent (UTC)": f"{s.sent_at:%Y-%m-%d %H:%M}",
            }
        )
    return pd.DataFrame(rows)


def headline(d: Digest) -> None:
    spend, util, unused = st.columns(3)
    figures.tile(
        spend, "Spend", "currency", d.spend, help="What the owner's jobs and its teams' idle GPUs cost."
    )
    util.metric(
        "Utilisation",
        pct(d.utilisation_pct),
        help=f"{number(d.busy_gpu_hours)} busy of {number(d.held_gpu_hours)} GPU-hours its jobs held.",
    )
    figures.tile(
        unused, "Idle GPUs no job used", "currency", d.unused_cost, help="Its teams' machines, idle."
    )


def lists(d: Digest) -> None:
    if d.jobs:
        st.markdown("**Top wasteful jobs**")
        jobs = [
            {
                "Job": j.label,
                "User": j.user or j.team,
                "Idle cost": money(j.idle_cost),
                "Cost": money(j.cost),
                "Utilisation": pct(j.utilisation_pct),
                "Action": j.action,
            }
            for j in d.jobs
        ]
        figures.table(pd.DataFrame(jobs), width="stretch")
    if d.budgets:
        st.markdown("**Budgets at risk** (UTC months)")
        budgets = [
            {
                "Team": b.team,
                "Project": b.project or "",
                "Month": f"{b.month:%Y-%m}",
                "Status": b.status.replace("_", " "),
                "Forecast": money(b.forecast),
                "Budget": money(b.budget),
                "Actual to date": money(b.actual),
                "Forecast breach": str(b.breach_date or ""),
            }
            for b in d.budgets
        ]
        figures.table(pd.DataFrame(budgets), width="stretch")
    if d.anomalies:
        st.markdown("**Cost anomalies** (UTC days)")
        anomalies = [
            {
                "Day": str(a.day),
                "Team": a.team,
                "Direction": a.direction,
                "Cost": money(a.cost),
                "Usual cost": money(a.baseline),
            }
            for a in d.anomalies
        ]
        figures.table(pd.DataFrame(anomalies), width="stretch")


def changed(d: Digest, sent: Sent) -> list[str]:
    """The headline figures the message stated that the warehouse now puts otherwise."""
    said = sent.figures
    now = {"spend": d.spend, "unused_cost": d.unused_cost}
    labels = {"spend": "spend", "unused_cost": "idle GPUs no job used"}
    return [
        f"{labels[key]} {money(Decimal(said[key]))}"
        for key in now
        if key in said and Decimal(said[key]) != now[key]
    ]


def digest_of(sent: list[Sent]) -> None:
    """The period's digest, from the latest delivery that kept the owner's scope."""
    latest = sent[-1]
    st.markdown(f"##### {latest.period.describe()}")
    kept = [s for s in sent if s.scope is not None]
    if not kept:
        st.caption(
            "Sent before the log kept the owner's teams and users: its figures cannot be shown again here."
        )
        return
    d = data.owner_digest(kept[-1].scope, kept[-1].period)
    headline(d)
    lists(d)
    differs = changed(d, kept[-1])
    if differs:
        st.warning(
            "The warehouse has been rebuilt with other figures since this was sent: in the message, "
            + "; ".join(differs).replace("$", "\\$")
            + ".",
            icon=":material/history:",
        )
    st.caption(f"Owners file: `{kept[-1].config}`. Budgets and anomalies follow UTC days, as in the message.")


st.title("What owners were sent")
if filters.require_warehouse():
    sent = data.sent()
    if not sent:
        st.info(SETUP.format(log=data.home().root / "notify" / "sent.json"), icon=":material/mail:")
    else:
        st.caption(
            "The digests `gpu-ledger notify` delivered, per owner: to whom, for which period, when; and "
            "each period's figures computed as the message computed them. The sidebar's filters do not "
            "apply: a digest covers its own period and owner."
        )
        for owner in sorted({s.owner for s in sent}):
            mine = [s for s in sent if s.owner == owner]
            st.subheader(owner)
            figures.table(deliveries(mine), width="stretch")
            for period in sorted({s.period for s in mine}, key=lambda p: (p.first, p.last), reverse=True):
                digest_of([s for s in mine if s.period == period])
