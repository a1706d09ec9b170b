"""What the reading page shows: a document around a passage, and what is known about both.

A hit (or a citation chip) opens its document at the passage: the text is read through the
retrieval tools' ``read_file`` (the published text, at the version the passage is from), in a
window of ``WINDOW`` characters placed so the passage sits near its top; the passage's range,
the chunks before and after it, the passage's metadata (sender, chat, url, path, page…), the
document's kept versions and, for a PDF, whether its page can be drawn. Rendering is
``ragbag.apps.web.pages``'; this module only decides what is shown, so the two stay small.

LanceDB is imported here (``read_file`` reads the documents table), never on the search path.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ragbag.core.errors import RagbagError
from ragbag.core.home import Home

if TYPE_CHECKING:
    from ragbag.answer.tools import Tools

WINDOW = 50_000  # characters of a document on one page
LEAD = 2_000  # of them before the passage, so it opens in context
NEIGHBOURS = 2  # chunks shown on each side of the passage
PREVIEW_CHARS = 180
HIDDEN_META = frozenset({"page_start", "page_end"})  # shown as the page instead


@dataclass
class Reading:
    """One page of a document: ``text`` is characters ``offset``..``end`` of ``length``; the
    passage, when there is one, is ``text[hit[0]:hit[1]]``."""

    doc: dict[str, Any]
    offset: int
    end: int
    length: int
    text: str
    citation: str | None = None
    hit: tuple[int, int] | None = None
    first_page: int | None = None  # a PDF's page number at ``offset`` (pages are split by \f)
    meta: dict[str, Any] = field(default_factory=dict)
    neighbours: list[dict[str, Any]] = field(default_factory=list)
    versions: list[dict[str, Any]] = field(default_factory=list)
    picture: bool = False  # a PDF passage of the current version: its page can be drawn

    @property
    def version(self) -> int:
        return int(self.doc.get("version") or 1)

    @property
    def current(self) -> bool:
        return not self.versions or any(v.get("current") and v["version"] == self.version for v in self.versions)


def tools(home: Home) -> Tools:
    """Retrieval tools whose ``read_file`` returns a whole window."""
    from ragbag.answer.tools import Tools

    return Tools(home, max_chars=WINDOW + 2_000)


def read(
    home: Home,
    t: Tools,
    cite: str | None = None,
    doc_id: str | None = None,
    version: int | None = None,
    offset: int | None = None,
) -> Reading:
    """A document around the passage ``cite``, or document ``doc_id`` (at ``version``, from
    ``offset``). A RagbagError when neither names something indexed."""
    from ragbag.answer import citations, visual

    rec: dict[str, Any] | None = None
    if cite:
        cid = visual.parse_id(cite)
        rec = citations.lookup(home, cid)
        if rec is None:
            raise RagbagError(
                f"no indexed passage has citation c:{cid} (ids change when a passage's text changes; search again)"
            )
        doc_id = rec["doc_id"]
        version = int(rec["version"]) if rec.get("valid_to") else None
        if offset is None:
            offset = max(0, int(rec["start"]) - LEAD)
    if not doc_id:
        raise RagbagError("say which passage (cite=c:…) or document (doc_id=…) to read")
    got = t.read_file(doc_id, offset=max(0, offset or 0), max_length=WINDOW, version=version)
    text: str = got["text"]
    spans = sorted(got.get("citations") or [], key=lambda c: (c["start"], c["end"]))
    if rec is None and spans:  # a document opened by id: its first passage says what it is
        rec = citations.lookup(home, spans[0]["citation"])
    page = Reading(
        doc={k: got.get(k) for k in ("doc_id", "source", "connector", "title", "uri", "date", "version")},
        offset=int(got["offset"]),
        end=int(got["end"]),
        length=int(got["length"]),
        text=text,
    )
    meta = dict((rec or {}).get("metadata") or {})
    if cite and rec is not None:
        page.citation = rec["citation"]
        s, e = int(rec["start"]) - page.offset, int(rec["end"]) - page.offset
        if 0 <= s < len(text):
            page.hit = (s, min(e, len(text)))
        page.neighbours = _neighbours(spans, rec["citation"], text, page.offset)
    page.meta = {k: v for k, v in meta.items() if k not in HIDDEN_META and v not in (None, "", [], {})}
    if meta.get("format") == "pdf" and meta.get("page_start"):
        page.meta["page"] = _pages(meta)
        at = page.hit[0] if page.hit else 0
        anchor = int(meta["page_start"]) if page.hit else _first_page(rec, spans, page.offset, text)
        page.first_page = anchor - text.count("\f", 0, at) if anchor else None
    page.versions = _versions(t, doc_id)
    page.picture = bool(page.hit and meta.get("format") == "pdf" and not (rec or {}).get("valid_to"))
    return page


def _pages(meta: dict[str, Any]) -> str:
    first, last = int(meta["page_start"]), int(meta.get("page_end") or meta["page_start"])
    return str(first) if first == last else f"{first}–{last}"


def _first_page(rec: dict[str, Any] | None, spans: list[dict[str, Any]], offset: int, text: str) -> int | None:
    """The page at ``offset`` of a PDF opened without a passage, from its first passage's page."""
    if rec is None or not spans:
        return None
    start = max(0, int(spans[0]["start"]) - offset)
    return int(rec["metadata"]["page_start"]) - text.count("\f", 0, start)


def _neighbours(spans: list[dict[str, Any]], cited: str, text: str, offset: int) -> list[dict[str, Any]]:
    """The chunks just before and after the cited one, with the start of their text."""
    at = next((i for i, c in enumerate(spans) if c["citation"] == cited or c["citation"].startswith(cited)), None)
    if at is None:
        return []
    out = []
    for i in (*range(max(0, at - NEIGHBOURS), at), *range(at + 1, min(len(spans), at + 1 + NEIGHBOURS))):
        c = spans[i]
        piece = " ".join(text[max(0, c["start"] - offset) : max(0, c["end"] - offset)].split())
        out.append(
            {
                "citation": c["citation"],
                "where": "before" if i < at else "after",
                "preview": piece[:PREVIEW_CHARS] + ("…" if len(piece) > PREVIEW_CHARS else ""),
            }
        )
    return out


def _versions(t: Tools, doc_id: str) -> list[dict[str, Any]]:
    """The document's kept versions, oldest first ([] when the history cannot be read)."""
    try:
        return list(t.history(doc_id=doc_id)["versions"])
    except RagbagError:
        return []
