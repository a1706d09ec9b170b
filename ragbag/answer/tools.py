"""The retrieval tools over the published index: one implementation for `react` and `ragbag mcp`.

``search`` ranks chunks (hybrid by default, filters before ranking), ``find_files`` finds
documents by name, ``read_file`` pages through one document's text, ``grep_file`` finds regex
matches in it with character positions. Documents come from the published ``documents`` table
of each source, read at the version its manifest records, so tools see exactly what search sees
and nothing half-built. ``read_file``/``grep_file`` take a ``doc_id`` of an indexed document and
never a path: an agent cannot read arbitrary files through them.

The tools' schemas and argument checks live in ``ragbag.answer.tool_specs``, grep_file's safe
regex in ``ragbag.answer.grep``, and a source's status row in ``ragbag.search.sources``.
Results are JSON-ready dicts kept under a character budget; what is cut is named in ``note``
with how to get the rest.
"""

from __future__ import annotations

import fnmatch
import json
import threading
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any

from ragbag.answer import grep, versions
from ragbag.answer.citations import hit_dict
from ragbag.answer.tool_specs import MAX_CHARS, MAX_K, READ_DEFAULT, ToolError, find_spec, validate
from ragbag.core.cache import LRU
from ragbag.core.dates import iso
from ragbag.core.home import Home
from ragbag.index.published import home_model
from ragbag.search import sources

TEXT_CACHE = 16  # documents whose text stays in memory (read → grep → read…)


@dataclass
class _Docs:
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


class Tools:
    """The tools over one home. Cheap to create; indexes load on first use and stay warm."""

    def __init__(self, home: Home | str | None = None, max_chars: int = MAX_CHARS):
        self.home = home if isinstance(home, Home) else Home(home)
        self.max_chars = max_chars
        self._docs: dict[str, _Docs] = {}
        self._texts: LRU[str, str] = LRU(TEXT_CACHE)  # "source\0version\0doc_id" → the document's text
        self._lock = threading.RLock()
        # Search reads only the published snapshots and the encoder, never the documents table:
        # it has a lock of its own, so the first search need not wait for the documents (and
        # LanceDB's import) that ``warm`` loads after it.
        self._search_lock = threading.Lock()

    # -- dispatch ----------------------------------------------------------------------------
    def call(self, name: str, arguments: dict[str, Any] | None) -> dict[str, Any]:
        """Validate arguments against the tool's schema and run it (ToolError on bad input)."""
        spec = find_spec(name)
        args = dict(arguments or {})
        validate(spec, args)
        if name in _SELF_LOCKING:
            return getattr(self, name)(**args)
        with self._lock:
            return getattr(self, name)(**args)

    # -- tools -------------------------------------------------------------------------------
    def search(self, query: str, k: int = 10, **arguments: Any) -> dict[str, Any]:
        """``arguments``: the rest of the tool's JSON arguments (filters, mode, rerank), which
        ``SearchRequest.from_arguments`` maps onto a request."""
        from ragbag.search import query as q
        from ragbag.search.request import SearchRequest

        if not query.strip():
            raise ToolError("query is empty")
        request = SearchRequest.from_arguments({"query": query, "k": min(k, MAX_K), **arguments})
        with self._search_lock:
            hits = q.results(request, home=self.home)
        rows = [hit_dict(h, rank) for rank, h in enumerate(hits, 1)]
        return self._fit(
            {"query": query, "hits": rows}, "hits", "lower k, add filters, or read_file a doc_id for the full text"
        )

    def find_files(
        self,
        name: str | None = None,
        name_contains: str | None = None,
        connector: str | None = None,
        source: str | None = None,
        limit: int = 50,
    ) -> dict[str, Any]:
        out: list[dict[str, Any]] = []
        total = 0
        needle = (name_contains or "").lower()
        for docs in self._all_docs(source):
            if connector and docs.connector != connector:
                continue
            for m in docs.meta.values():
                if name and not _name_matches(m, name):
                    continue
                if needle and not any(needle in (m.get(f) or "").lower() for f in ("uri", "title", "path")):
                    continue
                total += 1
                if len(out) < limit:
                    kept = docs.kept.get(m["doc_id"], 0)
                    out.append({**_doc_public(m), "version": m.get("version") or 1, "versions": kept + 1})
        out.sort(key=lambda d: (d["source"], d["uri"]))
        res: dict[str, Any] = {"documents": out, "total": total}
        if total > len(out):
            res["note"] = f"showing {len(out)} of {total}: narrow with name/name_contains/connector or raise limit"
        return self._fit(res, "documents", "narrow with name/name_contains/connector")

    def read_file(
        self, doc_id: str, offset: int = 0, max_length: int = READ_DEFAULT, version: int | None = None
    ) -> dict[str, Any]:
        docs, meta, text, spans = self._version(doc_id, version)
        max_length = min(max_length, self.max_chars - 2_000)
        if offset > len(text):
            raise ToolError(f"offset {offset} is past the end of {doc_id} ({len(text)} characters)")
        end = min(len(text), offset + max_length)
        res = {
            **_doc_public(meta),
            "version": meta["version"],
            "length": len(text),
            "offset": offset,
            "end": end,
            "text": text[offset:end],
            "citations": [{"citation": c, "start": s, "end": e} for s, e, c in spans if s < end and e > offset],
        }
        if end < len(text):
            res["next_offset"] = end
            res["note"] = (
                f"truncated: showing characters {offset}-{end} of {len(text)}; "
                f"call read_file with offset={end} for the rest"
                + (f" (and version={meta['version']})" if version is not None else "")
            )
        return res

    def history(self, doc_id: str | None = None, path: str | None = None) -> dict[str, Any]:
        """A document's kept versions, oldest first, by doc_id or by its path/uri."""
        if (doc_id is None) == (path is None):
            raise ToolError("give either doc_id or path")
        kept = self._versions(doc_id if doc_id is not None else self._by_path(path or ""))
        top = kept[-1]
        return {
            **{k: top.get(k) for k in ("doc_id", "source", "connector", "title", "uri")},
            "deleted": not top["current"],
            "versions": [{k: v.get(k) for k in versions.LISTED} for v in kept],
        }

    def diff(self, doc_id: str, from_version: int, to_version: int | None = None, context: int = 3) -> dict[str, Any]:
        """A unified diff between two versions of a document (to_version: the latest)."""
        if to_version is None:  # the latest: the current one, or a deleted document's last
            to_version = self._versions(doc_id)[-1]["version"]
        _, old_meta, old, _ = self._version(doc_id, from_version)
        _, new_meta, new, _ = self._version(doc_id, to_version)
        res = {
            **_doc_public(new_meta),
            "from_version": old_meta["version"],
            "to_version": new_meta["version"],
            **versions.unified(old, new, old_meta["version"], new_meta["version"], context),
        }
        return self._fit(res, "diff", "lower context, or read_file each version")

    def grep_file(
        self, doc_id: str, pattern: str, context_chars: int = 80, limit: int = 20, ignore_case: bool = True
    ) -> dict[str, Any]:
        with self._lock:  # only for the lookup: the match itself runs unlocked (see below)
            docs, meta = self._doc(doc_id)
            text = self._text(docs, doc_id)
            spans = docs.spans.get(doc_id, [])
        # The match runs outside the lock other tools need, so a slow pattern stalls only its own call.
        matches, total = grep.find(
            text, pattern, ignore_case=ignore_case, context_chars=context_chars, limit=limit, spans=spans, doc_id=doc_id
        )
        res = {**_doc_public(meta), "length": len(text), "pattern": pattern, "matches": matches, "total": total}
        if total > len(matches):
            more = f"{total}+" if total >= 10 * limit else str(total)
            res["note"] = f"showing {len(matches)} of {more} matches: raise limit or narrow the pattern"
        return self._fit(res, "matches", "lower limit or context_chars, or narrow the pattern")

    def list_sources(self) -> dict[str, Any]:
        return {"sources": [sources.status(self.home, s, LIST_FIELDS) for _, s in sorted(self.home.sources().items())]}

    def source_status(self, source: str) -> dict[str, Any]:
        return sources.status(self.home, self.home.source(source), STATUS_FIELDS)

    def show_citation(self, citation: str) -> dict[str, Any]:
        """A cited passage in its place (``ragbag.answer.visual``): a PDF's pages as a PNG with the
        passage outlined, else its section of the document. The PNG (``image_png_base64``, which
        the MCP server sends as image content) is outside the character budget, which a picture
        cannot be cut to fit; the section's context around the passage is sized to stay within it."""
        from ragbag.answer import visual

        context = max(0, min(visual.CONTEXT_CHARS, (self.max_chars - 6_000) // 4))
        return visual.make(self.home, citation, tools=self, context=context).as_json(image=True)

    def warm_search(self) -> int:
        """Load the snapshots and query encoder (no LanceDB) before a first search: the sources loaded."""
        from ragbag.models import embedding
        from ragbag.search import snapshot

        with self._search_lock:
            snaps = [snapshot.load(self.home, s.connector, n) for n, s in self.home.sources().items()]
            if any(snaps):
                embedding.encode_query("warm up", home_model(self.home))
        return sum(1 for s in snaps if s is not None)

    def warm_documents(self) -> int:
        """Load the document tools' metadata of every source (imports LanceDB)."""
        with self._lock:
            return len(self._all_docs())

    # -- internals -----------------------------------------------------------------------------
    def _fit(self, res: dict[str, Any], key: str, how: str) -> dict[str, Any]:
        """Drop items from the end of res[key] until the JSON fits the budget; say so."""
        items = res[key]
        dropped = 0
        while items and len(json.dumps(res, default=str, ensure_ascii=False)) > self.max_chars:
            items.pop()
            dropped += 1
        if dropped:
            res["note"] = (res.get("note", "") + "; " if res.get("note") else "") + (
                f"{dropped} more result(s) cut to stay under {self.max_chars} characters: {how}"
            )
        return res

    def _all_docs(self, source: str | None = None) -> list[_Docs]:
        registered = self.home.sources()
        if self._docs.keys() - registered.keys():  # removed: its documents leave memory now
            self._docs = {n: d for n, d in self._docs.items() if n in registered}
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

    def _load(self, name: str, connector: str) -> _Docs | None:
        """The source's documents at the version its published snapshot (what search reads) pins."""
        from ragbag.search import snapshot

        snap = snapshot.load(self.home, connector, name)
        if snap is None:
            self._docs.pop(name, None)
            return None
        cached = self._docs.get(name)
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
        docs = _Docs(snap.key, name, connector, version, meta, table)
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
        self._docs[name] = docs  # texts of the old version age out of the cache: their keys name it
        return docs

    def _doc(self, doc_id: str) -> tuple[_Docs, dict[str, Any]]:
        if not isinstance(doc_id, str) or not doc_id.strip():
            raise ToolError("doc_id is empty")
        for docs in self._all_docs():
            if doc_id in docs.meta:
                return docs, docs.meta[doc_id]
        raise ToolError(f"unknown doc_id {doc_id!r}: use a doc_id returned by search or find_files")

    def _version(self, doc_id: str, version: int | None) -> tuple[_Docs | None, dict[str, Any], str, list]:
        """(its source's documents, the version's metadata, its text, its citations' spans): the
        current version when ``version`` is None or the current one's number, else a kept one."""
        current = self._find(doc_id)
        if current is not None and (version is None or version == current[1]["version"]):
            docs, meta = current
            return docs, meta, self._text(docs, doc_id), docs.spans.get(doc_id, [])
        past = {v["version"]: v for v in self._past(doc_id)}
        if current is None and not past:
            raise ToolError(f"unknown doc_id {doc_id!r}: use a doc_id returned by search or find_files")
        if version is None:
            raise ToolError(f"{doc_id} was deleted; its kept versions: {versions.listed(past)} (pass version=)")
        if version not in past:
            numbers = sorted(past) + ([current[1]["version"]] if current else [])
            raise ToolError(f"version {version} of {doc_id} is not kept; versions: {versions.listed(numbers)}")
        row = past[version]
        owner = current[0] if current else self._source_docs(row["source"])
        text = row["text"] or ""
        spans = versions.spans_in(version, text, owner.past_spans.get(doc_id, []) if owner else [])
        return owner, versions.meta(row), text, spans

    def _versions(self, doc_id: str) -> list[dict[str, Any]]:
        """Every kept version of a document, the current one last, with its size in characters."""
        current = self._find(doc_id)
        number = current[1]["version"] if current else None
        # (a version both current and kept: a build deleting it has not published yet)
        out = [
            {**versions.meta(r), "chars": len(r["text"] or "")} for r in self._past(doc_id) if r["version"] != number
        ]
        out.sort(key=lambda v: v["version"])
        if current is not None:
            docs, meta = current
            out.append({**meta, "current": True, "chars": len(self._text(docs, doc_id))})
        if not out:
            raise ToolError(f"unknown doc_id {doc_id!r}: use a doc_id returned by search or find_files")
        return out

    def _past(self, doc_id: str) -> list[dict[str, Any]]:
        if not isinstance(doc_id, str) or not doc_id.strip():
            raise ToolError("doc_id is empty")
        return versions.past(self.home, doc_id)

    def _by_path(self, path: str) -> str:
        """The doc_id of the one document (current, or deleted with kept versions) at a path/uri."""
        found = {m["doc_id"] for docs in self._all_docs() for m in docs.meta.values() if _name_matches(m, path)}
        found = found or versions.deleted_at(self.home, path)
        if not found:
            raise ToolError(f"no indexed document at {path!r}: find_files lists them")
        if len(found) > 1:
            raise ToolError(f"{path!r} names {len(found)} documents: give a doc_id ({', '.join(sorted(found)[:5])})")
        return found.pop()

    def _find(self, doc_id: str) -> tuple[_Docs, dict[str, Any]] | None:
        try:
            return self._doc(doc_id)
        except ToolError:
            return None

    def _source_docs(self, source: str) -> _Docs | None:
        docs = self._all_docs(source) if source in self.home.sources() else []
        return docs[0] if docs else None

    def _text(self, docs: _Docs, doc_id: str) -> str:
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


# What list_sources and source_status show of a source's status row (``ragbag.search.sources``).
LIST_FIELDS = tuple("source connector path built damaged last_build documents chunks model store_bytes".split())
STATUS_FIELDS = (*LIST_FIELDS[:-1], "bytes", "path_exists", "options")

# Tools that take ``Tools._lock`` themselves, for as little as they need (or not at all):
# list_sources/source_status read only the home's files; grep_file locks for the document lookup
# and matches unlocked, so a pathological regex never holds up the other tools; search holds its
# own lock, so it never waits for documents being loaded.
_SELF_LOCKING = frozenset({"list_sources", "source_status", "grep_file", "search"})


def _name_matches(m: dict[str, Any], name: str) -> bool:
    low = name.lower()
    uri, path = m.get("uri") or "", m.get("path") or ""
    base = PurePath(path or uri.split("://", 1)[-1]).name.lower()
    if low in (base, path.lower(), uri.lower(), (m.get("title") or "").lower()):
        return True  # as written first: `notes [old]/plan.md` names itself, not a pattern
    return any(ch in name for ch in "*?[") and any(fnmatch.fnmatch(s, low) for s in (base, path.lower(), uri.lower()))


def _doc_public(m: dict[str, Any]) -> dict[str, Any]:
    return {k: m.get(k) for k in ("doc_id", "source", "connector", "title", "uri", "date")}
