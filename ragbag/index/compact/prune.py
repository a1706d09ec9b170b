"""The compact graph's edges: hub-preserving pruning of an HNSW proximity graph.

faiss builds an HNSW graph; its bottom layer's neighbour lists are the candidates. The
highest-degree ``hub_fraction`` of nodes (hubs) keep up to ``hub_degree`` neighbours, every
other node ``degree``, chosen with HNSW's diversity heuristic; edges into hubs are mirrored back
(hubs keep reverse edges) and any node the pruning left unreachable from the hubs is linked in
again. Search starts from the hubs whose codes score best, so hubs serve as the upper layer.
"""

from __future__ import annotations

import math

import numpy as np

from ragbag.index.params import Params


def proximity_candidates(vectors: np.ndarray, params: Params) -> np.ndarray:
    """Bottom-layer neighbour lists of an HNSW graph over unit vectors: (n, 2*build_m), -1 = none."""
    import faiss

    n, d = vectors.shape
    index = faiss.IndexHNSWFlat(d, params.build_m, faiss.METRIC_INNER_PRODUCT)
    index.hnsw.efConstruction = params.ef_construction
    index.add(np.ascontiguousarray(vectors, dtype=np.float32))
    hnsw = index.hnsw
    # faiss's stubs lack the HNSW struct's arrays
    offsets = faiss.vector_to_array(hnsw.offsets).astype(np.int64)  # type: ignore[attr-defined]
    neighbors = faiss.vector_to_array(hnsw.neighbors)  # type: ignore[attr-defined]
    width = int(faiss.vector_to_array(hnsw.cum_nneighbor_per_level)[1])
    return neighbors[offsets[:n, None] + np.arange(width)[None, :]].astype(np.int32)


def select_neighbors(v: np.ndarray, cand: np.ndarray, vectors: np.ndarray, limit: int) -> np.ndarray:
    """HNSW's diversity heuristic: take candidates closest first, skipping one that is nearer to
    an already kept neighbour than to the node itself; fill up with the skipped ones if fewer
    than ``limit`` survive (so a sparse node is never left short of edges)."""
    if len(cand) == 0:
        return cand
    sims = vectors[cand] @ v
    order = np.argsort(-sims)
    cand, sims = cand[order], sims[order]
    pair = vectors[cand] @ vectors[cand].T
    kept: list[int] = []
    skipped: list[int] = []
    for j in range(len(cand)):
        if len(kept) >= limit:
            break
        if kept and pair[j, kept].max() > sims[j]:
            skipped.append(j)
        else:
            kept.append(j)
    kept += skipped[: limit - len(kept)]
    return cand[np.sort(np.array(kept, dtype=np.int64))] if kept else cand[:0]


def hubs_of(cand: np.ndarray, fraction: float) -> np.ndarray:
    """The highest-degree nodes (in-degree plus out-degree of the unpruned graph)."""
    n = len(cand)
    valid = cand[cand >= 0]
    degree = np.bincount(valid, minlength=n) + (cand >= 0).sum(1)
    count = max(1, math.ceil(fraction * n)) if n else 0
    return np.sort(np.argsort(-degree, kind="stable")[:count]).astype(np.int32)


def prune(
    vectors: np.ndarray, cand: np.ndarray, params: Params, degree: int | None = None
) -> tuple[list[np.ndarray], np.ndarray]:
    """Hub-preserving pruning of candidate lists; returns neighbour lists and hub ids."""
    n = len(vectors)
    degree = degree or params.degree
    hubs = hubs_of(cand, params.hub_fraction)
    is_hub = np.zeros(n, bool)
    is_hub[hubs] = True
    lists: list[np.ndarray] = []
    for i in range(n):
        row = cand[i]
        row = row[(row >= 0) & (row != i)]
        limit = params.hub_degree if is_hub[i] else degree
        lists.append(select_neighbors(vectors[i], row, vectors, limit))
    _mirror_into_hubs(lists, hubs, vectors, params.hub_degree)
    reconnect(lists, hubs, vectors)
    return lists, hubs


def _mirror_into_hubs(lists: list[np.ndarray], hubs: np.ndarray, vectors: np.ndarray, limit: int) -> None:
    """Edges v → hub get their reverse hub → v, closest first, while the hub has room."""
    is_hub = np.zeros(len(lists), bool)
    is_hub[hubs] = True
    incoming: dict[int, list[int]] = {int(h): [] for h in hubs}
    for v, row in enumerate(lists):
        for u in row[is_hub[row]]:
            incoming[int(u)].append(v)
    for h, srcs in incoming.items():
        have = set(lists[h].tolist())
        new = np.array([s for s in srcs if s not in have and s != h], dtype=np.int64)
        room = limit - len(have)
        if room <= 0 or not len(new):
            continue
        best = new[np.argsort(-(vectors[new] @ vectors[h]))[:room]]
        lists[h] = np.sort(np.concatenate([lists[h], best])).astype(np.int32)


def reconnect(lists: list[np.ndarray], hubs: np.ndarray, vectors: np.ndarray) -> int:
    """Link every node unreachable from the hubs back in (``lists`` in place): its most similar
    reachable node gets an edge to it. Returns how many edges were added."""
    n = len(lists)
    added = 0
    while True:
        seen = reachable(lists, hubs)
        lost = np.flatnonzero(~seen)
        if not len(lost):
            return added
        reach = np.flatnonzero(seen)
        # One node per pass: linking it often brings a whole unreachable island back.
        v = int(lost[0])
        sims = vectors[reach] @ vectors[v]
        u = int(reach[int(np.argmax(sims))]) if len(reach) else int(hubs[0])
        if u == v:
            u = int(lists[v][0]) if len(lists[v]) else (v + 1) % n
        lists[u] = np.sort(np.append(lists[u], v)).astype(np.int32)
        added += 1


def reachable(lists: list[np.ndarray], starts: np.ndarray) -> np.ndarray:
    """Which nodes a walk from ``starts`` can reach (a bool per node)."""
    seen = np.zeros(len(lists), bool)
    frontier = np.unique(np.asarray(starts, dtype=np.int64))
    seen[frontier] = True
    while len(frontier):
        nxt = np.concatenate([lists[i] for i in frontier]) if len(frontier) else np.zeros(0, np.int64)
        nxt = np.unique(nxt)
        nxt = nxt[~seen[nxt]]
        seen[nxt] = True
        frontier = nxt
    return seen
