"""Could whole-corpus SPLADE or pseudo-relevance feedback lift the first stage? Over built homes.

Usage: python benchmarks/sparse_probe.py DATASET HOME [DATASET HOME ...]
(HOME is what `ragbag eval DATASET --home HOME` built; MiniLM vectors and BM25 come from it,
SPLADE-tiny encodes the whole corpus once, ~2–4 min per 5,000 passages on 2 cores.)

Scores every chunk of a query with MiniLM (optionally after Rocchio feedback: the query plus
``beta`` × the mean of its top ``k`` chunk vectors), SPLADE-tiny and BM25, and ranks by
weighted sums of the three, each normalised as the hybrid fusion does (best score → 1, the
100th → 0). Writes nDCG@10 per setting and dataset to results/sparse_probe.json and prints the settings
that trade msmarco-5k against dbpedia-5k best; benchmarks/README.md, "The reranker", quotes it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from ragbag.apps.eval import datasets as evaluate
from ragbag.core.home import Home
from ragbag.index import bm25
from ragbag.index.published import home_model
from ragbag.models import embedding, sparse
from ragbag.search import fusion, snapshot

NORM_DEPTH = fusion.NORM_DEPTH
FEEDBACK = {"minilm": None, "minilm+prf3": (3, 0.5), "minilm+prf5": (5, 1.0)}
SHARES = [
    (a, b, round(1 - a - b, 2) + 0.0)
    for a in (0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
    for b in (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6)
    if a + b <= 1.0 + 1e-9
]


def _norm(x: np.ndarray) -> np.ndarray:
    top = np.sort(x)[::-1]
    hi, lo = top[0], top[min(NORM_DEPTH, len(top)) - 1]
    return np.clip((x - lo) / ((hi - lo) or 1.0), 0.0, None)


def _ndcg(ds, ids, stems, scores: dict[str, np.ndarray]) -> float:
    ranking = {
        q: evaluate.rank_documents([stems[j] for j in np.argsort(-s)[:100]], ids, 100) for q, s in scores.items()
    }
    return evaluate.score(ds, ranking)["nDCG@10"]


def probe(dataset: str, home: str) -> dict[str, float]:
    ds, h = evaluate.load(dataset), Home(home)
    ids = json.loads((h.root.parent / f"{h.root.name}-corpus" / "ids.json").read_text())
    snap = snapshot.load(h, h.sources()["eval"].connector, "eval")
    stems = [Path(r["uri"]).stem for r in snap.records]
    corpus = sparse.encode_passages([snap.index_text(j)[1] for j in range(len(snap.records))])
    embedding.prime_queries(list(ds.queries.values()), home_model(h))
    qv = {q: embedding.encode_query(t, home_model(h)) for q, t in ds.queries.items()}
    kw = {q: bm25.scores(snap.keyword, bm25.tokenize(t), len(snap.rows)) for q, t in ds.queries.items()}
    sp = {q: sparse.scores(corpus, sparse.encode_query(t)) for q, t in ds.queries.items()}
    out = {"splade": _ndcg(ds, ids, stems, sp), "bm25": _ndcg(ds, ids, stems, kw)}
    for name, feedback in FEEDBACK.items():
        vec = {}
        for q, v in qv.items():
            if feedback:
                k, beta = feedback
                top = np.argsort(-(snap.vectors @ v))[:k]
                v = v + beta * snap.vectors[top].mean(0)
                v = v / np.linalg.norm(v)
            vec[q] = snap.vectors @ v
        for a, b, c in SHARES:
            fused = {q: a * _norm(vec[q]) + b * _norm(sp[q]) + c * _norm(kw[q]) for q in vec}
            out[f"{name} {a} splade {b} bm25 {c}"] = _ndcg(ds, ids, stems, fused)
        print(ds.name, name, "done", flush=True)
    return out


def main(pairs: list[str]) -> None:
    results = {evaluate.load(d).name: probe(d, h) for d, h in zip(pairs[::2], pairs[1::2])}
    (Path(__file__).parent / "results" / "sparse_probe.json").write_text(json.dumps(results, indent=1))
    if {"msmarco-5k", "dbpedia-5k"} <= set(results):
        m, d = results["msmarco-5k"], results["dbpedia-5k"]
        floor = d["minilm 1.0 splade 0.0 bm25 0.0"]
        print(f"\ndbpedia floor (MiniLM alone): {floor}")
        print(
            "best msmarco with dbpedia >= floor:",
            max((n for n in m if n in d and d[n] >= floor), key=m.get, default=None),
        )
        front, best = [], -1.0
        for name in sorted((n for n in m if n in d), key=lambda n: -d[n]):
            if m[name] > best:
                best = m[name]
                front.append(f"  {name}: msmarco {m[name]}, dbpedia {d[name]}")
        print("Pareto front:\n" + "\n".join(front))


if __name__ == "__main__":
    main(sys.argv[1:])
