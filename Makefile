# One command sets up and runs the bundled example; one runs every test. Both create .venv on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: demo test setup bench

$(BIN)/firstfault: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet -e '.[test]'
	touch $@

setup: $(BIN)/firstfault

demo: setup
	$(BIN)/firstfault diagnose examples/oom-cascade/train.log || [ $$? -eq 1 ]

node_modules/.package-lock.json: package-lock.json
	npm ci --no-audit --no-fund

test: setup node_modules/.package-lock.json
	$(BIN)/firstfault signatures check
	$(BIN)/python -m pytest
	npm run --silent typecheck
	npm run --silent test:unit

bench: setup
	$(BIN)/python bench/run.py
