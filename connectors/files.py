"""Documents from a folder of files: markdown, plain text, HTML and PDF.

Every file becomes one Document whose text is what a reader sees: HTML loses its navigation and
scripts, a PDF's pages are joined with form feeds so chunks can cite the pages they come from.
A file that cannot be read is reported as a ReadError and the walk goes on; so is a link leaving
the folder, a FIFO or a device, which are not read (see :mod:`connectors._walk`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

from ragbag.connectors._walk import follows_outside, visible_files
from ragbag.core.records import Document, ReadError, Span
from ragbag.text.chunking import TokenCounter, pack, prose_spans
from ragbag.text.decode import decode
from ragbag.text.extract import PAGE_BREAK, html_text, pdf_text
from ragbag.text.unreadable import Unreadable, human_size

NAME = "files"
MAX_BYTES = 50 * 1024 * 1024
FORMATS = {
    "md": "markdown", "markdown": "markdown",
    "txt": "text", "text": "text", "rst": "text",
    "html": "html", "htm": "html",
    "pdf": "pdf",
}  # fmt: skip
_MD_TITLE = re.compile(r"^(?:#[ \t]+(.+?)[ \t#]*|(\S.*?)[ \t]*\n=+[ \t]*)$", re.M)
_MD_FENCE = re.compile(r"^(```|~~~).*?^\1", re.M | re.S)


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
        yield _read_file(path, path.name, source)
    elif path.is_dir():
        errors: list[ReadError] = []
        wanted = lambda name: _ext(Path(name)) in FORMATS  # noqa: E731
        for file, rel in visible_files(path, errors, wanted, follow_outside=follows_outside(options)):
            yield _read_file(file, rel, source)
        yield from errors
    else:
        yield ReadError(str(path.absolute()), "no such file or directory")


def spans(doc: Document, count: TokenCounter, max_tokens: int) -> list[Span]:
    """Prose chunks; a PDF's chunks also carry the 1-based pages they span."""
    if doc.metadata.get("format") != "pdf":
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


def _read_file(file: Path, rel: str, source: str) -> Document | ReadError:
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
        title, text = pdf_text(data, meta) if fmt == "pdf" else _text_file(data, fmt, meta)
        if not text.replace(PAGE_BREAK, "").strip():
            blank = "no text (scanned PDF?)" if fmt == "pdf" else "empty file (whitespace only)"
            raise Unreadable(blank)
    except Unreadable as exc:
        return ReadError(uri, str(exc))
    except OSError as exc:
        return ReadError(uri, f"unreadable: {exc.strerror or exc}")
    return Document(
        source=source,
        connector=NAME,
        native_id=rel,
        uri=uri,
        title=title or file.name,
        text=text,
        updated_at=datetime.fromtimestamp(stat.st_mtime, tz=UTC),
        metadata=meta,
    )


def _text_file(data: bytes, fmt: str, meta: dict) -> tuple[str, str]:
    """(title, text) of a markdown, plain-text or HTML file; an empty title means 'use the name'."""
    text, meta["encoding"] = decode(data)
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if fmt == "html":
        return html_text(text)
    if fmt == "markdown":  # the first level-1 heading, never a shell comment in a code block
        m = _MD_TITLE.search(_MD_FENCE.sub("", text))
        return (m.group(1) or m.group(2) if m else ""), text
    return "", text
