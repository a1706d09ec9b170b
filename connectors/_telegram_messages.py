"""Telegram Desktop's JSON export, one message at a time: the message as a line's text (rich
text joined, media, polls, places and contacts as labels), its sender, whether it is mine, and
its time. Chats, windows and files are :mod:`connectors.telegram`'s."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, tzinfo
from pathlib import PurePosixPath
from typing import Any

from ragbag.connectors._chat import ME, Message, parse_time
from ragbag.text.unreadable import Unreadable, one_line

_NOT_INCLUDED = "(File "  # "(File not included. Change data exporting settings to download.)"
_BLOCKS = frozenset({"blockquote", "pre"})  # entities the app shows as blocks of their own
_MEDIA = {"voice_message": "voice", "video_message": "video message", "animation": "GIF"}


@dataclass
class ChatInfo:
    """What rendering a chat's messages needs to know about the chat."""

    name: str
    me_ids: frozenset[str]
    me_names: frozenset[str]
    zone: tzinfo | None


def message(record: Any, chat: ChatInfo) -> tuple[Message, float] | None:
    """A message and its stamp (its last edit, else its time); None for what is dropped."""
    if not isinstance(record, dict):
        raise Unreadable(f"not a message object ({type(record).__name__})")
    if record.get("type") == "service":
        return None
    when = time_of(record, "date", chat.zone)
    if when is None:
        raise Unreadable(f"no usable date ({one_line(repr(record.get('date_unixtime', record.get('date'))))})")
    text = _body(record)
    if not text:
        return None
    from_id = sender_id(record.get("from_id"))
    sender = record.get("from")
    sender = " ".join(sender.split()) if isinstance(sender, str) else ""
    mine = from_id in chat.me_ids or (bool(sender) and sender in chat.me_names)
    if not sender:  # Telegram writes null for an account since deleted
        sender = "Deleted Account" if from_id.startswith("user") or not from_id else chat.name
    edited = time_of(record, "edited", chat.zone)
    stamp = max(when, edited or when).timestamp()
    return Message(when, ME if mine else sender, text, mine), stamp


def sender_id(value: Any) -> str:
    """A ``from_id`` as newer exports write it (``user123``, ``channel456``): exports before
    ``date_unixtime`` existed wrote a user's id as a bare number."""
    if isinstance(value, int) and not isinstance(value, bool):
        return f"user{value}"
    return str(value or "")


def time_of(record: dict, field: str, zone: tzinfo | None) -> datetime | None:
    """``<field>_unixtime`` (UTC) when the export has it, else ``<field>``: the exporting
    machine's local time without a zone, taken in ``zone`` (None: this machine's)."""
    when = parse_time(record.get(f"{field}_unixtime"))
    if when is not None:
        return when
    value = record.get(field)
    if not isinstance(value, str) or not value.strip():
        return None
    try:
        dt = datetime.fromisoformat(value.strip())
    except ValueError:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=zone) if zone else dt.astimezone()
    return dt.astimezone(UTC)


def _body(record: dict) -> str:
    """The message as text: what it carries (media, poll, place …), then its own text."""
    text = _rich(record.get("text")).strip()
    parts = [label for label in (_attached(record), text) if label]
    if parts and "forwarded_from" in record:
        who = record["forwarded_from"]
        parts.insert(0, f"[forwarded from {' '.join(who.split())}]" if isinstance(who, str) else "[forwarded]")
    return " ".join(parts)


def _rich(value: Any) -> str:
    """``text``: a string, or a list of strings and entities ``{type, text, href?}``. The pieces
    are the message's text cut at its entities, so they are joined as they are, except that a
    block (a quote, a code block) starts and ends a line as the app shows it, and a
    ``text_link`` keeps its address after its words."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if not isinstance(value, list):
        raise Unreadable(f"text is a {type(value).__name__}, not text")
    out = ""
    block_ended = False
    for piece in value:
        if isinstance(piece, str):
            words, kind = piece, "plain"
        elif isinstance(piece, dict):
            inner = piece.get("text")
            words = inner if isinstance(inner, str) else _rich(inner)
            kind = str(piece.get("type") or "")
            href = piece.get("href")
            if kind == "text_link" and isinstance(href, str) and href and href not in words:
                stripped = words.rstrip()
                words = f"{stripped} ({href}){words[len(stripped) :]}"
        else:
            raise Unreadable(f"a text entity is a {type(piece).__name__}")
        block = kind in _BLOCKS
        if words and (block or block_ended) and out and not out.endswith("\n") and not words.startswith("\n"):
            out += "\n"
        out += words
        block_ended = block if words else block_ended
    return out


def _attached(record: dict) -> str:
    """The label of what a message carries besides text (empty: nothing)."""
    if "photo" in record:
        return "[photo]"
    if isinstance(record.get("poll"), dict):
        return _poll(record["poll"], "poll", "question")
    if isinstance(record.get("todo_list"), dict):
        return _poll(record["todo_list"], "to-do list", "title")
    if isinstance(record.get("contact_information"), dict):
        c = record["contact_information"]
        who = " ".join(str(c.get(k) or "") for k in ("first_name", "last_name", "phone_number")).split()
        return f"[contact] {' '.join(who)}".strip()
    if record.get("place_name") or record.get("address"):
        place = ", ".join(" ".join(str(record.get(k)).split()) for k in ("place_name", "address") if record.get(k))
        return f"[location] {place}"
    if isinstance(record.get("location_information"), dict):
        at = record["location_information"]
        live = "live location" if record.get("live_location_period_seconds") else "location"
        return f"[{live}] {at.get('latitude')}, {at.get('longitude')}"
    if record.get("game_title"):
        return f"[game] {record['game_title']}"
    if isinstance(record.get("invoice_information"), dict):
        return f"[invoice] {record['invoice_information'].get('title') or ''}".strip()
    kind = record.get("media_type")
    if kind == "sticker":
        emoji = record.get("sticker_emoji")
        return f"[sticker {emoji}]" if isinstance(emoji, str) and emoji else "[sticker]"
    if kind in _MEDIA:
        return f"[{_MEDIA[kind]}]"
    if kind == "audio_file":
        named = " – ".join(str(record[k]) for k in ("performer", "title") if record.get(k)) or _file_name(record)
        return f"[audio: {named}]" if named else "[audio]"
    if kind == "video_file":
        return f"[video: {_file_name(record)}]" if _file_name(record) else "[video]"
    if "file" in record or "file_name" in record:
        return f"[file: {_file_name(record)}]" if _file_name(record) else "[file]"
    return ""


def _file_name(record: dict) -> str:
    """A file's name: ``file_name`` (newer exports), else the exported path's last part; ""
    when the file was not included and the export does not name it."""
    name = record.get("file_name")
    if isinstance(name, str) and name.strip():
        return name.strip()
    path = record.get("file")
    if isinstance(path, str) and path.strip() and not path.startswith(_NOT_INCLUDED):
        return PurePosixPath(path.replace("\\", "/")).name
    return ""


def _poll(poll: dict, label: str, heading: str) -> str:
    """``[poll] question — answer (votes) · answer (votes)``; a to-do list the same way."""
    answers = []
    for answer in poll.get("answers") or []:
        if isinstance(answer, dict):
            words = " ".join(_rich(answer.get("text")).split())
            votes = answer.get("voters")
            answers.append(f"{words} ({votes})" if isinstance(votes, int) and not isinstance(votes, bool) else words)
    question = " ".join(_rich(poll.get(heading)).split())
    return f"[{label}] {question}" + (f" — {' · '.join(answers)}" if answers else "")
