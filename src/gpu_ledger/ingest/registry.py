"""Every format ingest knows, and how a file's format is recognised from its content.

FORMATS is the one list of formats. `seeds/ingest_formats.csv` (which fct_data_loads groups loads by)
is generated from it: `python -m gpu_ledger.ingest.registry` rewrites the seed, `--check` (run by
`make lint-python`) fails when it is out of date. The seed holds every format but the billing
providers', which their entry in the billing provider registry names (dbt_project.yml,
billing_focus_parts), so that adding a provider changes no shared file; `--check` also fails when that
registry names a format that is not a billing format here.
"""

from __future__ import annotations

import argparse
import csv
import io
import sys
from pathlib import Path

import yaml

from gpu_ledger.ingest.base import Format
from gpu_ledger.ingest.errors import UnknownFormat
from gpu_ledger.ingest.formats import billing, business, events, schedulers, telemetry
from gpu_ledger.ingest.sniff import Sniff, describe
from gpu_ledger.project import DBT_PROJECT_FILE, SEEDS_DIR

# within a group, most specific first: the first format whose detect() accepts the file's head wins
FORMATS: tuple[Format, ...] = (
    *telemetry.FORMATS,
    *billing.FORMATS,
    *schedulers.FORMATS,
    *events.FORMATS,
    *business.FORMATS,
)
BY_NAME = {f.name: f for f in FORMATS}


def recognise(sniff: Sniff) -> Format | None:
    """The first format whose detect() accepts the file's head, or None."""
    for fmt in FORMATS:
        if fmt.detect(sniff):
            return fmt
    return None


def detect(sniff: Sniff) -> Format:
    fmt = recognise(sniff)
    if fmt is None:
        looks = describe(sniff, lambda other: getattr(recognise(other), "name", None))
        raise UnknownFormat(
            sniff.path,
            f"format not recognised from its content: {looks}",
            expected="one of: " + ", ".join(sorted(BY_NAME)),
        )
    return fmt


def by_name(name: str) -> Format:
    try:
        return BY_NAME[name]
    except KeyError:
        raise ValueError(f"unknown format {name!r}; known: {', '.join(sorted(BY_NAME))}") from None


def provider_formats(project_file: Path = DBT_PROJECT_FILE) -> list[str]:
    """The formats the billing provider registry's FOCUS parts map (dbt_project.yml, billing_focus_parts)."""
    parts = yaml.safe_load(project_file.read_text())["vars"]["billing_focus_parts"]
    return [name for part in parts for name in part.get("formats", [])]


def seed_csv(project_file: Path = DBT_PROJECT_FILE) -> str:
    """seeds/ingest_formats.csv as FORMATS makes it: format, source_group, description, in registry order."""
    providers = set(provider_formats(project_file))
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["format", "source_group", "description"])
    writer.writerows([f.name, f.group, f.description] for f in FORMATS if f.name not in providers)
    return out.getvalue()


def drift(project_file: Path = DBT_PROJECT_FILE) -> list[str]:
    """Formats the billing provider registry names that are not billing formats of FORMATS."""
    return [
        f"billing_focus_parts (dbt_project.yml) names {name!r}, which is not a billing format of the registry"
        for name in provider_formats(project_file)
        if getattr(BY_NAME.get(name), "group", None) != "billing"
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m gpu_ledger.ingest.registry", description="write seeds/ingest_formats.csv from FORMATS"
    )
    parser.add_argument(
        "--check", action="store_true", help="say whether the seed is out of date, write nothing"
    )
    parser.add_argument("--seed", type=Path, default=SEEDS_DIR / "ingest_formats.csv")
    parser.add_argument("--project-file", type=Path, default=DBT_PROJECT_FILE)
    args = parser.parse_args(argv)
    problems = drift(args.project_file)
    wanted = seed_csv(args.project_file)
    if not args.seed.exists() or args.seed.read_text() != wanted:
        if args.check:
            problems.append(f"out of date: {args.seed} (run python -m gpu_ledger.ingest.registry)")
        else:
            args.seed.write_text(wanted)
            print(f"written: {args.seed}")
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
