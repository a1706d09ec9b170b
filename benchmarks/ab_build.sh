#!/bin/bash
# One source's first build in a fresh home, by the ragbag checkout TREE (for a paired A/B of two
# commits under farm-bench, one `git worktree` each). Uses this checkout's .venv and the engine
# folder RAGBAG_E5_ENGINE names (default: the test suite's), so both sides encode alike. TREE's
# ragbag/ is imported; assets/, connectors/ and pipelines/ come through this checkout's editable
# install, so compare commits that differ only under ragbag/ (git diff A B -- assets connectors pipelines).
#   cd /tmp && farm-bench -n 2 --warmup 0 --timeout 800 \
#     --vs "$PWD/benchmarks/ab_build.sh /tmp/old" -- "$PWD/benchmarks/ab_build.sh" "$PWD"
# Usage: ab_build.sh TREE [CONNECTOR NAME PATH]   (default: the small home's notes)
set -euo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
TREE=$(cd "$1" && pwd)
CONNECTOR=${2:-files}
NAME=${3:-notes}
DATA=${4:-$HERE/benchmarks/.work/home-small/set/data/notes}
HOME_DIR=$(mktemp -d "${TMPDIR:-/tmp}/ab-home.XXXXXX")
trap 'rm -rf "$HOME_DIR"' EXIT
export RAGBAG_HOME=$HOME_DIR PYTHONPATH=$TREE
export RAGBAG_E5_ENGINE=${RAGBAG_E5_ENGINE:-${TMPDIR:-/tmp}/ragbag-test-engine-$(id -u)}
cd "$TREE"
"$HERE/.venv/bin/python" -m ragbag.apps.cli.main add "$CONNECTOR" "$NAME" "$DATA" >/dev/null
"$HERE/.venv/bin/python" -m ragbag.apps.cli.main build --json >/dev/null
