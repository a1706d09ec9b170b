"""Scanned PDF pages: a page whose text layer is empty is rendered and read by OCR.

A page with a usable text layer is never recognised: OCR is slower than extraction by three
orders of magnitude and worse on born-digital text. "Usable" is at least
:data:`MIN_LAYER_CHARS` letters or digits; scanners that add an invisible OCR layer of their
own pass that test, and their layer is kept. Pages are rendered by pdfium (under the process-wide
pdfium lock) at :data:`DPI`, scaled down so the longer side stays near the detector's input.
"""

from __future__ import annotations

from typing import Any

from ragbag.text.extract import PAGE_BREAK
from ragbag.text.ocr import MAX_SIDE, Cache
from ragbag.text.pdf_boxes import PDFIUM_LOCK

MIN_LAYER_CHARS = 16
DPI = 200  # a scan's usual resolution: smaller print stays legible, and the detector scales down anyway
MAX_OCR_PAGES = 300  # per document; the rest is reported (``meta["ocr_cut_at_page"]``)


def fill_scanned_pages(data: bytes, text: str, meta: dict[str, Any], cache: Cache) -> str:
    """``text`` (a PDF's pages joined by form feeds) with each page that has no text layer
    replaced by what OCR reads on it; ``meta`` gains ``ocr_pages`` (1-based) and ``ocr_lines``
    ({page: [[text, x0, y0, x1, y1], ...]}, boxes in fractions of the page, y down)."""
    from ragbag.text.images import lines_meta

    pages = text.split(PAGE_BREAK)
    blank = [i for i, page in enumerate(pages) if sum(c.isalnum() for c in page) < MIN_LAYER_CHARS]
    if not blank:
        return text
    if len(blank) > MAX_OCR_PAGES:
        meta["ocr_cut_at_page"] = blank[MAX_OCR_PAGES] + 1
        blank = blank[:MAX_OCR_PAGES]
    done: list[int] = []
    boxes: dict[str, list[list[Any]]] = {}
    for i, image in _rendered(data, blank):
        lines = cache.lines(image)
        if lines.lines:
            pages[i] = lines.text
            done.append(i + 1)
            boxes[str(i + 1)] = lines_meta(lines)
    if done:
        meta["ocr_pages"] = done
        meta["ocr_lines"] = boxes
    return PAGE_BREAK.join(pages)


def _rendered(data: bytes, indexes: list[int]) -> Any:
    """(index, PIL image) of each page, rendered one at a time so one page's pixels are held."""
    import pypdfium2 as pdfium

    for i in indexes:
        with PDFIUM_LOCK:
            doc = pdfium.PdfDocument(data)
            try:
                if i >= len(doc):
                    return
                page = doc[i]
                width, height = page.get_size()
                scale = min(DPI / 72, MAX_SIDE * 1.5 / max(width, height, 1))
                image = page.render(scale=scale).to_pil().convert("RGB")
            finally:
                doc.close()
        yield i, image
