"""Documents from a folder of files: markdown, plain text, HTML, PDF (scanned pages by OCR),
Word ``.docx``, PowerPoint ``.pptx``, OpenDocument ``.odt``/``.odp``/``.ods``, Excel ``.xlsx``,
``.rtf``, ``.epub``, pictures (the text in them, and a photo's date, camera and place), and
recordings (voice memos: English speech transcribed, :mod:`ragbag.text.speech`).

Every file becomes one Document whose text is what a reader sees: HTML loses its navigation and
scripts, a PDF's pages (and a deck's slides, a spreadsheet's sheets) are joined with form feeds
so chunks can cite the pages they come from. Which reader reads a file is decided in one place,
:mod:`ragbag.text.documents`, which a mail's attachments go through too.
Each file is read inside the isolation boundary (:mod:`connectors._isolate`): whatever one file
does to its parser is a ReadError for that file and the walk goes on; so is a link leaving the
folder, a FIFO or a device, which are not read (see :mod:`connectors._walk`). Documents in
formats no reader here handles (``.doc``, ``.xls``, ``.pages``, ``.heic``, ...) are named in the
report as unsupported rather than skipped in silence; so is a picture with neither text nor a
date or place, and a recording not transcribed (music, too long, no speech). ``--no-ocr``
(option ``ocr: false``) reads no pictures' text, ``--no-speech`` (``speech: false``) no
recordings. A file time no calendar holds (an mtime in the year 14645) costs the file its date,
not the file.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from functools import partial
from pathlib import Path

from ragbag.connectors._inside import Inside, inside
from ragbag.connectors._isolate import each_file
from ragbag.connectors._walk import excluded_paths, follows_outside, visible_files
from ragbag.core.dates import from_timestamp
from ragbag.core.records import Document, ReadError, Span
from ragbag.text import documents
from ragbag.text.chunking import TokenCounter, paged_spans, prose_spans
from ragbag.text.unreadable import Unreadable, human_size

NAME = "files"
MAX_BYTES = 50 * 1024 * 1024
FORMATS = documents.FORMATS
UNSUPPORTED = documents.UNSUPPORTED


def read(
    path: Path, source: str, cursor: dict | None = None, options: dict | None = None
) -> Iterator[Document | ReadError]:
    """Every supported file under ``path`` (or ``path`` itself), in sorted relative-path order.
    ``options``: the source's options (None: those in ``sources.yaml``), see :mod:`connectors._walk`."""
    path = Path(path)
    reads = inside(source, options)
    if path.is_file():
        if _ext(path) not in FORMATS:
            yield ReadError(str(path.absolute()), f"unsupported file type: {path.name}")
            return
        yield from each_file(str(path.absolute()), partial(_read_file, path, path.name, source, reads))
    elif path.is_dir():
        errors: list[ReadError] = []
        wanted = lambda name: _ext(Path(name)) in FORMATS or _ext(Path(name)) in UNSUPPORTED  # noqa: E731
        for file, rel in visible_files(
            path, errors, wanted, follow_outside=follows_outside(options), exclude=excluded_paths(options)
        ):
            uri = str(file.absolute())
            if _ext(file) in UNSUPPORTED:
                yield ReadError(uri, f"unsupported format: {UNSUPPORTED[_ext(file)]} (.{_ext(file)}) is not read")
                continue
            yield from each_file(uri, partial(_read_file, file, rel, source, reads))
        yield from errors
    else:
        yield ReadError(str(path.absolute()), "no such file or directory")


def spans(doc: Document, count: TokenCounter, max_tokens: int) -> list[Span]:
    """Prose chunks; a paged document's (PDF, deck, spreadsheet) also carry the pages they span."""
    if doc.metadata.get("format") not in documents.PAGED:
        return prose_spans(doc.text, count, max_tokens)
    return paged_spans(doc.text, count, max_tokens)


def _ext(path: Path) -> str:
    return path.suffix.lower().lstrip(".")


def _read_file(file: Path, rel: str, source: str, reads: Inside) -> Iterator[Document | ReadError]:
    """The file's document; an unreadable one is a ReadError (its reason written for users)."""
    uri = str(file.absolute())
    try:
        stat = file.stat()
        if stat.st_size > MAX_BYTES:
            raise Unreadable(f"larger than {human_size(MAX_BYTES)} ({stat.st_size} bytes), skipped")
        if stat.st_size == 0:
            raise Unreadable("empty file")
        data = file.read_bytes()
        meta: dict = {"path": rel, "ext": _ext(file), "size": stat.st_size}
        title, text = documents.document_text(data, file.name, _ext(file), meta, reads.ocr, reads.speech)
    except Unreadable as exc:
        yield ReadError(uri, str(exc))
        return
    except OSError as exc:
        yield ReadError(uri, f"unreadable: {exc.strerror or exc}")
        return
    taken = meta.get("taken")
    yield Document(
        source=source,
        connector=NAME,
        native_id=rel,
        uri=uri,
        title=title or file.name,
        text=text,
        created_at=datetime.fromisoformat(taken) if taken else None,
        updated_at=from_timestamp(stat.st_mtime),
        metadata=meta,
    )
    if "cut_at_page" in meta:
        yield ReadError(uri, f"text cut on page {meta['cut_at_page']}: the PDF draws more text than one record holds")
    if "ocr_cut_at_page" in meta:
        yield ReadError(
            uri, f"OCR stopped before page {meta['ocr_cut_at_page']}: more scanned pages than one record reads"
        )
