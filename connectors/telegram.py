"""Documents from Telegram Desktop's JSON exports: one conversation window of one chat per document.

Format: Telegram Desktop's "Export chat history" (one chat) and "Export Telegram data" (the
account) in the machine-readable JSON format write ``result.json`` beside folders of media
(``photos/``, ``files/``, ``stickers/``, ``voice_messages/`` …). A chat export is one object
``{name, type, id, messages: [...]}``; an account export is ``{about, personal_information,
contacts, frequent_contacts, chats: {about, list: [chat, ...]}, left_chats: {about, list}, …}``.
Chat types: ``personal_chat``, ``bot_chat``, ``saved_messages``, ``private_group``,
``private_supergroup``, ``public_supergroup``, ``private_channel``, ``public_channel`` (and
``replies``, ``verification_codes``). A message is ``{id, type: "message"|"service", date,
date_unixtime, edited, edited_unixtime, from, from_id, text, text_entities, forwarded_from,
reply_to_message_id, photo, file, file_name, media_type, sticker_emoji, poll,
contact_information, location_information, place_name, address, …}``. A path may be a
``result.json`` (whatever its name), an export folder or a folder of them (``result*.json`` found
anywhere under it), or a zip of them (members read in memory).

Traps handled:

- **Times**: ``date`` is the exporting machine's local time with no zone; newer exports add
  ``date_unixtime`` (seconds since 1970 UTC), used when present. An older export's ``date`` is
  taken in the source's ``timezone`` option (an IANA name, read by :mod:`zoneinfo`, which knows
  each zone's daylight-saving history), else in this machine's zone (usually the exporter's).
- **Rich text**: ``text`` is a string, or a list of strings and entity objects ``{type, text,
  href?}`` (bold, link, mention, code, pre, blockquote, custom_emoji …): the message's text cut
  at its entities, joined back as it is, except that a quote or code block stands on lines of
  its own (as the app shows it) and a ``text_link`` keeps its address after its words.
- **Me**: the exporting user's messages are ``Me``. An account export names its owner
  (``personal_information.user_id`` → ``from_id`` ``user<id>``; exports before
  ``date_unixtime`` wrote a user's ``from_id`` as a bare number); a personal or bot chat's own
  ``id`` is the other side's, so every other user in it is me; Saved Messages' ``id`` is mine.
  For a group's own export none of this holds: the source's ``me`` option (a name or a
  ``from_id``, or a list of them) says who I am there. A null ``from`` (an account since
  deleted) is "Deleted Account"; a group's anonymous admin writes as the group.
- **Media** become labels with their caption: ``[photo]``, ``[file: name]``, ``[video: name]``,
  ``[audio: performer – title]``, ``[voice]``, ``[video message]``, ``[GIF]``, ``[sticker 😀]``;
  polls, to-do lists, contacts, places, games and invoices as text (``[poll] question — answer
  (votes) · …``); a forward starts ``[forwarded from NAME]``. A file the export did not include
  ("File not included", "File unavailable", "File exceeds maximum size") is still labelled, by
  its ``file_name`` when the export gives one.
- **Dropped**: service messages (group created, members added, pins, calls, title changes …)
  and messages with nothing to show (no text, no media: inline bot buttons alone). Edited
  messages carry their final text (``edited`` says when): the newest export wins.
- **The HTML export** (``messages.html``) is not read: a folder (or zip) holding one without a
  ``result.json``, or an HTML file given by name, is one ``ReadError`` saying to export as JSON.
- **Bad input**, isolated (:mod:`connectors._isolate`): a file that is not JSON or not a Telegram
  export is one ``ReadError`` saying what was expected; a chat or message that fails is a
  ``ReadError("{file}#{chat id}/{message id}")`` and everything else is still read.

Windows: a chat's messages are cut into conversation windows at silences of more than an hour
and at 200 messages / 20,000 characters (cuts depend only on earlier messages, so new messages
never move old windows). Each window is a document: one line per message, ``YYYY-MM-DD HH:MM
sender: text`` in UTC (as wechat and imessage), continuation lines indented; ``created_at`` /
``updated_at`` are the first and last message. Chunks are whole messages.

Metadata: ``chat`` (its name), ``chat_id`` (Telegram's id; a chat exported without one is
named by its name, else by its file), ``chat_type`` (Telegram's), ``is_group`` (a group or
supergroup; channels are not), ``sender`` (the senders in the window; chunks carry their own),
``is_from_me``, ``date`` (UTC day of the first message), ``messages``, ``file``. ``native_id`` =
chat id + the first message's time, so a window keeps its id across re-exports and builds.

Incremental: per export file (size, mtime → the windows it produced); unchanged files yield
``Seen``; a changed file is re-read and edits propagate by content hash. The same window in two
exports (a chat's own export and the account's, or successive exports) is kept once: the copy
whose newest message or edit is latest. Changing the ``me`` or ``timezone`` option re-reads all.

Left out: the media files themselves (photos, documents, voice; the labels above stand for
them), reactions, inline buttons, the message a reply answers (only the reply's own text),
contacts and sessions of an account export, and ``discover()`` (an export lies where the user
saved it).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta, tzinfo
from pathlib import Path, PurePosixPath
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from ragbag.connectors._chat import Message, window_document, window_spans, windows
from ragbag.connectors._exports import export_files, load_json, read_exports, zip_members
from ragbag.connectors._isolate import each_record
from ragbag.connectors._telegram_messages import ChatInfo, message, sender_id
from ragbag.connectors._walk import excluded_paths, follows_outside
from ragbag.core.records import Cursor, Document, ReadError, Seen, Span, stable_hash
from ragbag.text.chunking import TokenCounter
from ragbag.text.unreadable import Unreadable

NAME = "telegram"
SCHEDULE = "0 4 * * *"  # exports change when the user exports again: daily is plenty
WINDOW_GAP = timedelta(hours=1)
WINDOW_MESSAGES = 200
WINDOW_CHARS = 20_000
_VERSION = "telegram-1"

GROUPS = frozenset({"private_group", "private_supergroup", "public_supergroup"})
_UNNAMED = {"saved_messages": "Saved Messages", "replies": "Replies", "verification_codes": "Verification Codes"}
_PEER_IS_OTHER = frozenset({"personal_chat", "bot_chat"})
_ID = re.compile(r"^(?:user|channel|chat)\d+$")
_NOT_AN_EXPORT = (
    "not a Telegram Desktop export: expected result.json holding one chat ({name, type, id, messages}) "
    "or an account export (chats.list)"
)
_HTML = (
    "HTML, not JSON: Telegram's HTML export (messages.html) is not read; "
    "export again with the format 'Machine-readable JSON'"
)


@dataclass(frozen=True)
class Settings:
    """One read's options: who I am (``from_id``s and names) and the zone of zoneless dates."""

    me_ids: frozenset[str]
    me_names: frozenset[str]
    zone: tzinfo | None  # None: this machine's zone

    @property
    def signature(self) -> str:
        zone = str(self.zone) if self.zone else ""
        return stable_hash(*sorted(self.me_ids), "", *sorted(self.me_names), "", zone, length=16)


def read(
    path: Path, source: str, cursor: dict | None = None, options: dict | None = None
) -> Iterator[Document | ReadError | Seen | Cursor]:
    """Every window of every chat in the Telegram exports under ``path`` (a ``result.json``, an
    export folder or zip, or a folder of them). ``options``: ``me`` (a name or ``from_id``, or a
    list), ``timezone`` (of exports without ``date_unixtime``), and :mod:`connectors._walk`'s."""
    settings, problem = _settings(options or {})
    if problem:
        yield ReadError(str(Path(path).absolute()), problem)
    files, errors = export_files(Path(path), _wanted, follows_outside(options), excluded_paths(options))
    yield from errors
    jsons = {PurePosixPath(key).parent for _, key in files if _is_json(key)}
    shown: set[PurePosixPath] = set()
    readable = []
    for file, key in files:
        folder = PurePosixPath(key).parent
        if not _is_html(key):
            readable.append((file, key))
        elif folder not in jsons and folder not in shown:  # one report per HTML export
            shown.add(folder)
            yield ReadError(str(file.absolute()), _HTML)
    version = f"{_VERSION}:{settings.signature}"
    yield from read_exports(readable, lambda file, key: _read_file(file, key, source, settings), cursor, version)


def spans(doc: Document, count: TokenCounter, max_tokens: int) -> list[Span]:
    return window_spans(doc.text, count, max_tokens)


def _is_json(name: str) -> bool:
    base = PurePosixPath(name).name.lower()
    return base.startswith("result") and base.endswith(".json")


def _is_html(name: str) -> bool:
    return re.fullmatch(r"messages\d*\.html", PurePosixPath(name).name.lower()) is not None


def _wanted(name: str) -> bool:
    return _is_json(name) or _is_html(name) or name.lower().endswith(".zip")


OPTIONS = {  # ragbag add telegram … --option KEY=VALUE
    "me": "your name or user id (user123) where the export does not say (repeat for several)",
    "timezone": "the IANA zone of an old export's zoneless dates (default: this machine's)",
}


def _settings(options: dict) -> tuple[Settings, str]:
    """The read's settings from the source's options, and a problem to report (or "")."""
    given = options.get("me") or []
    wanted = [str(w) for w in given if w] if isinstance(given, (list, tuple)) else [str(given)]
    ids = frozenset(w.strip() for w in wanted if _ID.match(w.strip()))
    names = frozenset(" ".join(w.split()) for w in wanted if not _ID.match(w.strip()))
    zone: tzinfo | None = None
    problem = ""
    if options.get("timezone"):
        try:  # zoneinfo: the IANA database, with each zone's daylight-saving history
            zone = ZoneInfo(str(options["timezone"]))
        except (ZoneInfoNotFoundError, ValueError):
            problem = f"option timezone: unknown zone {options['timezone']!r}; this machine's zone is used"
    return Settings(ids, names, zone), problem


def _read_file(file: Path, key: str, source: str, settings: Settings) -> Iterator:
    """The records of one export file, or of each export in a zip."""
    if file.suffix.lower() != ".zip":
        data = file.read_bytes()  # a failure is this file's alone (connectors._isolate, in read_exports)
        yield from _export(data, str(file.absolute()), key, source, settings)
        return
    members = list(zip_members(file, lambda name: _is_json(name) or _is_html(name)))
    jsons = {PurePosixPath(m[0]).parent for m in members if not isinstance(m, ReadError) and _is_json(m[0])}
    shown: set[PurePosixPath] = set()
    for member in members:
        if isinstance(member, ReadError):
            yield member
            continue
        uri, data = member
        folder = PurePosixPath(uri).parent
        if _is_html(uri):
            if folder not in jsons and folder not in shown:
                shown.add(folder)
                yield ReadError(uri, _HTML)
        elif _is_json(uri):
            yield from _export(data, uri, f"{key}!/{uri.split('!/', 1)[1]}", source, settings)


def _export(data: bytes, uri: str, key: str, source: str, settings: Settings) -> Iterator:
    """The windows of one ``result.json`` (a chat's export or the account's)."""
    if data.lstrip()[:1] == b"<":  # messages.html renamed, or any HTML page
        yield ReadError(uri, _HTML)
        return
    try:
        export = load_json(data)
    except Unreadable as exc:
        yield ReadError(uri, str(exc))
        return
    if not isinstance(export, dict):
        yield ReadError(uri, _NOT_AN_EXPORT)
        return
    me_ids = set(settings.me_ids)
    if isinstance(export.get("messages"), list):
        chats: list[Any] = [export]
    elif isinstance(export.get("chats"), dict) or isinstance(export.get("personal_information"), dict):
        chats = [c for part in ("chats", "left_chats") for c in _listed(export.get(part))]
        owner = (export.get("personal_information") or {}).get("user_id")
        if owner:
            me_ids.add(f"user{owner}")
        if not chats:
            yield ReadError(uri, "a Telegram account export without chats: export again with chats ticked")
            return
    else:
        yield ReadError(uri, _NOT_AN_EXPORT)
        return
    for index, chat in enumerate(chats):
        chat_id = str(chat.get("id") or "") if isinstance(chat, dict) else ""
        # The isolation boundary: whatever one chat holds fails that chat alone.
        made = each_record(
            f"{uri}#{chat_id or index}", _chat, chat, index, uri, key, source, settings, frozenset(me_ids)
        )
        if isinstance(made, ReadError):
            yield made
        else:
            yield from made


def _listed(part: Any) -> list:
    """The chats of an account export's ``chats`` / ``left_chats`` section."""
    return part["list"] if isinstance(part, dict) and isinstance(part.get("list"), list) else []


def _chat(chat: Any, index: int, uri: str, key: str, source: str, settings: Settings, me_ids: frozenset[str]) -> list:
    """The window records of one chat, and the ReadErrors of its messages that failed."""
    if not isinstance(chat, dict):
        raise Unreadable(f"not a chat object ({type(chat).__name__})")
    messages = chat.get("messages")
    if not isinstance(messages, list):
        raise Unreadable("chat has no message list")
    kind = str(chat.get("type") or "")
    name = chat.get("name")
    name = " ".join(name.split()) if isinstance(name, str) else ""
    # A chat without an id (hand-trimmed exports) is named by its name, else by its place.
    chat_id = str(chat.get("id") or "") or name or f"{key}#{index}"
    if not name:  # Saved Messages and the like have none; a deleted account's is null
        name = _UNNAMED.get(kind) or ("Deleted Account" if kind in _PEER_IS_OTHER else "Telegram chat")
    me_ids = me_ids | _inferred_me(chat, kind)
    info = ChatInfo(name, me_ids, settings.me_names, settings.zone)
    out: list = []
    made: list[tuple[Message, float]] = []
    for position, record in enumerate(messages):
        ident = record.get("id", position) if isinstance(record, dict) else position
        # The isolation boundary: whatever one message holds fails that message alone.
        msg = each_record(f"{uri}#{chat_id}/{ident}", message, record, info)
        if isinstance(msg, ReadError):
            out.append(msg)
        elif msg is not None:
            made.append(msg)
    made.sort(key=lambda m: m[0].when)  # stable: equal times keep export order
    stamps = {id(m): stamp for m, stamp in made}
    used: set[str] = set()
    for window in windows([m for m, _ in made], WINDOW_GAP, WINDOW_MESSAGES, WINDOW_CHARS):
        start = int(window[0].when.timestamp())
        native_id = f"{chat_id}@{start}"
        if native_id in used:  # two windows starting in one second (a burst cut by the size bound)
            native_id = f"{native_id}+{len(used)}"
        used.add(native_id)
        doc = window_document(
            window,
            source=source,
            connector=NAME,
            native_id=native_id,
            uri=f"{uri}#{chat_id}@{start}",
            chat=name,
            chat_id=chat_id,
            is_group=kind in GROUPS,
            chat_type=kind,
            file=key,
        )
        out.append((doc, max(stamps[id(m)] for m in window)))
    return out


def _inferred_me(chat: dict, kind: str) -> frozenset[str]:
    """Who I am, from the chat alone: Saved Messages' id is mine; in a personal or bot chat the
    chat's id is the other side's, so any other user who writes is me."""
    if not chat.get("id"):
        return frozenset()
    if kind == "saved_messages":
        return frozenset({f"user{chat['id']}"})
    if kind not in _PEER_IS_OTHER:
        return frozenset()
    peer = f"user{chat['id']}"
    senders = {sender_id(m.get("from_id")) for m in chat["messages"] if isinstance(m, dict) and m.get("from_id")}
    if peer not in senders:  # an id of another scheme (old exports): the chat's name is the peer's
        name = chat.get("name")
        peers = {sender_id(m.get("from_id")) for m in chat["messages"] if isinstance(m, dict) and m.get("from") == name}
        if not name or not peers:
            return frozenset()
        return frozenset(s for s in senders - peers if s.startswith("user"))
    return frozenset(s for s in senders - {peer} if s.startswith("user"))
