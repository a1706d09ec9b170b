"""Rows and nodes: a graph node is one distinct embedded text, not one chunk.

Mail and chats repeat themselves (quoted replies, forwards, signatures), identical texts have
identical vectors, and a graph over the copies spends bytes and search width on ties. Rows that
share a content hash share a node; node k is the k-th distinct hash in row order, so the mapping
is derived from the published chunks and costs no bytes. The fast profile's HNSW holds one node
per distinct text too, labelled with its first row: a cluster of identical vectors (a disclaimer
in every mail) would otherwise capture HNSW's walk, and searches for everything else would come
back empty.
"""

from __future__ import annotations

import numpy as np


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
