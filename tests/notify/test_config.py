"""owners.yml: a documented example loads; a mistake is an error naming the file and the owner."""

from __future__ import annotations

import re
from decimal import Decimal
from pathlib import Path

import pytest

from gpu_ledger.notify.config import ConfigError, Webhook, load_config

DOC = Path(__file__).resolve().parents[2] / "docs" / "notify.md"


def test_the_documented_example_loads(tmp_path: Path) -> None:
    example = re.search(r"```yaml\n(.*?)```", DOC.read_text(), re.S).group(1)
    path = tmp_path / "owners.yml"
    path.write_text(example)
    config = load_config(path)
    assert config.timezone == "Europe/Berlin" and config.smtp.port == 587 and config.smtp.starttls
    (owner,) = config.owners
    assert owner.teams == ("nlp-research",) and owner.users == ("alice",)
    assert owner.webhooks[0] == Webhook("slack", "https://hooks.slack.com/services/T000/B000/XXXX")
    assert owner.thresholds.top_jobs == 5 and owner.thresholds.min_idle_cost == Decimal(10)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("owners: {}", "needs an `owners:` mapping"),
        ("owners: {a: {email: [x@example.com]}}", "owner a: name at least one of teams or users"),
        ("owners: {a: {teams: [t], webhooks: [{kind: irc, url: x}]}}", "owner a: a webhook needs kind"),
        ("owners: {a: {teams: [t], mail: x}}", r"owner a: unknown keys \['mail'\]"),
        ("owners: {a: {teams: [t], thresholds: {top_jobs: many}}}", "owner a: thresholds"),
        ("timezone: Mars/Olympus\nowners: {a: {teams: [t]}}", "not an IANA time zone"),
        ("smtp: {server: x}\nowners: {a: {teams: [t]}}", r"smtp: unknown keys \['server'\]"),
    ],
)
def test_mistakes_name_the_file_and_the_owner(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "owners.yml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=f"{re.escape(str(path))}: .*{message}"):
        load_config(path)
