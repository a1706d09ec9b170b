"""The chunk stage: documents into token-bounded chunks, re-chunking only what changed.

How a document is cut is the connector's (a ``Spanner``); this stage decides which documents
need it and what each chunk's index text is (the title, when it says something, then the span).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Iterable
from pathlib import PurePosixPath
from typing import Any

import pyarrow as pa

from ragbag.core import progress
from ragbag.core.home import Source
from ragbag.core.records import Document, Span, stable_hash
from ragbag.index.store import SCHEMAS, Store, lit
from ragbag.models import embedding
from ragbag.pipeline import history
from ragbag.pipeline.preview import ROWS as PREVIEW_ROWS
from ragbag.pipeline.preview import preview
from ragbag.text.chunking import CHUNKER_VERSION

Spanner = Callable[[Document, Callable[[str], int], int], list[Span]]

# Bump when chunking changes what it produces for the same text: every document is re-chunked.
_MAX_TITLE_TOKENS = 32
_BATCH = 1_000  # documents chunked and written at a time


def chunk(store: Store, source: Source, spans: Spanner, model: str) -> dict[str, Any]:
    """Re-chunk documents whose content or kept history changed; drop chunks of documents gone."""
    docs = store.rows("documents", source.name, ["doc_id", "content_hash"]).to_pydict()
    past = history.earlier(store, source.name)
    stored = store.rows("chunks", source.name, ["doc_id", "doc_hash"]).to_pydict()
    hashes: dict[str, set[str]] = defaultdict(set)
    for doc_id, doc_hash in zip(stored["doc_id"], stored["doc_hash"]):
        hashes[doc_id].add(doc_hash)
    del stored
    # A document is re-chunked when its content, its kept versions, the model (its token budget)
    # or the chunker changed: the key of what produced its chunks is stored with them. A deleted
    # document whose versions are kept still has (closed) chunks.
    keys = {i: chunking_key(h, model, past.get(i, ())) for i, h in zip(docs["doc_id"], docs["content_hash"])}
    current = set(keys)
    keys.update({i: chunking_key("", model, v) for i, v in past.items() if i not in current})
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
        now = {r["doc_id"]: r for r in store.lookup("documents", "doc_id", ids, SCHEMAS["documents"].names).to_pylist()}
        then = history.texts(store, source.name, [i for i in ids if i in past])
        rows: list[dict[str, Any]] = []
        for doc_id in ids:
            versions = then.get(doc_id, []) + ([now[doc_id]] if doc_id in now else [])
            if versions:
                rows.extend(_versioned_rows(versions, doc_id in now, spans, count, budget, keys[doc_id]))
        store.delete_keys("chunks", "doc_id", [i for i in ids if i in had], source.name)
        store.add("chunks", pa.Table.from_pylist(rows, schema=store.table("chunks").schema))
        made += len(rows)
        shown.extend(
            (r["title"], r["uri"], r["text"]) for r in rows[: PREVIEW_ROWS - len(shown)] if r["valid_to"] is None
        )
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


def chunking_key(content_hash: str, model: str, past: Iterable[dict[str, Any]] = ()) -> str:
    """What produced a document's chunks (its content, its kept earlier versions, the model's
    token budget, the chunker): stored with them, so a change of any re-chunks the document."""
    kept = [f"{v['version']}:{v['content_hash']}:{v['valid_from']}:{v['valid_to']}" for v in past]
    return stable_hash(content_hash, model, CHUNKER_VERSION, *kept)


def _versioned_rows(
    versions: list[dict[str, Any]],
    is_current: bool,
    spans: Spanner,
    count: Callable[[str], int],
    budget: int,
    key: str,
) -> list[dict[str, Any]]:
    """The chunk rows of one document's kept versions (oldest first; the last one current if
    ``is_current``). A chunk found unchanged in consecutive versions is one row, valid from the
    first to past the last: history costs rows only for text that changed. A row's ``version``
    is the last version it was cut from (its start/end are offsets in that text) and
    ``first_version`` the first; an unchanged single version gives exactly the ids it always had."""
    open_rows: dict[tuple[str, str], dict[str, Any]] = {}
    used: set[str] = set()
    out: list[dict[str, Any]] = []
    ended = None  # when the previous version ended
    for doc in versions:
        number = doc.get("version") or 1
        if ended is not None and doc.get("valid_from") is not None and doc["valid_from"] > ended:
            out.extend({**row, "valid_to": ended} for row in open_rows.values())  # deleted, then back
            open_rows.clear()
        ended = doc.get("valid_to")
        present = set()
        for r in _chunk_rows(doc, spans, count, budget, key):
            ident = (r["chunk_id"], r["content_hash"])
            present.add(ident)
            row = open_rows.get(ident)
            if row is not None:  # the same passage again: the row lives on, at its new place
                row.update({k: v for k, v in r.items() if k != "chunk_id"}, version=number)
                continue
            base = r["chunk_id"]
            chunk_id = base if base not in used else stable_hash(base, f"v{number}")
            used.add(base)
            open_rows[ident] = {
                **r,
                "chunk_id": chunk_id,
                "version": number,
                "first_version": number,
                "valid_from": doc.get("valid_from"),
                "valid_to": None,
            }
        for ident in [i for i in open_rows if i not in present]:  # gone in this version
            out.append({**open_rows.pop(ident), "valid_to": doc.get("valid_from")})
    end = None if is_current else versions[-1].get("valid_to")
    out.extend({**row, "valid_to": end} for row in open_rows.values())
    return out


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
