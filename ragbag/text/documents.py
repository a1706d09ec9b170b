"""One file's bytes to (title, text), whatever the format: the one dispatch a folder's files and a
mail's attachments share, so a PDF attached to a mail reads exactly as the same PDF in a folder.

Formats are named by extension (:data:`FORMATS`); an attachment whose name has none (or a
misleading one) is named by its MIME type (:func:`extension_for`). Formats that no reader
here handles are in :data:`UNSUPPORTED`, so callers name them in the report rather than drop them.
``ocr`` is the source's OCR cache, or None when the source reads no pictures (``--no-ocr``):
then images are described by their photo facts only and scanned pages stay blank; ``speech`` the
same cache for recordings (:mod:`ragbag.text.speech`), None when they are not transcribed
(``--no-speech``).
"""

from __future__ import annotations

import mimetypes
from typing import Any

from ragbag.text.decode import decode
from ragbag.text.extract import PAGE_BREAK, html_text, pdf_text
from ragbag.text.images import FORMATS as IMAGE_FORMATS
from ragbag.text.images import image_text
from ragbag.text.markdown import markdown_title
from ragbag.text.ocr import Cache
from ragbag.text.office import FORMATS as OFFICE_FORMATS
from ragbag.text.office import office_text
from ragbag.text.scans import fill_scanned_pages
from ragbag.text.speech import FORMATS as AUDIO_FORMATS
from ragbag.text.speech import audio_text
from ragbag.text.unreadable import Unreadable

FORMATS: dict[str, str] = {
    "md": "markdown", "markdown": "markdown",
    "txt": "text", "text": "text", "rst": "text", "csv": "text",
    "html": "html", "htm": "html",
    "pdf": "pdf",
    **{ext: fmt for ext, fmt in OFFICE_FORMATS.items()},
    **{ext: "image" for ext in IMAGE_FORMATS},
    **{ext: "audio" for ext in AUDIO_FORMATS},
}  # fmt: skip
PAGED = {"pdf", "pptx", "odf", "xlsx"}  # formats whose text holds form feeds between pages, slides or sheets
UNSUPPORTED = {
    "doc": "Word 97-2003", "xls": "Excel 97-2003", "ppt": "PowerPoint 97-2003",
    "pages": "Apple Pages", "key": "Apple Keynote", "numbers": "Apple Numbers", "mobi": "Mobipocket",
    "azw": "Kindle", "azw3": "Kindle", "djvu": "DjVu", "xps": "XPS", "wpd": "WordPerfect",
    "heic": "HEIC photo", "heif": "HEIF photo",
}  # fmt: skip
_MIME = {  # types mimetypes does not map, or maps to an extension the readers do not use
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
    "application/vnd.openxmlformats-officedocument.presentationml.presentation": "pptx",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "xlsx",
    "application/vnd.oasis.opendocument.text": "odt",
    "application/rtf": "rtf", "text/rtf": "rtf",
    "application/epub+zip": "epub",
    "image/jpeg": "jpg", "image/jpg": "jpg", "image/pjpeg": "jpg", "image/tiff": "tiff",
    "text/plain": "txt", "text/markdown": "md", "text/html": "html", "text/csv": "csv",
    "application/msword": "doc", "application/vnd.ms-excel": "xls", "image/heic": "heic",
}  # fmt: skip


_PLAIN_EXTS = {
    "c", "h", "cc", "cpp", "py", "js", "ts", "java", "go", "rs", "rb", "sh", "sql", "patch", "diff", "log",
    "json", "xml", "yaml", "yml", "ini", "cfg", "conf", "tex", "vcf",
}  # fmt: skip
_TEXT_REPORTS = {"message/delivery-status", "message/disposition-notification", "message/feedback-report"}


def extension_for(name: str, mime: str) -> str:
    """The format-naming extension of an attachment: its name's when a reader (or the
    unsupported list) knows it, else its MIME type's (``application/octet-stream`` names none);
    any other ``text/*`` part (source code, a patch, a vCard) and a bounce's delivery report are
    read as plain text."""
    ext = name.rsplit(".", 1)[-1].lower() if "." in name else ""
    if ext in FORMATS or ext in UNSUPPORTED:
        return ext
    mime = mime.lower().split(";")[0].strip()
    by_type = _MIME.get(mime) or (mimetypes.guess_extension(mime) or "").lstrip(".")
    if by_type in FORMATS or by_type in UNSUPPORTED:
        return by_type
    if mime.startswith("text/") or mime in _TEXT_REPORTS or ext in _PLAIN_EXTS:  # code, patches, vCards, bounces
        return "txt"
    return ext


def document_text(
    data: bytes, name: str, ext: str, meta: dict[str, Any], ocr: Cache | None, speech: Cache | None
) -> tuple[str, str]:
    """(title, text) of a file in format ``ext``; an empty title means "use the file name".
    ``meta`` gains the format's facts (``format``, ``pages``, ``encoding``, photo facts, OCR
    lines). :class:`Unreadable` (with a reason for the report) when it holds no text."""
    fmt = FORMATS.get(ext)
    if fmt is None:
        why = f"{UNSUPPORTED[ext]} (.{ext}) is not read" if ext in UNSUPPORTED else f"no reader for .{ext or '?'}"
        raise Unreadable(f"unsupported format: {why}")
    meta["format"] = fmt
    if fmt == "image":
        return image_text(data, name, meta, ocr)
    if fmt == "audio":
        return audio_text(data, name, meta, speech)
    if fmt == "pdf":
        title, text = pdf_text(data, meta)
        if ocr is not None:
            text = fill_scanned_pages(data, text, meta, ocr)
    elif fmt in ("html", "markdown", "text"):
        title, text = _text_file(data, fmt, meta)
    else:
        title, text = office_text(data, ext, meta)
    if not text.replace(PAGE_BREAK, "").strip():
        if fmt == "pdf":
            raise Unreadable(
                "no text: a scanned PDF (OCR is off for this source)" if ocr is None else "no text, and OCR found none"
            )
        raise Unreadable(
            "empty file (whitespace only)" if fmt in ("html", "markdown", "text") else "no text in the document"
        )
    return title, text


def _text_file(data: bytes, fmt: str, meta: dict[str, Any]) -> tuple[str, str]:
    """(title, text) of a markdown, plain-text or HTML file."""
    text, meta["encoding"] = decode(data)
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if fmt == "html":
        return html_text(text)
    if fmt == "markdown":
        return markdown_title(text), text
    return "", text
