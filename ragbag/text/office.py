"""Plain text from office documents and e-books: Word ``.docx``, PowerPoint ``.pptx``,
OpenDocument ``.odt``/``.odp``/``.ods``, and ``.epub``.

Each format is read by its established library (python-docx, python-pptx, odfpy), so styles,
fields, tables and numbering are their business. EPUB is the exception: it is a zip of XHTML
pages whose reading order the package file's spine names (EPUB 2 and 3 alike), and the one
maintained library for it (EbookLib) is AGPL-3.0; the pages go through the same HTML reader as
web pages (:func:`ragbag.text.extract.html_text`).

All of these are zips, and a zip is a decompression bomb waiting to happen: before any parser
opens one, the sizes its directory declares are checked against :data:`MAX_UNPACKED` (and the
ratio against :data:`MAX_RATIO`). A damaged file raises :class:`Unreadable` with the parser's
reason; the connector's isolation boundary reports it.
"""

from __future__ import annotations

import io
import posixpath
import zipfile
from xml.etree import ElementTree

from ragbag.text.extract import PAGE_BREAK, html_text
from ragbag.text.unreadable import Unreadable, human_size, one_line

MAX_UNPACKED = 256 * 1024 * 1024  # what a document's zip may declare in all
MAX_RATIO = 200  # unpacked ÷ packed: text compresses ~5-10×, bombs by thousands
FORMATS = {"docx": "docx", "pptx": "pptx", "odt": "odf", "odp": "odf", "ods": "odf", "epub": "epub"}


def office_text(data: bytes, ext: str, meta: dict) -> tuple[str, str]:
    """(title, text) of an office document or e-book; slides and spreadsheet sheets are joined
    by form feeds (``meta["pages"]``: their number) so chunks can cite them like PDF pages."""
    fmt = FORMATS[ext]
    archive = _archive(data)
    try:
        if fmt == "docx":
            return _docx(data)
        if fmt == "pptx":
            return _pptx(data, meta)
        if fmt == "odf":
            return _odf(data, meta)
        return _epub(archive)
    except Unreadable:
        raise
    except Exception as exc:  # noqa: BLE001 — the readers raise many kinds on damaged files
        raise Unreadable(f"unreadable {ext} file: {type(exc).__name__}: {one_line(exc)}") from None


def _archive(data: bytes) -> zipfile.ZipFile:
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, ValueError, EOFError) as exc:
        raise Unreadable(f"not a valid document (damaged zip): {one_line(exc)}") from None
    unpacked = sum(max(0, i.file_size) for i in archive.infolist())
    if unpacked > MAX_UNPACKED or unpacked > MAX_RATIO * max(len(data), 1) + (1 << 20):
        raise Unreadable(
            f"declares {human_size(unpacked)} unpacked from {human_size(len(data))}: a decompression bomb? skipped"
        )
    return archive


def _docx(data: bytes) -> tuple[str, str]:
    import docx

    document = docx.Document(io.BytesIO(data))
    blocks: list[str] = []
    for block in document.iter_inner_content():
        if isinstance(block, docx.table.Table):
            for row in block.rows:
                cells = _unique(c.text.strip() for c in row.cells)
                if any(cells):
                    blocks.append(" | ".join(cells))
            continue
        text = block.text.strip()
        if not text:
            continue
        style = (block.style.name if block.style is not None else "") or ""
        if style.startswith("Heading") and style[8:].strip().isdigit():
            text = "#" * min(6, int(style[8:].strip())) + " " + text
        elif style == "Title":
            text = "# " + text
        blocks.append(text)
    title = (document.core_properties.title or "").strip()
    return title, "\n\n".join(blocks) + "\n"


def _pptx(data: bytes, meta: dict) -> tuple[str, str]:
    import pptx

    deck = pptx.Presentation(io.BytesIO(data))
    slides = []
    for slide in deck.slides:
        parts = [text for shape in slide.shapes for text in _shape_texts(shape)]
        if slide.has_notes_slide and slide.notes_slide.notes_text_frame is not None:
            notes = slide.notes_slide.notes_text_frame.text.replace("\v", "\n").strip()
            if notes:
                parts.append(f"Notes: {notes}")
        slides.append("\n\n".join(p.replace(PAGE_BREAK, "\n") for p in parts))
    meta["pages"] = len(slides)
    return (deck.core_properties.title or "").strip(), PAGE_BREAK.join(slides)


def _shape_texts(shape) -> list[str]:
    """The text of a slide's shape: its text frame, a table's rows, a group's members in turn."""
    if getattr(shape, "shape_type", None) == 6:  # MSO_SHAPE_TYPE.GROUP: python-pptx does not descend
        return [text for member in shape.shapes for text in _shape_texts(member)]
    if getattr(shape, "has_text_frame", False) and shape.text_frame.text.strip():
        return [shape.text_frame.text.replace("\v", "\n").strip()]  # python-pptx writes a line break as \v
    if getattr(shape, "has_table", False):
        rows = [[c.text.replace("\v", " ").strip() for c in row.cells] for row in shape.table.rows]
        return [" | ".join(cells) for cells in rows if any(cells)]
    return []


def _odf(data: bytes, meta: dict) -> tuple[str, str]:
    from odf import teletype
    from odf.opendocument import load
    from odf.table import Table, TableCell, TableRow

    doc = load(io.BytesIO(data))
    sheets = doc.getElementsByType(Table) if doc.getMediaType().endswith("spreadsheet") else []
    if sheets:
        pages = []
        for sheet in sheets:  # a row a line, its cells apart (extractText runs them together)
            rows = [
                [teletype.extractText(c).strip() for c in row.getElementsByType(TableCell)]
                for row in sheet.getElementsByType(TableRow)
            ]
            pages.append("\n".join(" | ".join(c for c in cells if c) for cells in rows if any(cells)))
        meta["pages"] = len(pages)
        return "", PAGE_BREAK.join(pages)
    lines = []
    for element in _walk(doc.body):
        text = teletype.extractText(element).strip() if element.qname[1] in ("h", "p") else ""
        if text and element.qname[1] == "h":
            level = str(element.getAttribute("outlinelevel") or "1")
            text = "#" * min(6, int(level) if level.isdigit() else 1) + " " + text
        if text:
            lines.append(text)
    title = next((teletype.extractText(n).strip() for n in _walk(doc.meta) if n.qname[1] == "title"), "")
    return title, "\n\n".join(lines) + "\n"


def _walk(node):
    """Every element under ``node`` in document order; a paragraph's own children are not
    visited (its text is taken whole), so nested spans are not read twice."""
    stack = list(reversed(getattr(node, "childNodes", [])))
    while stack:
        element = stack.pop()
        if getattr(element, "nodeType", None) != 1:
            continue
        yield element
        if element.qname[1] not in ("h", "p"):
            stack.extend(reversed(element.childNodes))


_CONTAINER = "{urn:oasis:names:tc:opendocument:xmlns:container}"
_OPF = "{http://www.idpf.org/2007/opf}"
_DC = "{http://purl.org/dc/elements/1.1/}"


def _epub(archive: zipfile.ZipFile) -> tuple[str, str]:
    container = ElementTree.fromstring(archive.read("META-INF/container.xml"))
    rootfile = container.find(f".//{_CONTAINER}rootfile")
    if rootfile is None or not rootfile.get("full-path"):
        raise Unreadable("EPUB without a package file (META-INF/container.xml names none)")
    opf_path = rootfile.get("full-path", "")
    package = ElementTree.fromstring(archive.read(opf_path))
    base = posixpath.dirname(opf_path)
    items = {i.get("id"): i for i in package.iter(f"{_OPF}item")}
    chapters = []
    for ref in package.iter(f"{_OPF}itemref"):
        item = items.get(ref.get("idref"))
        if item is None or "html" not in (item.get("media-type") or ""):
            continue
        name = posixpath.normpath(posixpath.join(base, item.get("href", "")))
        try:
            page = archive.read(name)
        except KeyError:
            continue
        chapter = html_text(page.decode("utf-8", "replace"))[1].strip()
        if chapter:
            chapters.append(chapter)
    title_node = package.find(f".//{_DC}title")
    title = (title_node.text or "").strip() if title_node is not None else ""
    return title, "\n\n".join(chapters) + "\n"


def _unique(cells) -> list[str]:
    """A row's cells with horizontally merged cells (python-docx repeats them) read once."""
    out: list[str] = []
    for cell in cells:
        if not out or cell != out[-1]:
            out.append(cell)
    return out
