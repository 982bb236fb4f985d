# One command sets up and runs the bundled example; one runs every test. Both create .venv on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: demo test test-python test-client package setup bench fuzz

$(BIN)/firstfault: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet -e '.[test]'
	touch $@

setup: $(BIN)/firstfault

demo: setup
	$(BIN)/firstfault diagnose examples/oom-cascade/train.log || [ $$? -eq 1 ]

node_modules/.package-lock.json: package-lock.json
	npm ci --no-audit --no-fund

test: test-python test-client

test-python: setup
	$(BIN)/firstfault signatures check
	$(BIN)/python -m pytest
	$(BIN)/python bench/truth.py --check --misses none

# Unit tests, then the linux-x64 .vsix, the packaging test and the end-to-end suite in code-server.
test-client: node_modules/.package-lock.json
	npm run --silent typecheck
	npm run --silent test:unit
	npm run --silent package
	npm run --silent test:package
	npm run --silent test:e2e

package: node_modules/.package-lock.json
	npm run --silent package

bench: setup
	$(BIN)/python bench/run.py

# The property-based tests with thousands of examples each (make test runs a few dozen).
fuzz: setup
	HYPOTHESIS_PROFILE=fuzz $(BIN)/python -m pytest tests/test_fuzz.py
