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

.PHONY: setup system-deps focus-validator demo test torture lint benchmark clean

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

demo: setup
	$(BIN)/gpu-ledger demo

system-deps:
	bash scripts/system-deps.sh

lint: setup
	$(BIN)/ruff check .

test: lint system-deps focus-validator
	$(BIN)/pytest

# The reliability suite's long version: the trial counts the README's Reliability section reports.
torture: setup
	GPU_LEDGER_TORTURE=1 $(BIN)/pytest -s tests/reliability

benchmark: setup
	$(BIN)/python -m benchmarks.ladder $(LADDER)

clean:
	rm -rf $(VENV) $(FOCUS_VENV) .gpu-ledger .pytest_cache
