"""Proximity-graph indexes over one source's chunk vectors, at the level of their profile.

Two profiles. ``fast`` keeps the vectors and stores a faiss HNSW index beside them
(``ragbag.index.hnsw``). ``compact`` stores only a pruned graph and product-quantisation codes
and recomputes exact embeddings for the best candidates at query time
(``ragbag.index.compact``). Both hold one node per distinct text (``ragbag.index.nodes``).

This module is what the rest of the code needs to know about a graph without caring which
profile it is: the profile names, the directory a graph is saved in (``graph.json`` plus the
profile's file) and a search that dispatches on the profile.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ragbag.core.errors import RagbagError
from ragbag.index.compact.graph import Compact
from ragbag.index.compact.pack import pack_compact, unpack_compact
from ragbag.index.compact.search import search_compact
from ragbag.index.hnsw import search_fast
from ragbag.index.params import Params

PROFILES = ("fast", "compact")
FORMAT_VERSION = "3"  # 2: compact nodes are distinct texts (see nodes.row_nodes); 3: fast ones too
META = "graph.json"
_COMPACT_FILE = "graph.bin"
_FAST_FILE = "hnsw.faiss"


def check_profile(name: str, what: str) -> str:
    """``name`` if it is a graph profile; else a one-line error naming ``what`` was given it
    (an option, a config key, a source)."""
    if name not in PROFILES:
        raise RagbagError(f"{what} {name!r}: use one of {', '.join(PROFILES)}")
    return name


def search_any(
    g: Any,
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


def save(directory: Path, profile: str, graph: Any, meta: dict) -> None:
    """Write a graph and its meta (model, dimension, parameters, ids) into ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    if profile == "compact":
        (directory / _COMPACT_FILE).write_bytes(pack_compact(graph))
    else:
        import faiss

        faiss.write_index(graph, str(directory / _FAST_FILE))
    (directory / META).write_text(json.dumps({**meta, "profile": profile, "format": FORMAT_VERSION}))


def profile_of(directory: Path) -> str:
    """The profile of the graph saved in ``directory``."""
    return json.loads((directory / META).read_text())["profile"]


def load(directory: Path, model: str, dim: int) -> tuple[Any, dict]:
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
