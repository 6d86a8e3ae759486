# Every target carries a one-line `## help`; `make` alone lists them.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
SEED ?= 7

.DEFAULT_GOAL := help
STUDY ?= data/default
.PHONY: help setup test test-slow lint format study report variants ladder search-ladder atlas atlas-full atlas-quality fair fair-exact fair-quality notebooks sample bench solve clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F ':.*## ' '{printf "  make %-10s %s\n", $$1, $$2}'

# The environment is rebuilt whenever pyproject.toml is newer than the last install. It installs
# the dev extra, which pulls the notebooks and dask extras too (make notebooks, --backend dask).
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

setup: $(STAMP) ## create .venv from pyproject.toml (every other target does it when needed)

test: lint ## lint (ruff, mypy --strict), then the test suite but its slow checks (how long: README.md, "How long, here")
	$(BIN)/pytest -n 2 -m "not slow" --durations=25

test-slow: $(STAMP) ## the slow checks: deep perft, the whole index, the larger samples (CI runs them after make test)
	$(BIN)/pytest -n 2 -m slow --durations=25

lint: $(STAMP) ## ruff check, ruff format check and mypy --strict on engine/ and pipeline/
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

format: $(STAMP) ## format the code with ruff
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

study: $(STAMP) ## the main job: the default study (every strategy; 8.5 M games, exact outcomes) into data/default, its summary and report
	$(BIN)/modiar study run pipeline/studies/default.toml --jobs 2
	$(BIN)/modiar study summary data/default
	$(BIN)/modiar study report data/default

report: $(STAMP) ## the report of a study already run (STUDY=data/default): reports/<study>/index.html, CSV, figures
	$(BIN)/modiar study report $(STUDY)

variants: $(STAMP) ## the rule-variant sweep (pipeline/studies/variants.toml) into data/variants, and its report
	$(BIN)/modiar study run pipeline/studies/variants.toml --jobs 2
	$(BIN)/modiar study report data/variants

search-ladder: $(STAMP) ## the search ladder (pipeline/studies/search.toml): mcts from 1 to 4,096 playouts, sampled, into data/search-ladder and its report
	$(BIN)/modiar ladder search search --jobs 2
	$(BIN)/modiar ladder search-report data/search-ladder

ladder: $(STAMP) ## the skill ladder (pipeline/studies/ladder.toml): alphabeta(1..16) and perfect's dials, all exact, into data/ladder and its report
	$(BIN)/modiar ladder run pipeline/studies/ladder.toml --jobs 2
	$(BIN)/modiar ladder report data/ladder

atlas: $(STAMP) ## the atlas's first part (pipeline/studies/atlas.toml [parts.make]: 17 rule sets; its estimate of time and memory comes first) into data/atlas, and its report
	$(BIN)/modiar atlas run pipeline/studies/atlas.toml --part make --jobs 2
	$(BIN)/modiar atlas report data/atlas

atlas-full: $(STAMP) ## the whole atlas (151 rule sets, by far the longest job: its estimate comes first; resumes data/atlas, so it can be run in several goes, and completes kept rows that lack the verdict columns; HOURS=H sets its time limit, docs/atlas.md), and its report
	$(BIN)/modiar atlas run pipeline/studies/atlas.toml --jobs 2 --yes $(if $(HOURS),--hours $(HOURS))
	$(BIN)/modiar atlas report data/atlas

atlas-quality: $(STAMP) ## the exact quality of random and perfect(temperature=1.0) self-play for each distinct game of data/atlas (the cheapest first; its estimate of time comes first; resumes data/atlas/quality; HOURS=H sets its time limit, docs/quality.md), and the atlas's report
	$(BIN)/modiar atlas quality data/atlas --jobs 2 --yes $(if $(HOURS),--hours $(HOURS))
	$(BIN)/modiar atlas report data/atlas

fair: $(STAMP) ## the fairness search of RULES.md's rules: every start within 2 moved stones, its value, the pie rule and komi, into reports/fair/modiar (its time: docs/fair.md)
	$(BIN)/modiar fair

fair-exact: $(STAMP) ## the same, with random and perfect self-play played exactly from each fair start within 1 moved stone (the first time the longest part; cached): reports/fair/modiar-exact-within-1
	$(BIN)/modiar fair --exact-within 1

fair-quality: $(STAMP) ## the same with the exact quality of random and perfect(temperature=1.0) self-play from each of those starts (about 6 times fair-exact's time; cached): reports/fair/modiar-exact-within-1-quality
	$(BIN)/modiar fair --exact-within 1 --quality

notebooks: $(STAMP) ## run the notebooks on data/default, data/variants and the published atlas and fairness search into reports/notebooks/ (git's copies stay clean); one whose study is not built says which target builds it
	$(BIN)/python -m pipeline.notebooks --output-dir reports/notebooks notebooks/*.ipynb

sample: $(STAMP) ## a quick look: 20,000 seeded random games summarised, no files written
	$(BIN)/modiar sample --games 20000 --seed $(SEED)

bench: $(STAMP) ## print the speed of the engines, the caches, the exact outcomes and the studies; COSTS=write rewrites what it measured in pipeline/costs.toml
	$(BIN)/modiar bench $(if $(filter write,$(COSTS)),--write-costs)

solve: $(STAMP) ## solve Modiar: the value and best first move under perfect play
	$(BIN)/modiar solve

# Where the cache folder is, asked of the package while .venv is still there.
CACHE_FOLDER = $(BIN)/python -c 'from pipeline.runs.paths import cache_folder; print(cache_folder())' 2>/dev/null \
	|| echo "$${MODIAR_CACHE:-the user cache folder, ~/.cache/modiar on Linux}"

clean: ## remove .venv and the tools' caches; data/, reports/ and the cache folder of tables and solutions stay (modiar cache show, modiar cache clear)
	@cache=$$($(CACHE_FOLDER)); \
	echo "rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis *.egg-info"; \
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis *.egg-info; \
	echo "kept: data/, reports/ and the cache folder of tables, solutions, policy tables and exact outcomes, $$cache"; \
	echo "  modiar cache show lists what it holds and its size; modiar cache clear empties it (after make setup: .venv/bin/modiar)"
