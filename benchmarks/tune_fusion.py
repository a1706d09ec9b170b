"""Sweep the fusion settings over built evaluation homes and print nDCG@10 per setting.

Usage: python benchmarks/tune_fusion.py [--rerank] DATASET HOME [DATASET HOME ...]
(HOME is what `ragbag eval DATASET --home HOME` built; nothing is re-embedded.)
The defaults in ragbag.search.query (DEFAULT_FUSION, VECTOR_SHARE) were chosen from this;
with --rerank it sweeps the reranker's depth and its e5 and SPLADE shares over the default hybrid
instead (the defaults in ragbag.search.rerank). The reranker's vectors are cached, so each candidate is
encoded once.
"""

from __future__ import annotations

import json
import sys

from ragbag.apps.eval import datasets as evaluate
from ragbag.core.home import Home
from ragbag.search import rerank

SETTINGS = [{"fusion": "rrf", "rrf_k": k} for k in (5, 10, 20, 40, 60, 100)] + [
    {"fusion": "weighted", "alpha": a} for a in (0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9)
]

RERANK = [
    (d, w, ws)
    for d in (10, 20, 30, 50)
    for w in (0.4, 0.5, 0.6, 0.7, 0.8, 1.0)
    for ws in (0.0, 0.1, 0.2, 0.3)
    if w + ws <= 1.0
]


def main(pairs: list[str]) -> None:
    sweep_rerank = pairs[:1] == ["--rerank"]
    pairs = pairs[1:] if sweep_rerank else pairs
    results = {}
    for dataset, home in zip(pairs[::2], pairs[1::2]):
        ds = evaluate.load(dataset)
        h = Home(home)
        ids = json.loads((h.root.parent / f"{h.root.name}-corpus" / "ids.json").read_text())
        rows = {
            "vector": evaluate.score(ds, evaluate.run(ds, h, ids, "vector"))["nDCG@10"],
            "keyword": evaluate.score(ds, evaluate.run(ds, h, ids, "keyword"))["nDCG@10"],
            "hybrid": evaluate.score(ds, evaluate.run(ds, h, ids, "hybrid"))["nDCG@10"],
        }
        if sweep_rerank:
            for depth, weight, sparse_weight in RERANK:
                rerank.WEIGHT, rerank.SPARSE_WEIGHT = weight, sparse_weight
                name = f"rerank depth={depth},e5={weight},splade={sparse_weight}"
                rows[name] = evaluate.score(ds, evaluate.run(ds, h, ids, "hybrid", rerank=depth))["nDCG@10"]
                print(ds.name, name, rows[name], flush=True)
            results[ds.name] = rows
            continue
        for s in SETTINGS:
            name = ",".join(f"{k}={v}" for k, v in s.items())
            rows[name] = evaluate.score(ds, evaluate.run(ds, h, ids, "hybrid", **s))["nDCG@10"]
            print(ds.name, name, rows[name], flush=True)
        results[ds.name] = rows
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main(sys.argv[1:])
