"""Documents from a folder of files: markdown, plain text, HTML, PDF, Word ``.docx``, PowerPoint
``.pptx``, OpenDocument ``.odt``/``.odp``/``.ods`` and ``.epub``.

Every file becomes one Document whose text is what a reader sees: HTML loses its navigation and
scripts, a PDF's pages (and a deck's slides, a spreadsheet's sheets) are joined with form feeds
so chunks can cite the pages they come from (:mod:`ragbag.text.office` for the office formats).
Each file is read inside the isolation boundary (:mod:`connectors._isolate`): whatever one file
does to its parser is a ReadError for that file and the walk goes on; so is a link leaving the
folder, a FIFO or a device, which are not read (see :mod:`connectors._walk`). Documents in
formats no reader here handles (``.doc``, ``.rtf``, ``.xlsx``, ``.pages``, ...) are named in the
report as unsupported rather than skipped in silence. A file time no calendar holds (an mtime in
the year 14645) costs the file its date, not the file.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from pathlib import Path

from ragbag.connectors._isolate import each_file
from ragbag.connectors._walk import follows_outside, visible_files
from ragbag.core.dates import from_timestamp
from ragbag.core.records import Document, ReadError, Span
from ragbag.text.chunking import TokenCounter, pack, prose_spans
from ragbag.text.decode import decode
from ragbag.text.extract import PAGE_BREAK, html_text, pdf_text
from ragbag.text.markdown import markdown_title
from ragbag.text.office import office_text
from ragbag.text.unreadable import Unreadable, human_size

NAME = "files"
MAX_BYTES = 50 * 1024 * 1024
FORMATS = {
    "md": "markdown", "markdown": "markdown",
    "txt": "text", "text": "text", "rst": "text",
    "html": "html", "htm": "html",
    "pdf": "pdf",
    "docx": "docx", "pptx": "pptx", "odt": "odf", "odp": "odf", "ods": "odf", "epub": "epub",
}  # fmt: skip
_PAGED = {"pdf", "pptx", "odf"}  # formats whose text holds form feeds between pages, slides or sheets
# Documents people keep in such folders that no reader here handles: reported, never silent.
UNSUPPORTED = {
    "doc": "Word 97-2003", "rtf": "Rich Text", "xls": "Excel 97-2003", "xlsx": "Excel", "ppt": "PowerPoint 97-2003",
    "pages": "Apple Pages", "key": "Apple Keynote", "numbers": "Apple Numbers", "mobi": "Mobipocket",
    "azw": "Kindle", "azw3": "Kindle", "djvu": "DjVu", "xps": "XPS", "wpd": "WordPerfect",
}  # fmt: skip


def read(
    path: Path, source: str, cursor: dict | None = None, options: dict | None = None
) -> Iterator[Document | ReadError]:
    """Every supported file under ``path`` (or ``path`` itself), in sorted relative-path order.
    ``options``: the source's options (None: those in ``sources.yaml``), see :mod:`connectors._walk`."""
    path = Path(path)
    if path.is_file():
        if _ext(path) not in FORMATS:
            yield ReadError(str(path.absolute()), f"unsupported file type: {path.name}")
            return
        yield from each_file(str(path.absolute()), partial(_read_file, path, path.name, source))
    elif path.is_dir():
        errors: list[ReadError] = []
        wanted = lambda name: _ext(Path(name)) in FORMATS or _ext(Path(name)) in UNSUPPORTED  # noqa: E731
        for file, rel in visible_files(path, errors, wanted, follow_outside=follows_outside(options)):
            uri = str(file.absolute())
            if _ext(file) in UNSUPPORTED:
                yield ReadError(uri, f"unsupported format: {UNSUPPORTED[_ext(file)]} (.{_ext(file)}) is not read")
                continue
            yield from each_file(uri, partial(_read_file, file, rel, source))
        yield from errors
    else:
        yield ReadError(str(path.absolute()), "no such file or directory")


def spans(doc: Document, count: TokenCounter, max_tokens: int) -> list[Span]:
    """Prose chunks; a PDF's chunks also carry the 1-based pages they span."""
    if doc.metadata.get("format") not in _PAGED:
        return prose_spans(doc.text, count, max_tokens)
    return _pdf_spans(doc.text, count, max_tokens)


def _pdf_spans(text: str, count: TokenCounter, max_tokens: int) -> list[Span]:
    """Cut each page on its own first, so a page break never sits at a chunk's edge, then let
    short neighbouring pages share a chunk (slides would otherwise give tiny chunks)."""
    pieces, offset = [], 0
    for page in text.split(PAGE_BREAK):
        pieces += [(offset + s.start, offset + s.end) for s in prose_spans(page, count, max_tokens)]
        offset += len(page) + 1
    out = pack(text, pieces, count, max_tokens)
    for span in out:
        span.metadata["page_start"] = text.count(PAGE_BREAK, 0, span.start) + 1
        span.metadata["page_end"] = text.count(PAGE_BREAK, 0, span.end) + 1
    return out


def _ext(path: Path) -> str:
    return path.suffix.lower().lstrip(".")


def _read_file(file: Path, rel: str, source: str) -> Iterator[Document | ReadError]:
    """The file's document; an unreadable one is a ReadError (its reason written for users)."""
    uri = str(file.absolute())
    try:
        stat = file.stat()
        if stat.st_size > MAX_BYTES:
            raise Unreadable(f"larger than {human_size(MAX_BYTES)} ({stat.st_size} bytes), skipped")
        if stat.st_size == 0:
            raise Unreadable("empty file")
        data = file.read_bytes()
        fmt = FORMATS[_ext(file)]
        meta: dict = {"path": rel, "ext": _ext(file), "format": fmt, "size": stat.st_size}
        if fmt == "pdf":
            title, text = pdf_text(data, meta)
        elif fmt in ("html", "markdown", "text"):
            title, text = _text_file(data, fmt, meta)
        else:
            title, text = office_text(data, _ext(file), meta)
        if not text.replace(PAGE_BREAK, "").strip():
            blank = "no text (scanned PDF?)" if fmt == "pdf" else "empty file (whitespace only)"
            raise Unreadable(blank if fmt in ("pdf", "html", "markdown", "text") else "no text in the document")
    except Unreadable as exc:
        yield ReadError(uri, str(exc))
        return
    except OSError as exc:
        yield ReadError(uri, f"unreadable: {exc.strerror or exc}")
        return
    yield Document(
        source=source,
        connector=NAME,
        native_id=rel,
        uri=uri,
        title=title or file.name,
        text=text,
        updated_at=from_timestamp(stat.st_mtime),
        metadata=meta,
    )
    if "cut_at_page" in meta:
        yield ReadError(uri, f"text cut on page {meta['cut_at_page']}: the PDF draws more text than one record holds")


def _text_file(data: bytes, fmt: str, meta: dict) -> tuple[str, str]:
    """(title, text) of a markdown, plain-text or HTML file; an empty title means 'use the name'."""
    text, meta["encoding"] = decode(data)
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if fmt == "html":
        return html_text(text)
    if fmt == "markdown":
        return markdown_title(text), text
    return "", text
