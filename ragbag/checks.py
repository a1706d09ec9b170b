"""Invariants of a source's stored data, checked after each stage of a build.

The assets attach them as blocking Dagster asset checks: a failure stops the chain before the
bad data is published to search (the previous index stays what search reads).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable

from ragbag import embedding
from ragbag.home import Home, Source
from ragbag.store import Store


@dataclass
class Check:
    name: str
    passed: bool
    description: str
    metadata: dict[str, Any] = field(default_factory=dict)


def no_empty_documents(store: Store, home: Home, source: Source) -> Check:
    docs = store.rows("documents", source.name, ["uri", "text"]).to_pydict()
    empty = [u for u, t in zip(docs["uri"], docs["text"]) if not (t or "").strip()]
    return Check("no_empty_documents", not empty, f"{len(empty)} of {len(docs['uri'])} documents have no text",
                 {"empty": len(empty), "examples": json.dumps(empty[:5])})


def unique_chunk_ids(store: Store, home: Home, source: Source) -> Check:
    ids = store.rows("chunks", source.name, ["chunk_id"]).column("chunk_id").to_pylist()
    dupes = [c for c, n in Counter(ids).items() if n > 1]
    return Check("unique_chunk_ids", not dupes, f"{len(dupes)} chunk ids occur more than once",
                 {"duplicates": len(dupes), "chunks": len(ids)})


def no_orphan_chunks(store: Store, home: Home, source: Source) -> Check:
    docs = set(store.rows("documents", source.name, ["doc_id"]).column("doc_id").to_pylist())
    chunk_docs = store.rows("chunks", source.name, ["doc_id"]).column("doc_id").to_pylist()
    orphans = sum(1 for d in chunk_docs if d not in docs)
    return Check("no_orphan_chunks", orphans == 0, f"{orphans} chunks belong to no stored document",
                 {"orphans": orphans})


def embeddings_match_chunks(store: Store, home: Home, source: Source) -> Check:
    """Every chunk has exactly one vector, from the configured model, of its dimension; no
    vector outlives its chunk."""
    model = home.model
    dim = embedding.spec(model).dim
    chunks = set(store.rows("chunks", source.name, ["chunk_id"]).column("chunk_id").to_pylist())
    emb = store.rows("embeddings", source.name, ["chunk_id", "model", "vector"])
    ids = emb.column("chunk_id").to_pylist()
    models = Counter(emb.column("model").to_pylist())
    lengths = set(emb.column("vector").combine_chunks().value_lengths().to_pylist()) if len(ids) else set()
    missing = len(chunks - set(ids))
    orphans = len(set(ids) - chunks)
    wrong = sum(n for m, n in models.items() if m != model)
    ok = not missing and not orphans and not wrong and lengths <= {dim} and len(ids) == len(set(ids))
    return Check(
        "embeddings_match_chunks", ok,
        f"model {model} ({dim}-d): {missing} chunks without a vector, {orphans} orphan vectors, "
        f"{wrong} vectors from another model, dimensions seen {sorted(lengths)}",
        {"missing": missing, "orphans": orphans, "other_model": wrong, "model": model, "dim": dim},
    )


def index_matches_chunks(store: Store, home: Home, source: Source) -> Check:
    """The published index covers exactly the stored chunks, from the configured model."""
    from ragbag.stages import published_manifest

    manifest = published_manifest(home, source) or {}
    current = home.index_dir(source.connector, source.name) / "current"
    indexed = set(json.loads((current / "chunk_ids.json").read_text())) if current.exists() else set()
    chunks = set(store.rows("chunks", source.name, ["chunk_id"]).column("chunk_id").to_pylist())
    ok = indexed == chunks and manifest.get("model") == home.model
    return Check("index_matches_chunks", ok,
                 f"{len(chunks - indexed)} chunks not indexed, {len(indexed - chunks)} index entries without a chunk",
                 {"indexed": len(indexed), "chunks": len(chunks), "model": str(manifest.get("model"))})


BY_STAGE: dict[str, list[Callable[[Store, Home, Source], Check]]] = {
    "documents": [no_empty_documents],
    "chunks": [unique_chunk_ids, no_orphan_chunks],
    "embeddings": [embeddings_match_chunks],
    "bm25": [index_matches_chunks],
}
