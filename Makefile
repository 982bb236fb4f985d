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

test: setup
	$(BIN)/firstfault signatures check
	$(BIN)/python -m pytest

bench: setup
	$(BIN)/python bench/run.py
