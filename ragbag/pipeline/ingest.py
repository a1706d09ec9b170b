"""The read stage: a source's records into the documents table, and the read cursor.

The stage reconciles what is stored against what the connector yields (ids and content
hashes), so it writes only what changed, and a build killed half-way is completed by the next
one. The connector is a plain callable, so the build imports neither connectors nor Dagster.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa

from ragbag.core import exclusions, progress
from ragbag.core.errors import RagbagError
from ragbag.core.home import Home, Source
from ragbag.core.records import Cursor, Document, ReadError, Seen, doc_id_for, stable_hash
from ragbag.index.store import SCHEMAS, Store
from ragbag.pipeline import changes, cursor, history, screen
from ragbag.pipeline.preview import ROWS as PREVIEW_ROWS
from ragbag.pipeline.preview import preview

# A batch is written when it holds this many records or this much text, whichever comes first.
_BATCH_RECORDS = 2_000
_BATCH_BYTES = 32 << 20
_SHOWN_VERSIONS = 50  # changed documents named in the report (the counts are whole)

Reader = Callable[..., Iterator["Document | ReadError | Seen | Cursor"]]  # read(path, source, cursor, options=)


def ingest(store: Store, home: Home, source: Source, reader: Reader, allow_empty: bool = False) -> dict[str, Any]:
    """Read the source's records and store what was added, changed or deleted.

    Incremental connectors read only past their cursor and vouch for older records with
    ``Seen``; everything else stored but not yielded is a deletion. The new cursor is saved only
    after the documents are written, so a killed build re-reads rather than skips. A changed or
    deleted document's previous text is kept as a version (``ragbag.pipeline.history``).

    Every record of a source vanishing at once, with no error to say why (a missing path, an
    empty folder, 0 records read), is an unplugged disk or a moved export far more often than a
    wish: the stored documents are kept and the build fails, unless ``allow_empty`` (``ragbag
    build NAME --allow-empty``) says the source is empty on purpose.
    """
    root = Path(source.path) if source.path else None
    stored = store.rows("documents", source.name, ["doc_id", "content_hash"]).to_pydict()
    old = dict(zip(stored["doc_id"], stored["content_hash"]))
    del stored
    missing = root is not None and not root.exists()
    if missing and not (allow_empty and old):
        raise RagbagError(f"source {source.name!r}: path does not exist: {root}" + _kept(source, len(old)))
    fingerprint = changes.source_fingerprint(home, source)  # before reading: see changes
    rules = exclusions.of_source(source.options)
    screening = screen.signature(home, source)
    reads_as = stable_hash(screening, *sorted(str(r) for r in rules), length=16)
    cursor_file = cursor.path(home, source)
    saved = cursor.load(cursor_file, source, reads_as)
    read: set[str] = set()  # ids of the records read (kept: deletions and duplicates need them)
    seen: set[str] = set()
    errors: list[dict[str, str]] = []
    counts = {"added": 0, "changed": 0}
    shown: list[tuple[str, str, str]] = []
    batch: list[Document] = []
    batch_bytes = 0
    new_cursor: dict[str, Any] | None = None
    keeps_history = home.history_rule(source)[0] > 1
    # A deleted record that comes back continues its numbering after its kept versions.
    returning = history.last_versions(store, source.name)
    versioned: list[dict[str, Any]] = []  # shown on the materialisation: the history per partition
    now = datetime.now(UTC)
    rule = screen.for_source(home, source)
    known = screen.load_findings(home, source.name)
    if keeps_history and screen.screened_with(home, source.name) != screening:
        history.rewrite(store, source.name, lambda row: screen.clean_row(rule, row))  # versions kept before
    findings: dict[str, dict[str, Any]] = {}
    skipped: set[str] = set()
    excluded: set[str] = set()  # records read that the source's exclusion rules keep out

    def flush() -> None:
        """Write one batch: the reader's records never all wait in memory, so a mailbox of any
        size is read in the space of one batch (benchmarks/memory_bench.py)."""
        nonlocal batch, batch_bytes
        fresh = [d for d in batch if old.get(d.doc_id) != d.content_hash]
        changed = [d.doc_id for d in fresh if d.doc_id in old]
        counts["changed"] += len(changed)
        counts["added"] += len(fresh) - len(changed)
        previous = {
            r["doc_id"]: r
            for r in store.lookup("documents", "doc_id", changed, SCHEMAS["documents"].names).to_pylist()
            if r["source"] == source.name
        }
        versions = {}
        for d in fresh:
            p = previous.get(d.doc_id)
            if p and _only_redacted(rule, p, d):  # the screen's new rules, not a new text: no new version
                versions[d.doc_id] = (p["version"] or 1, p["valid_from"])
                del previous[d.doc_id]
            elif p:
                versions[d.doc_id] = ((p["version"] or 1) + 1, history.valid_from(d, p["valid_from"], now))
            elif d.doc_id in returning:
                number, ended = returning[d.doc_id]
                versions[d.doc_id] = (number + 1, history.valid_from(d, ended, now))
            else:
                versions[d.doc_id] = (1, history.valid_from(d, None, now))
        versioned.extend(
            {"uri": d.uri, "version": versions[d.doc_id][0], "since": versions[d.doc_id][1].isoformat()}
            for d in fresh
            if d.doc_id in previous
        )
        del versioned[_SHOWN_VERSIONS:]
        if keeps_history:
            earlier = [screen.clean_row(rule, r) for r in previous.values()]
            history.supersede(store, source.name, earlier, {i: versions[i][1] for i in previous})
        store.delete_keys("documents", "doc_id", changed, source.name)
        store.add("documents", _document_rows(fresh, versions))
        shown.extend((d.title, d.uri, d.text) for d in fresh[: PREVIEW_ROWS - len(shown)])
        batch, batch_bytes = [], 0
        progress.report("read", source.name, len(read))

    for item in () if missing else reader(root, source.name, saved, options=source.options):
        if isinstance(item, ReadError):
            errors.append(item.as_dict())
        elif isinstance(item, Seen):
            seen.add(doc_id_for(source.name, item.native_id))
        elif isinstance(item, Cursor):
            new_cursor = item.state
        elif rules and exclusions.matching(rules, item.metadata, item.authors, item.uri):
            excluded.add(item.doc_id)  # before the screen: nothing of it is kept, not even a finding
        elif (doc := _screened(rule, item, findings, skipped)) is None:
            continue  # a record holding a secret, in a source that skips those
        elif doc.doc_id in read:
            errors.append({"uri": doc.uri, "error": f"duplicate record id {doc.native_id!r}, kept the first"})
        elif not (doc.text or "").strip():  # reported and skipped: one such file must not fail
            errors.append({"uri": doc.uri, "error": "no text to index"})  # the whole source's check
        else:
            read.add(doc.doc_id)
            batch.append(doc)
            batch_bytes += len(doc.text)
            if len(batch) >= _BATCH_RECORDS or batch_bytes >= _BATCH_BYTES:
                flush()
    deleted = [i for i in old if i not in read and i not in seen]
    gone = (
        [
            r
            for r in store.lookup("documents", "doc_id", deleted, SCHEMAS["documents"].names).to_pylist()
            if r["source"] == source.name
        ]
        if deleted and (keeps_history or rules)
        else []
    )
    purged = {r["doc_id"] for r in gone if r["doc_id"] in excluded or _excluded_row(rules, r)}
    if old and not (read or seen or errors or skipped or excluded or purged or allow_empty):
        where = f"under {root}" if root is not None else "in its default places"
        raise RagbagError(f"source {source.name!r} read 0 records and no errors {where}" + _kept(source, len(old)))
    flush()
    progress.report("read", source.name, len(read), len(read))

    if keeps_history and deleted:
        history.supersede(
            store,
            source.name,
            [screen.clean_row(rule, r) for r in gone if r["doc_id"] not in purged],
            dict.fromkeys(deleted, now),
        )
    history.forget(store, source.name, sorted(purged))  # excluded: no version of it stays
    store.delete_keys("documents", "doc_id", deleted, source.name)
    kept = history.prune(store, home, source, now)
    if new_cursor is not None:
        cursor.save(cursor_file, source, new_cursor, reads_as)
    findings.update({i: known[i] for i in seen - read - skipped if i in known})
    screen.save_findings(home, source, findings)
    changes.note_reading(home, source, fingerprint, errors)
    return {
        "documents": len(read) + len(seen - read),
        "read": len(read),
        "added": counts["added"],
        "changed": counts["changed"],
        "deleted": len(deleted),
        "excluded": len(excluded),
        "purged": len(purged),
        "versions_kept": kept["kept"],
        "versions_dropped": kept["dropped"],
        "new_versions": versioned,
        "errors": errors,
        "secrets": screen.totals(findings),
        "preview": preview(shown),
        "table_version": store.table("documents").version,
    }


def _screened(
    rule: screen.Screen, doc: Document, findings: dict[str, dict[str, Any]], skipped: set[str]
) -> Document | None:
    """The record as it may be stored (None: skipped for its secrets), noting what was found."""
    result = screen.screen(rule, doc)
    if result.action:
        findings[(result.document or doc).doc_id] = screen.entry(rule, doc, result)
    if result.document is None:
        skipped.add(doc.doc_id)
    return result.document


def _only_redacted(rule: screen.Screen, stored: dict[str, Any], doc: Document) -> bool:
    """Whether a stored row differs from the record read only by what the screen now redacts."""
    cleaned = screen.clean_row(rule, stored)
    redacted = (cleaned["text"], cleaned["title"]) != (stored["text"], stored["title"])
    return redacted and cleaned["text"] == doc.text and cleaned["title"] == doc.title


def _excluded_row(rules: tuple[exclusions.Rule, ...], row: dict[str, Any]) -> bool:
    """Whether a stored document is one the source's rules now keep out (a file a path rule
    stopped the walker from opening never comes back to say so)."""
    if not rules:
        return False
    try:
        meta = json.loads(row.get("metadata") or "{}")
    except ValueError:
        meta = {}
    meta = meta if isinstance(meta, dict) else {}
    return exclusions.matching(rules, meta, row.get("authors") or [], row["uri"]) is not None


def _kept(source: Source, documents: int) -> str:
    """The rest of the one line that refuses to empty a source: what is kept, and the way to
    empty it on purpose."""
    if not documents:
        return ""
    return (
        f"; its {documents} indexed documents are kept (an unplugged disk or a moved export?): "
        f"if it is empty on purpose, `ragbag build {source.name} --allow-empty`"
    )


def _document_rows(docs: list[Document], versions: dict[str, tuple[int, datetime]]) -> pa.Table:
    """Rows of new current versions: ``versions[doc_id]`` is (version, valid_from)."""
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
                "version": versions[d.doc_id][0],
                "valid_from": versions[d.doc_id][1],
                "valid_to": None,
            }
            for d in docs
        ],
        schema=SCHEMAS["documents"],
    )
