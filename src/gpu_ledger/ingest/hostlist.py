"""Slurm hostlist expressions: `gpu-[01-04,07]` stands for gpu-01, gpu-02, gpu-03, gpu-04, gpu-07.

Slurm prints every node set (sacct NodeList, squeue, sinfo) in this compressed form. Attribution needs
the individual node names to meet telemetry's `Hostname` and the billing's hosts, so ingest expands
them once, here, and the dbt models reuse the expanded `nodes` column (or call `expand_hostlist`
from a Python model) instead of re-implementing the grammar in SQL.

Grammar (as Slurm's hostlist.c accepts it): a comma-separated list at the top level; each item is a
name with zero or more bracketed range sets `[a-b,c,...]`. Several bracket sets in one item form a
cartesian product (`rack[1-2]-n[01-02]`, used on multi-dimensional systems). A range keeps the zero
padding of its lower bound (`[08-10]` gives 08, 09, 10). `None assigned` and the empty string mean no
nodes.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable

NO_NODES = frozenset({"", "None assigned", "(null)", "None"})
# guard against a malformed range such as [1-99999999] turning one field into a memory explosion
MAX_HOSTS = 1_000_000

_BRACKET = re.compile(r"\[([^\[\]]*)\]")
_RANGE = re.compile(r"^(\d+)(?:-(\d+))?$")


class HostlistError(ValueError):
    """A hostlist expression that Slurm would not have printed."""


def split_top_level(expr: str) -> list[str]:
    """Split at the commas that are outside brackets: `a[1,2],b` -> [`a[1,2]`, `b`]."""
    parts: list[str] = []
    depth = 0
    start = 0
    for i, ch in enumerate(expr):
        if ch == "[":
            depth += 1
            if depth > 1:
                raise HostlistError(f"nested brackets in hostlist {expr!r}")
        elif ch == "]":
            depth -= 1
            if depth < 0:
                raise HostlistError(f"unbalanced ']' in hostlist {expr!r}")
        elif ch == "," and depth == 0:
            parts.append(expr[start:i])
            start = i + 1
    if depth != 0:
        raise HostlistError(f"unbalanced '[' in hostlist {expr!r}")
    parts.append(expr[start:])
    return [p.strip() for p in parts if p.strip()]


def _range_values(body: str, expr: str) -> list[str]:
    values: list[str] = []
    for rng in body.split(","):
        m = _RANGE.match(rng.strip())
        if m is None:
            raise HostlistError(f"bad range {rng!r} in hostlist {expr!r} (expected N or N-M)")
        lo, hi = m.group(1), m.group(2) or m.group(1)
        if int(hi) < int(lo):
            raise HostlistError(f"descending range {rng!r} in hostlist {expr!r}")
        if int(hi) - int(lo) > MAX_HOSTS:
            raise HostlistError(f"range {rng!r} in hostlist {expr!r} is implausibly large")
        width = len(lo)
        values.extend(str(n).zfill(width) for n in range(int(lo), int(hi) + 1))
    return values


def expand_hostlist(expr: str | None) -> list[str]:
    """The node names a hostlist expression stands for, in Slurm's order; [] for no nodes.

    Raises HostlistError for an expression Slurm could not have printed (unbalanced or nested
    brackets, a range that is not numeric or runs backwards).
    """
    if expr is None or expr.strip() in NO_NODES:
        return []
    hosts: list[str] = []
    for item in split_top_level(expr.strip()):
        pieces = _BRACKET.split(item)  # literal, range body, literal, range body, ..., literal
        literals, bodies = pieces[0::2], pieces[1::2]
        if any("[" in lit or "]" in lit for lit in literals):
            raise HostlistError(f"malformed brackets in hostlist {expr!r}")
        if not bodies:
            hosts.append(item)
            continue
        choices = [_range_values(b, expr) for b in bodies]
        for combo in itertools.product(*choices):
            hosts.append("".join(lit + num for lit, num in zip(literals, (*combo, ""), strict=True)))
            if len(hosts) > MAX_HOSTS:
                raise HostlistError(f"hostlist {expr!r} expands to more than {MAX_HOSTS} names")
    return hosts


def expand_many(exprs: Iterable[str | None]) -> dict[str | None, list[str]]:
    """Expand each distinct expression once (a big sacct file repeats a few thousand node sets)."""
    return {e: expand_hostlist(e) for e in set(exprs)}
