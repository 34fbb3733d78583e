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

.PHONY: setup system-deps focus-validator newest-python demo test torture lint benchmark clean

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

# newest-python: the first of NEWEST_PYTHON, python3.13, python3.12 and pyenv's 3.13 / 3.12 that runs; none: a skip.
newest-python:
	@py=$$(for c in $(NEWEST_PYTHON) python3.13 python3.12 \
		$$(ls -d $${PYENV_ROOT:-$$HOME/.pyenv}/versions/3.1[23].*/bin/python 2>/dev/null | sort -rV); do \
		$$c -c 'import sys; sys.exit(not (3, 12) <= sys.version_info < (3, 14))' 2>/dev/null && { echo $$c; break; }; \
	done); \
	if [ -z "$$py" ]; then \
		echo "newest-python: skipped: no Python 3.12 or 3.13 found (set NEWEST_PYTHON=/path/to/python3.13)"; \
	else \
		{ test -f $(NEWEST_STAMP) && test $(NEWEST_STAMP) -nt pyproject.toml || { \
			$$py -m venv --clear $(NEWEST_VENV) && $(NEWEST_VENV)/bin/pip install --quiet --upgrade pip && \
			$(NEWEST_VENV)/bin/pip install --quiet -e ".[dev]" && touch $(NEWEST_STAMP); }; } && \
		echo "newest-python: $$($(NEWEST_VENV)/bin/python --version): $(NEWEST_SMOKE)" && \
		$(NEWEST_VENV)/bin/pytest -q -p no:cacheprovider $(NEWEST_SMOKE); \
	fi

# make demo PORT=8502 serves the app on another port (checked before anything else runs)
demo: setup
	$(BIN)/gpu-ledger demo$(if $(PORT), --port $(PORT))

system-deps:
	bash scripts/system-deps.sh

lint: setup
	$(BIN)/ruff check .

test: lint system-deps focus-validator
	$(BIN)/pytest
	$(MAKE) --no-print-directory newest-python

# The reliability suite's long version: the trial counts the README's Reliability section reports.
torture: setup
	GPU_LEDGER_TORTURE=1 $(BIN)/pytest -s tests/reliability

benchmark: setup
	$(BIN)/python -m benchmarks.ladder $(LADDER)

clean:
	rm -rf $(VENV) $(FOCUS_VENV) $(NEWEST_VENV) .gpu-ledger .pytest_cache
