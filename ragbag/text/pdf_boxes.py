"""Where a passage of a PDF's indexed text lies on its pages, as rectangles in PDF points.

The index holds the text pypdf extracted (``ragbag.text.extract.pdf_text``: pages joined by a
form feed), while positions come from pdfium's text page, and the two read the same glyphs with
different whitespace, line ends, hyphenation (pdfium marks a line-end hyphen as ``\\x02``) and
ligatures. So a passage is matched on what both agree on: its letters and digits, compatibility
-decomposed, accents and case dropped (``fold``), each pdfium character keeping its own index so
a match maps straight back to character boxes. A passage that is not found whole (a layout the
two read in another order, a glyph one of them cannot map) is matched piece by piece, and found
when most of it is; otherwise the file no longer holds the indexed text and ``TextNotFound``
says so, rather than outlining something else.

pdfium is not thread-safe: every use goes through ``opened``, which holds one process-wide lock
(the MCP server runs tools in worker threads).
"""

from __future__ import annotations

import threading
import unicodedata
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from ragbag.core.errors import RagbagError
from ragbag.text.extract import PAGE_BREAK

Box = tuple[float, float, float, float]  # x0, y0, x1, y1: PDF user space, points, y up
PIECE = 32  # letters per piece when a passage is matched piece by piece
FOUND_SHARE = 0.6  # of a passage's letters, found piece by piece, for it to count as found
PDFIUM_LOCK = threading.RLock()


class TextNotFound(RagbagError):
    """The cited text is not where the index says (the file changed, or is another file now)."""

    def __init__(self, page: int, why: str = ""):
        self.page = page
        super().__init__(why or f"the cited text is not on page {page}")


@dataclass
class PageBoxes:
    """The rectangles a passage covers on one page: one per line of text it runs over."""

    page: int  # 1-based
    width: float  # the page's size in points
    height: float
    boxes: list[Box] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {
            "page": self.page,
            "width": round(self.width, 2),
            "height": round(self.height, 2),
            "boxes": [[round(v, 2) for v in b] for b in self.boxes],
        }


@contextmanager
def opened(path: str | Path) -> Iterator[Any]:
    """The PDF at ``path`` as a pdfium document, under the pdfium lock; a file pdfium cannot
    open is a one-line RagbagError."""
    import pypdfium2 as pdfium

    with PDFIUM_LOCK:
        try:
            doc = pdfium.PdfDocument(str(path))
        except pdfium.PdfiumError as e:
            raise RagbagError(f"{path}: cannot open the PDF ({' '.join(str(e).split())})") from None
        try:
            yield doc
        finally:
            doc.close()


def locate(doc: Any, text: str, page_start: int, ocr_lines: dict[str, list] | None = None) -> list[PageBoxes]:
    """The boxes of ``text`` (a chunk of the indexed text, form feeds between its pages) on the
    pages from ``page_start`` (1-based) on, one entry per page it has letters on. A page whose
    text OCR read (``ocr_lines``: page → [[text, x0, y0, x1, y1], ...], the document's
    ``ocr_lines`` metadata) has no text layer to search: the recognised lines the passage holds
    are its boxes. Call it inside ``opened``."""
    segments = text.split(PAGE_BREAK)
    out = []
    for i, segment in enumerate(segments):
        key = fold(segment)
        if not key:
            continue
        number = page_start + i
        if number > len(doc):
            raise TextNotFound(number, f"the cited page {number} is not in the file (it has {len(doc)})")
        page = doc[number - 1]
        recognised = (ocr_lines or {}).get(str(number))
        if recognised:
            width, height = page.get_size()
            page.close()
            boxes = recognised_boxes(key, recognised, width, height)
            if not boxes:
                raise TextNotFound(number)
            out.append(PageBoxes(number, width, height, boxes))
            continue
        textpage = page.get_textpage()
        try:
            chars, owners = page_key(textpage)
            # A passage running on to the next page ends at the bottom of this one; the rest of
            # a passage begun on the previous page starts at its top.
            last = i == 0 and len(segments) > 1
            ranges = find(key, chars, last=last)
            if ranges is None:
                raise TextNotFound(number)
            spans = [(owners[a], owners[b - 1]) for a, b in ranges]
            width, height = page.get_size()
            out.append(PageBoxes(number, width, height, line_boxes(textpage, spans)))
        finally:
            textpage.close()
            page.close()
    return out


def recognised_boxes(key: str, lines: list[list[Any]], width: float, height: float) -> list[Box]:
    """The boxes, in PDF points (y up), of the OCR lines whose letters the folded passage
    ``key`` holds; a line's box is kept as fractions of the page, y down (ragbag.text.ocr)."""
    out: list[Box] = []
    for text, x0, y0, x1, y1 in lines:
        line = fold(str(text))
        if len(line) >= 2 and line in key:
            out.append((x0 * width, (1 - y1) * height, x1 * width, (1 - y0) * height))
    return out


def fold(text: str) -> str:
    """What pypdf's and pdfium's text agree on: letters and digits, decomposed, lower-cased."""
    return "".join(_fold_char(c) for c in text)


@lru_cache(maxsize=4096)
def _fold_char(c: str) -> str:
    return "".join(x for x in unicodedata.normalize("NFKD", c).casefold() if x.isalnum())


def page_key(textpage: Any) -> tuple[str, list[int]]:
    """A page's folded text, and for each of its letters the pdfium character it came from."""
    import pypdfium2.raw as raw

    letters: list[str] = []
    owners: list[int] = []
    for i in range(textpage.count_chars()):
        code = raw.FPDFText_GetUnicode(textpage, i)
        try:
            folded = _fold_char(chr(code))
        except ValueError:  # not a code point
            continue
        letters.append(folded)
        owners.extend([i] * len(folded))
    return "".join(letters), owners


def find(key: str, page: str, last: bool = False) -> list[tuple[int, int]] | None:
    """Where ``key`` lies in ``page`` (both folded) as [start, end) ranges of ``page``: one when
    it is there whole (its last occurrence when ``last``), else the pieces found, when they
    make up most of it; None when it is not there."""
    at = page.rfind(key) if last else page.find(key)
    if at >= 0:
        return [(at, at + len(key))]
    if len(key) < 2 * PIECE:
        return None
    found: list[tuple[int, int]] = []
    hits = 0
    for s in range(0, len(key), PIECE):
        piece = key[s : s + PIECE]
        if len(piece) < PIECE // 2:  # a short tail could be anywhere
            break
        at = page.find(piece)
        if at >= 0:
            hits += len(piece)
            found.append((at, at + len(piece)))
    if hits < FOUND_SHARE * len(key):
        return None
    found.sort()
    merged = [found[0]]
    for a, b in found[1:]:
        if a - merged[-1][1] <= PIECE:  # a piece missed between two found ones: it lies between
            merged[-1] = (merged[-1][0], max(b, merged[-1][1]))
        else:
            merged.append((a, b))
    return merged


def line_boxes(textpage: Any, spans: list[tuple[int, int]]) -> list[Box]:
    """One rectangle per run of characters on one line, from pdfium character index ``a`` to
    ``b`` of each span (closing punctuation after ``b`` included). Boxes are the font's full
    height, so a line's rectangle is even and the lines of a paragraph abut."""
    import pypdfium2.raw as raw

    count = textpage.count_chars()
    rects: list[list[float]] = []
    for a, b in spans:
        while b + 1 < count and _is_punctuation(raw.FPDFText_GetUnicode(textpage, b + 1)):
            b += 1
        current: list[float] | None = None
        for i in range(a, b + 1):
            code = raw.FPDFText_GetUnicode(textpage, i)
            if code in (0x20, 0x0A, 0x0D, 0x09, 0xA0) or raw.FPDFText_IsGenerated(textpage, i) == 1:
                continue
            x0, y0, x1, y1 = textpage.get_charbox(i, loose=True)
            if x1 <= x0 or y1 <= y0:
                continue
            if current is not None and _same_line(current, (x0, y0, x1, y1)):
                current[0], current[1] = min(current[0], x0), min(current[1], y0)
                current[2], current[3] = max(current[2], x1), max(current[3], y1)
            else:
                current = [x0, y0, x1, y1]
                rects.append(current)
    return [(r[0], r[1], r[2], r[3]) for r in rects]


def _same_line(line: list[float], box: Box) -> bool:
    """Whether a character continues a line: level with it, and not far to its left (a new
    line) or far to its right (the next column)."""
    x0, y0, x1, y1 = box
    middle, height = (y0 + y1) / 2, y1 - y0
    return line[1] <= middle <= line[3] and line[2] - height <= x0 <= line[2] + 2 * height


def _is_punctuation(code: int) -> bool:
    try:
        return unicodedata.category(chr(code)).startswith("P")
    except ValueError:
        return False
