# Two entry points, each self-sufficient on a fresh Debian machine with Python 3.11:
#   make demo  - set up, simulate a fleet and run every stage built so far on it
#   make test  - set up and run the whole test suite (lint included)
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup system-deps demo test lint benchmark clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e ".[dev]"
	touch $(STAMP)

setup: $(STAMP)

demo: setup
	$(BIN)/gpu-ledger demo

system-deps:
	bash scripts/system-deps.sh

lint: setup
	$(BIN)/ruff check .

test: lint system-deps
	$(BIN)/pytest

benchmark: setup
	$(BIN)/python benchmarks/simulate.py

clean:
	rm -rf $(VENV) .gpu-ledger .pytest_cache
