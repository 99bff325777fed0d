# lipnorm_exp — `make help` lists the targets.
PYTHON ?= python
RUNS ?= results/runs
# where the report writes: unset, the report's own choice, results (the committed report) for the
# committed records in results/runs and <RUNS>_report beside any other folder of records
OUT ?=
REPORT = $(PYTHON) -m lipnorm_exp.report --runs $(RUNS) $(if $(OUT),--out $(OUT))
# your own runs' records (`make run`), apart from the committed ones in results/runs
OWN_RUNS ?= runs
# offline: LIPNORM_RAW_DIRS=<a folder holding Planetoid/Cora/raw ...> make run (paths.raw_dirs)

# install is a name for the stamp's target, not a file
.PHONY: help install run test test-docs test-fast test-slurm typecheck lint format docs tables figures scorecard report reproduce reproduce-cpu bench clean

help: ## this list
	@grep -E '^[a-zA-Z_-]+:.*?## ' $(MAKEFILE_LIST) \
		| sed -e 's|$$(OWN_RUNS)|$(OWN_RUNS)|g' -e 's|$$(RUNS)|$(RUNS)|g' \
			-e 's|$$(SLURM_PACKAGES)|$(SLURM_PACKAGES)|g' \
		| awk 'BEGIN {FS = ":.*?## "}; {printf "  %-12s %s\n", $$1, $$2}'

# The environment's install stamp: `make install` runs again only when pyproject.toml changed
# since (the install is editable: changes to the code need none) or the environment is new.
INSTALLED := $(shell $(PYTHON) -c "import sys; print(sys.prefix)")/.lipnorm_exp-installed

install: $(INSTALLED) ## install the package with all extras, where pyproject.toml changed since the last install (torch 2.13 first where no torch is installed; an installed one, CUDA or not, is kept)

$(INSTALLED): pyproject.toml
	$(PYTHON) -c "import torch" 2>/dev/null || $(PYTHON) -m pip install -q "torch==2.13.0"
	$(PYTHON) -m pip install -q -e ".[all]"
	touch $@

run: install ## train the default config (GAT-Lip, Cora) and write its record to $(OWN_RUNS)
	$(PYTHON) -m lipnorm_exp paths.results_dir=$(OWN_RUNS)

test: install ## the test suite, as CI runs it (one worker per CPU core), but the documentation's (make test-docs) and the type check (make typecheck)
	$(PYTHON) -m lipnorm_exp --cfg job > /dev/null
	$(PYTHON) -m pytest -q -n auto --dist loadfile -m "not docs and not typecheck"

test-docs: install ## the documentation site's build and every code block of its pages (a CI step of its own)
	$(PYTHON) -m pytest -q -n auto --dist loadfile -m docs tests/project/test_docs.py

test-fast: ## tests without the end-to-end CLI runs
	$(PYTHON) -m pytest -q -n auto --dist loadfile -m "not slow and not docs and not typecheck"

typecheck: install ## mypy over the package (pyproject.toml's [tool.mypy]), and its refusals of misspelt record and report keys (a CI step of its own)
	$(PYTHON) -m pytest -q -n auto -m typecheck tests/project/test_types.py

SLURM_PROGRAMS = munged mariadb-install-db mariadbd slurmdbd slurmctld slurmd sinfo sacct
SLURM_PACKAGES = slurm-wlm slurmdbd munge mariadb-server
test-slurm: ## sweeps on a one-node SLURM cluster started here (root; apt-get installs $(SLURM_PACKAGES) where missing)
	@for program in $(SLURM_PROGRAMS); do command -v $$program > /dev/null || missing=1; done; \
	if [ -n "$$missing" ]; then \
		apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $(SLURM_PACKAGES); \
	fi
	LIPNORM_SLURM_TESTS=1 $(PYTHON) -m pytest -q tests/sweeps/test_slurm.py

lint: ## ruff check and format check
	$(PYTHON) -m ruff check lipnorm_exp hydra_plugins tests scripts examples
	$(PYTHON) -m ruff format --check lipnorm_exp hydra_plugins tests scripts examples

format: ## ruff fix and format
	$(PYTHON) -m ruff check --fix lipnorm_exp hydra_plugins tests scripts examples
	$(PYTHON) -m ruff format lipnorm_exp hydra_plugins tests scripts examples

docs: install ## the documentation site (mkdocs.yml, docs/) into site/, every warning an error
	NO_MKDOCS_2_WARNING=1 $(PYTHON) -m mkdocs build --strict

tables: ## the paper's tables from the records in $(RUNS) (where they go: see report)
	$(REPORT) --only tables

figures: ## the paper's figures from the records in $(RUNS) (where they go: see report)
	$(REPORT) --only figures

scorecard: ## the reproduction scorecard (SCORECARD.md, scorecard.csv) from the records in $(RUNS) (where it goes: see report)
	$(REPORT) --only scorecard

report: ## tables, figures and the scorecard, in one process (the records read once): into results for the committed records (results/runs), else into <RUNS>_report; OUT=<folder> names another
	$(REPORT)

# every preset: the files configs/experiment/*.yaml, by name
PRESETS ?= $(sort $(basename $(notdir $(wildcard configs/experiment/*.yaml))))
ARGS ?=
reproduce: install ## every preset's full paper grid into $(RUNS), then the report (ARGS='hydra/launcher=joblib ...')
	for preset in $(PRESETS); do \
		$(PYTHON) -m lipnorm_exp +experiment=$$preset scale=paper train.progress=false paths.results_dir=$(RUNS) $(ARGS) || exit 1; \
	done
	$(REPORT)

reproduce-cpu: install ## the paper-scale sweeps behind results/ on a CPU (narrowed grids, hours), then the report
	bash scripts/reproduce_cpu.sh

bench: ## layer benchmark: epoch time and memory, Lip vs none vs PyG (results/bench/layers.md)
	$(PYTHON) scripts/bench_layers.py

clean: ## remove Hydra logs and the built site (records stay)
	rm -rf logs site
