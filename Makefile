# Two commands on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: run test lint bench browser clean-data help

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

# Debian's chromium, which the dashboard's browser tests drive (tests/e2e/browser.py): Playwright
# downloads no browser of its own.
browser:
	@command -v chromium >/dev/null 2>&1 || { echo "installing Debian's chromium for the dashboard's browser tests"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }

test: $(VENV)/.installed-dev browser
	$(BIN)/lint-imports
	$(BIN)/python -m pytest $(PYTEST_ARGS)

$(VENV)/.installed-bench: $(VENV)/.installed-dev
	$(BIN)/python -m pip install -q -e ".[dev,bench]"
	@touch $@

# Every benchmark, sized so the whole run stays under 10 minutes on 2 cores; each script records its
# ratios and targets in bench/results/summary.md (bench/summary.py), printed at the end. A script
# that fails does not stop the others (make reports it as ignored).
bench: $(VENV)/.installed-bench
	-$(BIN)/python bench/audit_events_throughput.py
	-$(BIN)/python bench/calls_read.py
	-$(BIN)/python bench/calls_create.py --duration 4 --create-duration 5 --batches 10 --settle-timeout 30
	-$(BIN)/python bench/calls_list_latency.py --rows 200000 --other-rows 10000 --samples 30 --export-limit 50000
	-$(BIN)/python bench/analytics.py --rows 200000 --other-rows 10000 --samples 10
	-$(BIN)/python bench/webhook_deliveries.py --profile-seconds 0
	-$(BIN)/python bench/voice_streams.py --window 10 --sweep 300,400,500 --sweep-window 4 --profile-seconds 0
	-$(BIN)/python bench/database_outage.py
	-$(BIN)/python bench/relay_throughput.py --events 10000
	-$(BIN)/python bench/scale_out.py
	@cat bench/results/summary.md 2>/dev/null || echo "no figures recorded"

clean-data:
	rm -rf var
