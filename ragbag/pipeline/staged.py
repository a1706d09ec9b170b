"""The staged graph: what the graph stage leaves in a source's index directory for the publish
step to ship (``graph/``, with ``nodes.json``: the (chunk id, content hash) of each node in
order), and what the embed stage and the checks read of it. One owner for that layout, so the
stages hand it over without calling into each other.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ragbag.core.home import Home, Source
from ragbag.core.records import stable_hash
from ragbag.index import graph, published
from ragbag.index.params import params_dict
from ragbag.pipeline.graph_config import graph_params, graph_profile

STAGED_DIR = "graph"  # in the source's index directory
NODES = "nodes.json"  # (chunk id, content hash) of each index row, in order (compact: node = distinct hash)


def reusable_node_texts(home: Home, source: Source, model: str) -> set[str]:
    """Texts (content hashes) the staged compact graph holds a node for, when the next in-place
    update will keep them: a new chunk with one of these texts shares that node, so the embed
    stage need not embed it. Read here, with the layout that says when its nodes are kept, so
    the embed stage need not know the staged files."""
    staged = staged_graph(home, source)
    if (
        not staged
        or staged["profile"] != "compact"
        or graph_profile(home, source) != "compact"
        or staged["model"] != model
        or staged.get("format") != graph.FORMAT_VERSION
    ):
        return set()
    return {h for _, h in staged["pairs"]}


def was_compact(home: Home, source: Source) -> bool:
    """Whether the source's last graph was compact while it is fast now (its vectors return)."""
    staged = staged_graph_meta(home, source)
    if not staged:
        return False
    return staged["profile"] == "compact" and graph_profile(home, source) == "fast"


def chunk_identity(keys: dict[str, list[Any]]) -> list[str]:
    """Every chunk as its id and content hash, sorted: what a fingerprint of the chunks hashes."""
    return sorted(c + h for c, h in zip(keys["chunk_id"], keys["content_hash"]))


def graph_fingerprint(home: Home, source: Source, model: str, identity: list[str]) -> str:
    """What a graph is built from: model, profile, format, parameters and the chunks (their
    ``chunk_identity``); a staged graph with another fingerprint is stale."""
    profile = graph_profile(home, source)
    return stable_hash(model, profile, graph.FORMAT_VERSION, json.dumps(params_dict(graph_params(home))), *identity)


def staged_graph_dir(home: Home, source: Source) -> Path:
    """Where the graph stage leaves the graph the next publish ships."""
    return home.index_dir(source.connector, source.name) / STAGED_DIR


def staged_graph_meta(home: Home, source: Source) -> dict[str, Any] | None:
    path = staged_graph_dir(home, source) / graph.META
    return json.loads(path.read_text()) if path.exists() else None


def staged_graph(home: Home, source: Source) -> dict[str, Any] | None:
    """Meta of the graph the last graph stage built (what the next publish will ship), with
    its nodes' (chunk id, content hash) pairs in node order."""
    meta = staged_graph_meta(home, source)
    if meta is None:
        return None
    pairs = json.loads((staged_graph_dir(home, source) / NODES).read_text())
    return {**meta, "pairs": pairs, "ids": [c for c, _ in pairs]}


def link_staged_graph(home: Home, source: Source, version: Path) -> None:
    """Put the staged graph into a published version, hard-linked (its node list is published
    as the version's chunk ids instead)."""
    published.link_tree(staged_graph_dir(home, source), version / published.GRAPH_DIR, skip=frozenset({NODES}))
