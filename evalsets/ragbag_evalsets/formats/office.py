"""Office files as their writers save them (python-docx, openpyxl; OpenDocument by hand), re-zipped
with one fixed member time and fixed document dates, so the clock never shows in their bytes."""

from __future__ import annotations

import io
import re
import zipfile
from html import escape
from typing import Any

from ragbag_evalsets.formats import FIXED


def _stable_zip(data: bytes) -> bytes:
    """The zip again, every member stamped with one fixed time (writers stamp the clock's)."""
    src = zipfile.ZipFile(io.BytesIO(data))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as dst:
        for info in src.infolist():
            fixed = zipfile.ZipInfo(info.filename, date_time=(2026, 1, 15, 9, 0, 0))
            fixed.compress_type = info.compress_type
            fixed.external_attr = info.external_attr
            body = src.read(info.filename)
            if info.filename in ("docProps/core.xml", "meta.xml"):
                body = _fixed_dates(body)
            dst.writestr(fixed, body)
    return buf.getvalue()


def _fixed_dates(xml: bytes) -> bytes:
    return re.sub(rb"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z?", b"2026-01-15T09:00:00Z", xml)


def docx_file(blocks: list[tuple[str, Any]], title: str, author: str) -> bytes:
    """A Word document from ("h1"|"h2"|"p", text) and ("table", rows) blocks."""
    import docx

    document = docx.Document()
    for kind, value in blocks:
        if kind == "table":
            table = document.add_table(rows=0, cols=len(value[0]))
            for row in value:
                cells = table.add_row().cells
                for cell, text in zip(cells, row):
                    cell.text = text
        elif kind in ("h1", "h2"):
            document.add_heading(value, level=int(kind[1]))
        else:
            document.add_paragraph(value)
    props = document.core_properties
    props.title, props.author, props.last_modified_by = title, author, author
    props.created = props.modified = FIXED.replace(tzinfo=None)
    props.revision = 1
    buf = io.BytesIO()
    document.save(buf)
    return _stable_zip(buf.getvalue())


def xlsx_file(sheets: list[tuple[str, list[list[Any]]]], author: str) -> bytes:
    import openpyxl

    book = openpyxl.Workbook()
    book.remove(book.active)
    for name, rows in sheets:
        sheet = book.create_sheet(name)
        for row in rows:
            sheet.append(row)
    book.properties.creator = book.properties.lastModifiedBy = author
    book.properties.created = book.properties.modified = FIXED.replace(tzinfo=None)
    buf = io.BytesIO()
    book.save(buf)
    return _stable_zip(buf.getvalue())


_ODF_NS = (
    'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
    'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" '
    'xmlns:meta="urn:oasis:names:tc:opendocument:xmlns:meta:1.0" '
    'xmlns:dc="http://purl.org/dc/elements/1.1/" office:version="1.2"'
)


def odt_file(blocks: list[tuple[str, str]], title: str) -> bytes:
    """An OpenDocument text as a minimal writer lays it out (mimetype stored first, manifest,
    content, meta). Written by hand: odfpy's writer declares more namespaces once a process has
    used it, so its bytes would depend on what ran before."""
    body = "".join(
        f'<text:h text:outline-level="1">{escape(t, quote=False)}</text:h>'
        if kind == "h1"
        else f"<text:p>{escape(t, quote=False)}</text:p>"
        for kind, t in blocks
    )
    head = "<?xml version='1.0' encoding='UTF-8'?>\n"
    members = [
        ("mimetype", "application/vnd.oasis.opendocument.text", zipfile.ZIP_STORED),
        (
            "META-INF/manifest.xml",
            head + '<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0" '
            'manifest:version="1.2">'
            '<manifest:file-entry manifest:full-path="/" '
            'manifest:media-type="application/vnd.oasis.opendocument.text"/>'
            '<manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml"/>'
            '<manifest:file-entry manifest:full-path="meta.xml" manifest:media-type="text/xml"/>'
            "</manifest:manifest>",
            zipfile.ZIP_DEFLATED,
        ),
        (
            "content.xml",
            head + f"<office:document-content {_ODF_NS}><office:body><office:text>{body}"
            "</office:text></office:body></office:document-content>",
            zipfile.ZIP_DEFLATED,
        ),
        (
            "meta.xml",
            head + f"<office:document-meta {_ODF_NS}><office:meta><dc:title>{escape(title, quote=False)}</dc:title>"
            "<meta:creation-date>2026-01-15T09:00:00</meta:creation-date></office:meta></office:document-meta>",
            zipfile.ZIP_DEFLATED,
        ),
    ]
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as archive:
        for name, text, method in members:
            info = zipfile.ZipInfo(name, date_time=(2026, 1, 15, 9, 0, 0))
            info.compress_type = method
            archive.writestr(info, text.encode("utf-8"))
    return buf.getvalue()
