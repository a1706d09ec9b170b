"""Warm search latency over a built evaluation home, per mode (the ≤ 50 ms hybrid p50 target).

    .venv/bin/python benchmarks/warm_hybrid.py DATASET HOME [--out FILE]

HOME is what `ragbag eval DATASET --home HOME` built. The same measurement as build_bench.py's
warm searches (one warm-up pass, then 3 timed passes over the judged queries; each query's
vector forgotten before it runs, so every timing includes embedding the query; `hybrid_repeat`
keeps them), with the other processes' CPU share recorded for the timed passes.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from _meter import wait_for_quiet
from build_bench import warm_latency

from ragbag.apps.eval import datasets as evaluate


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("dataset")
    p.add_argument("home", type=Path)
    p.add_argument("--out", type=Path)
    args = p.parse_args()
    ds = evaluate.load(args.dataset)
    queries = [{"id": q, "text": t} for q, t in sorted(ds.queries.items())]
    quiet = wait_for_quiet(600)
    warm = warm_latency(args.home, queries)
    result = {
        "dataset": ds.name,
        "queries": len(queries),
        "before_start": quiet,
        "modes": {m: {k: v for k, v in r.items() if k != "ranked"} for m, r in warm.items()},
    }
    print(json.dumps(result, indent=1))
    if args.out:
        args.out.write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
