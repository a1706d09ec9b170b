"""Plain text from office documents and e-books: Word ``.docx``, PowerPoint ``.pptx``, Excel
``.xlsx``/``.xlsm``, OpenDocument ``.odt``/``.odp``/``.ods``, Rich Text ``.rtf``, and ``.epub``.

Each format is read by its established library (python-docx, python-pptx, openpyxl, odfpy,
striprtf), so styles, fields, tables and numbering are their business. Workbooks and RTF were
added with libraries chosen for being maintained, pure Python and permissively licensed:

- openpyxl (MIT) is the reference reader of Office Open XML workbooks. Its read-only mode
  streams a sheet row by row; each sheet becomes a text table (``Sheet: <name>``, then a
  non-empty row a line, its cells apart by `` | ``, dates in ISO 8601 with a space before the
  time), bounded by :data:`MAX_SHEET_ROWS` and :data:`MAX_SHEET_COLS`; a sheet a bound cuts
  short is named in ``meta["cut"]``. Cached formula results are read, never formulas. Strict OOXML (rare; openpyxl
  finds no sheets in it) and encrypted workbooks are reported, not guessed at.
- striprtf (BSD-3-Clause) turns RTF into text, decoding ``\\'xx`` escapes by the document's
  ``\\ansicpg`` code page (or a font's charset) and ``\\u`` escapes. RTF is 7-bit by the
  specification; bytes above 127 that writers leave anyway are taken in that code page too
  (cp1252 when none is declared, Latin-1 where the code page has no character for a byte).

EPUB is the exception: it is a zip of XHTML pages whose reading order the package file's spine
names (EPUB 2 and 3 alike), and the one maintained library for it (EbookLib) is AGPL-3.0; the
pages go through the same HTML reader as web pages (:func:`ragbag.text.extract.html_text`).

All of these but RTF are zips, and a zip is a decompression bomb waiting to happen: before any
parser opens one, the sizes its directory declares are checked against :data:`MAX_UNPACKED`
(and the ratio against :data:`MAX_RATIO`). A damaged file raises :class:`Unreadable` with the
parser's reason; the connector's isolation boundary reports it.
"""

from __future__ import annotations

import codecs
import datetime
import io
import posixpath
import re
import warnings
import zipfile
from xml.etree import ElementTree

from ragbag.text.extract import PAGE_BREAK, html_text
from ragbag.text.unreadable import Unreadable, human_size, one_line

MAX_UNPACKED = 256 * 1024 * 1024  # what a document's zip may declare in all
MAX_RATIO = 200  # unpacked ÷ packed: text compresses ~5-10×, bombs by thousands
MAX_SHEET_ROWS = 10_000  # rows read per sheet: a table past that is data, not a document
MAX_SHEET_COLS = 200  # columns read per row
FORMATS = {
    "docx": "docx", "pptx": "pptx", "xlsx": "xlsx", "xlsm": "xlsx",
    "odt": "odf", "odp": "odf", "ods": "odf", "epub": "epub", "rtf": "rtf",
}  # fmt: skip


def office_text(data: bytes, ext: str, meta: dict) -> tuple[str, str]:
    """(title, text) of an office document or e-book; slides and spreadsheet sheets are joined
    by form feeds (``meta["pages"]``: their number) so chunks can cite them like PDF pages. An
    empty title means "use the file's name"; a sheet read only in part is named in ``meta["cut"]``."""
    fmt = FORMATS[ext]
    try:
        if fmt == "rtf":
            return _rtf(data)
        archive = _archive(data)
        if fmt == "xlsx":
            return _xlsx(data, archive, meta)
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
    # An OLE2 compound file: what Office's encryption wraps the zip in (or a 97-2003 file renamed).
    if data.startswith(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"):
        raise Unreadable("not a zip but an OLE2 file: password-protected, or a 97-2003 document renamed")
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


def _xlsx(data: bytes, archive: zipfile.ZipFile, meta: dict) -> tuple[str, str]:
    import openpyxl

    with warnings.catch_warnings():  # "extension is not supported", "no default style": nothing to act on
        warnings.simplefilter("ignore", UserWarning)
        book = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True, keep_links=False)
        try:
            if not book.worksheets and _strict(archive):
                raise Unreadable(
                    "a Strict Open XML workbook (ISO/IEC 29500 Strict): openpyxl reads the transitional form"
                )
            sheets, cuts, filled = [], [], False
            for sheet in book.worksheets:  # chart sheets hold no cells
                lines, cut = _sheet_lines(sheet)
                sheets.append("\n".join([f"Sheet: {' '.join(sheet.title.split())}", *lines]))
                filled = filled or bool(lines)
                if cut:
                    cuts.append(f"sheet {sheet.title!r} cut at {cut}")
            title = " ".join((book.properties.title or "").split())
        finally:
            book.close()
    meta["pages"] = len(sheets)
    if cuts:
        meta["cut"] = "; ".join(cuts)
    title = "" if title.lower() in _PLACEHOLDER_TITLES else title
    return title, PAGE_BREAK.join(sheets) if filled else ""


def _strict(archive: zipfile.ZipFile) -> bool:
    """Whether the workbook is Strict OOXML, whose namespaces openpyxl does not know (it finds no sheets)."""
    parts = [n for n in archive.namelist() if n.endswith("workbook.xml")][:1]
    return any(b"purl.oclc.org/ooxml/spreadsheetml" in archive.read(n) for n in parts)


_PLACEHOLDER_TITLES = {"", "untitled", "title", "sheet1", "book1", "workbook", "microsoft excel", "excel"}


def _sheet_lines(sheet) -> tuple[list[str], str]:
    """A sheet's non-empty rows as lines, and where it was cut ("" when read whole). The size the
    sheet declares is not trusted (writers get it wrong, and openpyxl would stop there): rows are
    streamed to :data:`MAX_SHEET_ROWS`, then up as many more are looked through for a value."""
    sheet.reset_dimensions()
    lines: list[str] = []
    cut = ""
    for number, row in enumerate(sheet.iter_rows(values_only=True), 1):
        if number > MAX_SHEET_ROWS:
            if any(_cell_text(v) for v in row):
                cut = f"row {MAX_SHEET_ROWS}"
                break
            if number >= 2 * MAX_SHEET_ROWS:
                break
            continue
        if not cut and any(_cell_text(v) for v in row[MAX_SHEET_COLS:]):
            cut = f"column {MAX_SHEET_COLS}"
        cells = [_cell_text(v) for v in row[:MAX_SHEET_COLS]]
        while cells and not cells[-1]:
            cells.pop()
        if cells:
            lines.append(" | ".join(cells))
    return lines, cut


def _cell_text(value) -> str:
    """A cell's value as its text on one line: dates ISO, integral numbers without ``.0``."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    if isinstance(value, datetime.datetime):
        if value.time() == datetime.time(0):
            return value.date().isoformat()
        return value.isoformat(sep=" ")
    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, str) and "_x" in value:  # OOXML writes control characters as _x000D_
        value = _OOXML_ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), value)
    return " ".join(str(value).split())


_OOXML_ESCAPE = re.compile(r"_x([0-9A-Fa-f]{4})_")


_CODEPAGE = re.compile(rb"\\ansicpg(\d{1,5})")


def _rtf(data: bytes) -> tuple[str, str]:
    from striprtf.striprtf import rtf_to_text

    data = data.removeprefix(b"\xef\xbb\xbf").lstrip()
    if not data.startswith(b"{\\rtf"):
        raise Unreadable(f"not an RTF file (it starts {one_line(repr(data[:12]))}, not {{\\rtf)")
    declared = _CODEPAGE.search(data[:4096])
    codepage = "cp1252"
    if declared:
        try:
            codepage = codecs.lookup(f"cp{int(declared.group(1))}").name
        except LookupError:
            pass
    try:
        source = data.decode("ascii")
    except UnicodeDecodeError:  # bytes > 127 where the specification wants \'xx escapes
        try:
            source = data.decode(codepage)
        except UnicodeDecodeError:
            source = data.decode("latin-1")
    text = rtf_to_text(source, encoding=codepage, errors="replace")
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    text = re.sub(r"\n{3,}", "\n\n", "\n".join(lines).replace(PAGE_BREAK, "\n")).strip()
    title = _rtf_group(_rtf_group(source, "info"), "title")  # {\info{\title ...}}: striprtf skips both
    if title:
        title = " ".join(rtf_to_text("{\\rtf1 " + title + "}", encoding=codepage, errors="replace").split())
    return title, text + "\n" if text else ""


def _rtf_group(source: str, word: str) -> str:
    """The content of the first ``{\\word ...}`` group (its braces balanced, escapes kept; a
    group left open, or longer than 64 KB, is not read)."""
    found = re.search(r"\{\\" + word + r"(?![a-z])", source)
    if not found:
        return ""
    depth, i = 1, found.end()
    while i < min(len(source), found.end() + 65536):
        ch = source[i]
        if ch == "\\":
            i += 2
            continue
        depth += {"{": 1, "}": -1}.get(ch, 0)
        if depth == 0:
            return source[found.end() : i].strip()
        i += 1
    return ""


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
