"""Messages (iMessage, SMS, RCS) from macOS ``chat.db``, as conversation windows.

Format: the Messages app's SQLite database (``~/Library/Messages/chat.db``): ``message``,
``handle``, ``chat``, ``chat_message_join``, ``chat_handle_join``. A path may be one database
(recognised by its tables, whatever its name) or a folder, in which every ``chat.db`` is read.

A document is a window of one chat: its messages in time order, cut where more than an hour
passes between two messages or where the window reaches 100 messages or ~16 KB of message data
(a size known from column lengths, so windows are cut the same way whether or not their text is
read). Each message is a line ``2024-05-01 14:03 alice@example.com: text`` (times UTC, ``Me``
for the owner's own messages, continuation lines indented), and chunks are whole messages packed
to the token budget. Native id = chat guid + ``/`` + guid of the window's first message.
``created_at``/``updated_at`` = first/last message. Metadata: ``chat`` (group name, else the
participants, else the chat identifier), ``chat_guid``, ``chat_identifier``, ``display_name``,
``participants`` (handle ids), ``sender`` (list: who wrote in this window, ``Me`` included),
``is_from_me`` (the owner wrote in it), ``is_group``, ``service`` (iMessage/SMS/RCS),
``date`` (UTC day of the first message, ``YYYY-MM-DD``), ``messages`` (lines in the window);
each chunk overrides ``sender``/``is_from_me`` with its own messages' (as the wechat connector).

Attachments (``attachment`` rows) are named in their message's line (``[attachment x.pdf]``);
each one a reader handles is a document of its own linked to the window (native id ``<window's
id>/attachment/<ROWID>``): :mod:`connectors._chat_attachments` says which, where the files are
found and how files not downloaded from iCloud are reported (once per window).

Traps handled:
- ``message.date`` is nanoseconds since 2001-01-01 UTC (seconds in databases from before macOS
  10.13; told apart by magnitude);
- on current macOS ``text`` is often NULL and the body lives only in ``attributedBody``, an
  NSAttributedString archived as an NeXT/Apple typedstream: :func:`attributed_text` finds the
  NSString in it and reads its length-prefixed UTF-8 bytes (one byte, or 0x81 + 2 or 0x82 + 4
  bytes little-endian); a blob that is not such a stream is a ReadError for that message
  (``<file>#<ROWID>``) and the rest of its window is still read. U+FFFC attachment placeholders
  become a space between the parts they separate;
- tapbacks and reactions (``associated_message_type`` 2000–3007) and system rows (``item_type``
  other than 0: renames, members joining) are not content and are skipped;
- Messages keeps chat.db open in WAL mode: it is read through :func:`connectors._sqlite.snapshot`
  (a private copy of the database and its ``-wal`` when one exists, else an immutable read-only
  open), never written; without Full Disk Access macOS refuses the read, which is reported so;
- isolation (:mod:`connectors._isolate`): any failure inside one database is a ReadError for
  that file, any failure decoding one message a ReadError for it (``<file>#<ROWID>``) and any
  failure making one window a ReadError for the window, never a list of expected exception
  types; a file that is not SQLite, or SQLite without the Messages tables, is a ReadError for
  it; in a damaged database each message whose row cannot be read is a ReadError
  (``<file>#<ROWID>``) and every other message is still read; when no database at all can be
  read after an earlier build (a cursor exists) the build fails (RagbagError) rather than
  dropping the indexed windows; a first read reports the errors.

Incremental: every refresh scans only the message metadata (ROWID, guid, date, edit/retract
dates, column lengths: no text fetched, no blob decoded) and cuts every chat into its windows;
the cursor keeps one 16-hex fingerprint per window (its chat's name and members and its
messages' ids, dates and sizes; a cursor of another ``VERSION`` is ignored). A window whose
fingerprint is known yields ``Seen``, and so do its attachments' documents (their ROWIDs and
the window's attachment reports, repeated, are in the cursor); only new or changed windows are
read, and a damaged file keeps no cursor. The fingerprint holds the window's attachment rows and,
when read, their files' size and time (a file downloaded later re-reads its window); a cursor
made with other ``attachments``/``ocr``/limit options (:mod:`connectors._inside`) is ignored.
This rather than a max-ROWID cursor, because it also sees messages that arrive with old dates
(iCloud backfill), deleted messages and chats, edits and unsends (``date_edited``/
``date_retracted`` on macOS 13+) and group renames; a new message just re-reads the chat's last
window. Left out: videos, voice messages and other formats no reader handles (reported), contact
names (in the AddressBook database, not chat.db: speakers are phone numbers/e-mails), edit
history (``message_summary_info``; a window shows the current text), stickers and app balloons'
payloads, messages without a date.

Long because chat.db's schema differs across macOS releases (columns added and moved,
attributedBody instead of text) and each difference is met here, next to the query it changes.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import cached_property, partial
from pathlib import Path

from ragbag.connectors._chat_attachments import Attachment, Kept, Sent, attachment_spans, scan
from ragbag.connectors._inside import Inside, inside
from ragbag.connectors._isolate import each_record
from ragbag.connectors._sqlite import read_databases
from ragbag.connectors._typedstream import attributed_text
from ragbag.connectors._walk import follows_outside
from ragbag.core.records import ME, Cursor, Document, ReadError, Seen, Span, stable_hash
from ragbag.text.chunking import TokenCounter, pack
from ragbag.text.unreadable import Unreadable, one_line

NAME = "imessage"
SCHEDULE = "30 * * * *"
FILE_NAME = "chat.db"
GAP = timedelta(hours=1)
MAX_WINDOW_MESSAGES = 100
MAX_WINDOW_BYTES = 16_000
TAPBACKS = (2000, 3007)
VERSION = 2  # of the windows' cutting and rendering: another version's cursor reads everything
APPLE_EPOCH = datetime(2001, 1, 1, tzinfo=UTC)
_NS_THRESHOLD = 10**12  # seconds since 2001 stay far below this until the year 33000
_PLACEHOLDER = "\ufffc"  # attachment stand-in inside message text
_AROUND_PLACEHOLDER = re.compile("[ \t]*\ufffc[ \t]*")
_LINE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d (.*?): ", re.M)  # a message's first line
_BATCH = 500


def discover() -> tuple[list[Path], list[str]]:
    """The Messages database of the current user (``$HOME`` honoured)."""
    path = Path.home() / "Library" / "Messages" / FILE_NAME
    return ([path] if path.is_file() else []), [str(path)]


def read(
    path: Path | None, source: str, cursor: dict | None = None, options: dict | None = None
) -> Iterator[Document | ReadError | Seen | Cursor]:
    """Every conversation window of every chat.db under ``path`` (see the module doc).
    ``options``: the source's options (None: those in ``sources.yaml``), see :mod:`connectors._walk`."""
    return read_databases(
        path,
        source,
        cursor,
        what="Messages database",
        names=(FILE_NAME,),
        discover=discover,
        read_db=partial(_read_db, reads=inside(source, options)),
        denied_hint="on macOS, give the app running ragbag Full Disk Access in System Settings",
        follow_outside=follows_outside(options),
    )


def spans(doc: Document, count: TokenCounter, max_tokens: int) -> list[Span]:
    """Whole messages packed up to the budget (only a message longer than the budget is cut);
    each chunk's metadata names its own ``sender`` list and ``is_from_me``. An attachment's
    document is chunked as the same file in a folder."""
    if doc.metadata.get("attachment"):
        return attachment_spans(doc, count, max_tokens)
    text = doc.text
    heads = [(m.start(), m.group(1)) for m in _LINE.finditer(text)]
    bounds = [s for s, _ in heads] + [len(text)]
    pieces = [(s, e) for s, e in zip(bounds, bounds[1:]) if text[s:e].strip()]
    if not heads and text.strip():
        pieces = [(0, len(text))]
    out = []
    for span in pack(text, pieces, count, max_tokens):
        s, e = span.start, span.end
        while s < e and text[s].isspace():
            s += 1
        while e > s and text[e - 1].isspace():
            e -= 1
        if s < e:
            senders = list(dict.fromkeys(n for (hs, n), he in zip(heads, bounds[1:]) if hs < e and he > s))
            out.append(Span(s, e, {"sender": senders, "is_from_me": ME in senders}))
    return out


def apple_time(value) -> datetime | None:
    """A Messages date: ns since 2001-01-01 UTC (s in databases before macOS 10.13); None for
    no date, or one that is not a number or out of range."""
    if not isinstance(value, (int, float)) or value != value or value <= 0:
        return None
    try:
        if value >= _NS_THRESHOLD:
            return APPLE_EPOCH + timedelta(microseconds=value // 1000)
        return APPLE_EPOCH + timedelta(seconds=value)
    except (OverflowError, ValueError):
        return None


@dataclass
class _Chat:
    rowid: int
    guid: str
    identifier: str
    display_name: str
    service: str
    style: int | None
    participants: list[str] = field(default_factory=list)

    @property
    def is_group(self) -> bool:
        return self.style == 43 if self.style in (43, 45) else len(self.participants) > 1

    @cached_property
    def fingerprint(self) -> str:
        """What every window of this chat shows of the chat itself."""
        return stable_hash(self.display_name, self.identifier, self.service, *self.participants)

    @property
    def label(self) -> str:
        if self.display_name:
            return self.display_name
        if self.is_group and self.participants:
            return ", ".join(self.participants)
        return self.identifier or ", ".join(self.participants) or self.guid


@dataclass
class _Window:
    chat: _Chat
    rows: list[tuple]  # (ROWID, guid, date, size, fingerprint part)

    @property
    def native_id(self) -> str:
        return f"{self.chat.guid}/{self.rows[0][1]}"

    def fingerprint(self) -> str:
        return stable_hash(self.native_id, self.chat.fingerprint, *(r[4] for r in self.rows), length=16)


def _columns(conn: sqlite3.Connection, table: str) -> set[str]:
    return {r[1] for r in conn.execute(f"PRAGMA table_info({table})")}


def _read_db(
    conn: sqlite3.Connection,
    file: Path,
    source: str,
    previous: dict | None,
    state: dict[str, dict],
    key: str,
    reads: Inside,
) -> Iterator[Document | ReadError | Seen]:
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if not {"message", "chat", "chat_message_join", "handle"} <= tables:
        raise Unreadable("not a Messages chat.db (no message/chat/handle tables)")
    uri = str(file.absolute())
    chats = _chats(conn, "chat_handle_join" in tables)
    found, lost = scan(conn, file, reads)  # the attachments of every message, by its ROWID
    same = previous and previous.get("version") == VERSION and previous.get("inside") == reads.signature
    old = previous if previous and same else {}  # another version or other settings: read everything
    known, kept = set(old.get("windows", ())), Kept(old.get("attachments"), uri)
    fingerprints: list[str] = []
    todo: list[_Window] = []
    max_rowid = 0
    for window in _windows(conn, chats, uri, lost, found):
        fp = window.fingerprint()
        fingerprints.append(fp)
        max_rowid = max(max_rowid, *(r[0] for r in window.rows))
        if fp in known:
            yield from kept.seen(window.native_id, fp)  # and its attachments' documents
        else:
            todo.append(window)
    damaged = bool(lost)
    yield from lost
    handles = {rowid: ident for rowid, ident in conn.execute("SELECT ROWID, id FROM handle")}
    conn.text_factory = bytes  # decode per message: one bad value must not stop the file
    batch: list[_Window] = []
    for n, window in enumerate(todo, 1):  # fetch bodies a few hundred messages at a time
        batch.append(window)
        if sum(len(w.rows) for w in batch) < _BATCH and n < len(todo):
            continue
        bodies, lost = _bodies(conn, [r[0] for w in batch for r in w.rows], uri)
        damaged = damaged or bool(lost)
        yield from lost
        for w in batch:
            # The isolation boundary: whatever one window holds fails that window alone (and each
            # attachment, read after it, itself alone).
            sent: list[Sent] = []
            items = each_record(f"{uri}#{w.native_id}", _window_items, w, bodies, handles, uri, source, found, sent)
            if isinstance(items, ReadError):
                yield items
            else:
                yield from items
                yield from kept.read(w.fingerprint(), items, sent, reads)
        batch = []
    if not damaged:  # a damaged file is read in full again next time
        state[key] = {"version": VERSION, "inside": reads.signature, "max_rowid": max_rowid}
        state[key].update(windows=sorted(fingerprints), attachments=kept.new)


def _bodies(conn: sqlite3.Connection, rowids: list[int], uri: str) -> tuple[dict[int, tuple], list[ReadError]]:
    """The rows to print, by ROWID; where the database is damaged (a blob's overflow pages),
    message by message, each unreadable one a ReadError."""
    sql = "SELECT ROWID, text, attributedBody, is_from_me, handle_id, date FROM message WHERE ROWID IN ({})"
    bodies: dict[int, tuple] = {}
    errors: list[ReadError] = []
    try:
        for at in range(0, len(rowids), _BATCH):
            part = rowids[at : at + _BATCH]
            bodies.update((r[0], r) for r in conn.execute(sql.format(",".join("?" * len(part))), part))
    except sqlite3.DatabaseError:
        for rowid in rowids:
            try:
                bodies.update((r[0], r) for r in conn.execute(sql.format("?"), (rowid,)))
            except sqlite3.DatabaseError as exc:
                errors.append(ReadError(f"{uri}#{rowid}", f"damaged database: {one_line(exc)}"))
    return bodies, errors


def _chats(conn: sqlite3.Connection, has_members: bool) -> dict[int, _Chat]:
    cols = _columns(conn, "chat")

    def col(name: str) -> str:
        return name if name in cols else "NULL"

    chats = {}
    for rowid, guid, ident, name, service, style in conn.execute(
        f"SELECT ROWID, guid, {col('chat_identifier')}, {col('display_name')},"
        f" {col('service_name')}, {col('style')} FROM chat ORDER BY ROWID"
    ):
        chats[rowid] = _Chat(rowid, guid or f"chat{rowid}", ident or "", name or "", service or "", style)
    if has_members:
        for chat_id, ident in conn.execute(
            "SELECT j.chat_id, h.id FROM chat_handle_join j JOIN handle h ON h.ROWID = j.handle_id"
            " ORDER BY j.chat_id, h.id"
        ):
            if chat_id in chats and ident and ident not in chats[chat_id].participants:
                chats[chat_id].participants.append(ident)
    return chats


def _windows(
    conn: sqlite3.Connection,
    chats: dict[int, _Chat],
    uri: str,
    errors: list[ReadError],
    found: dict[int, list[Attachment]],
) -> Iterator[_Window]:
    """Every chat cut into windows, from message metadata only (no text, no blob content); a
    message's attachments (``found``) are part of its window's fingerprint."""
    cols = _columns(conn, "message")
    sent = " OR m.ROWID IN (SELECT message_id FROM message_attachment_join)" if found else ""
    where = ["m.date > 0", f"(m.text IS NOT NULL OR m.attributedBody IS NOT NULL{sent})"]
    if "associated_message_type" in cols:
        where.append(f"COALESCE(m.associated_message_type, 0) NOT BETWEEN {TAPBACKS[0]} AND {TAPBACKS[1]}")
    if "item_type" in cols:
        where.append("COALESCE(m.item_type, 0) = 0")
    edits = [f"COALESCE(m.{c}, 0)" if c in cols else "0" for c in ("date_edited", "date_retracted")]
    select = (
        f"SELECT m.ROWID, m.guid, m.date, {', '.join(edits)},"
        " COALESCE(length(m.text), length(m.attributedBody), 0)"
        " FROM chat_message_join j JOIN message m ON m.ROWID = j.message_id"
        f" WHERE j.chat_id = ? AND {' AND '.join(where)}"
    )
    for chat in chats.values():
        try:
            rows = conn.execute(select + " ORDER BY m.date, m.ROWID", (chat.rowid,)).fetchall()
        except sqlite3.DatabaseError:  # damaged pages: salvage the chat message by message
            rows = []
            for (mid,) in conn.execute(
                "SELECT message_id FROM chat_message_join WHERE chat_id = ?", (chat.rowid,)
            ).fetchall():
                try:
                    rows += conn.execute(select + " AND m.ROWID = ?", (chat.rowid, mid)).fetchall()
                except sqlite3.DatabaseError as exc:
                    errors.append(ReadError(f"{uri}#{mid}", f"damaged database: {one_line(exc)}"))
            rows.sort(key=lambda r: (r[2], r[0]))
        current: list[tuple] = []
        size, last = 0, None
        for rowid, guid, date, edited, retracted, length in rows:
            when = apple_time(date)
            if current and (
                when is None
                or last is None
                or when - last > GAP
                or len(current) >= MAX_WINDOW_MESSAGES
                or size + length > MAX_WINDOW_BYTES
            ):
                yield _Window(chat, current)
                current, size = [], 0
            attached = "|".join(a.fingerprint for a in found.get(rowid, ()))
            current.append((rowid, guid, date, length, f"{rowid}:{date}:{edited}:{retracted}:{length}:{attached}"))
            size, last = size + length, when
        if current:
            yield _Window(chat, current)


def _window_items(*args) -> list[Document | ReadError]:
    return list(_window_document(*args))


def _window_document(
    window: _Window,
    bodies: dict[int, tuple],
    handles: dict[int, str],
    uri: str,
    source: str,
    found: dict[int, list[Attachment]],
    sent: list[Sent],
) -> Iterator[Document | ReadError]:
    """The window's document (``sent`` gains its messages' attachments), and why a message is
    not in it."""
    chat = window.chat
    lines, speakers, times = [], [], []
    mine = False
    for rowid, *_ in window.rows:
        row = bodies.get(rowid)
        if row is None:  # unreadable, reported
            continue
        _, raw_text, blob, from_me, handle_id, date = row
        body = each_record(f"{uri}#{rowid}", _body, raw_text, blob)  # one message fails alone
        if isinstance(body, ReadError):
            yield ReadError(body.uri, f"{body.error} (chat {chat.label})")
            continue
        when = apple_time(date)
        shown = [a for a in found.get(rowid, ()) if not a.hidden]
        body = " ".join(filter(None, [body, *(f"[attachment {a.name}]" for a in shown)]))
        if not body or when is None:
            continue
        speaker = ME if from_me else (handles.get(handle_id) or chat.identifier or "unknown")
        sent += [Sent(a, rowid, speaker, when, bool(from_me)) for a in shown]
        mine = mine or bool(from_me)
        if speaker not in speakers:
            speakers.append(speaker)
        times.append(when)
        lines.append(f"{when:%Y-%m-%d %H:%M} {speaker}: " + "\n  ".join(body.split("\n")))
    if not lines:
        return
    first, last = times[0], times[-1]
    yield Document(
        source=source,
        connector=NAME,
        native_id=window.native_id,
        uri=f"{uri}#{window.native_id}",
        title=f"{chat.label} — {first:%Y-%m-%d %H:%M}",
        text="\n".join(lines) + "\n",
        created_at=first,
        updated_at=last,
        authors=speakers,
        metadata={
            "chat": chat.label,
            "chat_guid": chat.guid,
            "chat_identifier": chat.identifier,
            "display_name": chat.display_name,
            "participants": list(chat.participants),
            "sender": speakers,
            "is_from_me": mine,
            "is_group": chat.is_group,
            "service": chat.service,
            "date": f"{first:%Y-%m-%d}",
            "messages": len(lines),
        },
    )


def _body(raw_text, blob) -> str:
    """A message's text: the ``text`` column, else the ``attributedBody`` stream; attachment
    placeholders and surrounding blank space removed."""
    text = ""
    if raw_text is not None:
        try:
            text = bytes(raw_text).decode("utf-8") if not isinstance(raw_text, str) else raw_text
        except UnicodeDecodeError:
            raise Unreadable("text is not UTF-8") from None
    if not text.replace(_PLACEHOLDER, "").strip() and blob is not None and not isinstance(blob, str):
        text = attributed_text(blob)
    # A placeholder stands between parts ("\ufffctest 1\ufffctest 2"): a space keeps the words apart.
    text = _AROUND_PLACEHOLDER.sub(" ", text).replace("\r\n", "\n").replace("\r", "\n")
    return "\n".join(line.rstrip() for line in text.strip().split("\n"))
