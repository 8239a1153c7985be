# The front door: every target is a one-liner over the project's virtual environment.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
BLUEPRINT ?= eks-jark
OUT ?= out

PIP := $(BIN)/python -m pip install -q --disable-pip-version-check

.PHONY: run install install-dev install-trl test test-fast lint golden scenarios helm-keys upstream-facts docs bench bench-trl wheel-check clean

# The venv with rlobs's runtime dependencies; rebuilt when pyproject.toml changes.
$(VENV)/.runtime: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PIP) --upgrade pip
	$(PIP) hatchling .
	touch $@

# Plus everything the tests and linters use (real validators, the OpenTelemetry SDK, Google's client libraries).
$(VENV)/.dev: $(VENV)/.runtime tools/install_helm.py
	$(PIP) '.[test,lint]'
	$(BIN)/python tools/install_helm.py
	touch $@

# rlobs itself, installed non-editable: tests run against the installed package, so a packaging mistake fails them.
install: $(VENV)/.runtime
	$(PIP) --no-deps --no-build-isolation --force-reinstall .

install-dev: $(VENV)/.dev install

# The `trl` extra for the real TRL run (tests/test_trl_run.py skips without it): torch first, then the rest with
# torch held at that version, so pip never swaps in a CUDA build.
install-trl: install-dev
	$(PIP) torch==2.13.0
	echo torch==2.13.0 >$(VENV)/torch-constraint.txt
	$(PIP) -c $(VENV)/torch-constraint.txt '.[trl]'

run: install
	$(BIN)/rlobs render blueprints/$(BLUEPRINT).yaml -o $(OUT)

# Bytecode on for the test runs even where the environment turns it off: pytest caches its rewritten test modules
# as bytecode, which saves a few seconds of every run.
PYTEST := env PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest
# One worker per core; worksteal lets an idle worker take tests queued behind a long promtool table.
PARALLEL := -n auto --dist worksteal

# Each ends with its wall time (and keeps pytest's exit status).
test: install-dev
	@start=$$(date +%s); status=0; $(PYTEST) $(PARALLEL) || status=$$?; echo "make test: $$(( $$(date +%s) - start )) s wall time"; exit $$status

test-fast: install-dev
	@start=$$(date +%s); status=0; $(PYTEST) $(PARALLEL) -m "not slow" || status=$$?; echo "make test-fast: $$(( $$(date +%s) - start )) s wall time"; exit $$status

lint: install-dev
	$(BIN)/ruff check cli tests tools
	$(BIN)/ruff format --check cli tests tools
	$(BIN)/mypy

golden: install-dev
	RLOBS_UPDATE_GOLDEN=1 $(BIN)/python -m pytest -q tests/test_golden.py

# The alert scenario table (docs/scenarios.md): every scenario through promtool with the bundle's own rules on both EKS
# pipelines; fails when any alert is a false positive, a false negative, flaps or fires late.
scenarios: install-dev
	cd tests && ../$(BIN)/python -m testing.scenario_report ../docs/scenarios.md

# Rebuild cli/rlobs/data/helm_keys.json (the chart keys eks.helmValues is checked against) from ../shared's
# pinned charts after a chart version changes; tests/test_helmvalues.py checks the two agree.
helm-keys: install-dev
	$(BIN)/python tools/helm_keys.py

# Rebuild the other upstream facts, each from its pinned source (the commit is in the tool and in the data file):
# cli/rlobs/data/ai_on_eks_variables.json from ../shared's extract of ai-on-eks variables.tf, and
# cli/rlobs/data/aws_regions.json from botocore's partitions.json (kept in tests/upstream/botocore),
# cli/rlobs/data/gcp_locations.json from gcping's and SkyPilot's lists (kept in tests/upstream/gcp),
# cli/rlobs/data/kubernetes_versions.json from endoflife.date's EKS and GKE calendars (ENDOFLIFE: its two pages, or a checkout of
# endoflife-date/endoflife.date at tools/kube_versions.py's COMMIT). tests/test_eks_tfvars.py and
# tests/test_kube_versions.py check the data files against them.
ENDOFLIFE ?= tests/upstream/endoflife.date
upstream-facts: install-dev
	$(BIN)/python tools/ai_on_eks_variables.py
	$(BIN)/python tools/kube_versions.py $(ENDOFLIFE)
	$(BIN)/python tools/aws_regions.py tests/upstream/botocore/partitions.json
	$(BIN)/python tools/gcp_locations.py

# Regenerate docs/profile.md (every profile and fleet file key) from the installed rlobs's JSON Schemas after a model
# change; tests/test_docs.py checks the two agree.
docs: install
	$(BIN)/python tools/profile_docs.py

bench: install
	$(BIN)/python tools/bench.py

# The TRL callback's cost: GRPO runs on CPU with and without it, same seed (identical losses), CPU per step.
bench-trl: install-trl
	$(BIN)/python tools/bench_trl.py

wheel-check: install-dev
	rm -rf dist && $(BIN)/python -m pip wheel -q --no-deps --no-build-isolation -w dist .
	$(BIN)/python tools/wheel_check.py dist/*.whl

clean:
	rm -rf $(VENV) dist build out .mypy_cache .ruff_cache
