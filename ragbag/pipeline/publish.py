"""The publish step: the keyword index, then this build made what search reads, in one swap.

It ships the graph the graph stage staged and the BM25 index it builds here as a new version of
the source's published index (``ragbag.index.published`` owns that layout), pins the table
versions the build read, swaps ``current``, and then lets retention drop what no index needs.
Search never sees a half-built source: it reads the version ``current`` names and the table
versions that version pins.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from ragbag.core import progress
from ragbag.core.errors import RagbagError
from ragbag.core.home import Home, Source
from ragbag.core.records import stable_hash
from ragbag.index import bm25, published
from ragbag.index.store import Store, lit
from ragbag.models import embedding
from ragbag.pipeline import changes, people_names, row_aligned, row_languages
from ragbag.pipeline.preview import ROWS as PREVIEW_ROWS
from ragbag.pipeline.preview import preview
from ragbag.pipeline.retention import retain
from ragbag.pipeline.staged import chunk_identity, graph_fingerprint, link_staged_graph, staged_graph


def publish(store: Store, home: Home, source: Source, model: str) -> dict[str, Any]:
    """Build the BM25 index and atomically make this build what search reads.

    When the source's chunks and embeddings are exactly what the current index was built from
    (same fingerprint), the published index stays as it is: a no-change rebuild costs a scan.
    """
    keys = store.rows("chunks", source.name, ["chunk_id", "content_hash", *_VALIDITY]).to_pydict()
    identity = chunk_identity(keys)
    staged = staged_graph(home, source)
    if staged is None or staged["fingerprint"] != graph_fingerprint(home, source, model, identity):
        raise RagbagError(f"source {source.name!r}: its graph index is missing or stale; run the graph stage")
    fingerprint = stable_hash(
        model,
        bm25.TOKENIZER_VERSION,
        f"row-languages-{row_languages.VERSION}",
        f"row-aligned-{row_aligned.VERSION}",
        staged["fingerprint"],
        *identity,
        *_validity(keys),
    )
    current = published.published_manifest(home, source)
    base = home.index_dir(source.connector, source.name)
    if current and current.get("fingerprint") == fingerprint:
        changes.note_published(home, source, current)
        return {
            **current,
            "unchanged": True,
            "table_version": current["versions"]["chunks"],
            "bytes": published.dir_bytes(base),
        }
    store.compact(home.keep_versions)  # before the versions are pinned (see Store.compact)
    ids = staged["ids"]  # graph node order: row i of the index is node i of the graph
    try:
        rows = published.rows_in_order(store.rows("chunks", source.name, list(published.ROW_FIELDS)), ids)
    except ValueError as e:
        raise RagbagError(f"source {source.name!r}: {e}; run the graph stage") from None
    texts = rows.column("index_text").to_pylist()
    versions = store.versions()
    progress.report("index", source.name, 0, 1)
    target = published.new_version(base)
    previous = published.current_version(base, source.name) if ids else None  # an empty index counts no one
    if ids:
        reuse = base / previous / published.BM25_DIR if previous else None
        bm25.write(texts, target / published.BM25_DIR, reuse)
    target.mkdir(parents=True, exist_ok=True)
    before = base / previous if previous else None
    people = people_names.count(rows, before, source.name)
    published.write_people(target, people)
    people_names.write_spellings(target, people, before, source.name)
    link_staged_graph(home, source, target)
    published.write_chunk_ids(target, ids)
    dim = embedding.spec(model).dim
    vectors = None
    if staged["profile"] != "compact":  # a compact source keeps no vectors
        vectors = published.vectors_in_order(store.rows("embeddings", source.name, ["chunk_id", "vector"]), ids, dim)
    copy = published.write_rows(target, rows, vectors)
    row_languages.write(target, rows, vectors, before, source.name)
    aligned = {"encoded": row_aligned.write(target, rows, before, source.name)} if vectors is not None else None
    documents = store.table("documents").count_rows(f"source = {lit(source.name)}")
    manifest = {
        "source": source.name,
        "connector": source.connector,
        "model": model,
        "dim": dim,
        "documents": documents,
        "chunks": len(ids),
        "store_bytes": _store_bytes(store, source.name),
        "versions": versions,
        "tokenizer": bm25.TOKENIZER_VERSION,
        "fingerprint": fingerprint,
        "graph": {k: staged[k] for k in ("profile", "recall_at_10", "bytes", "mode")},
        "rows": copy,
        "people": len(people),
        "aligned": aligned,  # None: a compact source, which keeps no vectors
        "built_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    published.write_manifest(target, manifest)
    store.publish(source.name)
    published.swap_current(target)
    changes.note_published(home, source, manifest)
    retain(store, home, source)
    progress.report("index", source.name, 1, 1)
    return {
        **manifest,
        "unchanged": False,
        "index_dir": str(target),
        "bytes": published.dir_bytes(base),
        "table_version": versions["chunks"],
        "preview": preview([(c, "", t) for c, t in list(zip(ids, texts))[:PREVIEW_ROWS]]),
    }


_VALIDITY = ["version", "first_version", "valid_from", "valid_to"]


def _validity(keys: dict[str, list[Any]]) -> list[str]:
    """The versions and validity of the chunks that have them (a chunk closed when its document
    changed or went keeps its id and text: the index must still be published anew). Chunks
    from before versions existed have none, and leave the fingerprint as it was."""
    return sorted(
        ":".join(map(str, row)) for row in zip(keys["chunk_id"], *(keys[k] for k in _VALIDITY)) if row[1] is not None
    )


def _store_bytes(store: Store, source: str) -> int:
    """This source's share of the LanceDB tables: the bytes of its rows as Arrow holds them."""
    return sum(store.rows(name, source).nbytes for name in ("documents", "chunks", "embeddings"))
