"""The retrieval tools over the published index: one implementation for `react` and `ragbag mcp`.

``search`` ranks chunks (hybrid by default, filters before ranking), ``find_files`` finds
documents by name, ``read_file`` pages through one document's text, ``grep_file`` finds regex
matches in it with character positions. Documents come from the published ``documents`` table
of each source, read at the version its manifest records, so tools see exactly what search sees
and nothing half-built. ``read_file``/``grep_file`` take a ``doc_id`` of an indexed document and
never a path: an agent cannot read arbitrary files through them.

Every tool has a JSON schema (``SPECS``) with a description that tells an agent when to use it;
``Tools.call`` validates arguments against it, so the MCP server and the agent's JSON action
format reject the same bad input with the same one-line message. Results are JSON-ready dicts
kept under a character budget; what is cut is named in ``note`` with how to get the rest.
"""

from __future__ import annotations

import fnmatch
import json
import os
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import PurePath
from typing import Any

from ragbag.core.errors import RagbagError
from ragbag.core.home import Home

MAX_CHARS = 20_000  # budget for one tool result (characters of JSON)
MAX_K = 50
READ_DEFAULT = 4_000
GREP_TIMEOUT_S = 1.0
MAX_PATTERN = 1_000
MAX_REPEAT = 100_000  # counted repetitions ({n}) of a pattern, multiplied: the regex engine
# unrolls them when compiling, so x{4294967294} would eat gigabytes
_TEXT_CACHE = 16  # documents whose text stays in memory (read → grep → read…)


class ToolError(RagbagError):
    """A tool call that cannot be served (bad argument, unknown id): a one-line message."""


_FILTERS = {
    "source": {
        "description": "Only these sources (a name or a list of names, see list_sources).",
        "anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}],
    },
    "connector": {
        "description": "Only these connector types, e.g. files, code, mail.",
        "anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}],
    },
    "where": {
        "description": 'Metadata filter, ANDed across fields: {"field": {"op": value}} with ops '
        "== != < <= > >= in not_in contains starts_with ends_with is_true is_false; "
        '{"field": value} means ==. Fields: title uri source connector date, and '
        "metadata such as path ext language sender. A JSON object or its JSON text.",
        "anyOf": [{"type": "object"}, {"type": "string"}],
    },
    "after": {
        "type": "string",
        "description": "Only records dated at/after: YYYY-MM-DD, an ISO time, or an age like 30d, 2w, 6m, 1y.",
    },
    "before": {"type": "string", "description": "Only records dated before (same formats as after)."},
}

SPECS: list[dict[str, Any]] = [
    {
        "name": "search",
        "description": (
            "Search the user's indexed data (files, code, mail, chats…) and get the best matching "
            "passages with their citation ids, doc_ids and character spans. Start here for any "
            "question about the user's data; then read_file or grep_file a doc_id for more context "
            "before citing. Hybrid keyword + semantic ranking by default; filters apply before ranking."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "What to look for, in natural language or keywords."},
                "k": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_K,
                    "default": 10,
                    "description": "How many passages.",
                },
                **_FILTERS,
                "mode": {
                    "type": "string",
                    "enum": ["hybrid", "vector", "keyword"],
                    "default": "hybrid",
                    "description": "hybrid (default); keyword for exact names, codes and identifiers; vector for paraphrases.",
                },
                "rerank": {
                    "type": "boolean",
                    "default": False,
                    "description": "Re-score the best candidates with second-stage models: better order, "
                    "seconds slower the first time a passage is seen.",
                },
            },
            "required": ["query"],
            "additionalProperties": False,
        },
    },
    {
        "name": "find_files",
        "description": (
            "Find indexed documents by file name, path or title (not by content): use it when the "
            "user names a file, folder or document, then read_file / grep_file the doc_id it returns."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "name": {
                    "type": "string",
                    "description": "Exact file name (case-insensitive), full path/uri, or a glob like '*.md'.",
                },
                "name_contains": {
                    "type": "string",
                    "description": "A substring of the path, uri or title (case-insensitive).",
                },
                "connector": {"type": "string", "description": "Only documents of this connector type."},
                "source": {"type": "string", "description": "Only documents of this source."},
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": 500,
                    "default": 50,
                    "description": "Most documents to list.",
                },
            },
            "additionalProperties": False,
        },
    },
    {
        "name": "read_file",
        "description": (
            "Read an indexed document's text by doc_id (from search or find_files), a window of "
            "max_length characters from offset. Use it to see the context around a search hit "
            "(offset = the hit's start minus a little) or to read a whole document page by page "
            "(next_offset). The result lists the citation ids of the passages it covers."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "doc_id": {"type": "string", "description": "A doc_id returned by search or find_files."},
                "offset": {
                    "type": "integer",
                    "minimum": 0,
                    "default": 0,
                    "description": "Character offset to start at.",
                },
                "max_length": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_CHARS,
                    "default": READ_DEFAULT,
                    "description": "Most characters to return.",
                },
            },
            "required": ["doc_id"],
            "additionalProperties": False,
        },
    },
    {
        "name": "grep_file",
        "description": (
            "Find every match of a regular expression in one indexed document (by doc_id), with "
            "character positions, surrounding context and the citation id of the passage each "
            "match is in. Use it for exact facts inside a long document: numbers, names, dates, "
            "codes. Then read_file at a match's start for more context."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "doc_id": {"type": "string", "description": "A doc_id returned by search or find_files."},
                "pattern": {
                    "type": "string",
                    "description": "A Python regular expression, e.g. 'gate code|door code'.",
                },
                "context_chars": {
                    "type": "integer",
                    "minimum": 0,
                    "maximum": 2000,
                    "default": 80,
                    "description": "Characters of context on each side of a match.",
                },
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": 200,
                    "default": 20,
                    "description": "Most matches to return.",
                },
                "ignore_case": {
                    "type": "boolean",
                    "default": True,
                    "description": "Case-insensitive matching (default true).",
                },
            },
            "required": ["doc_id", "pattern"],
            "additionalProperties": False,
        },
    },
    {
        "name": "list_sources",
        "description": "List the user's registered sources (name, connector, path, documents, chunks, last build). "
        "Use it to learn what data exists before filtering by source or connector.",
        "parameters": {"type": "object", "properties": {}, "additionalProperties": False},
    },
    {
        "name": "source_status",
        "description": "Build state of one source: whether it is indexed, when it was last built, with which "
        "embedding model, its size, and whether its path still exists.",
        "parameters": {
            "type": "object",
            "properties": {"source": {"type": "string", "description": "The source name (see list_sources)."}},
            "required": ["source"],
            "additionalProperties": False,
        },
    },
]
AGENT_TOOLS = ("search", "find_files", "read_file", "grep_file")


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


class Tools:
    """The tools over one home. Cheap to create; indexes load on first use and stay warm."""

    def __init__(self, home: Home | str | None = None, max_chars: int = MAX_CHARS):
        self.home = home if isinstance(home, Home) else Home(home)
        self.max_chars = max_chars
        self._docs: dict[str, _Docs] = {}
        self._texts: OrderedDict[str, str] = OrderedDict()
        self._lock = threading.RLock()

    # -- dispatch ----------------------------------------------------------------------------
    def specs(self, names: tuple[str, ...] | None = None) -> list[dict[str, Any]]:
        return [s for s in SPECS if names is None or s["name"] in names]

    def call(self, name: str, arguments: dict[str, Any] | None) -> dict[str, Any]:
        """Validate arguments against the tool's schema and run it (ToolError on bad input)."""
        spec = next((s for s in SPECS if s["name"] == name), None)
        if spec is None:
            raise ToolError(f"unknown tool {name!r}; tools: {', '.join(s['name'] for s in SPECS)}")
        args = dict(arguments or {})
        validate(spec, args)
        if name in _SELF_LOCKING:
            return getattr(self, name)(**args)
        with self._lock:
            return getattr(self, name)(**args)

    # -- tools -------------------------------------------------------------------------------
    def search(
        self,
        query: str,
        k: int = 10,
        source=None,
        connector=None,
        where=None,
        after=None,
        before=None,
        mode: str = "hybrid",
        rerank: bool = False,
    ) -> dict[str, Any]:
        from ragbag.models import rerank as second_stage
        from ragbag.search import query as q

        if not query.strip():
            raise ToolError("query is empty")
        hits = q.search(
            query,
            k=min(k, MAX_K),
            sources=_names(source),
            connectors=_names(connector),
            where=where,
            after=after,
            before=before,
            mode=mode,
            home=self.home,
            rerank=second_stage.DEPTH if rerank else 0,
        )
        rows = [hit_dict(h, rank) for rank, h in enumerate(hits.to_dict("records"), 1)]
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
        out = []
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
                    out.append(_doc_public(m))
        out.sort(key=lambda d: (d["source"], d["uri"]))
        res: dict[str, Any] = {"documents": out, "total": total}
        if total > len(out):
            res["note"] = f"showing {len(out)} of {total}: narrow with name/name_contains/connector or raise limit"
        return self._fit(res, "documents", "narrow with name/name_contains/connector")

    def read_file(self, doc_id: str, offset: int = 0, max_length: int = READ_DEFAULT) -> dict[str, Any]:
        docs, meta = self._doc(doc_id)
        text = self._text(docs, doc_id)
        max_length = min(max_length, self.max_chars - 2_000)
        if offset > len(text):
            raise ToolError(f"offset {offset} is past the end of {doc_id} ({len(text)} characters)")
        end = min(len(text), offset + max_length)
        res = {
            **_doc_public(meta),
            "length": len(text),
            "offset": offset,
            "end": end,
            "text": text[offset:end],
            "citations": [
                {"citation": c, "start": s, "end": e}
                for s, e, c in docs.spans.get(doc_id, [])
                if s < end and e > offset
            ],
        }
        if end < len(text):
            res["next_offset"] = end
            res["note"] = (
                f"truncated: showing characters {offset}-{end} of {len(text)}; "
                f"call read_file with offset={end} for the rest"
            )
        return res

    def grep_file(
        self, doc_id: str, pattern: str, context_chars: int = 80, limit: int = 20, ignore_case: bool = True
    ) -> dict[str, Any]:
        with self._lock:  # only for the lookup: the match itself runs unlocked (see below)
            docs, meta = self._doc(doc_id)
            text = self._text(docs, doc_id)
            spans = docs.spans.get(doc_id, [])
        rx = _compile_pattern(pattern, ignore_case)
        matches, total = [], 0
        # The match runs outside the lock other tools need, so a slow pattern stalls only its own
        # call. ``timeout`` makes the engine itself give up (it counts the process's CPU time), so
        # a cut pattern leaves no thread spinning; ``concurrent`` lets other threads run meanwhile.
        try:
            for m in rx.finditer(text, timeout=GREP_TIMEOUT_S, concurrent=True):
                if m.end() == m.start():
                    continue  # empty matches say nothing
                total += 1
                if len(matches) < limit:
                    lo, hi = max(0, m.start() - context_chars), min(len(text), m.end() + context_chars)
                    matches.append(
                        {
                            "start": m.start(),
                            "end": m.end(),
                            "match": m.group()[:500],
                            "context": text[lo:hi],
                            "context_start": lo,
                            "citation": next((c for s, e, c in spans if s <= m.start() < e), None),
                        }
                    )
                elif total >= 10 * limit:
                    break
        except TimeoutError:
            raise ToolError(
                f"pattern {pattern!r} took longer than {GREP_TIMEOUT_S:g}s on {doc_id}; "
                f"use a simpler pattern (no nested repetition)"
            ) from None
        except RecursionError:
            raise ToolError(f"pattern {pattern!r} recurses too deeply on {doc_id}; use a simpler pattern") from None
        res = {**_doc_public(meta), "length": len(text), "pattern": pattern, "matches": matches, "total": total}
        if total > len(matches):
            more = f"{total}+" if total >= 10 * limit else str(total)
            res["note"] = f"showing {len(matches)} of {more} matches: raise limit or narrow the pattern"
        return self._fit(res, "matches", "lower limit or context_chars, or narrow the pattern")

    def list_sources(self) -> dict[str, Any]:
        return {"sources": [self._status(n, s) for n, s in sorted(self.home.sources().items())]}

    def source_status(self, source: str) -> dict[str, Any]:
        src = self.home.source(source)
        row = self._status(source, src)
        from ragbag.build.stages import dir_bytes

        idx = self.home.index_dir(src.connector, source)
        row["bytes"] = (dir_bytes(idx) if idx.exists() else 0) + row.pop("store_bytes", 0)
        row["path_exists"] = bool(src.path) and os.path.exists(src.path)
        row["options"] = src.options
        return row

    # -- citations -----------------------------------------------------------------------------
    def citation(self, cid: str) -> dict[str, Any] | None:
        """The passage behind a citation id ([c:xxxxxx]), or None when no published chunk has it."""
        from ragbag.search import query as q

        cid = cid.removeprefix("c:")
        for name, src in self.home.sources().items():
            snap = q.load(self.home, src.connector, name)
            if snap is None:
                continue
            for r in snap.records:
                if r["chunk_id"].startswith(cid):
                    return {
                        "citation": cid,
                        "source": r["source"],
                        "connector": r["connector"],
                        "uri": r["uri"],
                        "title": r["title"],
                        "date": _iso(r["date"]),
                        "doc_id": r["doc_id"],
                        "start": r["start"],
                        "end": r["end"],
                        "text": r["text"],
                    }
        return None

    # -- internals -----------------------------------------------------------------------------
    def _status(self, name, src) -> dict[str, Any]:
        from ragbag.build.stages import published_manifest

        m = published_manifest(self.home, src) or {}
        return {
            "source": name,
            "connector": src.connector,
            "path": src.path,
            "built": bool(m),
            "last_build": m.get("built_at"),
            "documents": m.get("documents", 0),
            "chunks": m.get("chunks", 0),
            "model": m.get("model"),
            "store_bytes": m.get("store_bytes", 0),
        }

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
        current = self.home.index_dir(connector, name) / "current"
        try:
            key = os.readlink(current)
        except OSError:
            return None
        cached = self._docs.get(name)
        if cached is not None and cached.key == key:
            return cached
        from ragbag.index.store import Store
        from ragbag.search import query as q

        manifest = json.loads((current.parent / key / "manifest.json").read_text())
        version = manifest["versions"]["documents"]
        store = Store(self.home.lance_uri)
        rows = store.published_rows(
            "documents", name, version, ["doc_id", "uri", "title", "connector", "date", "metadata"]
        ).to_pylist()
        meta = {}
        for r in rows:
            md = json.loads(r.pop("metadata") or "{}")
            meta[r["doc_id"]] = {**r, "source": name, "date": _iso(r["date"]), "path": str(md.get("path") or "")}
        table = store.db.open_table("documents")
        table.checkout(version)
        docs = _Docs(key, name, connector, version, meta, table)
        snap = q.load(self.home, connector, name)
        if snap is not None:
            from ragbag.core.records import citation_for

            for r in snap.records:
                docs.spans.setdefault(r["doc_id"], []).append(
                    (int(r["start"]), int(r["end"]), citation_for(r["chunk_id"]))
                )
            for v in docs.spans.values():
                v.sort()
        self._docs[name] = docs
        for k in [k for k in self._texts if k.startswith(name + "\0")]:
            del self._texts[k]
        return docs

    def _doc(self, doc_id: str) -> tuple[_Docs, dict[str, Any]]:
        if not isinstance(doc_id, str) or not doc_id.strip():
            raise ToolError("doc_id is empty")
        for docs in self._all_docs():
            if doc_id in docs.meta:
                return docs, docs.meta[doc_id]
        raise ToolError(f"unknown doc_id {doc_id!r}: use a doc_id returned by search or find_files")

    def _text(self, docs: _Docs, doc_id: str) -> str:
        from ragbag.index.store import lit

        key = f"{docs.source}\0{docs.key}\0{doc_id}"
        if key in self._texts:
            self._texts.move_to_end(key)
            return self._texts[key]
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
        self._texts[key] = got[0] or ""
        while len(self._texts) > _TEXT_CACHE:
            self._texts.popitem(last=False)
        return self._texts[key]


# Tools that take ``Tools._lock`` themselves, for as little as they need (or not at all):
# list_sources/source_status read only the home's files; grep_file locks for the document lookup
# and matches unlocked, so a pathological regex never holds up the other tools.
_SELF_LOCKING = frozenset({"list_sources", "source_status", "grep_file"})


def _compile_pattern(pattern: str, ignore_case: bool):
    """A grep pattern compiled, or a one-line ToolError: empty, too long, repeating too much
    (compiling unrolls counted repetitions, so a short pattern can ask for gigabytes), nesting
    too deeply, or not a regular expression."""
    import regex

    if not pattern:
        raise ToolError("pattern is empty")
    if len(pattern) > MAX_PATTERN:
        raise ToolError(f"pattern is longer than {MAX_PATTERN} characters")
    weight = _repeat_weight(pattern)
    if weight > MAX_REPEAT:
        raise ToolError(
            f"pattern {pattern[:100]!r} repeats too much: its counted repetitions ({{n}}) multiply to "
            f"{weight:,} (limit {MAX_REPEAT:,}); use smaller counts, or + and *"
        )
    try:
        return regex.compile(pattern, regex.IGNORECASE if ignore_case else 0)
    except regex.error as e:
        raise ToolError(f"bad regular expression {pattern!r}: {e}") from None
    except (RecursionError, MemoryError, OverflowError) as e:
        raise ToolError(
            f"pattern {pattern[:100]!r} is too complex to compile ({type(e).__name__}); use a simpler pattern"
        ) from None


def _repeat_weight(pattern: str) -> int:
    """An upper bound on how much counted repetitions unroll: the product of the minimum count of
    every ``{m}``/``{m,n}``/``{m,}`` in the pattern. Conservative by design (repetitions in sequence
    count as if nested; an escaped ``\\{3}`` counts too): whitespace and ``#`` comments inside the
    braces are skipped as the engine does in verbose mode, so no spelling of a count is missed."""
    weight, i, n = 1, 0, len(pattern)
    while i < n:
        if pattern[i] != "{":
            i += 1
            continue
        j, digits = i + 1, ""
        while j < n:
            ch = pattern[j]
            if ch.isdigit() and ch.isascii():
                digits += ch
            elif ch == "#":  # a verbose-mode comment runs to the end of the line
                while j < n and pattern[j] != "\n":
                    j += 1
                continue
            elif not ch.isspace():  # "," ends the minimum; anything else ends the count
                break
            j += 1
        if digits:
            weight *= max(1, int(digits))
        i += 1
    return weight


def validate(spec: dict[str, Any], args: dict[str, Any]) -> None:
    """Arguments against a tool's JSON schema; the first problem as a one-line ToolError."""
    import jsonschema

    errors = sorted(jsonschema.Draft202012Validator(spec["parameters"]).iter_errors(args), key=lambda e: e.path)
    if errors:
        e = errors[0]
        where = ".".join(str(p) for p in e.path)
        msg = e.message if len(e.message) < 200 else e.message[:200] + "…"
        raise ToolError(f"{spec['name']}: invalid arguments{' at ' + where if where else ''}: {msg}")


def hit_dict(h: dict[str, Any], rank: int) -> dict[str, Any]:
    """A search hit as tools and `ask --json` show it."""
    return {
        "rank": rank,
        "citation": h["citation"],
        "score": round(float(h["score"]), 6),
        "vector_score": None
        if h.get("vector_score") is None or h["vector_score"] != h["vector_score"]
        else round(float(h["vector_score"]), 4),
        "source": h["source"],
        "connector": h["connector"],
        "title": h["title"],
        "uri": h["uri"],
        "date": _iso(h.get("date")),
        "doc_id": h["doc_id"],
        "start": int(h["start"]),
        "end": int(h["end"]),
        "text": h["text"],
    }


def _names(v) -> list[str] | None:
    if v is None or v == [] or v == "":
        return None
    return [v] if isinstance(v, str) else list(v)


def _name_matches(m: dict[str, Any], name: str) -> bool:
    low = name.lower()
    uri, path = m.get("uri") or "", m.get("path") or ""
    base = PurePath(path or uri.split("://", 1)[-1]).name.lower()
    if any(ch in name for ch in "*?["):
        return fnmatch.fnmatch(base, low) or fnmatch.fnmatch(path.lower(), low) or fnmatch.fnmatch(uri.lower(), low)
    return low in (base, path.lower(), uri.lower(), (m.get("title") or "").lower())


def _doc_public(m: dict[str, Any]) -> dict[str, Any]:
    return {k: m.get(k) for k in ("doc_id", "source", "connector", "title", "uri", "date")}


def _iso(v: Any) -> str | None:
    if v is None:
        return None
    if isinstance(v, datetime):
        return v.isoformat()
    try:
        import pandas as pd

        if pd.isna(v):
            return None
        return pd.Timestamp(v).isoformat()
    except (TypeError, ValueError):
        return str(v)
