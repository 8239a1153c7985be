# The front door: every target is a one-liner over the project's virtual environment.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
BLUEPRINT ?= eks-jark
OUT ?= out

.PHONY: run install test test-fast lint golden bench wheel-check clean

# The venv and the dependencies, rebuilt when pyproject.toml changes.
$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --disable-pip-version-check --upgrade pip
	$(BIN)/python -m pip install -q --disable-pip-version-check hatchling '.[test,lint]'
	touch $@

# Tests run against the installed package (not the source tree), so a packaging mistake fails them.
install: $(VENV)/.installed
	$(BIN)/python -m pip install -q --disable-pip-version-check --no-deps --no-build-isolation --force-reinstall .

run: install
	$(BIN)/rlobs render blueprints/$(BLUEPRINT).yaml -o $(OUT)

test: install
	$(BIN)/python -m pytest

test-fast: install
	$(BIN)/python -m pytest -m "not slow"

lint: install
	$(BIN)/ruff check cli tests tools
	$(BIN)/ruff format --check cli tests tools
	$(BIN)/mypy

golden: install
	RLOBS_UPDATE_GOLDEN=1 $(BIN)/python -m pytest -q tests/test_golden.py

bench: install
	$(BIN)/python tools/bench.py

wheel-check: install
	rm -rf dist && $(BIN)/python -m pip wheel -q --no-deps --no-build-isolation -w dist .
	$(BIN)/python tools/wheel_check.py dist/*.whl

clean:
	rm -rf $(VENV) dist build out .mypy_cache .ruff_cache
