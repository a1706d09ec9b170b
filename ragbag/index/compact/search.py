"""Searching a compact graph: a best-first walk scored by PQ codes (asymmetric distance tables),
then exact vectors recomputed for the best candidates only."""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable

import numpy as np

from ragbag.index.compact.graph import Compact
from ragbag.index.compact.pq import rotate
from ragbag.index.params import Params

# How optimistic the choice of nodes to recompute is: by code score plus BOUND_Z standard
# deviations of the code's error (|residual| / sqrt(d) for a residual in no preferred direction).
# A poorly coded node may hide a better score, so it earns a recompute before a well-coded one
# of equal code score. One byte a node on disk; the recall it buys is in docs/graph.md.
BOUND_Z = 4.0


def recompute_order(g: Compact, ids: np.ndarray, approx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The walk's results in the order their exact vectors should be recomputed."""
    if g.residual is None or not len(ids):
        return ids, approx
    dim = g.centroids.shape[0] * g.centroids.shape[2]
    order = np.argsort(-(approx + BOUND_Z * g.residual[ids] / math.sqrt(dim)), kind="stable")
    return ids[order], approx[order]


def adc_table(g: Compact, query: np.ndarray) -> np.ndarray:
    """Inner products of each query sub-vector with each centroid: (pq_m, ksub)."""
    m, ksub, dsub = g.centroids.shape
    return np.einsum("mkd,md->mk", g.centroids, rotate(g, query).reshape(m, dsub).astype(np.float32))


def search_codes(
    g: Compact,
    query: np.ndarray,
    ef: int,
    seeds: int = 4,
    mask: np.ndarray | None = None,
    lists: list[np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Best-first traversal scored by PQ codes: the ``ef`` best nodes (passing ``mask``) by
    approximate inner product, best first. ``lists`` replaces the CSR while a graph is edited."""
    n = len(g.codes)
    if n == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.float32)
    table = adc_table(g, query)
    cols = np.arange(table.shape[0])[None, :]

    def score(ids: np.ndarray) -> np.ndarray:
        return table[cols, g.codes[ids]].sum(1)

    hub_scores = score(g.hubs)
    start = g.hubs[np.argsort(-hub_scores)[: max(1, seeds)]].astype(np.int64)
    visited = np.zeros(n, bool)
    visited[start] = True
    s0 = score(start)
    frontier = [(-float(s), int(v)) for s, v in zip(s0, start)]
    heapq.heapify(frontier)
    best: list[tuple[float, int]] = []  # min-heap of (score, node) over nodes passing the mask
    for s, v in zip(s0, start):
        if mask is None or mask[v]:
            heapq.heappush(best, (float(s), int(v)))
    while frontier:
        neg, v = heapq.heappop(frontier)
        if len(best) >= ef and -neg < best[0][0]:
            break
        row = lists[v] if lists is not None else g.neighbors[g.offsets[v] : g.offsets[v + 1]]
        row = row[~visited[row]]
        if not len(row):
            continue
        visited[row] = True
        scores = score(row)
        floor = best[0][0] if len(best) >= ef else -np.inf
        for s, u in zip(scores.tolist(), row.tolist()):
            if s > floor or len(best) < ef:
                heapq.heappush(frontier, (-s, u))
                if mask is None or mask[u]:
                    heapq.heappush(best, (s, u))
                    if len(best) > ef:
                        heapq.heappop(best)
                    floor = best[0][0] if len(best) >= ef else -np.inf
    best.sort(key=lambda t: -t[0])
    return np.array([v for _, v in best], np.int64), np.array([s for s, _ in best], np.float32)


def search_compact(
    g: Compact,
    query: np.ndarray,
    k: int,
    vectors_of: Callable[[np.ndarray], np.ndarray],
    params: Params = Params(),
    mask: np.ndarray | None = None,
    ef: int | None = None,
    recompute: int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Top-k by exact inner product among the graph's best candidates.

    The traversal ranks by codes; the ``recompute`` best are re-scored with exact vectors from
    ``vectors_of`` (the embedding model, through a cache). When a filter leaves fewer rows than
    the recompute budget, those rows are scored exactly without a traversal.
    """
    if g.node_of_row is not None:
        return _search_rows(g, query, k, vectors_of, params, mask, ef, recompute)
    ef = max(ef or params.ef_search, k)
    budget = max(recompute or params.recompute, k)
    if mask is not None and int(mask.sum()) <= budget:
        ids = np.flatnonzero(mask).astype(np.int64)
        approx = np.zeros(0, np.float32)
    else:
        ids, approx = recompute_order(g, *search_codes(g, query, ef, params.seeds, mask))
    head, tail = ids[:budget], ids[budget:]
    exact = vectors_of(head) @ query if len(head) else np.zeros(0, np.float32)
    order = np.argsort(-exact, kind="stable")
    ids = np.concatenate([head[order], tail])
    scores = np.concatenate([exact[order], approx[budget:] if len(approx) > budget else np.zeros(len(tail))])
    return ids[: max(k, 0)], scores[: max(k, 0)].astype(np.float32)


def _search_rows(
    g: Compact,
    query: np.ndarray,
    k: int,
    vectors_of: Callable[[np.ndarray], np.ndarray],
    params: Params,
    mask: np.ndarray | None,
    ef: int | None,
    recompute: int | None,
) -> tuple[np.ndarray, np.ndarray]:
    """``search_compact`` in rows for a graph whose nodes stand for several rows: a node passes
    the filter when one of its rows does, is recomputed through its first row, and comes back
    as every passing row it stands for, with the node's score."""
    assert g.node_of_row is not None and g.row_offsets is not None and g.row_ids is not None and g.first_row is not None
    nodes_view = Compact(g.offsets, g.neighbors, g.hubs, g.codes, g.centroids, g.bits, g.meta, g.residual, g.rotation)
    node_mask = None
    if mask is not None:
        node_mask = np.zeros(g.n, bool)
        node_mask[g.node_of_row[mask]] = True
    first = g.first_row
    nodes, scores = search_compact(
        nodes_view, query, k, lambda ids: vectors_of(first[ids]), params, node_mask, ef, recompute
    )
    rows: list[int] = []
    out: list[float] = []
    for v, sc in zip(nodes.tolist(), scores.tolist()):
        for r in g.row_ids[g.row_offsets[v] : g.row_offsets[v + 1]].tolist():
            if mask is None or mask[r]:
                rows.append(r)
                out.append(sc)
    return np.array(rows[: max(k, 0)], np.int64), np.array(out[: max(k, 0)], np.float32)
