# Two commands on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: run test lint bench clean-data help

help:
	@echo "make run    - install into $(VENV) and serve on http://$${CALLWRIGHT_HOST:-127.0.0.1}:$${CALLWRIGHT_PORT:-8000} (embedded PostgreSQL under ./var)"
	@echo "make test   - install dev dependencies and run the whole suite"
	@echo "make bench  - run the benchmarks in bench/"

$(VENV)/.installed: pyproject.toml clients/python/pyproject.toml
	@$(PYTHON) -m venv $(VENV) 2>/dev/null || { \
	  echo "python3 -m venv is missing; installing Debian's python3-venv"; \
	  apt-get update -qq && apt-get install -y -qq python3-venv && $(PYTHON) -m venv $(VENV); }
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e clients/python
	$(BIN)/python -m pip install -q -e .
	@touch $@

$(VENV)/.installed-dev: $(VENV)/.installed
	$(BIN)/python -m pip install -q -e ".[dev]"
	@touch $@

run: $(VENV)/.installed
	$(BIN)/callwright serve

lint: $(VENV)/.installed-dev
	$(BIN)/lint-imports

test: $(VENV)/.installed-dev
	$(BIN)/lint-imports
	$(BIN)/python -m pytest $(PYTEST_ARGS)

$(VENV)/.installed-bench: $(VENV)/.installed-dev
	$(BIN)/python -m pip install -q -e ".[dev,bench]"
	@touch $@

bench: $(VENV)/.installed-bench
	$(BIN)/python bench/audit_events_throughput.py
	$(BIN)/python bench/voice_streams.py

clean-data:
	rm -rf var
