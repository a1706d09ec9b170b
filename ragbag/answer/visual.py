"""Visual citations: a cited passage shown where it stands in its source.

A citation of a PDF becomes a picture of the page(s) it is on, each line of the passage outlined
and tinted (``ragbag show``, the ``show_citation`` tool, ``show`` in a notebook); positions come
from ``ragbag.text.pdf_boxes`` and are also returned as numbers, so a client can draw its own.
Any other passage (and a PDF's, on request) is shown as text: its section of the document with
the passage marked, as a self-contained HTML page or for a terminal.

The picture is made from the file on disk, so it needs the file to be where it was indexed and
to still hold the indexed text; when it is not, the failure is one line that says which and how
to bring the index up to date, instead of a picture that outlines the wrong lines.

pypdfium2 and Pillow are imported only here and only when a picture or boxes are asked for, so
search, ``ask`` without ``--json`` and the other tools never load them.

Long because one view of a citation is rendered three ways (a PNG, an HTML page, a terminal
section) from one lookup, and the ways share its locating and cutting.
"""

from __future__ import annotations

import base64
import html
import io
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragbag.answer import citations
from ragbag.core.errors import RagbagError
from ragbag.core.home import Home
from ragbag.text.extract import PAGE_BREAK

if TYPE_CHECKING:
    from PIL.Image import Image

    from ragbag.answer.documents import Documents
    from ragbag.text.pdf_boxes import PageBoxes

SCALE = 1.5  # pixels per point: 108 dpi, small type stays legible
MAX_HEIGHT_PX = 4_000  # a passage over many short pages (slides) is drawn smaller, not cut
PAD = 1.0  # points around each line's box
FILL = (255, 214, 0, 96)  # translucent yellow over each cited line
OUTLINE = (230, 81, 0, 255)
PAGE_GAP_PX = 8  # between pages stacked in one picture
PNG_COLOURS = 256
CONTEXT_CHARS = 1_500  # of the document on each side of a passage in the text views
FORMATS = ("png", "html", "text")
_ID = re.compile(r"^\[?(?:c:)?([0-9a-f]{6,64})\]?$")
ANSI_MARK, ANSI_RESET = "\x1b[1;30;43m", "\x1b[0m"
OPEN, CLOSE = "»", "«"  # the passage's edges where a terminal cannot colour


@dataclass
class Section:
    """The part of a document shown around a passage: ``text`` starts at character ``offset``
    of the document; the passage is ``text[start:end]``; ``first_page`` is the page (of a PDF)
    ``text`` starts on."""

    offset: int
    text: str
    start: int
    end: int
    first_page: int | None = None


@dataclass
class View:
    """One cited passage, ready to show: for a PDF its pages' boxes and the picture."""

    citation: str
    doc_id: str
    source: str
    connector: str
    uri: str
    title: str
    kind: str  # "pdf" or "text"
    start: int
    end: int
    text: str
    pages: list[PageBoxes] = field(default_factory=list)
    image: Image | None = None
    image_boxes: list[list[list[int]]] = field(default_factory=list)  # per page: pixel boxes in ``image``
    section: Section | None = None
    page_range: tuple[int, int] | None = None  # a PDF passage's first and last page, from the index
    version: int | None = None  # the document version cited, when it is not the current one

    def as_json(self, image: bool = False) -> dict[str, Any]:
        """The view as tools and ``--json`` return it: boxes in PDF points (origin at the page's
        lower left, y up) and, when there is a picture, in its pixels (origin top left, y
        down); the PNG itself, base64, only when ``image``."""
        out: dict[str, Any] = {
            "citation": self.citation,
            "doc_id": self.doc_id,
            "source": self.source,
            "connector": self.connector,
            "uri": self.uri,
            "title": self.title,
            "kind": self.kind,
            "start": self.start,
            "end": self.end,
            "text": self.text,
            "pages": [],
        }
        for n, p in enumerate(self.pages):
            page = p.as_json()
            if self.image is not None:
                page["image_boxes"] = self.image_boxes[n]
            out["pages"].append(page)
        if self.section is not None:
            s = self.section
            out["section"] = {"offset": s.offset, "text": s.text, "start": s.start, "end": s.end}
        if self.image is not None:
            out["image_width"], out["image_height"] = self.image.size
            if image:
                out["mime_type"] = "image/png"
                out["image_png_base64"] = base64.b64encode(self.png()).decode("ascii")
        return out

    def png(self) -> bytes:
        """The picture as PNG, in a palette of ``PNG_COLOURS``: a quarter of the bytes of full
        colour for a page of text (what an MCP client is sent), still fair for a photo."""
        if self.image is None:
            raise RagbagError(f"c:{self.citation} is not from a PDF: there is no page to draw (use html or text)")
        from PIL import Image as PILImage

        buf = io.BytesIO()
        palette = self.image.quantize(colors=PNG_COLOURS, method=PILImage.Quantize.FASTOCTREE)
        palette.save(buf, format="PNG", optimize=True)
        return buf.getvalue()

    def html(self) -> str:
        """A self-contained page: the passage marked inside its section, the source above it."""
        s = self._section()
        esc = html.escape
        where = esc(self.uri)
        if self.uri.startswith(("http://", "https://")) or Path(self.uri).is_absolute():
            href = self.uri if "://" in self.uri else Path(self.uri).as_uri()
            where = f'<a href="{esc(href, quote=True)}">{esc(self.uri)}</a>'
        before, cited, after = (self._readable(part, s, at) for part, at in _parts(s))
        return (
            '<!doctype html>\n<html><head><meta charset="utf-8">'
            f"<title>c:{esc(self.citation)} — {esc(self.title)}</title>\n<style>"
            "body{font:15px/1.55 system-ui,sans-serif;max-width:52em;margin:2em auto;padding:0 1em;color:#222}"
            "header{color:#555;font-size:13px;border-bottom:1px solid #ddd;padding-bottom:.6em}"
            "pre{white-space:pre-wrap;font:inherit}"
            "mark{background:#ffe066;box-shadow:0 0 0 2px #e65100;border-radius:2px}"
            "</style></head>\n<body><header>"
            f"<b>{esc(self.title or '(untitled)')}</b> · {esc(self.source)} · {where} · [c:{esc(self.citation)}]"
            f"{_page_note(self)}</header>\n"
            f'<pre>{esc(before)}<mark id="cited">{esc(cited)}</mark>{esc(after)}</pre>\n</body></html>\n'
        )

    def terminal(self, ansi: bool, text: Callable[[str], str] = str, label: Callable[[str], str] = str) -> str:
        """The passage inside its section, for a terminal: coloured when ``ansi``, else between
        ``»`` and ``«``. ``text`` maps the document's text and ``label`` its title, source and
        uri before they are put between this view's own colour codes: the CLI passes its
        sanitiser (``ragbag.core.terminal``), so the document's own codes never reach the
        screen while the marking still does."""
        s = self._section()
        before, cited, after = (text(self._readable(part, s, at)) for part, at in _parts(s))
        if ansi:  # coloured line by line, so a line break does not carry the colour across the screen
            marked = "\n".join(f"{ANSI_MARK}{line}{ANSI_RESET}" if line else "" for line in cited.split("\n"))
        else:
            marked = f"{OPEN}{cited}{CLOSE}"
        where = f"{label(self.title or '(untitled)')} — {label(self.source)} — {label(self.uri)}"
        head = f"[c:{self.citation}] {where}{_page_note(self)}"
        rule = "─" * min(len(head), 80)
        return f"{head}\n{rule}\n{before}{marked}{after}\n"

    def _section(self) -> Section:
        if self.section is None:
            raise RagbagError(f"c:{self.citation}: no text view was made for this citation")
        return self.section

    def _readable(self, part: str, s: Section, at: int) -> str:
        """A part of the section with a PDF's page breaks written as page headings."""
        if s.first_page is None or PAGE_BREAK not in part:
            return part
        page = s.first_page + s.text.count(PAGE_BREAK, 0, at)
        out = []
        for n, piece in enumerate(part.split(PAGE_BREAK)):
            out.append(piece if n == 0 else f"\n── page {page + n} ──\n{piece}")
        return "".join(out)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        """What a notebook shows: the picture for a PDF, the marked section otherwise."""
        if self.image is not None:
            return {"image/png": self.png(), "text/plain": f"[c:{self.citation}] {self.title} {_page_note(self)}"}
        return {"text/html": self.html(), "text/plain": self.terminal(ansi=False)}


def show(citation: str, home: Home | str | None = None, documents: Documents | None = None) -> View:
    """A cited passage shown where it stands: for a PDF the outlined page(s) (``view.image``,
    a PIL image), else the marked section. In a notebook the returned view displays itself."""
    home = home if isinstance(home, Home) else Home(home)
    return make(home, citation, picture=True, documents=documents)


def make(
    home: Home,
    citation: str,
    picture: bool = True,
    text_view: bool = False,
    documents: Documents | None = None,
    context: int = CONTEXT_CHARS,
) -> View:
    """The view of ``citation``: a PDF's boxes (and, when ``picture``, the picture), a text
    section (``context`` characters each side) for any other passage, and for a PDF's when
    ``text_view``."""
    cid = parse_id(citation)
    rec = citations.lookup(home, cid)
    if rec is None:
        raise RagbagError(
            f"no indexed passage has citation c:{cid}: use an id from search, ask or the tools "
            "(ids change when a passage's text changes; `ragbag list` shows what is built)"
        )
    meta = rec.get("metadata") or {}
    view = View(
        cid,
        rec["doc_id"],
        rec["source"],
        rec["connector"],
        rec["uri"] or "",
        rec["title"] or "",
        "pdf" if _is_pdf(meta) else "text",
        int(rec["start"]),
        int(rec["end"]),
        rec["text"],
    )
    if rec.get("valid_to"):  # an earlier version's passage: offsets are in that version's text
        view.version = int(rec["version"])
        if view.kind == "pdf" and picture:
            raise RagbagError(
                f"c:{cid} cites version {view.version} of {view.uri}, superseded {rec['valid_to'][:10]}: the file "
                "on disk is a later version; `ragbag show --format text` shows the passage in its own version"
            )
    if view.kind == "pdf":
        first = int(meta["page_start"])
        view.page_range = (first, int(meta.get("page_end") or first))
    if view.kind == "pdf" and (picture or not text_view):  # a text view needs only the index, not the file
        with _pdf(view.uri, view.source) as doc:
            view.pages = _located(doc, view, first, meta.get("ocr_lines"))
            if picture:
                view.image, view.image_boxes = draw(doc, view.pages)
    if view.kind == "text" or text_view:
        view.section = section(documents or _documents(home), view, meta, context)
    return view


def citation_boxes(uri: str, text: str, page: int, source: str = "") -> dict[str, Any]:
    """Where an ``ask`` citation of a PDF lies: ``boxes`` on its first page and ``pages`` (each
    page it runs over, with its boxes), or, when the file is gone or changed, no boxes and
    ``boxes_unavailable`` saying why; an answer never fails over its picture."""
    from ragbag.text.pdf_boxes import opened

    try:
        if not Path(uri).is_file():
            raise RagbagError(_gone(uri, source))
        with opened(uri) as doc:
            pages = _located(doc, _Passage(uri, source, text), page)
    except RagbagError as e:
        return {"boxes_unavailable": str(e)}
    first = next((p for p in pages if p.page == page), None)
    return {
        "boxes": first.as_json()["boxes"] if first else [],
        "pages": [p.as_json() for p in pages],
    }


def parse_id(citation: str) -> str:
    """``c:1a2b3c``, ``[c:1a2b3c]`` or ``1a2b3c`` → ``1a2b3c``; anything else is a one-line error."""
    m = _ID.match(citation.strip().lower()) if isinstance(citation, str) else None
    if m is None:
        raise RagbagError(f"{citation!r} is not a citation id: expected c: and at least 6 hex digits, like c:1a2b3c")
    return m.group(1)


def section(documents: Documents, view: View, meta: dict[str, Any], context: int = CONTEXT_CHARS) -> Section:
    """The passage with up to ``context`` characters of its document on each side, cut at
    paragraph (else line, else word) breaks, from the published text (its own version's)."""
    whole = documents.version(view.doc_id, view.version)[2]
    lo = max(0, view.start - context)
    hi = min(len(whole), view.end + context)
    text = whole[lo:hi]
    s, e = view.start - lo, min(view.end - lo, len(text))
    cut_start = 0 if lo == 0 else _break_after(text, 0, s)
    cut_end = len(text) if hi >= len(whole) else _break_before(text, e, len(text))
    first_page = None
    if view.kind == "pdf" and meta.get("page_start"):
        first_page = int(meta["page_start"]) - text.count(PAGE_BREAK, cut_start, s)
    return Section(lo + cut_start, text[cut_start:cut_end], s - cut_start, e - cut_start, first_page)


def draw(doc: Any, pages: list[PageBoxes]) -> tuple[Image, list[list[list[int]]]]:
    """The pages stacked top to bottom, each cited line tinted and outlined, and the boxes in
    the picture's pixels. Call it inside ``pdf_boxes.opened``."""
    from PIL import Image as PILImage
    from PIL import ImageDraw

    if not pages:
        raise RagbagError("nothing to draw: the passage has no letters or digits to find on its page")
    total = sum(p.height for p in pages) or 1.0
    scale = min(SCALE, MAX_HEIGHT_PX / total)
    rendered, pixel_boxes = [], []
    for p in pages:
        page = doc[p.page - 1]
        try:
            bitmap = page.render(scale=scale, draw_annots=True)
            convert = bitmap.get_posconv(page)
            img = bitmap.to_pil().convert("RGB")
            boxes = []
            for x0, y0, x1, y1 in p.boxes:
                corners = [convert.to_bitmap(x, y) for x, y in ((x0 - PAD, y0 - PAD), (x1 + PAD, y1 + PAD))]
                xs, ys = sorted(c[0] for c in corners), sorted(c[1] for c in corners)
                boxes.append([xs[0], ys[0], xs[1], ys[1]])
        finally:
            page.close()
        rendered.append(img)
        pixel_boxes.append(boxes)
    width = max(i.width for i in rendered)
    height = sum(i.height for i in rendered) + PAGE_GAP_PX * (len(rendered) - 1)
    canvas = PILImage.new("RGB", (width, height), (136, 136, 136))
    overlay = PILImage.new("RGBA", (width, height), (0, 0, 0, 0))
    pen = ImageDraw.Draw(overlay)
    line = max(2, round(scale * 1.5))
    top = 0
    for img, boxes in zip(rendered, pixel_boxes):
        canvas.paste(img, (0, top))
        for b in boxes:
            b[1] += top
            b[3] += top
        # The outline goes round the passage, not round every line: outlines first, then the
        # fills over them (drawing replaces pixels), with the gaps between lines closed.
        shapes = _closed(boxes)
        for b in shapes:
            pen.rectangle([b[0] - line, b[1] - line, b[2] + line, b[3] + line], fill=OUTLINE)
        for b in shapes:
            pen.rectangle(b, fill=FILL)
        top += img.height + PAGE_GAP_PX
    canvas = PILImage.alpha_composite(canvas.convert("RGBA"), overlay).convert("RGB")
    return canvas, pixel_boxes


# -- internals ---------------------------------------------------------------------------------
@dataclass
class _Passage:
    uri: str
    source: str
    text: str


def _located(doc: Any, passage: View | _Passage, page: int, ocr_lines: dict | None = None) -> list[PageBoxes]:
    from ragbag.text.pdf_boxes import TextNotFound, locate

    try:
        return locate(doc, passage.text, page, ocr_lines)
    except TextNotFound as e:
        rebuild = f"; rebuild the source with `ragbag build {passage.source}`" if passage.source else ""
        raise RagbagError(f"{passage.uri}: {e} (the file changed since it was indexed){rebuild}") from None


def _pdf(uri: str, source: str) -> Any:
    from ragbag.text.pdf_boxes import opened

    if not Path(uri).is_file():
        raise RagbagError(_gone(uri, source))
    return opened(uri)


def _gone(uri: str, source: str) -> str:
    rebuild = f"; rebuild the source with `ragbag build {source}`" if source else ""
    return f"{uri}: the cited PDF is no longer there (it was indexed from that path){rebuild}"


def _is_pdf(meta: dict[str, Any]) -> bool:
    """A passage of a PDF on disk; an attached PDF lives inside its mail, and shows as text."""
    return meta.get("format") == "pdf" and bool(meta.get("page_start")) and not meta.get("attachment")


def _documents(home: Home) -> Documents:
    from ragbag.answer.documents import Documents

    return Documents(home)


def _parts(s: Section) -> list[tuple[str, int]]:
    """(text, where it starts in the section) before, of and after the passage."""
    return [(s.text[: s.start], 0), (s.text[s.start : s.end], s.start), (s.text[s.end :], s.end)]


def _break_after(text: str, lo: int, hi: int) -> int:
    """The first paragraph break (else line, else word break) in text[lo:hi], just after it."""
    for sep in ("\n\n", "\n", " "):
        at = text.find(sep, lo, hi)
        if at >= 0:
            return at + len(sep)
    return lo


def _break_before(text: str, lo: int, hi: int) -> int:
    """The last paragraph break (else line, else word break) in text[lo:hi], just before it."""
    for sep in ("\n\n", "\n", " "):
        at = text.rfind(sep, lo, hi)
        if at >= 0:
            return at
    return hi


def _closed(boxes: list[list[int]]) -> list[list[int]]:
    """The boxes to paint: each line stretched to meet the next where they are lines of one
    paragraph (the gap less than half a line, overlapping across), so the tint is one shape."""
    out = [list(b) for b in boxes]
    for a, b in zip(out, out[1:]):
        gap = b[1] - a[3]
        if 0 < gap < (a[3] - a[1]) / 2 and a[0] < b[2] and b[0] < a[2]:
            a[3] = b[1] = a[3] + gap // 2
    return out


def _page_note(view: View) -> str:
    if view.pages:
        first, last = view.pages[0].page, view.pages[-1].page
    elif view.page_range:
        first, last = view.page_range
    else:
        return ""
    return f" — page {first}" if first == last else f" — pages {first}–{last}"
