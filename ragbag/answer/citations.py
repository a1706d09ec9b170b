"""Citations: the one module that knows what a citation is, how it is written and how it is found.

A passage is cited as ``[c:xxxxxx]``, the leading hex digits of its chunk id (the id itself comes
from ``ragbag.core.records.citation_for``, since search puts it on every hit). ``ask`` numbers its
retrieved passages into ``Block`` s for the prompt; the agent collects passages from its tools'
results. Either way the answer's ``[c:…]`` markers are parsed by ``cited`` and resolved by
``resolve`` into citation dicts with the same fields (``FIELDS``), which ``ask --json``,
``react --json`` and the printed "Sources:" list show. A marker the context does not explain is
looked up in the published index (``lookup``): a model may cite a passage it saw in a read_file
or grep_file result without the passage ever being a search hit.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ragbag.core.dates import iso
from ragbag.core.home import Home
from ragbag.core.rows import Hit, ShownHit
from ragbag.search import people

FIELDS = ("citation", "source", "connector", "uri", "title", "date", "doc_id", "text")
PAGE_FIELDS = ("page", "page_end")  # a PDF passage's, beside FIELDS where known
_CITE = re.compile(r"c:([0-9a-f]{6,})")
_BRACKETS = re.compile(r"\[([^\[\]]*c:[0-9a-f]{6,}[^\[\]]*)\]")


def marker(cid: str) -> str:
    """How a passage is cited in text: ``[c:ab12cd]``."""
    return f"[c:{cid}]"


@dataclass
class Block:
    """One retrieved passage, numbered, as the model sees it in the prompt's context."""

    n: int
    citation: str
    source: str
    connector: str
    title: str
    uri: str
    date: str | None
    doc_id: str
    text: str
    score: float = 0.0
    vector_score: float | None = None
    pages: tuple[int, int] | None = None  # a PDF passage's first and last page
    passage: str = ""  # the cited chunk's own text, where ``text`` was widened with its neighbours

    def as_citation(self) -> dict[str, Any]:
        """The citation's fields; a PDF passage's pages too (``page``, ``page_end``)."""
        out = {k: getattr(self, k) for k in FIELDS}
        if self.pages:
            out.update(zip(PAGE_FIELDS, self.pages))
        return out


def block(n: int, hit: Mapping[str, Any]) -> Block:
    """Passage number ``n`` of the context, from a search hit (one of ``query.results``) or a
    passage the agent collected; a missing cosine (None or NaN) stays None."""
    vs = hit.get("vector_score")
    meta = hit.get("metadata")
    pages = None
    if isinstance(meta, Mapping) and meta.get("format") == "pdf" and meta.get("page_start"):
        pages = (int(meta["page_start"]), int(meta.get("page_end") or meta["page_start"]))
    return Block(
        n,
        hit["citation"],
        hit["source"],
        hit["connector"],
        hit["title"] or "",
        hit["uri"] or "",
        iso(hit.get("date")),
        hit["doc_id"],
        hit["text"],
        float(hit.get("score", 0.0)),
        None if vs is None or vs != vs else float(vs),
        pages,
        hit.get("chunk_text") or "",
    )


def passage(hit: Mapping[str, Any]) -> dict[str, Any]:
    """A search tool hit as the agent keeps it: the citation's fields, and the cosine the
    extractive fallback weighs sentences by."""
    return {k: hit.get(k) for k in (*FIELDS, "vector_score")}


def cited(text: str) -> list[str]:
    """Citation ids in order of first appearance: [c:ab12cd], [c:ab12cd, c:ef34ab], [c:ab12cd][c:…]."""
    out: list[str] = []
    for group in _BRACKETS.findall(text):
        for cid in _CITE.findall(group):
            if cid not in out:
                out.append(cid)
    return out


def in_blocks(blocks: list[Block], cid: str) -> Block | None:
    """The block a cited id names: exactly, else the first whose id starts with it or that it
    starts with (a model may shorten or lengthen an id)."""
    exact = {b.citation: b for b in blocks}.get(cid)
    return exact or next((b for b in blocks if b.citation.startswith(cid) or cid.startswith(b.citation)), None)


def resolve(text: str, find: Callable[[str], Mapping[str, Any] | None]) -> tuple[list[dict[str, Any]], list[str]]:
    """The citations of ``text`` in order, each found by ``find(cid)`` (with a PDF passage's
    ``page``/``page_end`` when it has them), and the ids it could not find (shown as
    unresolved, never silently dropped)."""
    found, missing = [], []
    for cid in cited(text):
        info = find(cid)
        if info:
            found.append({k: info.get(k) for k in FIELDS} | {k: info[k] for k in PAGE_FIELDS if info.get(k)})
        else:
            missing.append(cid)
    return found, missing


def lookup(home: Home, cid: str) -> dict[str, Any] | None:
    """The published passage behind a citation id ([c:xxxxxx] or xxxxxx), with its character
    span in its document and its chunk metadata (a PDF passage's pages: ``ragbag.answer.visual``
    draws them); None when no published chunk has it."""
    from ragbag.search import snapshot

    cid = cid.removeprefix("c:")
    for name, src in home.sources().items():
        snap = snapshot.load(home, src.connector, name)
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
                    "date": iso(r["date"]),
                    "doc_id": r["doc_id"],
                    "start": r["start"],
                    "end": r["end"],
                    "text": r["text"],
                    "metadata": r.get("metadata") or {},
                    "version": r.get("version") or 1,
                    "valid_to": iso(r.get("valid_to")),  # set: the passage of an earlier version
                }
    return None


def hit_dict(h: Hit, rank: int) -> ShownHit:
    """A search hit as tools and `ask --json` show it."""
    shown = ShownHit(
        rank=rank,
        citation=h["citation"],
        score=round(float(h["score"]), 6),
        vector_score=None
        if h.get("vector_score") is None or h["vector_score"] != h["vector_score"]
        else round(float(h["vector_score"] or 0.0), 4),
        source=h["source"],
        connector=h["connector"],
        title=people.shown(h["title"], h.get("people") or {}) if h["title"] else h["title"],
        uri=h["uri"],
        date=iso(h.get("date")),
        doc_id=h["doc_id"],
        version=int(h.get("version") or 1),
        valid_to=iso(h.get("valid_to")),
        start=int(h["start"]),
        end=int(h["end"]),
        text=h["text"],
    )
    if pages := page_span(h.get("metadata")):
        shown["page_start"], shown["page_end"] = pages["page_start"], pages["page_end"]
    if h.get("people"):
        shown["people"] = dict(h["people"])
    return shown


def page_span(meta: Any) -> dict[str, int]:
    """``page_start``/``page_end`` of a paged document's passage (a PDF's, a deck's, a
    workbook's); {} for the rest."""
    if not isinstance(meta, dict) or not meta.get("page_start"):
        return {}
    first = int(meta["page_start"])
    return {"page_start": first, "page_end": int(meta.get("page_end") or first)}
