"""Signal messages as conversation windows: what a message says as Signal shows it now, who said
it, when; one document per window of one conversation."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from itertools import groupby
from typing import Any

from ragbag.connectors._chat import ME, Message, parse_time, window_document, windows
from ragbag.connectors._isolate import each_record
from ragbag.connectors.signal.database import (
    Chat,
    attachment_rows,
    chats,
    load_object,
    message_rows,
    own_aci,
    text_of,
)
from ragbag.core.records import Document, ReadError
from ragbag.text.unreadable import Unreadable

WINDOW_GAP = timedelta(hours=1)
WINDOW_MESSAGES = 200
WINDOW_CHARS = 20_000
NOTE_TO_SELF = "Note to Self"  # Signal's title for the account's own conversation
_SAID = ("incoming", "outgoing")  # every other type is an event: calls, group changes, safety numbers…
_LONG_TEXT = "text/x-signal-plain"  # a long message's text sent as a file: the body already holds it


@dataclass
class Said(Message):
    message_id: str = ""


@dataclass
class _Known:
    """What names a message's chat and sender: the database's conversations, looked up three ways."""

    chats: dict[str, Chat]
    by_service: dict[str, Chat]
    by_e164: dict[str, Chat]
    files: dict[str, list[tuple[str, str]]]
    disappearing: bool


def documents(conn: Any, uri: str, source: str, connector: str, disappearing: bool) -> Iterator[Document | ReadError]:
    """Every window of every conversation; a message that cannot be read is a ReadError
    (``<db>#<message id>``) and the rest of its conversation is still read."""
    found = chats(conn)
    own = own_aci(conn)
    for chat in found.values():
        if own and chat.service_id == own:
            chat.title = NOTE_TO_SELF
    known = _Known(
        found,
        {c.service_id: c for c in found.values() if c.service_id},
        {c.e164: c for c in found.values() if c.e164},
        attachment_rows(conn),
        disappearing,
    )
    for conversation_id, rows in groupby(message_rows(conn), key=lambda r: text_of(r["conversationId"])):
        chat = known.chats.get(conversation_id) or Chat(
            conversation_id, conversation_id or "Unknown chat", False, "", ""
        )
        said: list[Said] = []
        for row in rows:
            ident = row["id"].decode("utf-8", "replace") if isinstance(row["id"], bytes) else str(row["id"])
            # The isolation boundary: whatever one message holds fails that message alone.
            item = each_record(f"{uri}#{ident}", _message, row, ident, chat, known)
            if isinstance(item, ReadError):
                yield item
            elif item is not None:
                said.append(item)
        said.sort(key=lambda m: m.when)  # stable: messages of one instant keep the database's order
        for window in windows(said, WINDOW_GAP, WINDOW_MESSAGES, WINDOW_CHARS):
            yield _document(window, chat, uri, source, connector)


def _document(window: list[Said], chat: Chat, uri: str, source: str, connector: str) -> Document:
    native_id = f"{chat.id}/{window[0].message_id}"
    return window_document(
        window,
        source=source,
        connector=connector,
        native_id=native_id,
        uri=f"{uri}#{native_id}",
        chat=chat.title,
        chat_id=chat.id,
        is_group=chat.is_group,
    )


def _message(row: dict[str, Any], ident: str, chat: Chat, known: _Known) -> Said | None:
    """A message as Signal shows it; None for what is not conversation (events, stories, messages
    deleted for everyone, view-once media, and disappearing messages unless the source asks)."""
    data = load_object(row["json"]) or {}
    kind = text_of(row["type"]) or str(data.get("type") or "")
    if kind not in _SAID or data.get("deletedForEveryone"):
        return None
    if _set(row["isViewOnce"], data.get("isViewOnce")) or _set(row["isErased"], data.get("isErased")):
        return None
    if not known.disappearing and _set(row["expireTimer"], data.get("expireTimer")):
        return None
    if chat.is_group and _set(row["storyId"], data.get("storyId")):
        return None  # a reply to a story: Signal shows it with the story, not in the group's chat
    raw_time = row["sent_at"] or data.get("sent_at") or data.get("timestamp") or row["received_at_ms"]
    when = parse_time(raw_time)
    if when is None:
        raise Unreadable(f"no usable sent_at ({raw_time!r})")
    text = _text(row, data, ident, known)
    if not text:
        return None
    mine = kind == "outgoing"
    return Said(when, ME if mine else _sender(row, data, chat, known), text, mine, ident)


def _text(row: dict[str, Any], data: dict[str, Any], ident: str, known: _Known) -> str:
    """The body (an edited message's ``body`` is its latest version: Signal's handleEditMessage
    sets it with each edit and keeps older ones, newest first, in ``editHistory``), then its
    files, sticker and shared contacts as ``[attachment: name]``, ``[sticker: …]``,
    ``[contact: name]``."""
    body = text_of(row["body"]) if row["body"] is not None else str(data.get("body") or "")
    history = data.get("editHistory")
    if not body.strip() and isinstance(history, list):
        versions = [h for h in history if isinstance(h, dict)]
        newest = max(versions, key=lambda h: h.get("timestamp") or 0, default={})
        body = str(newest.get("body") or "")
    parts = [body.strip()]
    files = known.files.get(ident)
    if files is None:
        listed = data.get("attachments")
        files = [
            (str(a.get("fileName") or ""), str(a.get("contentType") or ""))
            for a in (listed if isinstance(listed, list) else [])
            if isinstance(a, dict)
        ]
    parts += [f"[attachment: {name or kind or 'file'}]" for name, kind in files if kind != _LONG_TEXT]
    sticker = data.get("sticker")
    if isinstance(sticker, dict):
        emoji = sticker.get("emoji") or ""
        parts.append(f"[sticker: {emoji}]" if emoji else "[sticker]")
    shared = data.get("contact")
    for card in shared if isinstance(shared, list) else []:
        name = card.get("name") if isinstance(card, dict) else None
        if isinstance(name, dict):
            label = name.get("displayName") or " ".join(str(name.get(k) or "") for k in ("givenName", "familyName"))
            parts.append(f"[contact: {' '.join(str(label).split()) or '?'}]")
    return " ".join(p for p in parts if p)


def _sender(row: dict[str, Any], data: dict[str, Any], chat: Chat, known: _Known) -> str:
    """The author of an incoming message: the contact its ACI (or, in old databases, its phone
    number) names; in a direct chat the chat's contact."""
    service = text_of(row["sourceServiceId"] or row["sourceUuid"])
    service = service or str(data.get("sourceServiceId") or data.get("sourceUuid") or "")
    if service and (contact := known.by_service.get(service.lower())):
        return contact.title
    number = text_of(row["source"]) or str(data.get("source") or "")
    if number and (contact := known.by_e164.get(number)):
        return contact.title
    if not chat.is_group:
        return chat.title
    return number or "Unknown contact"


def _set(*values: Any) -> bool:
    """Whether a flag or timer is on in the column or the JSON (0, NULL and false are off)."""
    return any(v not in (None, 0, False, "", b"", "0") for v in values)
