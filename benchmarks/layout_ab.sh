#!/usr/bin/env bash
# The renovation's yardstick: the same measurements through the code before the move into
# layered subpackages (commit 378869e, checked out at $OLD) and through this checkout, side by
# side in one run on the same machine. Quality must be identical (same code paths); times
# within noise. Usage: benchmarks/layout_ab.sh [OLD_CHECKOUT]   (results: benchmarks/README.md)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OLD=${1:-/tmp/ragbag-378869e}
WORK=${WORK:-$ROOT/benchmarks/.work/layout-ab}
PY=$ROOT/.venv/bin/python
[ -d "$OLD/ragbag" ] || git worktree add -f --detach "$OLD" 378869e
rm -rf "$WORK" && mkdir -p "$WORK"
# Each side runs its own code through the same interpreter; for the old side PYTHONPATH puts
# that checkout's top-level packages (ragbag, connectors, assets, pipelines) ahead of this
# checkout's editable install. Each side has its own home, built by its own code.
cat > "$WORK/old-ragbag" <<SH
#!/bin/sh
cd "$OLD" && PYTHONPATH="$OLD" RAGBAG_HOME="$WORK/old" exec "$PY" -c 'import sys; from ragbag.cli import main; sys.argv[0] = "ragbag"; main()' "\$@"
SH
cat > "$WORK/new-ragbag" <<SH
#!/bin/sh
cd "$ROOT" && RAGBAG_HOME="$WORK/new" exec "$PY" -c 'import sys; from ragbag.apps.cli.main import main; sys.argv[0] = "ragbag"; main()' "\$@"
SH
chmod +x "$WORK/old-ragbag" "$WORK/new-ragbag"

# phase NAME CMD...: run CMD, then print the share of the machine's CPU that other processes
# used meanwhile (the whole machine's busy time from /proc/stat, less CMD's own process tree).
phase() {
  local name=$1; shift
  local before; before=$("$PY" -c 'import sys; sys.path.insert(0, "benchmarks"); from _meter import machine_busy; print(*machine_busy())')
  /usr/bin/time -f "%U %S" -o "$WORK/phase-time" "$@"
  "$PY" - "$name" "$before" "$(tail -1 "$WORK/phase-time")" <<'PY'
import sys
sys.path.insert(0, "benchmarks")
from _meter import machine_busy
name, (b0, t0), (user, system) = sys.argv[1], map(float, sys.argv[2].split()), map(float, sys.argv[3].split())
b1, t1 = machine_busy()
other = max(0.0, (b1 - b0) - (user + system)) / max(t1 - t0, 1e-9)
print(f"[{name}] other processes' share of the machine's CPU meanwhile: {100 * other:.1f} %")
PY
}

echo "## quality and build: ragbag eval personal (generates the nine-source home, builds it, scores it)"
for side in old new; do
  start=$(date +%s.%N)
  phase "eval $side" sh -c "exec '$WORK/$side-ragbag' eval personal --home '$WORK/$side' --mode hybrid --json > '$WORK/$side-eval.json'"
  echo "$side: eval personal (build + score) wall $(echo "$(date +%s.%N) - $start" | bc) s"
done
"$PY" - "$WORK" <<'PY'
import json, sys
work = sys.argv[1]
old, new = (json.load(open(f"{work}/{side}-eval.json")) for side in ("old", "new"))
scores = lambda r: json.dumps({m: v["kinds"] for m, v in r["modes"].items()}, sort_keys=True)
print("identical scores, old vs new:", scores(old) == scores(new))
for kind, row in sorted(new["modes"]["hybrid"]["kinds"].items()):
    print(f"  {kind:13} " + "  ".join(f"{k} {v}" for k, v in row.items() if k in ("hit@10", "MRR@10", "nDCG@10")))
print("ms per query: old", old["modes"]["hybrid"]["ms_per_query"], "new", new["modes"]["hybrid"]["ms_per_query"])
PY

echo "## cold search, A = this checkout, B = before"
phase "cold search" farm-bench -n 7 --warmup 1 --timeout 300 --vs "$WORK/old-ragbag search JJD000390007120884 -k 5" -- "$WORK/new-ragbag" search JJD000390007120884 -k 5
echo "## no-change build of all nine sources, A = this checkout, B = before"
phase "no-change build" farm-bench -n 3 --warmup 1 --timeout 900 --vs "$WORK/old-ragbag build" -- "$WORK/new-ragbag" build
echo "## the CLI's start-up (ragbag --help), A = this checkout, B = before"
phase "start-up" farm-bench -n 7 --warmup 1 --vs "$WORK/old-ragbag --help" -- "$WORK/new-ragbag" --help
