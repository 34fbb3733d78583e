"""`gpu-ledger run`: one scheduled run, as its config (run.yml, docs/operations.md) says: pull, ingest,
build, notify, under the home's lock for the whole run.

Each stage prints one line, `<stage>: <what it did>`, and the run ends with `run: ...`. A stage that
fails makes the run exit 1 and skips the stages that depend on it, saying so. Build depends on none:
after a failed pull or a rejected file it publishes what landed, as a build of its own would. Notify,
and the reports of the jobs Slurm's MailProg queued (`gpu_ledger.notify.mailprog`), depend on every
stage before them: a message of incomplete data would be sent once, and never again corrected.
Exit 2: the config is unusable or the home is busy, and nothing ran.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import click
import yaml

from gpu_ledger.cli import ingest as ingest_cli
from gpu_ledger.cli import pull as pull_cli
from gpu_ledger.cli.common import (
    DID_NOT_RUN,
    FAILED,
    OK,
    current_home,
    error,
    global_options,
    guarded,
    log_to_home,
    logger,
    progress_shown,
    wait_option,
)
from gpu_ledger.home import Home
from gpu_ledger.lock import home_lock

RUN_HELP = "one scheduled run: pull, ingest, build and notify as a config file says, under the home's lock"
SECTIONS = {
    "pull": {"prometheus"},
    "prometheus": {"url", "lookback", "step", "match"},
    "ingest": {"paths", "timezone", "sacct_fields", "host"},
    "build": {"vars"},
    "notify": {"config", "days", "dry_run", "domain"},
}
UNITS = {"m": 60, "h": 3600, "d": 86400}


class RunConfigError(ValueError):
    """run.yml is missing, is not YAML, or says something a run cannot use."""


@dataclass(frozen=True)
class Prometheus:
    url: str
    lookback: timedelta
    step: float = pull_cli.STEP
    match: tuple[str, ...] = ()


@dataclass(frozen=True)
class Ingest:
    paths: tuple[Path, ...]
    timezone: str = ingest_cli.TIMEZONE
    sacct_fields: str | None = None
    host: str | None = None


@dataclass(frozen=True)
class Notify:
    config: Path
    days: int = 7
    dry_run: Path | None = None
    domain: str | None = None  # a queued job's report goes to user@domain where owners.yml has no address


@dataclass(frozen=True)
class RunConfig:
    prometheus: Prometheus | None = None
    ingest: Ingest | None = None
    build_vars: str | None = None
    notify: Notify | None = None


def load_run_config(path: Path) -> RunConfig:
    """Read and check run.yml; relative paths in it are relative to its folder."""
    try:
        data = yaml.safe_load(path.read_text()) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise RunConfigError(f"{path}: {' '.join(str(exc).split())}") from exc
    if not isinstance(data, dict):
        raise RunConfigError(f"{path}: expected a mapping of pull, ingest, build and notify")
    _known(path, "the top level", data, set(SECTIONS) - {"prometheus"})
    sections = {name: _section(path, name, data.get(name)) for name in ("pull", "ingest", "build", "notify")}
    _known(path, "pull", sections["pull"], SECTIONS["pull"])
    for name in ("ingest", "build", "notify"):
        _known(path, name, sections[name], SECTIONS[name])
    base = path.parent
    try:
        return RunConfig(
            prometheus=_prometheus(path, sections["pull"].get("prometheus")),
            ingest=_ingest(path, base, sections["ingest"]) if "ingest" in data else None,
            build_vars=_text(sections["build"].get("vars")),
            notify=_notify(path, base, sections["notify"]) if "notify" in data else None,
        )
    except (TypeError, ValueError) as exc:
        if isinstance(exc, RunConfigError):
            raise
        raise RunConfigError(f"{path}: {exc}") from exc


def _section(path: Path, name: str, value: object) -> dict:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise RunConfigError(f"{path}: {name} must be a mapping, not {value!r}")
    return value


def _known(path: Path, where: str, section: dict, known: set[str]) -> None:
    unknown = sorted(set(section) - known)
    if unknown:
        known_keys = ", ".join(sorted(known))
        raise RunConfigError(f"{path}: unknown key {unknown[0]!r} in {where} (known: {known_keys})")


def _text(value: object) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return yaml.safe_dump(value, default_flow_style=True).strip()  # vars given as a mapping


def _prometheus(path: Path, value: object) -> Prometheus | None:
    if value is None:
        return None
    section = _section(path, "pull.prometheus", value)
    _known(path, "pull.prometheus", section, SECTIONS["prometheus"])
    if not section.get("url"):
        raise RunConfigError(f"{path}: pull.prometheus needs a url")
    found = re.fullmatch(r"\s*(\d+)\s*([mhd])\s*", str(section.get("lookback", "")))
    if not found or int(found.group(1)) == 0:
        raise RunConfigError(f"{path}: pull.prometheus.lookback must be like 90m, 26h or 2d")
    match = section.get("match", [])
    return Prometheus(
        url=str(section["url"]),
        lookback=timedelta(seconds=int(found.group(1)) * UNITS[found.group(2)]),
        step=float(section.get("step", pull_cli.STEP)),
        match=tuple(map(str, [match] if isinstance(match, str) else match)),
    )


def _ingest(path: Path, base: Path, section: dict) -> Ingest:
    paths = section.get("paths")
    if not paths or not isinstance(paths, list):
        raise RunConfigError(f"{path}: ingest.paths must list the folders to ingest")
    resolved = tuple(base / Path(str(p)).expanduser() for p in paths)
    missing = [str(p) for p in resolved if not p.exists()]
    if missing:
        raise RunConfigError(f"{path}: ingest path {missing[0]} does not exist")
    return Ingest(
        paths=resolved,
        timezone=str(section.get("timezone", ingest_cli.TIMEZONE)),
        sacct_fields=section.get("sacct_fields"),
        host=section.get("host"),
    )


def _notify(path: Path, base: Path, section: dict) -> Notify:
    from gpu_ledger.notify.config import ConfigError, load_config

    if not section.get("config"):
        raise RunConfigError(f"{path}: notify.config must name the owners file (owners.yml)")
    owners = base / Path(str(section["config"])).expanduser()
    try:
        load_config(owners)  # checked before anything runs, so that a bad one stops the run at once
    except ConfigError as exc:
        raise RunConfigError(f"{path}: notify.config: {exc}") from exc
    days = int(section.get("days", 7))
    if days < 1:
        raise RunConfigError(f"{path}: notify.days must be at least 1")
    dry_run = section.get("dry_run")
    folder = base / Path(str(dry_run)).expanduser() if dry_run else None
    return Notify(owners, days, folder, _text(section.get("domain")))


@dataclass(frozen=True)
class Stage:
    name: str
    status: str  # done, failed or skipped
    line: str
    changed: bool = True  # whether it landed or published anything


@click.command("run", short_help=RUN_HELP, help=RUN_HELP + ".")
@global_options
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="run.yml: what to pull, the folders to ingest, build vars, the owners to notify",
)
@wait_option
@guarded
def run_command(config_path: Path, wait: float | None) -> int:
    """Exit 0 when every stage was done, 1 when one failed (the stages that depend on it are skipped),
    2 when nothing ran (a bad config, or another writer holds the home)."""
    try:
        config = load_run_config(config_path)
    except RunConfigError as exc:
        error(exc)
        return DID_NOT_RUN
    home = current_home()
    started = time.monotonic()
    with home_lock(home, "run", wait=wait):
        log_to_home(home)
        stages = run_stages(home, config)
    problems = [f"{s.name} {s.status}" for s in stages if s.status != "done"]
    if problems:
        final = f"run: {', '.join(problems)} after {time.monotonic() - started:.0f} s"
    else:
        nothing_new = not any(s.changed for s in stages if s.name in ("pull", "ingest", "build"))
        final = f"run: {len(stages)} stages done in {time.monotonic() - started:.0f} s" + (
            ": nothing new since the last run, the warehouse unchanged" if nothing_new else ""
        )
    logger.info(final)
    click.echo(final)
    return FAILED if any(s.status == "failed" for s in stages) else OK


def run_stages(home: Path, config: RunConfig) -> list[Stage]:
    """Run the configured stages in order, printing each one's line as it ends."""
    from gpu_ledger.notify.mailprog import queue_folder

    stages: list[Stage] = []

    def record(stage: Stage) -> None:
        stages.append(stage)
        line = f"{stage.name}: {stage.line}"
        logger.info(line)
        click.echo(line)

    if config.prometheus is not None:
        record(_pull(home, config.prometheus))
    if config.ingest is not None:
        record(_ingest_stage(home, config.ingest))
    record(_build(home, config.build_vars))
    if config.notify is None:
        return stages
    failed = [s.name for s in stages if s.status == "failed"]
    if failed:
        record(Stage("notify", "skipped", f"skipped as {' and '.join(failed)} failed", changed=False))
    else:
        record(_notify_stage(home, config.notify))
    if queue_folder(Home(home)).is_dir():  # Slurm's MailProg queued jobs here (gpu-ledger mailprog)
        if failed:
            record(Stage("reports", "skipped", f"skipped as {' and '.join(failed)} failed", changed=False))
        else:
            record(_reports(home, config.notify))
    return stages


def _pull(home: Path, config: Prometheus) -> Stage:
    from gpu_ledger.ingest.errors import IngestError

    end = datetime.now(UTC)
    try:
        result = pull_cli.pull_into(home, config.url, end - config.lookback, end, config.step, config.match)
    except (IngestError, ValueError) as exc:
        return Stage("pull", "failed", f"failed: {exc}")
    line = pull_cli.summarize(result, home)
    return Stage("pull", _status(not result.rejected), line, changed=result.rows > 0)


def _ingest_stage(home: Path, config: Ingest) -> Stage:
    options = ingest_cli.ingest_options(config.timezone, config.sacct_fields, config.host)
    try:
        outcomes = ingest_cli.land(home, list(config.paths), options)
    except (FileNotFoundError, ValueError) as exc:
        return Stage("ingest", "failed", f"failed: {exc}")
    for outcome in outcomes:
        if outcome.status == "rejected":
            click.echo(f"rejected: {outcome.error}", err=True)
        for note in outcome.notes:
            logger.info("note: %s", note)
    if not outcomes:
        return Stage("ingest", "done", "no files in the configured folders (hidden files are skipped)", False)
    rejected = any(o.status == "rejected" for o in outcomes)
    changed = any(o.rows for o in outcomes)
    return Stage("ingest", _status(not rejected), ingest_cli.summarize(outcomes, home), changed=changed)


def _build(home: Path, dbt_vars: str | None) -> Stage:
    from gpu_ledger.build.engine import engine
    from gpu_ledger.build.progress import FAILED as FAILED_STATUSES
    from gpu_ledger.build.progress import BuildProgress

    progress = BuildProgress(show=progress_shown())
    with progress:
        result = engine("duckdb")(Home(home), dbt_vars=dbt_vars, on_event=progress)
    if not result.success:
        for line in progress.problem_lines(FAILED_STATUSES) or [result.output.strip()[-2000:]]:
            click.echo(line, err=True)
        line = f"failed; the published warehouse is unchanged. Full log: {result.log}"
        return Stage("build", "failed", line)
    if result.unchanged_since is not None:
        line = f"nothing new since the build published at {result.unchanged_since:%Y-%m-%d %H:%M:%S} UTC"
        return Stage("build", "done", line, changed=False)
    return Stage("build", "done", f"{progress.summary()}; published {result.published}")


def _notify_stage(home: Path, config: Notify) -> Stage:
    from gpu_ledger.notify.config import load_config
    from gpu_ledger.notify.send import notify

    last = yesterday(load_config(config.config).timezone)
    summary = notify(Home(home), config.config, last - timedelta(days=config.days - 1), last, config.dry_run)
    for outcome in summary.outcomes:
        if outcome.status == "failed":
            click.echo(outcome.line(), err=True)
    head = summary.text().splitlines()[0].removeprefix("notify ")
    return Stage("notify", _status(not summary.failed), head)


def _reports(home: Path, config: Notify) -> Stage:
    from gpu_ledger.notify.config import load_config
    from gpu_ledger.notify.mailprog import deliver

    done = deliver(Home(home), load_config(config.config), config.domain, config.dry_run)
    for problem in done.problems:
        click.echo(problem, err=True)
    return Stage("reports", _status(not done.counts.get("failed")), done.line())


def _status(ok: bool) -> str:
    return "done" if ok else "failed"


def yesterday(timezone: str) -> date:
    """The day before today in the time zone, the last whole day a digest covers."""
    return datetime.now(ZoneInfo(timezone)).date() - timedelta(days=1)
