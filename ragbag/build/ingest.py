"""The read stage: a source's records into the documents table, and the read cursor.

The stage reconciles what is stored against what the connector yields (ids and content
hashes), so it writes only what changed, and a build killed half-way is completed by the next
one. The connector is a plain callable, so the build imports neither connectors nor Dagster.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa

from ragbag.build import changes
from ragbag.build.preview import ROWS as PREVIEW_ROWS
from ragbag.build.preview import preview
from ragbag.core import progress
from ragbag.core.errors import RagbagError
from ragbag.core.home import Home, Source
from ragbag.core.private import write_private
from ragbag.core.records import Cursor, Document, ReadError, Seen, doc_id_for
from ragbag.index.store import SCHEMAS, Store

Reader = Callable[..., Iterator["Document | ReadError | Seen | Cursor"]]  # read(path, source, cursor, options=)


def ingest(store: Store, home: Home, source: Source, read: Reader) -> dict[str, Any]:
    """Read the source's records and store what was added, changed or deleted.

    Incremental connectors read only past their cursor and vouch for older records with
    ``Seen``; everything else stored but not yielded is a deletion. The new cursor is saved only
    after the documents are written, so a killed build re-reads rather than skips.
    """
    root = Path(source.path) if source.path else None
    if root is not None and not root.exists():
        raise RagbagError(f"source {source.name!r}: path does not exist: {root}")
    fingerprint = changes.source_fingerprint(home, source)  # before reading: see changes
    cursor_file = cursor_path(home, source)
    cursor = _load_cursor(cursor_file, source)
    docs: dict[str, Document] = {}
    seen: set[str] = set()
    errors: list[dict[str, str]] = []
    new_cursor: dict[str, Any] | None = None
    for item in read(root, source.name, cursor, options=source.options):
        if isinstance(item, ReadError):
            errors.append(item.as_dict())
        elif isinstance(item, Seen):
            seen.add(doc_id_for(source.name, item.native_id))
        elif isinstance(item, Cursor):
            new_cursor = item.state
        elif item.doc_id in docs:
            errors.append({"uri": item.uri, "error": f"duplicate record id {item.native_id!r}, kept the first"})
        elif not (item.text or "").strip():  # reported and skipped: one such file must not fail
            errors.append({"uri": item.uri, "error": "no text to index"})  # the whole source's check
        else:
            docs[item.doc_id] = item
            if len(docs) % 50 == 0:
                progress.report("read", source.name, len(docs))
    progress.report("read", source.name, len(docs), len(docs))

    stored = store.rows("documents", source.name, ["doc_id", "content_hash"]).to_pydict()
    old = dict(zip(stored["doc_id"], stored["content_hash"]))
    added = [d for i, d in docs.items() if i not in old]
    changed = [d for i, d in docs.items() if i in old and old[i] != d.content_hash]
    deleted = [i for i in old if i not in docs and i not in seen]
    store.delete_keys("documents", "doc_id", [d.doc_id for d in changed] + deleted, source.name)
    store.add("documents", _document_rows(added + changed))
    if new_cursor is not None:
        _save_cursor(cursor_file, source, new_cursor)
    changes.note_reading(home, source, fingerprint, errors)
    return {
        "documents": len(docs) + len(seen - docs.keys()),
        "read": len(docs),
        "added": len(added),
        "changed": len(changed),
        "deleted": len(deleted),
        "errors": errors,
        "preview": preview([(d.title, d.uri, d.text) for d in (added + changed)[:PREVIEW_ROWS]]),
        "table_version": store.table("documents").version,
    }


def cursor_path(home: Home, source: Source) -> Path:
    """Where an incremental connector's read cursor for the source is kept."""
    return home.state_dir / f"{source.name}.cursor.json"


def _load_cursor(path: Path, source: Source) -> dict[str, Any] | None:
    """The saved cursor, unless the source now points elsewhere (then read everything again)."""
    if not path.exists():
        return None
    saved = json.loads(path.read_text())
    if saved.get("connector") != source.connector or saved.get("path") != source.path:
        return None
    return saved.get("state")


def _save_cursor(path: Path, source: Source, state: dict[str, Any]) -> None:
    body = {"connector": source.connector, "path": source.path, "state": state}
    write_private(path, json.dumps(body, default=str))


def _document_rows(docs: list[Document]) -> pa.Table:
    return pa.Table.from_pylist(
        [
            {
                "doc_id": d.doc_id,
                "source": d.source,
                "connector": d.connector,
                "native_id": d.native_id,
                "uri": d.uri,
                "title": d.title,
                "text": d.text,
                "created_at": d.created_at,
                "updated_at": d.updated_at,
                "date": d.date,
                "authors": d.authors,
                "content_hash": d.content_hash,
                "metadata": json.dumps(d.metadata, sort_keys=True, default=str, ensure_ascii=False),
            }
            for d in docs
        ],
        schema=SCHEMAS["documents"],
    )
