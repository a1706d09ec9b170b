"""The compact graph in memory: CSR neighbour lists, hub ids, PQ codes and, when several rows
share a node (``ragbag.index.nodes``), the rows each node stands for."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ragbag.core.errors import RagbagError
from ragbag.index.nodes import first_rows, row_nodes


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
    # (``search.recompute_order``). None in files written before it existed.
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


def to_csr(lists: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Neighbour lists as CSR (offsets, neighbours), int32 as the graph keeps them."""
    lengths = np.array([len(r) for r in lists], dtype=np.int64)
    offsets = np.zeros(len(lists) + 1, np.int64)
    np.cumsum(lengths, out=offsets[1:])
    if offsets[-1] >= 2**31:
        raise RagbagError("graph too large for int32 offsets")
    neighbors = np.concatenate(lists).astype(np.int32) if lists else np.zeros(0, np.int32)
    return offsets.astype(np.int32), neighbors


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
