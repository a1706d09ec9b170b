"""Reading a document's kept versions (``ragbag.pipeline.history`` writes them) for the tools:
``history``, ``read_file(version=)`` and ``diff``.

The history table is read at its newest version, never pinned like what search reads: a
version a build has just pruned is gone here at once, which is what its retention promises.
"""

from __future__ import annotations

import difflib
import json
from typing import Any

from ragbag.core.dates import iso
from ragbag.core.home import Home

LISTED = ("version", "valid_from", "valid_to", "chars", "current", "content_hash")
# One earlier version's chunk: (first version, last version, start, end, text, citation);
# start/end are offsets in the last version's text.
PastSpan = tuple[int, int, int, int, str, str]


def past(home: Home, doc_id: str) -> list[dict[str, Any]]:
    """A document's kept earlier versions, every column, of registered sources only."""
    from ragbag.index.store import Store, lit

    table = _table(Store(home.lance_uri))
    if table is None:
        return []
    rows = table.search().where(f"doc_id = {lit(doc_id)}").limit(None).to_arrow().to_pylist()
    return [r for r in rows if r["source"] in home.sources()]


def deleted_at(home: Home, uri: str) -> set[str]:
    """Ids of deleted documents with kept versions at this uri."""
    from ragbag.index.store import Store, lit

    table = _table(Store(home.lance_uri))
    if table is None:
        return set()
    rows = table.search().where(f"uri = {lit(uri)}").select(["doc_id", "source"]).limit(None).to_arrow()
    return {r["doc_id"] for r in rows.to_pylist() if r["source"] in home.sources()}


def kept_counts(store: Any, source: str) -> dict[str, int]:
    """How many earlier versions each of a source's documents keeps."""
    from ragbag.index.store import lit

    table = _table(store)
    if table is None:
        return {}
    counts: dict[str, int] = {}
    for d in table.search().where(f"source = {lit(source)}").select(["doc_id"]).limit(None).to_arrow()["doc_id"]:
        counts[d.as_py()] = counts.get(d.as_py(), 0) + 1
    return counts


def meta(row: dict[str, Any]) -> dict[str, Any]:
    """An earlier version's row as the tools show a document, plus its validity."""
    md = json.loads(row.get("metadata") or "{}")
    return {
        **{k: row.get(k) for k in ("doc_id", "source", "connector", "title", "uri")},
        "date": iso(row.get("date")),
        "path": str(md.get("path") or ""),
        "version": row.get("version") or 1,
        "valid_from": iso(row.get("valid_from")),
        "valid_to": iso(row.get("valid_to")),
        "current": False,
        "content_hash": row.get("content_hash"),
    }


def spans_in(version: int, text: str, chunks: list[PastSpan]) -> list[tuple[int, int, str]]:
    """(start, end, citation) of the chunks of ``version`` in its text. A chunk row spanning
    several versions holds offsets in the last one's text, so in an earlier one it is found."""
    spans = []
    for first, last, start, end, chunk, cite in chunks:
        if first <= version <= last:
            if last != version:
                start = text.find(chunk)
                end = start + len(chunk)
            if start >= 0:
                spans.append((start, end, cite))
    return sorted(spans)


def unified(old: str, new: str, old_version: int, new_version: int, context: int) -> dict[str, Any]:
    """A unified line diff with its counts of added and removed lines."""
    lines = list(
        difflib.unified_diff(
            old.splitlines(), new.splitlines(), f"v{old_version}", f"v{new_version}", n=context, lineterm=""
        )
    )
    body = [line for line in lines[2:] if not line.startswith("@@")]
    return {
        "added_lines": sum(1 for line in body if line.startswith("+")),
        "removed_lines": sum(1 for line in body if line.startswith("-")),
        "diff": lines,
    }


def listed(numbers: Any) -> str:
    return ", ".join(str(n) for n in sorted(numbers)) or "none"


def _table(store: Any) -> Any:
    """The document_versions table, or None in a home no build has given one yet."""
    try:
        return store.db.open_table("document_versions")
    except ValueError:
        return None
