"""Documents from a folder of files: markdown, plain text, HTML and PDF.

Every file becomes one Document whose text is what a reader sees: HTML loses its navigation and
scripts, a PDF's pages are joined with form feeds so chunks can cite the pages they come from.
A file that cannot be read is reported as a ReadError and the walk goes on; so is a link leaving
the folder, a FIFO or a device, which are not read (see :mod:`connectors._walk`).
"""

from __future__ import annotations

import codecs
import io
import re
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

import charset_normalizer
from bs4 import BeautifulSoup, Comment, NavigableString

from ragbag.connectors._walk import Entry, follows_outside
from ragbag.connectors._walk import walk as walk_tree
from ragbag.core.records import Document, ReadError, Span
from ragbag.text.chunking import TokenCounter, pack, prose_spans

NAME = "files"
MAX_BYTES = 50 * 1024 * 1024
FORMATS = {
    "md": "markdown", "markdown": "markdown",
    "txt": "text", "text": "text", "rst": "text",
    "html": "html", "htm": "html",
    "pdf": "pdf",
}  # fmt: skip
PAGE_BREAK = "\f"
_DROP_TAGS = ["script", "style", "nav", "header", "footer", "aside", "noscript", "form", "svg", "template", "iframe"]
_BLOCK_TAGS = [
    "p",
    "div",
    "section",
    "article",
    "main",
    "li",
    "ul",
    "ol",
    "dl",
    "dt",
    "dd",
    "table",
    "tr",
    "blockquote",
    "pre",
    "figure",
    "figcaption",
    "hr",
    "details",
]
_MD_TITLE = re.compile(r"^(?:#[ \t]+(.+?)[ \t#]*|(\S.*?)[ \t]*\n=+[ \t]*)$", re.M)
_MD_FENCE = re.compile(r"^(```|~~~).*?^\1", re.M | re.S)


class Unreadable(Exception):
    """A file that cannot be turned into text; the message is the one-line reason reported."""


def human_size(n: int) -> str:
    """'50 MB' for the limits in messages, exact bytes when the limit is not a round size."""
    for unit, scale in (("MB", 2**20), ("KB", 2**10)):
        if n >= scale and n % scale == 0:
            return f"{n // scale} {unit}"
    return f"{n} bytes"


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
        for file, rel in walk(path, errors, wanted, follow_outside=follows_outside(options)):
            yield _read_file(file, rel, source)
        yield from errors
    else:
        yield ReadError(str(path.absolute()), "no such file or directory")


def walk(
    root: Path,
    errors: list[ReadError] | None = None,
    wanted: Callable[[str], bool] | None = None,
    follow_outside: bool = False,
) -> list[tuple[Path, str]]:
    """(file, relative posix path) for every non-hidden file whose name ``wanted`` accepts,
    hidden folders pruned, sorted; folders that cannot be listed and links or special files not
    read go to ``errors`` (links leaving ``root`` are followed only with ``follow_outside``:
    see :mod:`connectors._walk`)."""

    def keep(entry: Entry) -> bool:
        return not entry.name.startswith(".") and (entry.is_dir or wanted is None or wanted(entry.name))

    return walk_tree(root, errors, keep=keep, follow_outside=follow_outside)


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
        title, text = _pdf(data, meta) if fmt == "pdf" else _text_file(data, fmt, meta)
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


# How much more chaotic than a sibling single-byte guess cp1252 may read and still be chosen.
WESTERN_CHAOS_MARGIN = 0.05
_MULTIBYTE = ("gb", "big5", "shift_jis", "cp932", "cp949", "cp950", "euc", "iso2022", "hz", "johab", "utf")


def _multibyte(encoding: str) -> bool:
    return encoding.lower().replace("-", "_").startswith(_MULTIBYTE)


def _mostly_utf8(data: bytes) -> str | None:
    """The text, when a file is UTF-8 but for a few stray bytes (a pasted fragment, a cut-off
    character): read as cp1252 every valid '€' would become 'â‚¬'. Valid multi-byte sequences
    almost never occur by chance in legacy single-byte text, so at least four of them per
    invalid byte says UTF-8; the invalid bytes become U+FFFD."""
    text = data.decode("utf-8", errors="replace")
    bad = text.count("\ufffd") - data.count("\ufffd".encode())
    multibyte = sum(1 for ch in text if ord(ch) > 0x7F and ch != "\ufffd")
    return text if multibyte >= 4 * max(1, bad) else None


def decode(data: bytes) -> tuple[str, str]:
    """(text, encoding). UTF-8 first (also when only a few bytes are invalid); then the detector, which on short Western text often
    guesses a sibling code page (cp1250, cp932, cp775...), so cp1252 wins whenever it is no more
    chaotic."""
    for bom, enc in ((codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16")):
        if data.startswith(bom):
            try:
                return data.decode(enc), enc
            except UnicodeDecodeError:
                raise Unreadable(f"invalid {enc} text") from None
    if b"\0" in data[:8192]:
        raise Unreadable("binary file (NUL bytes)")
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        pass
    mostly = _mostly_utf8(data)
    if mostly is not None:
        return mostly, "utf-8"
    best = charset_normalizer.from_bytes(data).best()
    western = charset_normalizer.from_bytes(data, cp_isolation=["cp1252"]).best()
    # Coherence is unreliable on a few short words ("Café" read as cp775 "Cafķ" scored higher),
    # and chaos too: a German note with – € ä ü read as cp775 scored 0.0 against cp1252's 0.014.
    # So cp1252, by far the most common legacy encoding, beats another single-byte code page
    # unless it is clearly more chaotic; a multi-byte guess (GBK, Shift-JIS…) must win outright.
    if western is not None and (
        best is None
        or western.chaos <= best.chaos
        or (not _multibyte(best.encoding) and western.chaos <= best.chaos + WESTERN_CHAOS_MARGIN)
    ):
        best = western
    if best is None:
        raise Unreadable("undecodable text (binary?)")
    return str(best), best.encoding


def html_text(html: str) -> tuple[str, str]:
    """(title, main text) of a page: headings become '#' lines so prose chunking cuts at them."""
    soup = BeautifulSoup(html, "html.parser")
    title = soup.title.get_text(" ", strip=True) if soup.title else ""
    for tag in soup.find_all(_DROP_TAGS + ["title", "head"]):
        if _is_noise(tag):
            tag.decompose()
    for comment in soup.find_all(string=lambda s: isinstance(s, Comment)):
        comment.extract()
    articles = soup.find_all("article")
    root = soup.find("main") or (articles[0] if len(articles) == 1 else None) or soup.body or soup
    for node in root.find_all(string=True):
        if not node.find_parent("pre"):
            node.replace_with(NavigableString(re.sub(r"\s+", " ", str(node))))
    for tag in root.find_all(["h1", "h2", "h3", "h4", "h5", "h6"]):
        heading = tag.get_text(" ", strip=True)
        if not title and tag.name == "h1":
            title = heading
        tag.replace_with(f"\n\n{'#' * int(tag.name[1])} {heading}\n\n" if heading else "")
    for tag in root.find_all("br"):
        tag.replace_with("\n")
    for tag in root.find_all(_BLOCK_TAGS):
        tag.insert_before("\n\n")
        tag.insert_after("\n\n")
    text = re.sub(r"[ \t]*\n\n[ \t]*", "\n\n", root.get_text())
    text = re.sub(r"[ \t]+\n", "\n", text)
    return title, re.sub(r"\n{3,}", "\n\n", text).strip() + "\n"


def _is_noise(tag) -> bool:
    """Page furniture, unless it wraps the content itself (ASP.NET puts the whole body in a
    <form>) or belongs to it (an article's own <header> holds its title)."""
    if tag.decomposed or tag.find(["main", "article"]):
        return False
    if tag.name in ("header", "footer") and tag.find_parent(["main", "article"]):
        return False
    return tag.name != "form" or not tag.find(["p", "h1", "h2"])


def _pdf(data: bytes, meta: dict) -> tuple[str, str]:
    """(title, text) of a PDF, one form feed between pages; any parser failure is 'unreadable'."""
    from pypdf import PdfReader

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise Unreadable("encrypted PDF")
        pages = [(p.extract_text() or "").replace(PAGE_BREAK, "\n") for p in reader.pages]
        title = str((reader.metadata or {}).get("/Title") or "").strip()
    except Unreadable:
        raise
    except Exception as exc:  # pypdf raises many kinds on damaged files
        reason = " ".join(str(exc).split())[:200] or type(exc).__name__
        raise Unreadable(f"unreadable PDF: {reason}") from None
    meta["pages"] = len(pages)
    return title, PAGE_BREAK.join(pages)
