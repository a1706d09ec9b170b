"""Messages attachments as documents of their own, each linked to its conversation window.

The photo of a receipt, the PDF of a ticket, the screenshot of an address: what people look for
in a chat is often what was sent in it. ``chat.db`` names each file in its ``attachment`` table
(joined to messages by ``message_attachment_join``): ``filename`` (the path, such as
``~/Library/Messages/Attachments/ab/11/<GUID>/IMG_0001.jpeg``), ``mime_type``, ``transfer_name``
(the name the chat shows) and ``total_bytes``.

Where the file is (:func:`locate`): ``~`` is the home of the user whose chat.db it is, and that
database is ``<home>/Library/Messages/chat.db``, so ``~/…`` is resolved against the chat.db's
folder's parent's parent; ``~/Library/Messages/…`` is also looked for in the chat.db's own folder
(an export that copied the Messages folder elsewhere), and a relative path (``Attachments/…``) is
taken from that folder. Only files inside the Messages folder are read, links resolved: a
chat.db from elsewhere cannot make ragbag index ``~/.ssh``.

Each attachment a reader handles (:func:`ragbag.text.documents.document_text`: PDF, pictures
through OCR, office documents and e-books, HTML and text) becomes a document, behind its own
isolation boundary: native id ``<window's native id>/attachment/<attachment ROWID>``, so it is
replaced and deleted with its window; metadata: the window's chat facts (``chat``,
``participants``, ``service``, …), ``parent_doc_id``/``parent_native_id`` (the window), the
message's ``sender`` (a list, as the window's), ``is_from_me`` and ``date``, then ``filename``,
``mime``, ``ext``, ``size``, ``path`` and ``attachment``; its first line says who sent it in
which chat and when, so a hit reads "attachment X sent by Y in chat Z".

Not documents, and not listed in the window either: stickers (``is_sticker``), attachments
Messages hides (``hide_attachment``) and link previews' payloads (``.pluginPayloadAttachment``).
What else is not read is reported once per window, not once per file (a chat holds thousands of
photos and videos): files not on this Mac (kept in iCloud and not downloaded, very common) in one
ReadError that says how many and which, everything else (formats no reader handles, such as
videos and voice messages; the per-message limits of :mod:`connectors._inside`; a picture with no
text, date or place; a damaged file) in another, each with its reason.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from ragbag.connectors._inside import Inside
from ragbag.connectors._isolate import each_record
from ragbag.core.records import Document, ReadError, Seen, Span
from ragbag.text.chunking import TokenCounter, paged_spans, prose_spans
from ragbag.text.documents import FORMATS, PAGED, UNSUPPORTED, document_text, extension_for
from ragbag.text.unreadable import Unreadable, one_line

MESSAGES = "Library/Messages/"  # the Messages folder, relative to the home
_HIDDEN_SUFFIXES = (".pluginpayloadattachment",)  # a link preview's payload: the link is in the text
_INHERITED = (
    "chat",
    "chat_guid",
    "chat_identifier",
    "chat_id",
    "display_name",
    "participants",
    "is_group",
    "service",
    "file",
)
_NAMED = 5  # attachments named in one report, then "and N more"
MISSING = "missing"
OUTSIDE = "outside"


@dataclass
class Attachment:
    """One row of ``attachment``; ``path`` (and ``size``) once located on disk."""

    rowid: int | str  # Messages' attachment ROWID; WeChat: the message's id
    stored: str  # the ``filename`` column as Messages wrote it
    name: str  # what the chat shows: ``transfer_name``, else the file's name
    mime: str
    hidden: bool  # a sticker, hidden by Messages, or a link preview's payload: not content
    path: Path | None = None
    size: int = 0
    stamp: str = ""  # what the window's fingerprint holds of the file: size and time, or why none
    mask: int = 0  # the byte every byte of the stored file is XORed with (WeChat's pictures); 0: none
    why: str = ""  # why a file on disk cannot be read (a format its app encrypted), "" when it can

    @property
    def ext(self) -> str:
        return extension_for(self.name, self.mime)

    @property
    def fingerprint(self) -> str:
        return f"{self.rowid}:{self.stored}:{self.name}:{self.mime}:{int(self.hidden)}:{self.stamp}"


@dataclass
class Sent:
    """An attachment as it was sent: in which message, by whom, when."""

    attachment: Attachment
    message: int | str
    sender: str
    when: datetime
    from_me: bool


def attachment_id(window_native_id: str, rowid: int | str) -> str:
    return f"{window_native_id}/attachment/{rowid}"


def scan(
    conn: sqlite3.Connection, chat_db: Path, inside: Inside
) -> tuple[dict[int, list[Attachment]], list[ReadError]]:
    """Every message's attachments (by message ROWID) from the database's rows; when the source
    reads attachments, each one in a readable format is located on disk too (a stat, not a read),
    so a file downloaded from iCloud or changed since the last read changes its window's
    fingerprint. A damaged ``attachment`` table is a ReadError and no attachments."""
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if not {"attachment", "message_attachment_join"} <= tables:
        return {}, []
    cols = {r[1] for r in conn.execute("PRAGMA table_info(attachment)")}

    def col(name: str, default: str = "NULL") -> str:
        return f"a.{name}" if name in cols else default

    sql = (
        f"SELECT j.message_id, a.ROWID, {col('filename')}, {col('mime_type')}, {col('transfer_name')},"
        f" {col('is_sticker', '0')}, {col('hide_attachment', '0')} FROM message_attachment_join j"
        " JOIN attachment a ON a.ROWID = j.attachment_id ORDER BY j.message_id, a.ROWID"
    )
    found: dict[int, list[Attachment]] = {}
    factory = conn.text_factory
    conn.text_factory = lambda b: b.decode("utf-8", "replace")
    try:
        rows = conn.execute(sql).fetchall()
    except sqlite3.DatabaseError as exc:
        return {}, [ReadError(f"{chat_db.absolute()}#attachments", f"damaged database: {one_line(exc)}")]
    finally:
        conn.text_factory = factory
    for message, rowid, stored, mime, shown, sticker, hide in rows:
        stored, mime = str(stored or ""), str(mime or "")
        name = str(shown or "") or stored.rsplit("/", 1)[-1] or f"attachment {rowid}"
        hidden = bool(sticker) or bool(hide) or name.lower().endswith(_HIDDEN_SUFFIXES)
        a = Attachment(rowid, stored, name, mime, hidden)
        if inside.attachments and not hidden and a.ext in FORMATS:
            a.path, why = locate(chat_db, stored)
            try:
                st = a.path.stat() if a.path is not None else None
            except OSError:
                st, why = None, MISSING
            a.path = a.path if st is not None else None
            a.size, a.stamp = (st.st_size, f"{st.st_size}:{st.st_mtime_ns}") if st is not None else (0, why)
        found.setdefault(message, []).append(a)
    return found, []


def locate(chat_db: Path, stored: str) -> tuple[Path | None, str]:
    """(the file an attachment's ``filename`` names, ""), or (None, why not: ``MISSING`` or
    ``OUTSIDE`` the Messages folder). See the module doc."""
    folder = chat_db.absolute().parent
    home = folder.parent.parent
    stored = stored.strip()
    if not stored:
        return None, MISSING  # never downloaded: no file was ever named
    candidates = []
    if stored == "~" or stored.startswith("~/"):
        candidates.append(home / stored[2:])
    else:
        candidates.append(Path(stored) if os.path.isabs(stored) else folder / stored)
    at = stored.find(MESSAGES)
    if at >= 0 and (at == 0 or stored[at - 1] == "/"):
        candidates.append(folder / stored[at + len(MESSAGES) :])
    within = False
    try:
        roots = {os.path.realpath(folder).rstrip(os.sep) + os.sep, os.path.realpath(home / MESSAGES) + os.sep}
        for candidate in candidates:
            real = os.path.realpath(candidate)
            if real.startswith(tuple(roots)):
                within = True
                if os.path.isfile(real):
                    return Path(real), ""
    except (OSError, ValueError):  # a NUL in the name, a loop of links
        return None, MISSING
    return None, MISSING if within else OUTSIDE


@dataclass(frozen=True)
class Place:
    """Where a chat app keeps its files, in the words of the reports: the folder files must lie
    in, and what to do about files not there."""

    folder: str
    missing: str


MESSAGES_PLACE = Place(
    "the Messages folder",
    "not on this Mac (kept in iCloud and not downloaded, or deleted; open the chat in Messages to download them)",
)


def attachment_documents(
    window: Document, sent: list[Sent], inside: Inside, place: Place = MESSAGES_PLACE
) -> Iterator[Document | ReadError]:
    """The documents of the attachments sent in ``window``, then at most two reports for the
    window: the files not on disk, and the attachments not read for any other reason."""
    if not inside.attachments:
        return
    missing: list[str] = []
    unread: list[str] = []
    counted: dict[int | str, int] = {}
    for s in sent:
        a = s.attachment
        if a.hidden:
            continue
        if a.why:
            unread.append(f"{a.name} ({a.why})")
            continue
        if a.ext not in FORMATS:
            why = f"{UNSUPPORTED[a.ext]} is not read" if a.ext in UNSUPPORTED else f"no reader for .{a.ext or '?'}"
            unread.append(f"{a.name} ({why})")
            continue
        if a.path is None:
            if a.stamp == OUTSIDE:
                unread.append(f"{a.name} (outside {place.folder}: {a.stored})")
            else:
                missing.append(a.name)
            continue
        why = inside.admit(counted, s.message, a.size)
        if why:
            unread.append(f"{a.name} ({why})")
            continue
        uri = f"{window.uri}/attachment/{a.rowid}"
        made = each_record(uri, _document, window, s, uri, inside)
        if isinstance(made, ReadError):
            unread.append(f"{a.name} ({made.error})")
        else:
            yield made
    if missing:
        yield ReadError(window.uri, f"{_count(missing)} {place.missing}: {_names(missing)}")
    if unread:
        yield ReadError(window.uri, f"{_count(unread)} not read: {_names(unread)}")


def _count(names: list[str]) -> str:
    return f"{len(names)} attachment{'s' if len(names) != 1 else ''}"


def _names(names: list[str]) -> str:
    more = f" and {len(names) - _NAMED} more" if len(names) > _NAMED else ""
    return "; ".join(names[:_NAMED]) + more


def _document(window: Document, s: Sent, uri: str, inside: Inside) -> Document:
    a = s.attachment
    assert a.path is not None
    data = a.path.read_bytes()
    if not data:
        raise Unreadable("empty file")
    if a.mask:
        data = data.translate(bytes(b ^ a.mask for b in range(256)))
    meta: dict[str, Any] = {k: window.metadata[k] for k in _INHERITED if k in window.metadata}
    meta.update(parent_doc_id=window.doc_id, parent_native_id=window.native_id)
    meta.update(sender=[s.sender], is_from_me=s.from_me, date=f"{s.when:%Y-%m-%d}")
    meta.update(filename=a.name, mime=a.mime, ext=a.ext, size=len(data), path=str(a.path), attachment=True)
    title, text = document_text(data, a.name, a.ext, meta, inside.ocr, inside.speech)
    chat = window.metadata.get("chat") or window.title
    head = f"Attachment {a.name} sent by {s.sender} in the chat “{chat}”, {s.when:%Y-%m-%d %H:%M}"
    if title and title != a.name:
        head += f" · {title}"
    return Document(
        source=window.source,
        connector=window.connector,
        native_id=attachment_id(window.native_id, a.rowid),
        uri=uri,
        title=f"{a.name} (attachment in: {chat})",
        text=f"{head}\n\n{text}",
        created_at=s.when,
        authors=[s.sender],
        metadata=meta,
    )


def attachment_spans(doc: Document, count: TokenCounter, max_tokens: int) -> list[Span]:
    """An attachment's chunks, as the same file's in a folder: prose, or prose with pages."""
    if doc.metadata.get("format") in PAGED:
        return paged_spans(doc.text, count, max_tokens)
    return prose_spans(doc.text, count, max_tokens)


class Kept:
    """What the cursor keeps of each window's attachments, by the window's fingerprint: the
    ROWIDs of its attachment documents and its reports, vouched for (``Seen``) and repeated
    while the window is unchanged, so an incremental read's report is as complete as a full one.
    ``uri``: the database's (a window's reports are made on ``<uri>#<window's native id>``)."""

    def __init__(self, previous: dict[str, Any] | None, uri: str) -> None:
        self.old: dict[str, Any] = previous or {}
        self.new: dict[str, list] = {}
        self.uri = uri

    def seen(self, native_id: str, fingerprint: str) -> Iterator[Seen | ReadError]:
        yield Seen(native_id)
        kids, errors = self.old.get(fingerprint) or ([], [])
        if kids or errors:
            self.new[fingerprint] = [kids, errors]
        yield from (Seen(attachment_id(native_id, k)) for k in kids)
        yield from (ReadError(f"{self.uri}#{native_id}", error) for error in errors)

    def read(
        self, fingerprint: str, items: list[Document | ReadError], sent: list[Sent], inside: Inside
    ) -> Iterator[Document | ReadError]:
        """The attachments of the window among ``items`` (none when it made no document)."""
        window = next((d for d in items if isinstance(d, Document)), None)
        if window is None or not sent:
            return
        kids: list[int] = []
        errors: list[str] = []
        for item in attachment_documents(window, sent, inside):
            if isinstance(item, Document):
                kids.append(int(item.native_id.rsplit("/", 1)[1]))
            else:
                errors.append(item.error)  # on the window's uri, as every report made here
            yield item
        if kids or errors:
            self.new[fingerprint] = [kids, errors]
