"""Fusion normalisations compared offline over the homes ``ragbag eval`` built.

    .venv/bin/python benchmarks/fusion_norms.py [msmarco-5k:benchmarks/.work/eval-msmarco ...]

For every query the vector and keyword lists (1,000 candidates each, no collapsing) are taken
once from ``ragbag.search.query.search``; each normalisation (min-max, z-score, μ ± 3σ "DBSF", divide by
the best, reciprocal rank) is then applied over the first 100 or all 1,000 candidates and the
lists fused at vector shares 0.5–0.9, scored with the harness's nDCG@10. Why: the default's
hybrid falls below its vector mode on dbpedia-5k, and this asks whether any normalisation, not
just another share, fixes that (benchmarks/README.md, "Retrieval quality").
"""

from __future__ import annotations

import itertools
import json
import sys
from pathlib import Path

import numpy as np

from ragbag.apps.eval import datasets as evaluate
from ragbag.core.home import Home
from ragbag.index.published import home_model
from ragbag.models import embedding
from ragbag.search import query

ROOT = Path(__file__).resolve().parents[1]
EVAL = ROOT.parent / "shared" / "eval"
DEFAULT = ["msmarco-5k:benchmarks/.work/eval-msmarco", "dbpedia-5k:benchmarks/.work/eval-dbpedia"]
NORMS = ("minmax", "z", "dbsf", "max", "rank")


def lists_of(dataset: str, home: Path) -> tuple[evaluate.Dataset, dict, dict]:
    ds = evaluate.load(EVAL / dataset)
    h = Home(home)
    ids = json.loads((h.root.parent / f"{h.root.name}-corpus" / "ids.json").read_text())
    embedding.prime_queries(list(ds.queries.values()), home_model(h))
    lists = {}
    for qid, text in ds.queries.items():
        lists[qid] = {
            mode: [(Path(u).stem, float(s)) for u, s in zip(df["uri"], df["score"])]
            for mode in ("vector", "keyword")
            for df in [query.search(text, k=1000, mode=mode, home=h, sources=["eval"], collapse=False)]
        }
    return ds, ids, lists


def normalised(items: list[tuple[str, float]], how: str, depth: int) -> dict[str, float]:
    items = items[:depth]
    if not items:
        return {}
    s = np.array([sc for _, sc in items])
    if how == "minmax":
        v = (s - s.min()) / ((s.max() - s.min()) or 1)
    elif how == "z":
        v = (s - s.mean()) / (s.std() or 1)
    elif how == "dbsf":
        lo = s.mean() - 3 * s.std()
        v = (s - lo) / ((6 * s.std()) or 1)
    elif how == "max":
        v = s / (s.max() or 1)
    else:
        v = 1.0 / (60 + np.arange(len(s)) + 1)
    return {d: float(x) for (d, _), x in zip(items, v)}


def fused(per: dict, how: str, depth: int, share: float) -> list[str]:
    out: dict[str, float] = {}
    for mode, w in (("vector", share), ("keyword", 1 - share)):
        for d, x in normalised(per[mode], how, depth).items():
            out[d] = out.get(d, 0.0) + w * x
    return sorted(out, key=lambda d: -out[d])


def main(pairs: list[str]) -> None:
    sets = {}
    for pair in pairs or DEFAULT:
        dataset, home = pair.split(":", 1)
        sets[dataset] = lists_of(dataset, ROOT / home)

    def ndcg(dataset: str, ranker) -> float:
        ds, ids, lists = sets[dataset]
        return evaluate.score(ds, {q: evaluate.rank_documents(ranker(p), ids, 100) for q, p in lists.items()})[
            "nDCG@10"
        ]

    names = list(sets)
    print("| normalisation | over | share | " + " | ".join(names) + " |")
    print("|---|---|---|" + "---|" * len(names))
    print(
        "| vector alone | | | "
        + " | ".join(f"{ndcg(n, lambda p: [d for d, _ in p['vector']]):.4f}" for n in names)
        + " |"
    )
    print(
        "| keyword alone | | | "
        + " | ".join(f"{ndcg(n, lambda p: [d for d, _ in p['keyword']]):.4f}" for n in names)
        + " |"
    )
    for how, depth, share in itertools.product(NORMS, (100, 1000), (0.5, 0.6, 0.7, 0.8, 0.9)):
        row = [f"{ndcg(n, lambda p: fused(p, how, depth, share)):.4f}" for n in names]
        print(f"| {how} | {depth} | {share} | " + " | ".join(row) + " |", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
