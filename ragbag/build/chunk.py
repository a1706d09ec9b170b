"""The chunk stage: documents into token-bounded chunks, re-chunking only what changed.

How a document is cut is the connector's (a ``Spanner``); this stage decides which documents
need it and what each chunk's index text is (the title, when it says something, then the span).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable
from pathlib import PurePosixPath
from typing import Any

import pyarrow as pa

from ragbag.build.preview import ROWS as PREVIEW_ROWS
from ragbag.build.preview import preview
from ragbag.core import progress
from ragbag.core.home import Source
from ragbag.core.records import Document, Span, stable_hash
from ragbag.index.store import SCHEMAS, Store, lit
from ragbag.models import embedding

Spanner = Callable[[Document, Callable[[str], int], int], list[Span]]

# Bump when chunking changes what it produces for the same text: every document is re-chunked.
CHUNKER_VERSION = "1"
_MAX_TITLE_TOKENS = 32
_BATCH = 1_000  # documents chunked and written at a time


def chunk(store: Store, source: Source, spans: Spanner, model: str) -> dict[str, Any]:
    """Re-chunk documents whose content hash changed; drop chunks of deleted documents."""
    docs = store.rows("documents", source.name, ["doc_id", "content_hash"]).to_pydict()
    stored = store.rows("chunks", source.name, ["doc_id", "doc_hash"]).to_pydict()
    hashes: dict[str, set[str]] = defaultdict(set)
    for doc_id, doc_hash in zip(stored["doc_id"], stored["doc_hash"]):
        hashes[doc_id].add(doc_hash)
    del stored
    # A document is re-chunked when its content, the model (its token budget) or the chunker
    # changed: the key of what produced its chunks is stored with them.
    keys = {i: chunking_key(h, model) for i, h in zip(docs["doc_id"], docs["content_hash"])}
    todo = [i for i, key in keys.items() if hashes.get(i) != {key}]
    gone = [i for i in hashes if i not in keys]
    had = set(hashes)  # a delete that matches nothing still commits a table version
    del hashes

    count = embedding.token_counter(model)
    budget = embedding.chunk_budget(model)
    shown: list[tuple[str, str, str]] = []
    made = 0
    progress.report("chunk", source.name, 0, len(todo))
    store.delete_keys("chunks", "doc_id", gone, source.name)
    # In batches, each written before the next is read: memory holds one batch of documents
    # and their chunks, whatever the source's size.
    for start in range(0, len(todo), _BATCH):
        ids = todo[start : start + _BATCH]
        rows: list[dict[str, Any]] = []
        for row in store.lookup("documents", "doc_id", ids, SCHEMAS["documents"].names).to_pylist():
            rows.extend(_chunk_rows(row, spans, count, budget, keys[row["doc_id"]]))
        store.delete_keys("chunks", "doc_id", [i for i in ids if i in had], source.name)
        store.add("chunks", pa.Table.from_pylist(rows, schema=store.table("chunks").schema))
        made += len(rows)
        shown.extend((r["title"], r["uri"], r["text"]) for r in rows[: PREVIEW_ROWS - len(shown)])
        progress.report("chunk", source.name, start + len(ids), len(todo))
    total = store.table("chunks").count_rows(f"source = {lit(source.name)}")
    return {
        "chunks": total,
        "chunked_documents": len(todo),
        "new_chunks": made,
        "removed_documents": len(gone),
        "preview": preview(shown),
        "table_version": store.table("chunks").version,
    }


def chunking_key(content_hash: str, model: str) -> str:
    """What produced a document's chunks (its content, the model's token budget, the chunker):
    stored with them, so a change of any re-chunks the document."""
    return stable_hash(content_hash, model, CHUNKER_VERSION)


def _chunk_rows(
    doc: dict[str, Any], spans: Spanner, count: Callable[[str], int], budget: int, key: str
) -> list[dict[str, Any]]:
    meta = json.loads(doc["metadata"] or "{}")
    document = Document(
        source=doc["source"],
        connector=doc["connector"],
        native_id=doc["native_id"],
        uri=doc["uri"],
        title=doc["title"],
        text=doc["text"],
        created_at=doc["created_at"],
        updated_at=doc["updated_at"],
        authors=doc["authors"] or [],
        metadata=meta,
    )
    title = doc["title"] or ""
    head = title if _informative(title, doc) and count(title) <= _MAX_TITLE_TOKENS else ""
    room = budget - (count(head) + 1 if head else 0)
    rows: list[dict[str, Any]] = []
    seen: dict[str, int] = defaultdict(int)
    for ordinal, sp in enumerate(spans(document, count, room)):
        text = doc["text"][sp.start : sp.end]
        h = stable_hash(text, length=32)
        chunk_id = stable_hash(doc["doc_id"], h, str(seen[h]))
        seen[h] += 1
        index_text = f"{head}\n{text}" if head else text
        rows.append(
            {
                "chunk_id": chunk_id,
                "doc_id": doc["doc_id"],
                "source": doc["source"],
                "connector": doc["connector"],
                "ordinal": ordinal,
                "text": text,
                "index_text": index_text,
                "start": sp.start,
                "end": sp.end,
                "content_hash": stable_hash(index_text),
                "doc_hash": key,
                "uri": doc["uri"],
                "title": title,
                "created_at": doc["created_at"],
                "updated_at": doc["updated_at"],
                "date": doc["date"],
                "metadata": json.dumps({**meta, **sp.metadata}, sort_keys=True, default=str, ensure_ascii=False),
            }
        )
    return rows


def _informative(title: str, doc: dict[str, Any]) -> bool:
    """Whether a title adds meaning to each chunk's index text: not empty, not merely the file's
    own name (the path is stored anyway), and not already the start of the text."""
    if not title or title == PurePosixPath(doc["native_id"]).name:
        return False
    return not doc["text"].lstrip().startswith(title)
