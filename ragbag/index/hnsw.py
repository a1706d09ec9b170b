"""The ``fast`` profile: a faiss HNSW index beside the vectors LanceDB keeps.

The index holds one node per distinct text (``ragbag.index.nodes``), labelled with the first
row holding it, so a search answers in rows and ``twins`` supplies the other rows of a text.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ragbag.index.nodes import first_rows, row_nodes
from ragbag.index.params import Params


def build_fast(vectors: np.ndarray, keys: list[str], params: Params = Params()) -> Any:
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
    index: Any, vectors: np.ndarray, keys: list[str], offset: int = 0, present: frozenset[str] = frozenset()
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


def search_fast(index: Any, query: np.ndarray, k: int, ef: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` best rows by inner product, walking ``ef`` wide (at least ``k``)."""
    import faiss

    if index.ntotal == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.float32)
    sp = faiss.SearchParametersHNSW()  # type: ignore[attr-defined]  # faiss's stubs lack it
    sp.efSearch = max(ef, k)
    scores, ids = index.search(query.reshape(1, -1).astype(np.float32), min(k, index.ntotal), params=sp)
    keep = ids[0] >= 0
    return ids[0][keep].astype(np.int64), scores[0][keep]


def search_fast_many(index: Any, queries: np.ndarray, k: int, ef: int) -> list[np.ndarray]:
    """``search_fast``'s rows for each of several queries, in one call: each query's walk is
    the one it takes alone."""
    import faiss

    if index.ntotal == 0 or len(queries) == 0:
        return [np.zeros(0, np.int64) for _ in queries]
    sp = faiss.SearchParametersHNSW()  # type: ignore[attr-defined]  # faiss's stubs lack it
    sp.efSearch = max(ef, k)
    _, ids = index.search(np.ascontiguousarray(queries, np.float32), min(k, index.ntotal), params=sp)
    return [row[row >= 0].astype(np.int64) for row in ids]


def node_rows(index: Any) -> np.ndarray | None:
    """The rows an index's nodes stand for (None for an index without labels: node i is row i)."""
    if not hasattr(index, "id_map"):
        return None
    import faiss

    return faiss.vector_to_array(index.id_map).astype(np.int64)
