"""Making compact graphs: a full build sized to the text it indexes, and in-place updates.

How many neighbours and code bytes a node gets is planned per source from the bytes of its text
(``size``, ``build_within``): the index aims at ``budget`` of the text it replaces, and steps
back to better layouts while its own-chunk recall would fail the asset check.
"""

from __future__ import annotations

import numpy as np

from ragbag.index.compact import size as graph_size
from ragbag.index.compact.graph import Compact, to_csr
from ragbag.index.compact.pack import pack_compact
from ragbag.index.compact.pq import decode_pq, encode_pq, residuals, rotate, train_pq, train_rotation
from ragbag.index.compact.prune import proximity_candidates, prune, reconnect, select_neighbors
from ragbag.index.compact.search import search_codes
from ragbag.index.params import Params
from ragbag.index.quality import RECALL_FLOOR, self_recall


def build_compact(vectors: np.ndarray, params: Params = Params(), layout: graph_size.Layout | None = None) -> Compact:
    """A compact graph with ``layout`` (default: the best one; ``build_within`` sizes one to
    the text it indexes)."""
    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    n = len(vectors)
    d = vectors.shape[1] if vectors.ndim == 2 else 0
    layout = layout or graph_size.layouts(n, d, params.degree, params.pq_m, params.pq_bits)[0]
    if n == 0:
        m = layout.pq_m
        return Compact(
            np.zeros(1, np.int32),
            np.zeros(0, np.int32),
            np.zeros(0, np.int32),
            np.zeros((0, m), np.uint8),
            np.zeros((m, 1, max(1, d // m)), np.float32),
            1,
            {"degree": layout.degree},
            np.zeros(0, np.float32),
        )
    lists, hubs = prune(vectors, proximity_candidates(vectors, params), params, layout.degree)
    rotation = train_rotation(vectors) if layout.rotate else None
    coded = vectors if rotation is None else vectors @ rotation.T
    return _assemble(vectors, lists, hubs, train_pq(coded, layout.pq_m, layout.bits), layout, rotation)


def _assemble(
    vectors: np.ndarray,
    lists: list[np.ndarray],
    hubs: np.ndarray,
    trained: tuple[np.ndarray, np.ndarray],
    layout: graph_size.Layout,
    rotation: np.ndarray | None = None,
    **meta: int | None,
) -> Compact:
    """A compact graph from pruned lists and trained codes, with its nodes' residual norms."""
    centroids, codes = trained
    offsets, neighbors = to_csr(lists)
    g = Compact(
        offsets,
        neighbors,
        hubs,
        codes,
        centroids.astype(np.float32),
        layout.bits,
        {"degree": layout.degree, **meta},
        rotation=rotation,
    )
    g.residual = residuals(g, np.arange(len(vectors)), vectors)
    return g


def build_within(
    vectors: np.ndarray, raw_bytes: int, params: Params = Params(), floor: float = RECALL_FLOOR, queries: int = 200
) -> tuple[Compact, float, int]:
    """A compact graph planned to fit ``params.budget`` of ``raw_bytes`` (the text it indexes),
    then stepped back to better layouts while its own-chunk recall@10 is below ``floor`` (the
    asset check's bound), so a tight budget never publishes a graph its check would block.
    Returns the graph, its recall and the number of queries that measured it."""
    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    n, d = vectors.shape
    options = graph_size.layouts(n, d, params.degree, params.pq_m, params.pq_bits)
    if n == 0:
        return build_compact(vectors, params, options[0]), 1.0, 0
    allowed = params.budget * raw_bytes if params.budget else None
    cand = proximity_candidates(vectors, params)
    pruned: dict[int, tuple[list[np.ndarray], np.ndarray]] = {}
    trained: dict[tuple[int, int, bool], tuple[np.ndarray, np.ndarray]] = {}
    rotations: list[tuple[np.ndarray, np.ndarray]] = []  # one OPQ rotation (and the rotated vectors)
    built: dict[graph_size.Layout, Compact] = {}

    def graph_for(layout: graph_size.Layout) -> Compact:
        # Degrees share one pruning each and code sizes one training each.
        if layout not in built:
            if layout.degree not in pruned:
                pruned[layout.degree] = prune(vectors, cand, params, layout.degree)
            if layout.rotate and not rotations:
                r = train_rotation(vectors)
                rotations.append((r, vectors @ r.T))
            rotation, coded = rotations[0] if layout.rotate else (None, vectors)
            key = (layout.pq_m, layout.bits, layout.rotate)
            if key not in trained:
                trained[key] = train_pq(coded, layout.pq_m, layout.bits)
            lists, hubs = pruned[layout.degree]
            built[layout] = _assemble(
                vectors, lists, hubs, trained[key], layout, rotation, budget_bytes=int(allowed) if allowed else None
            )
        return built[layout]

    pick = graph_size.choose(options, allowed, lambda layout: len(pack_compact(graph_for(layout))))
    for i in range(pick, -1, -1):
        g = graph_for(options[i])
        recall, measured = self_recall(g, vectors, params, queries)
        if recall >= floor or i == 0:
            return g, recall, measured
    raise AssertionError("unreachable")


def update_compact(g: Compact, keep: np.ndarray, new_vectors: np.ndarray, params: Params = Params()) -> Compact:
    """Delete every node not in ``keep`` (old ids, in their new order) and insert new nodes
    (their exact vectors, appended after the kept ones), without recomputing old vectors.

    A deleted node's in-neighbours inherit its neighbours (chosen by code distance, degree
    bound kept), so no list points at a removed node and no region is cut off. A new node finds
    its neighbours by a graph search with its exact vector, keeps ``degree`` of them by the
    diversity heuristic on decoded vectors, and is linked back from them (replacing their
    farthest neighbour when full). The PQ codebook stays as trained.
    """
    keep = np.asarray(keep, dtype=np.int64)
    degree = int(g.meta.get("degree") or params.degree)  # as the graph was built
    n_old = g.n
    alive = np.zeros(n_old, bool)
    alive[keep] = True
    approx = decode_pq(g, np.arange(n_old)) if n_old else np.zeros((0, g.centroids.shape[0] * g.centroids.shape[2]))
    is_hub = np.zeros(n_old, bool)
    is_hub[g.hubs] = True
    lists = g.lists()
    for v in np.flatnonzero(~alive).tolist():
        lists[v] = np.zeros(0, np.int32)
    dead = ~alive
    for u in range(n_old):
        if not alive[u] or not dead[lists[u]].any():
            continue
        row = lists[u]
        gone = row[dead[row]]
        inherit = np.concatenate([g.row(int(x)) for x in gone])
        pool = np.unique(np.concatenate([row[~dead[row]], inherit]))
        pool = pool[alive[pool] & (pool != u)]
        limit = max(len(row), params.hub_degree if is_hub[u] else degree)
        lists[u] = select_neighbors(approx[u], pool, approx, limit).astype(np.int32)

    # Renumber: kept nodes first (in ``keep`` order), then the new ones.
    remap = np.full(n_old, -1, np.int64)
    remap[keep] = np.arange(len(keep))
    lists = [remap[lists[int(v)]].astype(np.int32) for v in keep]
    codes = g.codes[keep]
    approx = approx[keep]
    hubs = np.sort(remap[g.hubs][remap[g.hubs] >= 0]).astype(np.int32)
    new_vectors = np.ascontiguousarray(new_vectors, dtype=np.float32)
    new_codes = (
        encode_pq(g.centroids, rotate(g, new_vectors)) if len(new_vectors) else np.zeros((0, codes.shape[1]), np.uint8)
    )
    codes = np.vstack([codes, new_codes])
    work = Compact(np.zeros(1, np.int32), np.zeros(0, np.int32), hubs, codes, g.centroids, g.bits, rotation=g.rotation)
    approx = np.vstack([approx, decode_pq(work, np.arange(len(keep), len(codes)))]) if len(new_vectors) else approx
    if not len(hubs) and len(codes):
        hubs = work.hubs = np.array([0], np.int32)
    is_hub = np.zeros(len(codes), bool)
    is_hub[hubs] = True
    for vec in new_vectors:
        v = len(lists)
        if v:  # nodes not inserted yet have no in-edges, so the search cannot reach them
            ids, _ = search_codes(work, vec, params.ef_construction, params.seeds, lists=lists)  # as HNSW inserts
            chosen = select_neighbors(vec, ids, approx, degree)
        else:
            chosen = np.zeros(0, np.int64)
        lists.append(np.sort(chosen).astype(np.int32))
        for u in chosen.tolist():
            limit = params.hub_degree if is_hub[u] else degree
            row = lists[u]
            if len(row) < limit:
                lists[u] = np.sort(np.append(row, v)).astype(np.int32)
                continue
            sims = approx[row] @ approx[u]
            worst = int(np.argmin(sims))
            if float(approx[v] @ approx[u]) > sims[worst]:
                lists[u] = np.sort(np.append(np.delete(row, worst), v)).astype(np.int32)
    if lists:
        reconnect(lists, hubs, approx)
    offsets, neighbors = to_csr(lists)
    out = Compact(offsets, neighbors, hubs, codes, g.centroids, g.bits, dict(g.meta), rotation=g.rotation)
    if g.residual is not None:
        fresh = residuals(out, np.arange(len(keep), len(codes)), new_vectors)
        out.residual = np.concatenate([g.residual[keep], fresh]).astype(np.float32)
    return out
