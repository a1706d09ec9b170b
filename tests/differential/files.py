"""The files connector against an independent reading of office documents and e-books.

The reference opens each file as the zip it is and collects the text nodes of its document
parts with the standard library's XML parser: Word's ``w:t`` (document, headers aside),
PowerPoint's ``a:t`` in slides, OpenDocument's paragraphs and headings in ``content.xml``, and
the XHTML pages an EPUB's package spine names. It knows nothing of styles or layout, so the
comparison is on words: ragbag's text must hold at least ``COVERAGE`` of the reference's words,
and a file whose reference holds words must give a document (or be explained).
"""

from __future__ import annotations

import posixpath
import re
import zipfile
from pathlib import Path
from xml.etree import ElementTree

from tests.differential.common import PUBLIC, Outcome, ragbag_read, rel

CONNECTOR = "files"
COVERAGE = 0.9
_WORD = re.compile(r"\w+")
_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
_TEXT = "{urn:oasis:names:tc:opendocument:xmlns:text:1.0}"
_X = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
_OOXML_ESCAPE = re.compile(r"_x([0-9A-Fa-f]{4})_")
# RTF groups that hold no body text: font, colour and style tables, document info, pictures, fields' codes
_RTF_SKIP = re.compile(
    r"\\(\*|fonttbl|colortbl|stylesheet|info|pict|listtable|listoverridetable|fldinst|themedata)(?![a-z])"
)

EXPLAINED: dict[str, str] = {
    "public/files/epubcheck/src__test__resources__epub3__04-ocf__files__ocf-filename-duplicate-after-compatibility-normalization-valid.epub": (
        "the zip holds two names equal after Unicode normalisation; Python's zipfile (the reference's "
        "reader) refuses the duplicate member, ragbag's EPUB reading reads the spine's pages and gives the "
        "book's text (epubcheck calls the file valid)"
    ),
}
_BREAKS = {"tab", "br", "cr", "s", "line-break", "soft-page-break"}  # elements that stand for whitespace


def _text(element) -> str:
    """An element's text with its whitespace elements (tabs, breaks, ``text:s``) read as spaces."""
    out: list[str] = []

    def visit(node) -> None:
        if node.tag.rsplit("}", 1)[-1] in _BREAKS:
            out.append(" ")
        elif node.text:
            out.append(node.text)
        for child in node:
            visit(child)
            if child.tail:
                out.append(child.tail)

    visit(element)
    return "".join(out)


def units() -> list[Path]:
    return sorted(
        p for p in (PUBLIC / "files").rglob("*") if p.is_file() and p.name not in ("SOURCES.tsv", "README.md")
    )


def reference_words(path: Path) -> list[str] | None:
    """The words of the document's parts, or None when the file is no readable zip (then a
    reader can only report it)."""
    if path.suffix.lower() == ".rtf":
        return _rtf_words(path.read_bytes())
    try:
        archive = zipfile.ZipFile(path)
        names = archive.namelist()
        ext = path.suffix.lower().lstrip(".")
        texts: list[str] = []
        if ext == "docx":
            root = ElementTree.fromstring(archive.read("word/document.xml"))
            for para in root.iter(f"{_W}p"):
                texts.append(
                    "".join(
                        " " if t.tag.rsplit("}", 1)[-1] in _BREAKS else t.text or ""
                        for t in para.iter()
                        if t.tag in (f"{_W}t", f"{_W}tab", f"{_W}br")
                    )
                )
        elif ext == "pptx":
            for name in sorted(
                n for n in names if re.fullmatch(r"ppt/(slides/slide|notesSlides/notesSlide)\d+\.xml", n)
            ):
                for para in ElementTree.fromstring(archive.read(name)).iter(f"{_A}p"):
                    # runs and line breaks; fields (a:fld: slide numbers, dates) are layout, not text
                    texts.append(
                        "".join(
                            " " if n.tag == f"{_A}br" else n.findtext(f"{_A}t") or ""
                            for n in para
                            if n.tag in (f"{_A}r", f"{_A}br")
                        )
                    )
        elif ext in ("odt", "odp", "ods"):
            root = ElementTree.fromstring(archive.read("content.xml"))
            for tag in ("p", "h"):
                texts += [_text(e) for e in root.iter(f"{_TEXT}{tag}")]
        elif ext in ("xlsx", "xlsm"):  # the text cells; numbers and dates are formatted, not compared
            shared = []
            if "xl/sharedStrings.xml" in names:
                for si in ElementTree.fromstring(archive.read("xl/sharedStrings.xml")).iter(f"{_X}si"):
                    shared.append("".join(t.text or "" for t in si.iter(f"{_X}t") if "rPh" not in t.tag))
            for name in sorted(n for n in names if re.fullmatch(r"xl/worksheets/sheet\d+\.xml", n)):
                for cell in ElementTree.fromstring(archive.read(name)).iter(f"{_X}c"):
                    kind, value = cell.get("t"), cell.findtext(f"{_X}v")
                    if kind == "s" and value is not None:
                        texts.append(shared[int(value)])
                    elif kind == "inlineStr":
                        texts.append("".join(t.text or "" for t in cell.iter(f"{_X}t")))
                    elif kind in ("str", "e") and value:
                        texts.append(value)
            if any(
                c.findtext(f"{_X}v") or c.get("t") == "inlineStr"
                for n in names
                if re.fullmatch(r"xl/worksheets/sheet\d+\.xml", n)
                for c in ElementTree.fromstring(archive.read(n)).iter(f"{_X}c")
            ):  # ragbag heads each sheet with its name: the names count once a sheet holds a value
                book = ElementTree.fromstring(archive.read("xl/workbook.xml"))
                texts += [s.get("name") or "" for s in book.iter(f"{_X}sheet")]
            texts = [_OOXML_ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), t) for t in texts]
        elif ext == "epub":
            container = ElementTree.fromstring(archive.read("META-INF/container.xml"))
            opf = next(e.get("full-path") for e in container.iter() if e.tag.endswith("rootfile"))
            package = ElementTree.fromstring(archive.read(opf))
            items = {e.get("id"): e for e in package.iter() if e.tag.endswith("}item")}
            for ref in (e for e in package.iter() if e.tag.endswith("itemref")):
                item = items.get(ref.get("idref"))
                if item is None or "html" not in (item.get("media-type") or ""):
                    continue
                page = ElementTree.fromstring(
                    archive.read(posixpath.normpath(posixpath.join(posixpath.dirname(opf), item.get("href"))))
                )
                body = next((e for e in page.iter() if e.tag.endswith("body")), page)
                texts.append(" ".join(body.itertext()))
        return _WORD.findall(" ".join(texts).lower())
    except Exception:  # noqa: BLE001 — the reference only needs to say "unreadable"
        return None


def _rtf_words(data: bytes) -> list[str] | None:
    """An RTF file's words: groups of tables, info and pictures left out, ``\\'xx`` escapes decoded
    in the declared code page, ``\\uN`` as its character (and its fallback skipped), control words
    dropped."""
    source = data.decode("latin-1")
    if not source.lstrip("\ufeff \r\n").startswith("{\\rtf"):
        return None
    codepage = re.search(r"\\ansicpg(\d+)", source)
    encoding = f"cp{codepage.group(1)}" if codepage else "cp1252"
    pieces: list[str | bytes] = []
    depth, skip_at, fallback = 0, None, 0
    for token in re.finditer(r"\\'([0-9a-f]{2})|\\([a-z]+)(-?\d+)? ?|\\(.)|([{}])|([^\\{}\r\n])", source, re.I):
        hexa, word, number, symbol, brace, plain = token.groups()
        if brace == "{":
            depth += 1
            if skip_at is None and _RTF_SKIP.match(source, token.end()):
                skip_at = depth
        elif brace == "}":
            if skip_at == depth:
                skip_at = None
            depth -= 1
        elif skip_at is not None:
            continue
        elif fallback and (hexa or plain):  # the ANSI stand-in written after a \uN
            fallback -= 1
        elif hexa:
            pieces.append(bytes([int(hexa, 16)]))
        elif word == "u" and number:
            pieces.append(chr(int(number) % 65536))
            fallback = 1
        elif word in ("par", "line", "tab", "cell", "row", "sect", "page"):
            pieces.append(" ")
        elif plain or symbol in ("{", "}", "\\"):
            pieces.append(plain or symbol)
    text, pending = [], b""
    for piece in [*pieces, ""]:
        if isinstance(piece, bytes):
            pending += piece
            continue
        text.append(pending.decode(encoding, "replace") + piece)
        pending = b""
    return _WORD.findall("".join(text).lower())


def compare(path: Path) -> Outcome:
    docs, errors = ragbag_read(CONNECTOR, path)
    words = reference_words(path)
    out = Outcome(rel(path), path.parent.name, int(bool(words)), len(docs), len(errors))
    if words is None:
        out.checks["count"] = (int(not docs and bool(errors)), 1)
        if docs or not errors:
            out.disagreements.append("reference cannot open the file; ragbag should report it")
        return out
    want = 1 if words else 0
    got = len(docs)
    out.checks["count"] = (int(got == want and bool(got or errors)), 1)
    if got != want:
        out.disagreements.append(
            f"reference holds {len(words)} words, ragbag gave {got} documents: {[e.error for e in errors]}"
        )
    if docs and words:
        have = set(_WORD.findall((docs[0].title + " " + docs[0].text).lower()))
        share = sum(w in have for w in words) / len(words)
        out.checks["text"] = (int(share >= COVERAGE), 1)
        if share < COVERAGE:
            out.disagreements.append(f"ragbag's text holds {share:.0%} of the reference's words")
    return out
