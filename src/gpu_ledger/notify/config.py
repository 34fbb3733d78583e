"""owners.yml: who is told what, and how (docs/notify.md).

Kept beside the business CSVs, one file for every owner:

    timezone: Europe/Berlin        # the periods' days; default UTC
    smtp: {host: mail.example.com, port: 587, sender: gpu-ledger@example.com, starttls: true,
           username: gpu-ledger, password_env: GPU_LEDGER_SMTP_PASSWORD}
    owners:
      nlp-lead:
        teams: [nlp-research]
        users: [alice]
        email: [lead@example.com]
        webhooks: [{kind: slack, url: https://hooks.slack.com/services/...}]
        thresholds: {top_jobs: 5, min_idle_cost: 10}

A password is never in the file: `password_env` names the environment variable that holds it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import yaml

WEBHOOK_KINDS = ("slack", "teams", "json")


class ConfigError(ValueError):
    """owners.yml is missing, is not YAML, or says something this module cannot use."""


@dataclass(frozen=True)
class Webhook:
    kind: str  # slack, teams or json
    url: str


@dataclass(frozen=True)
class Thresholds:
    top_jobs: int = 5  # wasteful jobs listed
    min_idle_cost: Decimal = Decimal(0)  # a job whose idle cost is below this is not listed


@dataclass(frozen=True)
class Owner:
    name: str
    teams: tuple[str, ...] = ()
    users: tuple[str, ...] = ()
    email: tuple[str, ...] = ()
    webhooks: tuple[Webhook, ...] = ()
    thresholds: Thresholds = field(default_factory=Thresholds)


@dataclass(frozen=True)
class Smtp:
    host: str = "localhost"
    port: int = 25
    sender: str = "gpu-ledger@localhost"
    starttls: bool = False
    username: str | None = None
    password_env: str | None = None


@dataclass(frozen=True)
class Config:
    owners: tuple[Owner, ...]
    smtp: Smtp = field(default_factory=Smtp)
    timezone: str = "UTC"


def load_config(path: Path) -> Config:
    """Read and check owners.yml; a ConfigError names the file and what is wrong."""
    try:
        data = yaml.safe_load(path.read_text()) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"{path}: {exc}") from exc
    if not isinstance(data, dict) or not isinstance(data.get("owners"), dict) or not data["owners"]:
        raise ConfigError(f"{path}: needs an `owners:` mapping of owner name -> teams, users and channels")
    smtp = data.get("smtp") or {}
    unknown = set(smtp) - set(Smtp.__dataclass_fields__)
    if unknown:
        raise ConfigError(f"{path}: smtp: unknown keys {sorted(unknown)}")
    timezone = str(data.get("timezone") or "UTC")
    try:
        ZoneInfo(timezone)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ConfigError(f"{path}: timezone {timezone!r} is not an IANA time zone") from exc
    owners = tuple(_owner(path, str(name), spec or {}) for name, spec in data["owners"].items())
    return Config(owners=owners, smtp=Smtp(**smtp), timezone=timezone)


def _owner(path: Path, name: str, spec: dict) -> Owner:
    where = f"{path}: owner {name}"
    unknown = set(spec) - {"teams", "users", "email", "webhooks", "thresholds"}
    if unknown:
        raise ConfigError(f"{where}: unknown keys {sorted(unknown)}")
    teams, users = _names(where, spec, "teams"), _names(where, spec, "users")
    if not teams and not users:
        raise ConfigError(f"{where}: name at least one of teams or users")
    hooks = []
    for hook in spec.get("webhooks") or []:
        if not isinstance(hook, dict) or hook.get("kind") not in WEBHOOK_KINDS or not hook.get("url"):
            raise ConfigError(f"{where}: a webhook needs kind ({', '.join(WEBHOOK_KINDS)}) and url: {hook!r}")
        hooks.append(Webhook(hook["kind"], str(hook["url"])))
    limits = spec.get("thresholds") or {}
    try:
        thresholds = Thresholds(
            top_jobs=int(limits.get("top_jobs", Thresholds.top_jobs)),
            min_idle_cost=Decimal(str(limits.get("min_idle_cost", 0))),
        )
    except (ArithmeticError, ValueError, TypeError) as exc:
        raise ConfigError(f"{where}: thresholds: {exc}") from exc
    return Owner(name, teams, users, _names(where, spec, "email"), tuple(hooks), thresholds)


def _names(where: str, spec: dict, key: str) -> tuple[str, ...]:
    value = spec.get(key) or []
    value = [value] if isinstance(value, str) else value
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: {key} must be a name or a list of names")
    return tuple(value)
