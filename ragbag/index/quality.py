"""How sound a graph index is: the measures the build's asset checks and in-place updates use.

Own-chunk recall (``self_recall``) stands in for query recall because it needs no queries and no
model: the graph's own vectors are the queries and exact search over them is the truth.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ragbag.index.compact.graph import Compact
from ragbag.index.compact.search import recompute_order, search_codes
from ragbag.index.graph import search_any
from ragbag.index.hnsw import node_rows, search_fast_many
from ragbag.index.params import Params

RECALL_FLOOR = 0.90  # own-chunk recall@10 the graph_recall check demands
_TIE = 1e-5  # cosines this close to the k-th neighbour's are a tie (float32 rounding of one text)


def self_recall(
    g: Any, vectors: np.ndarray, params: Params = Params(), queries: int = 200, k: int = 10
) -> tuple[float, int]:
    """Recall@k of graph search against exact search, with a sample of the graph's own vectors
    as queries (the exact vectors stand in for recomputation: the model is deterministic).

    Measured over distinct texts (the graph's nodes; a fast index labels each with its first
    row), and tie-aware: a returned node counts when it is as close to the query as the k-th
    exact neighbour. Identical texts (a disclaimer pasted into every mail) are equally good
    neighbours; counting only the copies exact search happened to list first would call a
    sound graph broken and keep the whole source from being published.
    """
    rows = None if isinstance(g, Compact) else node_rows(g)
    nodes = vectors[rows] if rows is not None else vectors
    n = len(nodes)
    if n == 0:
        return 1.0, 0
    position = {int(r): i for i, r in enumerate(rows)} if rows is not None else None
    rng = np.random.default_rng(0)
    sample = rng.choice(n, size=min(queries, n), replace=False)
    k = min(k, n)
    probes = nodes[sample]
    if isinstance(g, Compact):
        found_rows = [search_any(g, q, k, lambda ids: vectors[ids], params)[0] for q in probes]
    else:  # one batched call: a refresh measures this after adding a single record
        found_rows = search_fast_many(g, probes, k, params.ef_search)
    hits = 0
    for q, got in zip(probes, found_rows):
        sims = nodes @ q
        kth = -np.partition(-sims, k - 1)[k - 1]
        found = {position.get(int(j), -1) if position is not None else int(j) for j in got[:k]}
        hits += sum(1 for j in found if 0 <= j < n and sims[j] >= kth - _TIE)
    return round(hits / (k * len(sample)), 4), len(sample)


def dangling(g: Any) -> int:
    """Neighbour ids that point at no node (0 for a sound graph; a fast index has none to check)."""
    if not isinstance(g, Compact):
        return 0
    return int(((g.neighbors < 0) | (g.neighbors >= g.n)).sum())


def findability(g: Compact, ids: np.ndarray, vectors: np.ndarray, params: Params = Params()) -> float:
    """Share of nodes whose own vector finds them among the code-ranked candidates a search
    would recompute: after an in-place update, the inserted nodes are reachable and placed."""
    if not len(ids):
        return 1.0
    found = 0
    budget = params.recompute
    for i, q in zip(ids, vectors):
        got, _ = recompute_order(g, *search_codes(g, q, params.ef_search, params.seeds))
        found += int(i in set(got[:budget].tolist()))
    return round(found / len(ids), 4)
