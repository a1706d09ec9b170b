"""Documents from WhatsApp's own chat exports: one conversation window of one chat per document.

Format: what "Export chat" writes, one plain-text file a chat: ``_chat.txt`` on iOS (in the zip
``WhatsApp Chat - <name>.zip``, beside the media files when exported with media), ``WhatsApp Chat
with <name>.txt`` on Android (localised: ``WhatsApp-Chat mit …``, ``Chat de WhatsApp con …``),
alone or zipped. A message starts with its local date and time in the phone's locale:
``[31/12/23, 21:41:05] Anna: text`` (iOS: brackets, seconds), ``31/12/2023, 21:41 - Anna: text``
(Android), ``12/31/23, 9:41 PM - …`` (US), ``31.12.23, 21:41 - …`` (German), ``2023-12-31
21:41 - …``, Spanish ``p. m.``, a day half before the time (Korean, Chinese); see
:mod:`.lines`. Lines without a timestamp continue the message before them, and so do lines
whose timestamp has another form than the file's (a line pasted from another chat). A folder is searched
for ``*.txt`` files named ``_chat.txt`` or naming WhatsApp, and for zips naming WhatsApp; a file
given as the source's path is read whatever its name. A file in which no line starts a message
is one ``ReadError`` saying what was expected.

Traps handled:

- **Day/month order** is decided per file from all its dates, never per line: a first number
  above 12 makes the file day-first, a second one month-first; otherwise the order under which
  the messages run forward in time, then the number that changes more often being the day, then
  the form's convention (US 12-hour with slashes month-first, all else day-first). Two-digit
  years are 20xx; 12-hour times (``PM``, ``p. m.``, ``午後``, ``오후``) become 24-hour.
- **Local times without a zone**: taken in ``options: {timezone: "Europe/Berlin"}`` when the
  source gives one, else in this machine's zone: the export holds the phone's wall clock and
  nothing else, and the phone was most likely where the machine is. An unknown zone name is one
  ``ReadError`` and the machine's zone is used. In the hour a clock change repeats, a time is
  read in the pass that keeps the file's order. Lines are rendered in UTC like the other chat
  connectors.
- **Who "Me" is**: the export writes the user's own name like anyone's. ``options: {me: "Your
  Name"}`` (or a list of names) says it; without it, the sender of "You deleted this message" is
  me, and in a direct chat of two senders whoever is not the contact the file (or the encryption
  notice) names. My messages show as ``Me`` and are ``is_from_me``; unknown, nobody is.
- **System lines** are dropped: Android's events have no sender ("Anna added Bob"), iOS starts
  the app's text with a left-to-right mark (U+200E) under the chat's or a member's name; the
  encryption notice in any of the listed languages either way. A shared location or a poll,
  app-marked on iOS too, is kept as text.
- **Deleted messages** ("This message was deleted", "You deleted this message", localised) are
  dropped; the "<This message was edited>" suffix is removed and the message kept.
- **Media** becomes a marker with its caption: ``[media: 00000012-PHOTO-2023-12-31-21-41-05.jpg]``
  (iOS ``<attached: …>``, Android ``… (file attached)``), ``[media: image]`` (iOS "image
  omitted", "Bild weggelassen", "imagen omitida"), ``[media]`` (Android "<Media omitted>"): who
  sent a photo when is part of the conversation, and a caption or document name is searchable.
  See :mod:`.phrases` for the languages.
- **Group or direct**: a group has more than two senders, an event only groups have (created,
  added, left, subject changed), or, on iOS, system lines under a name that never writes beside
  two who do (the group's name). Names lose direction marks and the "~ " of non-contacts.
- **Chat name**: from the file name (the zip's first, then the text file's, then an unzipped
  folder's: "WhatsApp Chat - Anna"), else the sender of iOS's encryption notice (the contact or
  the group), else a "created group “…”" line, else the other senders.
- **Bad input**, isolated (:mod:`connectors._isolate`): an undecodable file or a zip member is a
  ``ReadError`` for that file; a message with an impossible date (a 13th month under the file's
  order) is a ``ReadError("{file}#L{line}")``; lines before the first message are reported once;
  everything else is still read. Encodings other than UTF-8 are decoded (:mod:`ragbag.text.decode`).

Windows: a chat's messages are cut into conversation windows at silences of more than an hour
and at 200 messages / 20,000 characters (cuts depend only on earlier messages, so new messages
never move old windows). Each window is a document: one line per message,
``YYYY-MM-DD HH:MM sender: text`` in UTC, the exporting user as ``Me``, continuation lines
indented; ``created_at``/``updated_at`` are the first and last message. Chunks are whole messages.

Metadata: ``chat`` (the chat's name), ``chat_id`` (a hash of that name: the same chat in two
exports is one chat), ``is_group``, ``sender`` (the senders in the window; chunks carry their
own), ``is_from_me``, ``date`` (UTC day of the first message), ``messages``, ``file``.
``native_id`` = chat id + the first message's time (a second window starting the same second
gets ``.2``), so a window keeps its id across re-exports and builds.

Incremental: per export file (size, mtime → the windows it produced); unchanged files yield
``Seen``; a changed file is re-read and edits propagate by content hash; a deleted message or
file is gone on the next read. The same window in two exports (a folder of successive exports)
is kept once: the copy whose last message is newest. Changing ``timezone`` or ``me`` re-reads
everything.

Left out: the media files themselves (add the unzipped folder to a ``files`` source to index
pictures and documents), reactions and replies' quoted messages (exports do not hold them),
the per-message edit state, and ``discover()`` (exports have no default place).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import timedelta, tzinfo
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from ragbag.connectors._chat import window_document, window_spans, windows
from ragbag.connectors._exports import export_files, read_exports, zip_members
from ragbag.connectors._isolate import each_record
from ragbag.connectors._walk import excluded_paths, follows_outside
from ragbag.connectors.whatsapp import chat as chats
from ragbag.core.records import Cursor, Document, ReadError, Seen, Span, stable_hash
from ragbag.text.chunking import TokenCounter
from ragbag.text.decode import decode
from ragbag.text.unreadable import Unreadable

NAME = "whatsapp"
SCHEDULE = "0 4 * * *"  # exports change when the user exports again: daily is plenty
WINDOW_GAP = timedelta(hours=1)
WINDOW_MESSAGES = 200
WINDOW_CHARS = 20_000
_VERSION = "whatsapp-1"
TIMEZONE, ME_OPTION = "timezone", "me"
OPTIONS = {  # ragbag add whatsapp … --option KEY=VALUE
    ME_OPTION: "your name as the export writes it (repeat for several): your messages are Me",
    TIMEZONE: "the IANA zone the export's times were written in (default: this machine's)",
}


def read(
    path: Path, source: str, cursor: dict | None = None, options: dict | None = None
) -> Iterator[Document | ReadError | Seen | Cursor]:
    """Every window of every chat export under ``path`` (a ``.txt`` or ``.zip`` file, or a folder).
    ``options``: ``timezone`` (IANA name), ``me`` (a name or a list), ``follow_links_outside``."""
    options = options or {}
    zone, zone_error = _zone(options.get(TIMEZONE))
    if zone_error:
        yield ReadError(str(Path(path).absolute()), zone_error)
    me = _names(options.get(ME_OPTION))
    files, errors = export_files(Path(path), _wanted, follows_outside(options), excluded_paths(options))
    yield from errors
    zone_key = getattr(zone, "key", None) or f"local:{'/'.join(time.tzname)}:{time.timezone}"
    version = f"{_VERSION}|{zone_key}|{stable_hash(*sorted(n.casefold() for n in me), length=8)}"
    yield from read_exports(files, lambda file, key: _read_file(file, key, source, zone, me), cursor, version)


def spans(doc: Document, count: TokenCounter, max_tokens: int) -> list[Span]:
    return window_spans(doc.text, count, max_tokens)


def _wanted(name: str) -> bool:
    """Export files in a folder: ``_chat.txt``, and text files and zips naming WhatsApp (media
    files beside them, and other text files, are not chats)."""
    lower = name.lower()
    return lower == "_chat.txt" or (lower.endswith((".txt", ".zip")) and "whatsapp" in lower.replace(" ", ""))


def _member(name: str) -> bool:
    lower = name.lower()
    return lower == "_chat.txt" or (lower.endswith(".txt") and "whatsapp" in lower.replace(" ", ""))


def _zone(value: Any) -> tuple[tzinfo | None, str]:
    """(zone, error): the source's ``timezone`` option; None for this machine's zone."""
    if value is None or str(value).strip() == "":
        return None, ""
    try:
        return ZoneInfo(str(value).strip()), ""
    except (ZoneInfoNotFoundError, ValueError):
        return None, f"unknown timezone {str(value)!r} in the source's options: times read in this machine's zone"


def _names(value: Any) -> list[str]:
    if value is None:
        return []
    values = value if isinstance(value, (list, tuple)) else [value]
    return [str(v) for v in values if str(v).strip()]


def _read_file(file: Path, key: str, source: str, zone: tzinfo | None, me: list[str]) -> Iterator:
    uri = str(file.absolute())
    if file.suffix.lower() == ".zip":
        found = False
        for item in zip_members(file, _member):
            found = True
            if isinstance(item, ReadError):
                yield item
                continue
            member_uri, data = item
            inner = member_uri.split("!/", 1)[1]
            hints = [chats.name_from_file(file.name), chats.name_from_file(inner)]
            hints += [chats.name_from_file(folder) for folder in reversed(inner.split("/")[:-1])]
            yield from _chat_records(data, member_uri, key, source, hints, zone, me)
        if not found:
            yield ReadError(uri, "not a WhatsApp export: no _chat.txt or 'WhatsApp Chat with ….txt' in this zip")
        return
    hints = [chats.name_from_file(file.name), chats.name_from_file(file.parent.name)]
    yield from _chat_records(file.read_bytes(), uri, key, source, hints, zone, me)


def _chat_records(
    data: bytes, uri: str, key: str, source: str, hints: list[str], zone: tzinfo | None, me: list[str]
) -> Iterator:
    """The windows of one chat text (a file or a zip member) with their stamps, and its errors;
    a text that fails as a whole (undecodable, not an export) is one ReadError for it."""
    made = each_record(uri, _chat, data, uri, hints, zone, me)
    if isinstance(made, ReadError):
        yield made
        return
    chat, errors = made
    yield from errors
    chat_id = stable_hash((chat.name or key).casefold(), length=16)
    used: set[str] = set()
    for window in windows(chat.messages, WINDOW_GAP, WINDOW_MESSAGES, WINDOW_CHARS):
        stamp = str(int(window[0].when.timestamp()))
        n = 1
        while (f"{stamp}.{n}" if n > 1 else stamp) in used:
            n += 1
        stamp = f"{stamp}.{n}" if n > 1 else stamp
        used.add(stamp)
        doc = window_document(
            window,
            source=source,
            connector=NAME,
            native_id=f"{chat_id}@{stamp}",
            uri=f"{uri}#{stamp}",
            chat=chat.name,
            chat_id=chat_id,
            is_group=chat.is_group,
            file=key,
        )
        yield doc, window[-1].when.timestamp()


def _chat(data: bytes, uri: str, hints: list[str], zone: tzinfo | None, me: list[str]):
    """(chat, errors) of one export text: every message made alone (a bad one is its line's
    ReadError), then the chat assembled from those that were read."""
    if not data.strip():
        raise Unreadable(f"empty file; {chats.NOT_AN_EXPORT}")
    text = decode(data)[0]
    split, stray, order = chats.entries(text)
    errors: list[ReadError] = []
    if stray:
        errors.append(ReadError(f"{uri}#L{stray[0]}", f"{len(stray)} line(s) before the first message, not read"))
    found = []
    for head, more in split:
        # The isolation boundary: whatever one message holds fails that message alone.
        entry = each_record(f"{uri}#L{head.number}", chats.entry, head, more, order)
        if isinstance(entry, ReadError):
            errors.append(entry)
        else:
            found.append(entry)
    return chats.assemble(found, hints, zone, me), errors
