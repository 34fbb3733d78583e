"""The project's own files, found in one place: the package's data, and the dbt project beside it.

The package (`src/gpu_ledger/`) carries its own data, `focus_columns.yml`, in an installed wheel as in a
checkout. The dbt project (dbt_project.yml, profiles.yml, models/, macros/, seeds/, tests/dbt/) is the
repository the package is checked out in, two folders above it; `make setup` installs the package
editable, so the installed command finds it there too. Every module that needs a path of the project
takes it from here.
"""

from __future__ import annotations

from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
FOCUS_COLUMNS = PACKAGE_DIR / "focus_columns.yml"  # package data (pyproject: tool.setuptools.package-data)

PROJECT_DIR = PACKAGE_DIR.parents[1]  # the checkout: src/gpu_ledger -> the repository root
DBT_PROJECT_FILE = PROJECT_DIR / "dbt_project.yml"
SEMANTIC_DIR = PROJECT_DIR / "models" / "marts" / "semantic"
SEEDS_DIR = PROJECT_DIR / "seeds"
