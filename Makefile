# Two commands: `make demo` (set up, build the sample data through Dagster, search it) and
# `make test` (set up, run the whole suite). Both create .venv on first use.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# pip takes the CPU build of this torch from this machine's disk; never a multi-GB CUDA build.
TORCH_REQ ?= torch==2.13.0
DEMO_HOME ?= $(CURDIR)/.demo-home

.PHONY: setup demo test ui bench clean

$(BIN)/ragbag: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q "$(TORCH_REQ)"
	$(BIN)/pip install -q -e ".[test]"
	touch $@

setup: $(BIN)/ragbag

demo: setup
	rm -rf "$(DEMO_HOME)"
	RAGBAG_HOME="$(DEMO_HOME)" $(BIN)/ragbag add files sample-docs sample/docs
	RAGBAG_HOME="$(DEMO_HOME)" $(BIN)/ragbag add code sample-code sample/code
	RAGBAG_HOME="$(DEMO_HOME)" $(BIN)/ragbag build
	RAGBAG_HOME="$(DEMO_HOME)" $(BIN)/ragbag search "how do I reset my password" -k 3
	RAGBAG_HOME="$(DEMO_HOME)" $(BIN)/ragbag search "function that retries a request" --connector code -k 3

test: setup
	$(BIN)/python -m pytest -q

# The Dagster UI over the demo home (or RAGBAG_HOME=... make ui), bound to loopback.
ui: setup
	RAGBAG_HOME="$${RAGBAG_HOME:-$(DEMO_HOME)}" DAGSTER_HOME="$${RAGBAG_HOME:-$(DEMO_HOME)}/dagster" \
	  $(BIN)/dagster dev -h 127.0.0.1 -p 3000

bench: setup
	$(BIN)/pip install -q -e ".[bench]"
	$(BIN)/python benchmarks/build_bench.py

clean:
	rm -rf $(VENV) $(DEMO_HOME) .pytest_cache
