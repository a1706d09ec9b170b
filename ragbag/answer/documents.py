"""The published documents of a home, as the retrieval tools and ``show`` read them: each
source's ``documents`` table at the version its manifest pins (what search sees, nothing
half-built), metadata in memory, a document's text fetched on demand and kept in a small cache,
earlier versions from ``ragbag.answer.versions``. Not thread-safe: ``Tools`` locks around it.
"""

from __future__ import annotations

import fnmatch
import json
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any

from ragbag.answer import versions
from ragbag.answer.tool_specs import ToolError
from ragbag.core.cache import LRU
from ragbag.core.dates import iso
from ragbag.core.home import Home

TEXT_CACHE = 16  # documents whose text stays in memory (read → grep → read…)


@dataclass
class SourceDocs:
    """One published source's documents (metadata in memory, text fetched on demand)."""

    key: str
    source: str
    connector: str
    version: int
    meta: dict[str, dict[str, Any]]
    table: Any
    spans: dict[str, list[tuple[int, int, str]]] = field(default_factory=dict)  # doc_id → chunk spans
    # Chunks of earlier versions: doc_id → (first version, last version, start, end, text, citation)
    past_spans: dict[str, list[tuple[int, int, int, int, str, str]]] = field(default_factory=dict)
    kept: dict[str, int] = field(default_factory=dict)  # doc_id → earlier versions kept


class Documents:
    """One home's published documents. Cheap to create; a source loads on first use."""

    def __init__(self, home: Home):
        self.home = home
        self._loaded: dict[str, SourceDocs] = {}
        self._texts: LRU[str, str] = LRU(TEXT_CACHE)  # "source\0version\0doc_id" → the document's text

    def all(self, source: str | None = None) -> list[SourceDocs]:
        registered = self.home.sources()
        if self._loaded.keys() - registered.keys():  # removed: its documents leave memory now
            self._loaded = {n: d for n, d in self._loaded.items() if n in registered}
            self._texts.clear()
        if source is not None and source not in registered:
            raise ToolError(f"no source named {source!r}; see list_sources")
        out = []
        for name, src in registered.items():
            if source is None or name == source:
                d = self._load(name, src.connector)
                if d is not None:
                    out.append(d)
        return out

    def _load(self, name: str, connector: str) -> SourceDocs | None:
        """The source's documents at the version its published snapshot (what search reads) pins."""
        from ragbag.search import snapshot

        snap = snapshot.load(self.home, connector, name)
        if snap is None:
            self._loaded.pop(name, None)
            return None
        cached = self._loaded.get(name)
        if cached is not None and cached.key == snap.key:
            return cached
        version = snap.manifest["versions"]["documents"]
        store = snap.store
        assert store is not None
        rows = store.published_rows(
            "documents", name, version, ["doc_id", "uri", "title", "connector", "date", "metadata", *_VERSION_COLUMNS]
        ).to_pylist()
        meta = {}
        for r in rows:
            md = json.loads(r.pop("metadata") or "{}")
            meta[r["doc_id"]] = {
                **r,
                "source": name,
                "date": iso(r["date"]),
                "path": str(md.get("path") or ""),
                "version": r.get("version") or 1,
                "valid_from": iso(r.get("valid_from")),
                "valid_to": None,
            }
        table = store.db.open_table("documents")
        table.checkout(version)
        docs = SourceDocs(snap.key, name, connector, version, meta, table)
        from ragbag.core.records import citation_for

        for r in snap.records:
            cite = citation_for(r["chunk_id"])
            if r.get("valid_to") is None:
                docs.spans.setdefault(r["doc_id"], []).append((int(r["start"]), int(r["end"]), cite))
            else:
                last = r.get("version") or 1
                first = r.get("first_version") or last
                docs.past_spans.setdefault(r["doc_id"], []).append(
                    (first, last, int(r["start"]), int(r["end"]), r["text"], cite)
                )
        for v in docs.spans.values():
            v.sort()
        docs.kept = versions.kept_counts(store, name)
        self._loaded[name] = docs  # texts of the old version age out of the cache: their keys name it
        return docs

    def get(self, doc_id: str) -> tuple[SourceDocs, dict[str, Any]]:
        if not isinstance(doc_id, str) or not doc_id.strip():
            raise ToolError("doc_id is empty")
        for docs in self.all():
            if doc_id in docs.meta:
                return docs, docs.meta[doc_id]
        raise ToolError(f"unknown doc_id {doc_id!r}: use a doc_id returned by search or find_files")

    def version(self, doc_id: str, version: int | None) -> tuple[SourceDocs | None, dict[str, Any], str, list]:
        """(its source's documents, the version's metadata, its text, its citations' spans): the
        current version when ``version`` is None or the current one's number, else a kept one."""
        current = self.find(doc_id)
        if current is not None and (version is None or version == current[1]["version"]):
            docs, meta = current
            return docs, meta, self.text(docs, doc_id), docs.spans.get(doc_id, [])
        past = {v["version"]: v for v in self._past(doc_id)}
        if current is None and not past:
            raise ToolError(f"unknown doc_id {doc_id!r}: use a doc_id returned by search or find_files")
        if version is None:
            raise ToolError(f"{doc_id} was deleted; its kept versions: {versions.listed(past)} (pass version=)")
        if version not in past:
            numbers = sorted(past) + ([current[1]["version"]] if current else [])
            raise ToolError(f"version {version} of {doc_id} is not kept; versions: {versions.listed(numbers)}")
        row = past[version]
        owner = current[0] if current else self._source(row["source"])
        text = row["text"] or ""
        spans = versions.spans_in(version, text, owner.past_spans.get(doc_id, []) if owner else [])
        return owner, versions.meta(row), text, spans

    def versions(self, doc_id: str) -> list[dict[str, Any]]:
        """Every kept version of a document, the current one last, with its size in characters."""
        current = self.find(doc_id)
        number = current[1]["version"] if current else None
        # (a version both current and kept: a build deleting it has not published yet)
        out = [
            {**versions.meta(r), "chars": len(r["text"] or "")} for r in self._past(doc_id) if r["version"] != number
        ]
        out.sort(key=lambda v: v["version"])
        if current is not None:
            docs, meta = current
            out.append({**meta, "current": True, "chars": len(self.text(docs, doc_id))})
        if not out:
            raise ToolError(f"unknown doc_id {doc_id!r}: use a doc_id returned by search or find_files")
        return out

    def _past(self, doc_id: str) -> list[dict[str, Any]]:
        if not isinstance(doc_id, str) or not doc_id.strip():
            raise ToolError("doc_id is empty")
        return versions.past(self.home, doc_id)

    def by_path(self, path: str) -> str:
        """The doc_id of the one document (current, or deleted with kept versions) at a path/uri."""
        found = {m["doc_id"] for docs in self.all() for m in docs.meta.values() if name_matches(m, path)}
        found = found or versions.deleted_at(self.home, path)
        if not found:
            raise ToolError(f"no indexed document at {path!r}: find_files lists them")
        if len(found) > 1:
            raise ToolError(f"{path!r} names {len(found)} documents: give a doc_id ({', '.join(sorted(found)[:5])})")
        return found.pop()

    def find(self, doc_id: str) -> tuple[SourceDocs, dict[str, Any]] | None:
        try:
            return self.get(doc_id)
        except ToolError:
            return None

    def _source(self, source: str) -> SourceDocs | None:
        docs = self.all(source) if source in self.home.sources() else []
        return docs[0] if docs else None

    def text(self, docs: SourceDocs, doc_id: str) -> str:
        from ragbag.index.store import lit

        key = f"{docs.source}\0{docs.key}\0{doc_id}"
        cached = self._texts.get(key)
        if cached is not None:
            return cached
        got = (
            docs.table.search()
            .where(f"source = {lit(docs.source)} AND doc_id = {lit(doc_id)}")
            .select(["text"])
            .limit(1)
            .to_arrow()
            .column("text")
            .to_pylist()
        )
        if not got:
            raise ToolError(f"unknown doc_id {doc_id!r}: use a doc_id returned by search or find_files")
        text = got[0] or ""
        self._texts.put(key, text)
        return text


_VERSION_COLUMNS = ["version", "valid_from", "content_hash"]


def name_matches(m: dict[str, Any], name: str) -> bool:
    low = name.lower()
    uri, path = m.get("uri") or "", m.get("path") or ""
    base = PurePath(path or uri.split("://", 1)[-1]).name.lower()
    if low in (base, path.lower(), uri.lower(), (m.get("title") or "").lower()):
        return True  # as written first: `notes [old]/plan.md` names itself, not a pattern
    return any(ch in name for ch in "*?[") and any(fnmatch.fnmatch(s, low) for s in (base, path.lower(), uri.lower()))


def public(m: dict[str, Any]) -> dict[str, Any]:
    return {k: m.get(k) for k in ("doc_id", "source", "connector", "title", "uri", "date")}
