"""Document versions: what the read stage keeps of a document's earlier texts, and for how long.

The documents table holds each document's current version; when a record's content changes (an
edited file, a re-exported chat, an updated event) its previous row moves to the
``document_versions`` table with ``valid_to`` set, and the new row gets the next ``version``.
A deleted record's last version moves there too, so ``--as-of`` finds what existed then. The
retention rule (``Home.history_rule``: at most N versions of a document, none superseded more
than D days ago) is applied at every read; ``ragbag remove`` purges the table with the rest.

A version is valid from the record's own modification time when that is believable (after the
previous version began, not in the future), else from when the build read it: builds see a
file only when they run, and a file's mtime says better when its text began.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import pyarrow as pa

from ragbag.core.home import Home, Source
from ragbag.core.records import Document, utc
from ragbag.index.store import SCHEMAS, Store, lit

TABLE = "document_versions"
_FIELDS = ["doc_id", "version", "content_hash", "valid_from", "valid_to"]


def valid_from(doc: Document, previous: datetime | None, now: datetime) -> datetime:
    """When a document's new version began (see the module's docstring)."""
    stamp = utc(doc.updated_at) or (utc(doc.created_at) if previous is None else None)
    if stamp is not None and stamp <= now and (previous is None or stamp > utc(previous)):  # type: ignore[operator]
        return stamp
    return now


def supersede(store: Store, source: str, old_rows: list[dict[str, Any]], until: dict[str, datetime]) -> None:
    """Keep the given current rows as earlier versions, valid until ``until[doc_id]``. Idempotent:
    a build killed after this and before the new rows were written does it again next time."""
    if not old_rows:
        return
    rows = [{**r, "version": r.get("version") or 1, "valid_to": until[r["doc_id"]]} for r in old_rows]
    _delete(store, source, [(r["doc_id"], r["version"]) for r in rows])
    store.add(TABLE, pa.Table.from_pylist(rows, schema=SCHEMAS[TABLE]))


def forget(store: Store, source: str, doc_ids: list[str]) -> None:
    """Delete every kept version of these documents: what an exclusion rule names must not stay
    behind as history (``ragbag.core.exclusions``)."""
    if doc_ids:
        store.delete_keys(TABLE, "doc_id", doc_ids, source)


def rewrite(store: Store, source: str, change: Callable[[dict[str, Any]], dict[str, Any]]) -> int:
    """Every kept version of a source passed through ``change``; those it changed are written back
    (the secret screen's new rules applied to versions kept before them). Returns how many."""
    rows = store.rows(TABLE, source, SCHEMAS[TABLE].names).to_pylist()
    changed = [new for r in rows if (new := change(r)) != r]
    if changed:
        _delete(store, source, [(r["doc_id"], r["version"]) for r in changed])
        store.add(TABLE, pa.Table.from_pylist(changed, schema=SCHEMAS[TABLE]))
    return len(changed)


def prune(store: Store, home: Home, source: Source, now: datetime) -> dict[str, int]:
    """Apply the source's retention rule; returns the versions kept and dropped."""
    keep, days = home.history_rule(source)
    stored = store.rows(TABLE, source.name, ["doc_id", "version", "valid_to"]).to_pylist()
    if not stored:
        return {"kept": 0, "dropped": 0}
    horizon = now - timedelta(days=days)
    by_doc: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in stored:
        by_doc[r["doc_id"]].append(r)
    drop: list[tuple[str, int]] = []
    for doc_id, versions in by_doc.items():
        versions.sort(key=lambda r: -r["version"])
        room = keep - 1  # the current version counts as one (a deletion too: 1 keeps no history)
        for i, r in enumerate(versions):
            if i >= room or utc(r["valid_to"]) < horizon:  # type: ignore[operator]
                drop.append((doc_id, r["version"]))
    _delete(store, source.name, drop)
    return {"kept": len(stored) - len(drop), "dropped": len(drop)}


def last_versions(store: Store, source: str) -> dict[str, tuple[int, datetime]]:
    """Per document with kept versions, its newest kept version's number and end."""
    out: dict[str, tuple[int, datetime]] = {}
    for r in store.rows(TABLE, source, ["doc_id", "version", "valid_to"]).to_pylist():
        if r["doc_id"] not in out or r["version"] > out[r["doc_id"]][0]:
            out[r["doc_id"]] = (r["version"], r["valid_to"])
    return out


def earlier(store: Store, source: str) -> dict[str, list[dict[str, Any]]]:
    """Each document's kept earlier versions (id, number, hash, validity), oldest first."""
    out: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in store.rows(TABLE, source, _FIELDS).to_pylist():
        out[r["doc_id"]].append(r)
    for versions in out.values():
        versions.sort(key=lambda r: r["version"])
    return dict(out)


def texts(store: Store, source: str, doc_ids: list[str]) -> dict[str, list[dict[str, Any]]]:
    """Whole earlier versions (every column) of some documents, oldest first."""
    out: dict[str, list[dict[str, Any]]] = defaultdict(list)
    if doc_ids:
        table = store.lookup(TABLE, "doc_id", doc_ids, SCHEMAS[TABLE].names)
        for r in table.filter(pa.compute.equal(table["source"], source)).to_pylist():
            out[r["doc_id"]].append(r)
    for versions in out.values():
        versions.sort(key=lambda r: r["version"])
    return dict(out)


def _delete(store: Store, source: str, versions: list[tuple[str, int]]) -> None:
    """Delete these (doc_id, version) rows of a source's history, a few hundred per statement."""
    for start in range(0, len(versions), 200):
        pairs = versions[start : start + 200]
        clause = " OR ".join(f"(doc_id = {lit(d)} AND version = {int(v)})" for d, v in pairs)
        store.table(TABLE).delete(f"source = {lit(source)} AND ({clause})")
