# Two entry points, each self-sufficient on a fresh Debian machine with Python 3.11:
#   make demo  - set up, simulate a fleet and run every stage built so far on it
#   make test  - set up and run the whole test suite (lint included)
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# The FinOps Foundation's FOCUS validator (tests/warehouse/test_focus_validator.py) needs Python >= 3.12: its own
# venv. It pins numpy < 2 but not pyarrow, whose newest releases need numpy 2; pyarrow 21 works with both.
FOCUS_VENV := .venv-focus
FOCUS_STAMP := $(FOCUS_VENV)/.installed
FOCUS_VALIDATOR := focus-validator==2.2.1 "pyarrow<22"
# The package supports Python 3.11 to 3.13; make test also runs a smoke subset (the command line's tests,
# among them a tiny simulate -> ingest -> build, and the SQL output's) on the newest of 3.13 and 3.12 found.
NEWEST_VENV := .venv-newest
NEWEST_STAMP := $(NEWEST_VENV)/.installed
NEWEST_SMOKE := tests/test_cli.py tests/test_sql.py

# sqlfluff (with its dbt templater) and dbt-bouncer in a venv of their own: dbt-bouncer pins duckdb < 2, which the
# project's venv has outgrown, and sqlfluff-templater-dbt pins the sqlfluff release it was made for. The dbt
# templater compiles the models against a throwaway home (LINT_HOME: an empty landed store; profiles.yml reads
# GPU_LEDGER_BUILD_DB / GPU_LEDGER_LANDED_DB); dbt-bouncer checks the manifest that compile leaves in target/.
LINT_VENV := .venv-lint
LINT_STAMP := $(LINT_VENV)/.installed
LINT_TOOLS := "sqlfluff==4.4.0" "sqlfluff-templater-dbt==4.4.0" "dbt-core>=1.11,<1.12" "dbt-duckdb>=1.11,<1.12" \
	"duckdb>=1.4,<2" "dbt-bouncer==4.3.0"
LINT_HOME := .lint-home
LINT_ENV := GPU_LEDGER_BUILD_DB=$(CURDIR)/$(LINT_HOME)/work.duckdb GPU_LEDGER_LANDED_DB=$(CURDIR)/$(LINT_HOME)/landed.duckdb

# make test runs pytest on PYTEST_WORKERS processes (pytest-xdist); a module's tests stay on one worker
# (--dist loadscope), so its fixtures are made once, and the fleets many modules read are made once for the
# whole run (tests/conftest.py: made_once). Modules start longest first, as tests/conftest.py orders them
# (--no-loadscope-reorder keeps that order). The slowest tests are printed at the end.
PYTEST_WORKERS ?= 2
PYTEST_ARGS := -n $(PYTEST_WORKERS) --dist loadscope --no-loadscope-reorder
SQLFLUFF_PROCESSES ?= 2

.PHONY: setup system-deps focus-validator newest-venv newest-python lint-venv test-tools demo docs test torture \
	lint lint-python lint-sql benchmark clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e ".[dev]"
	touch $(STAMP)

setup: $(STAMP)

# The first Python >= 3.12 among FOCUS_PYTHON, python3.12 .. python3.14 on PATH and pyenv's versions, oldest first
# (numpy < 2 has wheels up to 3.12); none: a skip.
focus-validator:
	@test -f $(FOCUS_STAMP) && exit 0; \
	py=$$(for c in $(FOCUS_PYTHON) python3.12 python3.13 python3.14 \
		$$(ls -d $${PYENV_ROOT:-$$HOME/.pyenv}/versions/3.*/bin/python 2>/dev/null | sort -V); do \
		$$c -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null && { echo $$c; break; }; \
	done); \
	if [ -z "$$py" ]; then \
		echo "focus-validator: skipped: it needs Python >= 3.12 and none was found (set FOCUS_PYTHON=/path/to/python3.12);" \
			"the FOCUS conformance test will skip"; \
	else \
		$$py -m venv $(FOCUS_VENV) && $(FOCUS_VENV)/bin/pip install --quiet --upgrade pip && \
		$(FOCUS_VENV)/bin/pip install --quiet $(FOCUS_VALIDATOR) && touch $(FOCUS_STAMP); \
	fi

# newest-venv: the first of NEWEST_PYTHON, python3.13, python3.12 and pyenv's 3.13 / 3.12 that runs; none: a skip.
# After setup: both install the project in editable mode, which writes src/gpu_ledger.egg-info.
newest-venv: $(STAMP)
	@py=$$(for c in $(NEWEST_PYTHON) python3.13 python3.12 \
		$$(ls -d $${PYENV_ROOT:-$$HOME/.pyenv}/versions/3.1[23].*/bin/python 2>/dev/null | sort -rV); do \
		$$c -c 'import sys; sys.exit(not (3, 12) <= sys.version_info < (3, 14))' 2>/dev/null && { echo $$c; break; }; \
	done); \
	if [ -z "$$py" ]; then \
		echo "newest-python: skipped: no Python 3.12 or 3.13 found (set NEWEST_PYTHON=/path/to/python3.13)"; \
	else \
		test -f $(NEWEST_STAMP) && test $(NEWEST_STAMP) -nt pyproject.toml || { \
			$$py -m venv --clear $(NEWEST_VENV) && $(NEWEST_VENV)/bin/pip install --quiet --upgrade pip && \
			$(NEWEST_VENV)/bin/pip install --quiet -e ".[dev]" && touch $(NEWEST_STAMP); }; \
	fi

# One process (beside make test's pytest, which has the cores' share of workers): its two modules' builds are
# one after the other, so the second reuses the first's parse and docs site.
newest-python: newest-venv
	@if [ -f $(NEWEST_STAMP) ]; then \
		echo "newest-python: $$($(NEWEST_VENV)/bin/python --version): $(NEWEST_SMOKE)" && \
		$(NEWEST_VENV)/bin/pytest -q -p no:cacheprovider $(NEWEST_SMOKE); \
	fi

# make demo PORT=8502 serves the app on another port (checked before anything else runs)
demo: setup
	$(BIN)/gpu-ledger demo$(if $(PORT), --port $(PORT))

# make docs: docs/ and the dbt project's documentation (the static page every build writes, <home>/docs.html,
# from a build of a throwaway empty home) on http://127.0.0.1:$(DOCS_PORT) (mkdocs.yml)
DOCS_PORT ?= 8000
DOCS_HOME := .docs-home
docs: setup
	rm -rf $(DOCS_HOME) && mkdir -p docs/dbt
	$(BIN)/gpu-ledger build --quiet --home $(DOCS_HOME)
	cp $(DOCS_HOME)/docs.html docs/dbt/index.html
	$(BIN)/mkdocs serve --dev-addr 127.0.0.1:$(DOCS_PORT)

system-deps:
	bash scripts/system-deps.sh

$(LINT_STAMP):
	$(PYTHON) -m venv $(LINT_VENV)
	$(LINT_VENV)/bin/pip install --quiet --upgrade pip
	$(LINT_VENV)/bin/pip install --quiet $(LINT_TOOLS)
	touch $(LINT_STAMP)

lint-venv: $(LINT_STAMP)

# ruff; the FOCUS columns generated from src/gpu_ledger/focus_columns.yml and seeds/ingest_formats.csv generated
# from the format registry (ingest/registry.py) are current (lint-python, in the project's venv); sqlfluff over the models (.sqlfluff, .sqlfluffignore) and dbt-bouncer's project rules
# (dbt-bouncer.yml) over the manifest (lint-sql, in the lint venv: it starts while the project's installs)
lint: lint-python lint-sql

lint-python: setup
	$(BIN)/ruff check .
	$(BIN)/python -m gpu_ledger.focus_codegen --check
	$(BIN)/python -m gpu_ledger.ingest.registry --check

lint-sql: lint-venv
	rm -rf $(LINT_HOME) && mkdir -p $(LINT_HOME)
	$(LINT_VENV)/bin/python -c "import duckdb; duckdb.connect('$(LINT_HOME)/landed.duckdb').close()"
	$(LINT_ENV) $(LINT_VENV)/bin/dbt parse --quiet --project-dir . --profiles-dir . --target-path target
	$(LINT_ENV) $(LINT_VENV)/bin/sqlfluff lint models --processes $(SQLFLUFF_PROCESSES)
	$(LINT_VENV)/bin/dbt-bouncer run --config-file dbt-bouncer.yml

# Everything the tests need, made side by side (installs mostly wait on the package registries). The newest
# Python's venv is made here too, not beside pytest: its editable install rewrites src/gpu_ledger.egg-info.
test-tools:
	$(MAKE) --no-print-directory --jobs=4 --output-sync=target setup lint-venv system-deps focus-validator \
		newest-venv

# pytest in front, its output as it comes; lint, then the newest Python's smoke run, beside it, one at a time:
# they wait on nothing pytest makes and fill the gaps its two workers leave (servers starting, a worker done
# before the other). Their output comes after pytest's; any of them failing fails make test. BESIDE, not
# $(MAKE), on the line: make runs a line that names $(MAKE) even under make -n, and this one runs pytest.
BESIDE := $(MAKE)
test: test-tools
	@log=$$(mktemp); \
	$(BESIDE) --no-print-directory --keep-going lint newest-python >$$log 2>&1 & beside=$$!; \
	$(BIN)/pytest $(PYTEST_ARGS) --durations=15; tests=$$?; \
	wait $$beside; beside=$$?; cat $$log; rm -f $$log; \
	echo "make test: pytest exited $$tests, lint and the newest Python's smoke run $$beside"; \
	[ $$tests -eq 0 ] && [ $$beside -eq 0 ]

# The reliability suite's long version: the trial counts docs/reliability.md reports.
torture: setup
	GPU_LEDGER_TORTURE=1 $(BIN)/pytest -s tests/reliability

benchmark: setup
	$(BIN)/python -m benchmarks.ladder $(LADDER)

clean:
	rm -rf $(VENV) $(FOCUS_VENV) $(NEWEST_VENV) $(LINT_VENV) $(LINT_HOME) $(DOCS_HOME) docs/dbt .docs-site .gpu-ledger \
		.pytest_cache
