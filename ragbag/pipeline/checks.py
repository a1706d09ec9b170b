"""Invariants of a source's stored data, checked after each stage of a build.

The assets attach them as blocking Dagster asset checks: a failure stops the chain before the
bad data is published to search (the previous index stays what search reads).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ragbag.core.home import Home, Source
from ragbag.index import graph, published, quality
from ragbag.index.compact.graph import Compact
from ragbag.index.published import home_model
from ragbag.index.store import Store
from ragbag.models import embedding
from ragbag.pipeline.graph_config import graph_profile
from ragbag.pipeline.staged import staged_graph, staged_graph_dir


@dataclass
class Check:
    name: str
    passed: bool
    description: str
    metadata: dict[str, Any] = field(default_factory=dict)


def no_empty_documents(store: Store, home: Home, source: Source) -> Check:
    docs = store.rows("documents", source.name, ["uri", "text"]).to_pydict()
    empty = [u for u, t in zip(docs["uri"], docs["text"]) if not (t or "").strip()]
    return Check(
        "no_empty_documents",
        not empty,
        f"{len(empty)} of {len(docs['uri'])} documents have no text",
        {"empty": len(empty), "examples": json.dumps(empty[:5])},
    )


def unique_chunk_ids(store: Store, home: Home, source: Source) -> Check:
    ids = store.rows("chunks", source.name, ["chunk_id"]).column("chunk_id").to_pylist()
    dupes = [c for c, n in Counter(ids).items() if n > 1]
    return Check(
        "unique_chunk_ids",
        not dupes,
        f"{len(dupes)} chunk ids occur more than once",
        {"duplicates": len(dupes), "chunks": len(ids)},
    )


def no_orphan_chunks(store: Store, home: Home, source: Source) -> Check:
    """Every chunk belongs to a stored document: a current one, or (the chunks of earlier texts)
    one whose versions are kept; and only those are still open (valid now)."""
    docs = set(store.rows("documents", source.name, ["doc_id"]).column("doc_id").to_pylist())
    kept = set(store.rows("document_versions", source.name, ["doc_id"]).column("doc_id").to_pylist())
    chunks = store.rows("chunks", source.name, ["doc_id", "valid_to"]).to_pydict()
    orphans = sum(1 for d in chunks["doc_id"] if d not in docs and d not in kept)
    open_past = sum(1 for d, t in zip(chunks["doc_id"], chunks["valid_to"]) if t is None and d not in docs)
    return Check(
        "no_orphan_chunks",
        orphans == 0 and open_past == 0,
        f"{orphans} chunks belong to no stored document, {open_past} of a deleted one are still current",
        {"orphans": orphans, "open_past": open_past},
    )


def embeddings_match_chunks(store: Store, home: Home, source: Source) -> Check:
    """Every chunk has exactly one vector, from the configured model, of its dimension; no
    vector outlives its chunk."""
    model = home_model(home)
    dim = embedding.spec(model).dim
    chunks = set(store.rows("chunks", source.name, ["chunk_id"]).column("chunk_id").to_pylist())
    emb = store.rows("embeddings", source.name, ["chunk_id", "model", "vector"])
    ids = emb.column("chunk_id").to_pylist()
    models = Counter(emb.column("model").to_pylist())
    lengths = set(emb.column("vector").combine_chunks().value_lengths().to_pylist()) if len(ids) else set()
    if graph_profile(home, source) == "compact":
        lengths.discard(None)  # vectors a compact source's graph already holds (dropped)
    missing = len(chunks - set(ids))
    orphans = len(set(ids) - chunks)
    wrong = sum(n for m, n in models.items() if m != model)
    ok = not missing and not orphans and not wrong and lengths <= {dim} and len(ids) == len(set(ids))
    return Check(
        "embeddings_match_chunks",
        ok,
        f"model {model} ({dim}-d): {missing} chunks without a vector, {orphans} orphan vectors, "
        f"{wrong} vectors from another model, dimensions seen {sorted(lengths)}",
        {"missing": missing, "orphans": orphans, "other_model": wrong, "model": model, "dim": dim},
    )


def graph_matches_chunks(store: Store, home: Home, source: Source) -> Check:
    """The staged graph covers exactly the stored chunks, from the configured model, and no
    neighbour list points outside it."""
    meta = staged_graph(home, source) or {}
    keys = store.rows("chunks", source.name, ["chunk_id", "content_hash"]).to_pydict()
    pairs = {(c, h) for c, h in zip(keys["chunk_id"], keys["content_hash"])}
    nodes = {tuple(p) for p in meta.get("pairs", [])}
    dangling = size = -1
    expected = len(pairs)
    if meta:
        g, _ = graph.load(staged_graph_dir(home, source), meta["model"], int(meta["dim"]))
        dangling = quality.dangling(g)
        size = g.n if isinstance(g, Compact) else g.ntotal
        expected = len({h for _, h in pairs})  # one node per distinct text
    ok = bool(meta) and nodes == pairs and meta.get("model") == home_model(home) and dangling == 0 and size == expected
    return Check(
        "graph_matches_chunks",
        ok,
        f"{len(pairs - nodes)} chunks not in the graph, {len(nodes - pairs)} graph nodes without a chunk, "
        f"{dangling} neighbour ids out of range, {size} graph nodes for {expected} expected",
        {
            "nodes": len(nodes),
            "chunks": len(pairs),
            "dangling": dangling,
            "graph_nodes": size,
            "model": str(meta.get("model")),
            "profile": str(meta.get("profile")),
        },
    )


def graph_recall(store: Store, home: Home, source: Source) -> Check:
    """Recall@10 of graph search against exact search (a sample of the source's own chunks as
    queries) is at least 0.90; after an in-place update, inserted chunks are findable too."""
    meta = staged_graph(home, source) or {}
    recall = float(meta.get("recall_at_10", 0.0))
    found = float(meta.get("inserted_found", 1.0))
    ok = recall >= quality.RECALL_FLOOR and found >= quality.RECALL_FLOOR
    how = "measured at this build" if meta.get("mode") == "built" else "measured at the last full build"
    return Check(
        "graph_recall",
        ok,
        f"recall@10 {recall:.3f} over {meta.get('recall_queries', 0)} queries ({how}); "
        f"inserted chunks found {found:.3f}",
        {
            "recall_at_10": recall,
            "recall_queries": int(meta.get("recall_queries", 0)),
            "inserted_found": found,
            "mode": str(meta.get("mode")),
            "profile": str(meta.get("profile")),
            "graph_bytes": int(meta.get("bytes", 0)),
        },
    )


def index_matches_chunks(store: Store, home: Home, source: Source) -> Check:
    """The published index covers exactly the stored chunks, from the configured model."""
    manifest = published.published_manifest(home, source) or {}
    indexed = set(published.current_chunk_ids(home.index_dir(source.connector, source.name)))
    chunks = set(store.rows("chunks", source.name, ["chunk_id"]).column("chunk_id").to_pylist())
    ok = indexed == chunks and manifest.get("model") == home_model(home)
    return Check(
        "index_matches_chunks",
        ok,
        f"{len(chunks - indexed)} chunks not indexed, {len(indexed - chunks)} index entries without a chunk",
        {"indexed": len(indexed), "chunks": len(chunks), "model": str(manifest.get("model"))},
    )
