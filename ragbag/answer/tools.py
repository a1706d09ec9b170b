"""The retrieval tools over the published index: one implementation for `react` and `ragbag mcp`.

``search`` ranks chunks (hybrid by default, filters before ranking), ``find_files`` finds
documents by name, ``read_file`` pages through one document's text, ``grep_file`` finds regex
matches in it with character positions. Documents come from the published ``documents`` table
of each source, read at the version its manifest records, so tools see exactly what search sees
and nothing half-built. ``read_file``/``grep_file`` take a ``doc_id`` of an indexed document and
never a path: an agent cannot read arbitrary files through them.

The tools' schemas and argument checks live in ``ragbag.answer.tool_specs``, grep_file's safe
regex in ``ragbag.answer.grep``, a source's status row in ``ragbag.search.sources``, and the
documents they read (each source's published table, text on demand, kept versions) in
``ragbag.answer.documents``. Results are JSON-ready dicts kept under a character budget; what is
cut is named in ``note`` with how to get the rest.
"""

from __future__ import annotations

import json
import threading
from typing import Any

from ragbag.answer import grep, versions
from ragbag.answer.citations import hit_dict
from ragbag.answer.documents import Documents, name_matches, public
from ragbag.answer.tool_specs import MAX_CHARS, MAX_K, READ_DEFAULT, ToolError, find_spec, validate
from ragbag.core.home import Home
from ragbag.index.published import home_model
from ragbag.search import sources


class Tools:
    """The tools over one home. Cheap to create; indexes load on first use and stay warm."""

    def __init__(self, home: Home | str | None = None, max_chars: int = MAX_CHARS):
        self.home = home if isinstance(home, Home) else Home(home)
        self.max_chars = max_chars
        self.documents = Documents(self.home)
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
        for docs in self.documents.all(source):
            if connector and docs.connector != connector:
                continue
            for m in docs.meta.values():
                if name and not name_matches(m, name):
                    continue
                if needle and not any(needle in (m.get(f) or "").lower() for f in ("uri", "title", "path")):
                    continue
                total += 1
                if len(out) < limit:
                    kept = docs.kept.get(m["doc_id"], 0)
                    out.append({**public(m), "version": m.get("version") or 1, "versions": kept + 1})
        out.sort(key=lambda d: (d["source"], d["uri"]))
        res: dict[str, Any] = {"documents": out, "total": total}
        if total > len(out):
            res["note"] = f"showing {len(out)} of {total}: narrow with name/name_contains/connector or raise limit"
        return self._fit(res, "documents", "narrow with name/name_contains/connector")

    def read_file(
        self, doc_id: str, offset: int = 0, max_length: int = READ_DEFAULT, version: int | None = None
    ) -> dict[str, Any]:
        docs, meta, text, spans = self.documents.version(doc_id, version)
        max_length = min(max_length, self.max_chars - 2_000)
        if offset > len(text):
            raise ToolError(f"offset {offset} is past the end of {doc_id} ({len(text)} characters)")
        end = min(len(text), offset + max_length)
        res = {
            **public(meta),
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
        kept = self.documents.versions(doc_id if doc_id is not None else self.documents.by_path(path or ""))
        top = kept[-1]
        return {
            **{k: top.get(k) for k in ("doc_id", "source", "connector", "title", "uri")},
            "deleted": not top["current"],
            "versions": [{k: v.get(k) for k in versions.LISTED} for v in kept],
        }

    def diff(self, doc_id: str, from_version: int, to_version: int | None = None, context: int = 3) -> dict[str, Any]:
        """A unified diff between two versions of a document (to_version: the latest)."""
        if to_version is None:  # the latest: the current one, or a deleted document's last
            to_version = self.documents.versions(doc_id)[-1]["version"]
        _, old_meta, old, _ = self.documents.version(doc_id, from_version)
        _, new_meta, new, _ = self.documents.version(doc_id, to_version)
        res = {
            **public(new_meta),
            "from_version": old_meta["version"],
            "to_version": new_meta["version"],
            **versions.unified(old, new, old_meta["version"], new_meta["version"], context),
        }
        return self._fit(res, "diff", "lower context, or read_file each version")

    def grep_file(
        self, doc_id: str, pattern: str, context_chars: int = 80, limit: int = 20, ignore_case: bool = True
    ) -> dict[str, Any]:
        with self._lock:  # only for the lookup: the match itself runs unlocked (see below)
            docs, meta = self.documents.get(doc_id)
            text = self.documents.text(docs, doc_id)
            spans = docs.spans.get(doc_id, [])
        # The match runs outside the lock other tools need, so a slow pattern stalls only its own call.
        matches, total = grep.find(
            text, pattern, ignore_case=ignore_case, context_chars=context_chars, limit=limit, spans=spans, doc_id=doc_id
        )
        res = {**public(meta), "length": len(text), "pattern": pattern, "matches": matches, "total": total}
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
        return visual.make(self.home, citation, documents=self.documents, context=context).as_json(image=True)

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
            return len(self.documents.all())

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


# What list_sources and source_status show of a source's status row (``ragbag.search.sources``).
LIST_FIELDS = tuple("source connector path built damaged last_build documents chunks model store_bytes".split())
STATUS_FIELDS = (*LIST_FIELDS[:-1], "bytes", "path_exists", "options")

# Tools that take ``Tools._lock`` themselves, for as little as they need (or not at all):
# list_sources/source_status read only the home's files; grep_file locks for the document lookup
# and matches unlocked, so a pathological regex never holds up the other tools; search holds its
# own lock, so it never waits for documents being loaded.
_SELF_LOCKING = frozenset({"list_sources", "source_status", "grep_file", "search"})
