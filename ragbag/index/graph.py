"""Proximity-graph indexes over one source's chunk vectors.

Two profiles. ``fast`` keeps the vectors and stores a faiss HNSW index beside them. ``compact``
stores only a pruned graph and product-quantisation codes; at query time it walks the graph
scored by the codes and recomputes exact embeddings for the best candidates only. That is the
design of LEANN's paper — hub-preserving pruning and code-guided search — which its package
ships switched off (plain HNSW, every visited node re-embedded, seconds per query).

The compact graph: an HNSW proximity graph is built with faiss; its bottom layer's neighbour
lists are the candidates. The highest-degree ``hub_fraction`` of nodes (hubs) keep up to
``hub_degree`` neighbours, every other node ``degree``, chosen with HNSW's diversity heuristic;
edges into hubs are mirrored back (hubs keep reverse edges) and any node the pruning left
unreachable from the hubs is linked in again. Search starts from the hubs whose codes score
best, so hubs serve as the upper layer.

On disk the graph is CSR (neighbour ids sorted per node, delta-coded, LZMA-compressed) with
PQ codes packed at their bit width and float16 centroids: a few tens of bytes per chunk. How
many neighbours and code bytes a node gets is planned per source from the bytes of its text
(``graph_size``, ``build_within``): the index aims at ``budget`` (5 %) of the text it replaces.

A node is one distinct embedded text, not one chunk: mail and chats repeat themselves (quoted
replies, forwards, signatures), identical texts have identical vectors, and a graph over the
copies spends bytes and search width on ties. Rows that share a content hash share a node; node
k is the k-th distinct hash in row order, so the mapping is derived from the published chunks
and costs no bytes (``attach_rows``). The fast profile's HNSW holds one node per distinct text
too, labelled with its first row: a cluster of identical vectors (a disclaimer in every mail)
would otherwise capture HNSW's walk, and searches for everything else would come back empty.
"""

from __future__ import annotations

import heapq
import io
import json
import lzma
import math
import zlib
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ragbag.core.errors import RagbagError
from ragbag.index.compact import size as graph_size

PROFILES = ("fast", "compact")
RECALL_FLOOR = 0.90  # own-chunk recall@10 the graph_recall check demands
_TIE = 1e-5  # cosines this close to the k-th neighbour's are a tie (float32 rounding of one text)
FORMAT_VERSION = "3"  # 2: compact nodes are distinct texts (see row_nodes); 3: fast ones too
META = "graph.json"
_COMPACT_FILE = "graph.bin"
_FAST_FILE = "hnsw.faiss"


@dataclass(frozen=True)
class Params:
    """Build and search parameters; defaults chosen by ``benchmarks/graph_bench.py``."""

    build_m: int = 32  # HNSW M of the proximity graph the pruning starts from
    ef_construction: int = 100
    hub_fraction: float = 0.02
    hub_degree: int = 32  # M: neighbours a hub keeps
    degree: int = 8  # m: neighbours every other node keeps
    # Product quantisation; 0 = planned by size (graph_size): the best layout of degree and
    # codes that fits ``budget`` of the source's raw text, 96x2-bit or 32x8-bit at most.
    pq_m: int = 0
    pq_bits: int = 0
    budget: float = 0.05  # compact index bytes per raw text byte the build plans for; 0 = largest
    ef_search: int = 512  # search width: below 512, short mail queries lose recall in the walk
    recompute: int = 128  # exact embeddings recomputed per query
    seeds: int = 4  # hubs a search starts from


@dataclass
class Compact:
    """A pruned graph in memory: CSR neighbours, hub ids, PQ codes (one byte per sub-code)."""

    offsets: np.ndarray  # int32 (n + 1)
    neighbors: np.ndarray  # int32
    hubs: np.ndarray  # int32
    codes: np.ndarray  # uint8 (n, pq_m)
    centroids: np.ndarray  # float32 (pq_m, ksub, dsub)
    bits: int
    meta: dict = field(default_factory=dict)
    # |x - decoded x| per node: how far a code score may be off, for choosing what to recompute
    # (``recompute_order``). None in files written before it existed.
    residual: np.ndarray | None = None
    # The (d, d) rotation the codes were trained after (OPQ, orthonormal to float16 precision),
    # or None: codes are of ``x @ rotation.T``, learned so that the sub-quantisers code closer.
    rotation: np.ndarray | None = None
    # Rows (chunks) per node when several rows share a node (``attach_rows``); None = one each.
    node_of_row: np.ndarray | None = None
    row_offsets: np.ndarray | None = None  # CSR: rows of node k are row_ids[row_offsets[k]:…[k+1]]
    row_ids: np.ndarray | None = None
    first_row: np.ndarray | None = None  # the row whose text is embedded for node k

    @property
    def n(self) -> int:
        return len(self.offsets) - 1

    def row(self, i: int) -> np.ndarray:
        return self.neighbors[self.offsets[i] : self.offsets[i + 1]]

    def lists(self) -> list[np.ndarray]:
        return [self.row(i) for i in range(self.n)]


# ---------------------------------------------------------------- rows and nodes


def row_nodes(keys: list[str]) -> np.ndarray:
    """The node of each row: node k is the k-th distinct key (content hash) in row order."""
    first: dict[str, int] = {}
    return np.fromiter((first.setdefault(key, len(first)) for key in keys), np.int64, len(keys))


def first_rows(node_of_row: np.ndarray) -> np.ndarray:
    """The first row of each node: the row whose text stands for the node when it is embedded."""
    n = int(node_of_row.max()) + 1 if len(node_of_row) else 0
    rep = np.full(n, len(node_of_row), np.int64)
    np.minimum.at(rep, node_of_row, np.arange(len(node_of_row)))
    return rep


def attach_rows(g: Compact, keys: list[str]) -> Compact:
    """Let ``g`` (over distinct texts) answer in rows: ``keys`` are the rows' content hashes."""
    node_of_row = row_nodes(keys)
    if len(keys) and int(node_of_row.max()) + 1 != g.n:
        raise RagbagError(
            f"graph index has {g.n} nodes but the chunks hold {int(node_of_row.max()) + 1} "
            "distinct texts: rebuild the source"
        )
    order = np.argsort(node_of_row, kind="stable")
    counts = np.bincount(node_of_row, minlength=g.n)
    offsets = np.zeros(g.n + 1, np.int64)
    np.cumsum(counts, out=offsets[1:])
    g.node_of_row, g.row_offsets, g.row_ids = node_of_row, offsets, order
    g.first_row = first_rows(node_of_row)
    return g


def permute(g: Compact, order: np.ndarray) -> Compact:
    """The same graph with node ``order[i]`` renumbered i."""
    order = np.asarray(order, np.int64)
    new_id = np.empty(g.n, np.int64)
    new_id[order] = np.arange(g.n)
    lists = [np.sort(new_id[g.row(int(v))]).astype(np.int32) for v in order]
    offsets, neighbors = to_csr(lists)
    return Compact(
        offsets,
        neighbors,
        np.sort(new_id[g.hubs]).astype(np.int32),
        g.codes[order],
        g.centroids,
        g.bits,
        dict(g.meta),
        None if g.residual is None else g.residual[order],
        g.rotation,
    )


# ---------------------------------------------------------------- build


def proximity_candidates(vectors: np.ndarray, params: Params) -> np.ndarray:
    """Bottom-layer neighbour lists of an HNSW graph over unit vectors: (n, 2*build_m), -1 = none."""
    import faiss

    n, d = vectors.shape
    index = faiss.IndexHNSWFlat(d, params.build_m, faiss.METRIC_INNER_PRODUCT)
    index.hnsw.efConstruction = params.ef_construction
    index.add(np.ascontiguousarray(vectors, dtype=np.float32))
    hnsw = index.hnsw
    offsets = faiss.vector_to_array(hnsw.offsets).astype(np.int64)
    neighbors = faiss.vector_to_array(hnsw.neighbors)
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
    _reconnect(lists, hubs, vectors)
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


def _reconnect(lists: list[np.ndarray], hubs: np.ndarray, vectors: np.ndarray) -> int:
    """Link every node unreachable from the hubs back in: its most similar reachable node
    gets an edge to it. Returns how many edges were added."""
    n = len(lists)
    added = 0
    while True:
        seen = _reachable(lists, hubs)
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


def _reachable(lists: list[np.ndarray], starts: np.ndarray) -> np.ndarray:
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


def train_pq(vectors: np.ndarray, m: int, bits: int) -> tuple[np.ndarray, np.ndarray]:
    """Product quantisation: centroids (m, 2**bits, d/m) and one code per sub-vector (pass
    ``vectors @ rotation.T`` for codes after a rotation)."""
    import faiss

    n, d = vectors.shape
    if d % m:
        raise RagbagError(f"pq_m={m} must divide the embedding dimension {d}")
    pq = faiss.ProductQuantizer(d, m, bits)
    pq.verbose = False
    pq.cp.min_points_per_centroid = 1  # a small source trains on what it has, without a warning
    x = np.ascontiguousarray(vectors, dtype=np.float32)
    pq.train(x)
    centroids = faiss.vector_to_array(pq.centroids).reshape(m, 2**bits, d // m)
    return centroids, encode_pq(centroids, x)


def encode_pq(centroids: np.ndarray, vectors: np.ndarray) -> np.ndarray:
    """The nearest centroid per sub-vector (L2), one byte each."""
    m, ksub, dsub = centroids.shape
    codes = np.empty((len(vectors), m), np.uint8)
    for s in range(m):
        sub = vectors[:, s * dsub : (s + 1) * dsub]
        dist = (sub**2).sum(1)[:, None] - 2 * sub @ centroids[s].T + (centroids[s] ** 2).sum(1)[None, :]
        codes[:, s] = np.argmin(dist, axis=1)
    return codes


# OPQ's rotation is trained once per build, with this many sub-spaces, and serves every code
# size of the ladder: on the 100k noisy set, a rotation trained for 24 sub-quantisers took
# 16-byte codes to 0.362 mean squared error (0.432 unrotated; 0.338 with their own rotation,
# at the cost of one more training per code size).
OPQ_M = 24
OPQ_ITERATIONS = 20


def train_rotation(vectors: np.ndarray) -> np.ndarray:
    """An OPQ rotation (faiss), rounded to float16 as it is stored so that codes trained after
    it match the file."""
    import faiss

    d = vectors.shape[1]
    m = OPQ_M if d % OPQ_M == 0 else max(k for k in range(1, 33) if d % k == 0)
    opq = faiss.OPQMatrix(d, m)
    opq.niter = OPQ_ITERATIONS
    opq.verbose = False
    opq.train(np.ascontiguousarray(vectors, dtype=np.float32))
    a = faiss.vector_to_array(opq.A).reshape(d, d)
    return a.astype(np.float16).astype(np.float32)


def rotate(g: Compact, vectors: np.ndarray) -> np.ndarray:
    """Vectors in the space the codes live in."""
    return vectors if g.rotation is None else vectors @ g.rotation.T


def decode_pq(g: Compact, ids: np.ndarray) -> np.ndarray:
    """Approximate vectors of some nodes, from their codes (back in the embedding's space)."""
    m = g.codes.shape[1]
    out = np.concatenate([g.centroids[s][g.codes[ids, s]] for s in range(m)], axis=1)
    return out if g.rotation is None else out @ g.rotation


def residuals(g: Compact, ids: np.ndarray, vectors: np.ndarray) -> np.ndarray:
    """|vector - decoded code| of some nodes, from their exact vectors."""
    if not len(ids):
        return np.zeros(0, np.float32)
    return np.linalg.norm(vectors - decode_pq(g, ids), axis=1).astype(np.float32)


# How optimistic the choice of nodes to recompute is: by code score plus BOUND_Z standard
# deviations of the code's error (|residual| / sqrt(d) for a residual in no preferred direction).
# A poorly coded node may hide a better score, so it earns a recompute before a well-coded one
# of equal code score. Own-chunk recall@10 at width 512 / 128 recomputed, z = 0 → 4: msmarco-5k
# with 8-byte codes 0.887 → 0.912, Enron with 32-byte codes 0.961 → 0.968 (its subject-line
# queries 0.905 → 0.923). One byte a node on disk.
BOUND_Z = 4.0


def recompute_order(g: Compact, ids: np.ndarray, approx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The walk's results in the order their exact vectors should be recomputed."""
    if g.residual is None or not len(ids):
        return ids, approx
    dim = g.centroids.shape[0] * g.centroids.shape[2]
    order = np.argsort(-(approx + BOUND_Z * g.residual[ids] / math.sqrt(dim)), kind="stable")
    return ids[order], approx[order]


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
    **meta,
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


def to_csr(lists: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    lengths = np.array([len(r) for r in lists], dtype=np.int64)
    offsets = np.zeros(len(lists) + 1, np.int64)
    np.cumsum(lengths, out=offsets[1:])
    if offsets[-1] >= 2**31:
        raise RagbagError("graph too large for int32 offsets")
    neighbors = np.concatenate(lists).astype(np.int32) if lists else np.zeros(0, np.int32)
    return offsets.astype(np.int32), neighbors


# ---------------------------------------------------------------- incremental


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
    for v in np.flatnonzero(~alive):
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
        _reconnect(lists, hubs, approx)
    offsets, neighbors = to_csr(lists)
    out = Compact(offsets, neighbors, hubs, codes, g.centroids, g.bits, dict(g.meta), rotation=g.rotation)
    if g.residual is not None:
        fresh = residuals(out, np.arange(len(keep), len(codes)), new_vectors)
        out.residual = np.concatenate([g.residual[keep], fresh]).astype(np.float32)
    return out


# ---------------------------------------------------------------- search


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


class VectorCache:
    """An LRU cache of per-chunk encodings keyed by content: recomputed exact vectors here, the
    reranker's vectors and sparse rows there. ``stack`` joins cached rows into one matrix
    (default: dense float32 vectors, ``np.stack``)."""

    def __init__(self, size: int = 4096, stack: Callable[[list], Any] | None = None):
        self.size = size
        self._stack = stack
        self._d: OrderedDict[str, Any] = OrderedDict()

    def get_many(self, keys: list[str], compute: Callable[[list[int]], Any]) -> Any:
        """The encodings of ``keys`` stacked in order; ``compute(positions)`` encodes the missing
        ones (the rows of a matrix, one per position, in order)."""
        missing = [i for i, key in enumerate(keys) if key not in self._d]
        if missing:
            rows = compute(missing)
            for n, i in enumerate(missing):
                self._d[keys[i]] = rows[n] if self._stack else np.asarray(rows[n], np.float32)
        out = []
        for key in keys:
            self._d.move_to_end(key)
            out.append(self._d[key])
        while len(self._d) > self.size:
            self._d.popitem(last=False)
        if self._stack:
            return self._stack(out)
        return np.stack(out) if out else np.zeros((0, 0), np.float32)


# ---------------------------------------------------------------- fast profile


def build_fast(vectors: np.ndarray, keys: list[str], params: Params = Params()):
    """An HNSW index over the rows' distinct texts (``keys``: content hashes), each node
    labelled with the first row holding its text; search answers in rows (``twins`` gives
    the other rows of a text)."""
    import faiss

    hnsw = faiss.IndexHNSWFlat(vectors.shape[1], params.build_m, faiss.METRIC_INNER_PRODUCT)
    hnsw.hnsw.efConstruction = params.ef_construction
    index = faiss.IndexIDMap2(hnsw)
    add_fast(index, vectors, keys)
    return index


def add_fast(
    index, vectors: np.ndarray, keys: list[str], offset: int = 0, present: frozenset[str] = frozenset()
) -> int:
    """Insert rows ``offset``… (``vectors``, ``keys``) in place: a node for each text the index
    does not hold yet (``present``). Returns how many nodes were added."""
    rows = [int(r) for r in first_rows(row_nodes(keys)) if keys[r] not in present]
    if rows:
        index.add_with_ids(np.ascontiguousarray(vectors[rows], dtype=np.float32), np.asarray(rows, np.int64) + offset)
    return len(rows)


def twins(keys: list[str]) -> dict[int, list[int]]:
    """For each row whose text other rows share: all rows of that text (a fast search finds
    one of them, the first)."""
    by_key: dict[str, list[int]] = {}
    for row, key in enumerate(keys):
        by_key.setdefault(key, []).append(row)
    return {rows[0]: rows for rows in by_key.values() if len(rows) > 1}


def search_fast(index, query: np.ndarray, k: int, ef: int) -> tuple[np.ndarray, np.ndarray]:
    import faiss

    if index.ntotal == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.float32)
    sp = faiss.SearchParametersHNSW()
    sp.efSearch = max(ef, k)
    scores, ids = index.search(query.reshape(1, -1).astype(np.float32), min(k, index.ntotal), params=sp)
    keep = ids[0] >= 0
    return ids[0][keep].astype(np.int64), scores[0][keep]


# ---------------------------------------------------------------- quality


def search_any(
    g,
    query: np.ndarray,
    k: int,
    vectors_of: Callable[[np.ndarray], np.ndarray],
    params: Params = Params(),
    mask: np.ndarray | None = None,
    ef: int | None = None,
    recompute: int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Search either profile's graph (a fast index ignores ``mask``/``recompute``: callers
    filter fast sources exactly, over the vectors they keep)."""
    if isinstance(g, Compact):
        return search_compact(g, query, k, vectors_of, params, mask, ef, recompute)
    return search_fast(g, query, k, ef or params.ef_search)


def self_recall(
    g, vectors: np.ndarray, params: Params = Params(), queries: int = 200, k: int = 10
) -> tuple[float, int]:
    """Recall@k of graph search against exact search, with a sample of the graph's own vectors
    as queries (the exact vectors stand in for recomputation: the model is deterministic).

    Measured over distinct texts (the graph's nodes; a fast index labels each with its first
    row), and tie-aware: a returned node counts when it is as close to the query as the k-th
    exact neighbour. Identical texts (a disclaimer pasted into every mail) are equally good
    neighbours; counting only the copies exact search happened to list first would call a
    sound graph broken and keep the whole source from being published.
    """
    rows = _node_rows(g, len(vectors))
    nodes = vectors[rows] if rows is not None else vectors
    n = len(nodes)
    if n == 0:
        return 1.0, 0
    position = {int(r): i for i, r in enumerate(rows)} if rows is not None else None
    rng = np.random.default_rng(0)
    sample = rng.choice(n, size=min(queries, n), replace=False)
    k = min(k, n)
    hits = 0
    for q in nodes[sample]:
        sims = nodes @ q
        kth = -np.partition(-sims, k - 1)[k - 1]
        got, _ = search_any(g, q, k, lambda ids: vectors[ids], params)
        found = {position.get(int(j), -1) if position is not None else int(j) for j in got[:k]}
        hits += sum(1 for j in found if 0 <= j < n and sims[j] >= kth - _TIE)
    return round(hits / (k * len(sample)), 4), len(sample)


def _node_rows(g, n: int) -> np.ndarray | None:
    """The rows a fast index's nodes stand for (None: node i is row i)."""
    if isinstance(g, Compact) or not hasattr(g, "id_map"):
        return None
    import faiss

    return faiss.vector_to_array(g.id_map).astype(np.int64)


def dangling(g) -> int:
    """Neighbour ids that point at no node (0 for a sound graph)."""
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


# ---------------------------------------------------------------- files


def save(directory: Path, profile: str, graph, meta: dict) -> None:
    """Write a graph and its meta (model, dimension, parameters, ids) into ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    if profile == "compact":
        (directory / _COMPACT_FILE).write_bytes(pack_compact(graph))
    else:
        import faiss

        faiss.write_index(graph, str(directory / _FAST_FILE))
    (directory / META).write_text(json.dumps({**meta, "profile": profile, "format": FORMAT_VERSION}))


def profile_of(directory: Path) -> str:
    return json.loads((directory / META).read_text())["profile"]


def load(directory: Path, model: str, dim: int):
    """The graph in ``directory`` and its meta; refuses one built for another model or dimension."""
    meta = json.loads((directory / META).read_text())
    # Format 2 changed what a compact node is; a fast index of format 1 is the same file.
    if meta.get("format") != FORMAT_VERSION and not (meta.get("profile") == "fast" and meta.get("format") == "1"):
        raise RagbagError(f"graph index {directory} has format {meta.get('format')}; rebuild the source")
    if meta.get("model") != model or int(meta.get("dim", -1)) != dim:
        raise RagbagError(
            f"graph index {directory} was built with {meta.get('model')} ({meta.get('dim')}-d), not "
            f"{model} ({dim}-d): rebuild the source"
        )
    if meta["profile"] == "compact":
        return unpack_compact((directory / _COMPACT_FILE).read_bytes()), meta
    import faiss

    return faiss.read_index(str(directory / _FAST_FILE)), meta


def pack_compact(g: Compact) -> bytes:
    """Sorted neighbour lists delta-coded and split into byte planes (the high bytes of small
    gaps are runs of zeros), codes packed at their bit width, float16 centroids, all
    LZMA-compressed: the bytes that make the compact profile compact. Planes and LZMA take
    msmarco-5k's degree-6 edges from 51 to 44 KB (uint16 gaps under zlib), against 41.7 KB of
    entropy in random lists of that shape."""
    n = g.n
    parts = {
        **_edge_arrays(g.lists()),
        "hubs": g.hubs.astype(np.int32),
        "codes": _pack_bits(g.codes, g.bits),
        "centroids": g.centroids.astype(np.float16),
    }
    if g.residual is not None:  # 0..2 in 255 steps: a unit vector's residual stays below 2
        parts["residual"] = np.round(np.clip(g.residual, 0, 2) * 127.5).astype(np.uint8)
    if g.rotation is not None:  # trained in float16 (``train_rotation``): stored exactly
        parts["rotation"] = g.rotation.astype(np.float16)
    buf = io.BytesIO()
    header = [n, g.bits, g.codes.shape[1], int(g.meta.get("degree") or 0)]
    np.savez(buf, **parts, header=np.array(header, np.int64))
    return lzma.compress(buf.getvalue(), preset=9)


def _edge_arrays(lists: list[np.ndarray]) -> dict[str, np.ndarray]:
    """Degrees and the sorted lists' gaps, split into byte planes."""
    n = len(lists)
    degrees = np.array([len(r) for r in lists], np.int64)
    deltas = (
        np.concatenate([np.diff(np.sort(r).astype(np.int64), prepend=0) for r in lists]) if n else np.zeros(0, np.int64)
    )
    width = np.uint16 if n < 2**16 else np.uint32
    planes = deltas.astype(width).view(np.uint8).reshape(-1, np.dtype(width).itemsize).T
    return {
        "degrees": degrees.astype(np.uint16 if degrees.max(initial=0) < 2**16 else np.uint32),
        "delta_planes": np.ascontiguousarray(planes),
    }


def unpack_compact(blob: bytes) -> Compact:
    """Reads what ``pack_compact`` writes, and the zlib/plain-deltas files of format 2 before it."""
    raw = lzma.decompress(blob) if blob[:6] == b"\xfd7zXZ\x00" else zlib.decompress(blob)
    arrays = np.load(io.BytesIO(raw))
    header = [int(x) for x in arrays["header"]]
    n, bits, m = header[:3]
    degrees = arrays["degrees"].astype(np.int64)
    offsets = np.zeros(n + 1, np.int64)
    np.cumsum(degrees, out=offsets[1:])
    if "delta_planes" in arrays:
        planes = arrays["delta_planes"]
        width = np.uint16 if planes.shape[0] == 2 else np.uint32
        deltas = np.ascontiguousarray(planes.T).view(width).reshape(-1).astype(np.int64)
    else:
        deltas = arrays["deltas"].astype(np.int64)
    # Undo the per-row delta coding: a cumulative sum restarted at each row's first entry.
    total = np.cumsum(deltas)
    starts = offsets[:-1][degrees > 0]
    base = np.zeros(len(deltas), np.int64)
    if len(starts):
        before = np.concatenate([[0], total[starts[1:] - 1]]) if len(starts) > 1 else np.zeros(1, np.int64)
        marks = np.zeros(len(deltas), np.int64)
        marks[starts] = before - np.concatenate([[0], before[:-1]])
        base = np.cumsum(marks)
    neighbors = (total - base).astype(np.int32)
    codes = _unpack_bits(arrays["codes"], bits, n, m)
    centroids = arrays["centroids"].astype(np.float32)
    meta = {"degree": header[3]} if len(header) > 3 and header[3] else {}
    residual = arrays["residual"].astype(np.float32) / 127.5 if "residual" in arrays else None
    rotation = arrays["rotation"].astype(np.float32) if "rotation" in arrays else None
    return Compact(
        offsets.astype(np.int32),
        neighbors,
        arrays["hubs"].astype(np.int32),
        codes,
        centroids,
        bits,
        meta,
        residual,
        rotation,
    )


def _pack_bits(codes: np.ndarray, bits: int) -> np.ndarray:
    if bits == 8:
        return codes.reshape(-1)
    unpacked = np.unpackbits(codes.reshape(-1, 1), axis=1)[:, 8 - bits :]
    return np.packbits(unpacked.reshape(-1))


def _unpack_bits(packed: np.ndarray, bits: int, n: int, m: int) -> np.ndarray:
    if bits == 8:
        return packed.reshape(n, m).astype(np.uint8)
    flat = np.unpackbits(packed)[: n * m * bits].reshape(-1, bits)
    full = np.zeros((len(flat), 8), np.uint8)
    full[:, 8 - bits :] = flat
    return np.packbits(full, axis=1).reshape(n, m)


def params_dict(params: Params) -> dict:
    return asdict(params)
