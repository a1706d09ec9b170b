"""One exported chat: its messages with their senders and instants, its name, whether it is a
group, and which sender is the exporting user."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, tzinfo

from ragbag.connectors._chat import ME, Message
from ragbag.connectors.whatsapp import lines, phrases
from ragbag.connectors.whatsapp.lines import MARKS, Line
from ragbag.text.unreadable import Unreadable

NOT_AN_EXPORT = (
    "not a WhatsApp chat export: expected lines like '[31/12/23, 21:41:05] Name: text' (iOS) "
    "or '31/12/2023, 21:41 - Name: text' (Android)"
)
# "Name: text". A name holds no quotes: "Anna changed the subject to "Trip: May"" is an event.
_SENDER = re.compile(r"\A(?P<sender>[^\n\"“”„«»]{1,100}?):(?: |\Z)")
_SPACES = re.compile(rf"[\s\u00a0\u202f{MARKS}]+")
# The name in an export's file name: "WhatsApp Chat with Anna", "WhatsApp Chat - Anna",
# "WhatsApp-Chat mit Anna", "Chat de WhatsApp con Anna", "Conversa do WhatsApp com Anna",
# "Discussion WhatsApp avec Anna", "WhatsApp Chat met Anna"; " (1)" of a second download dropped.
_FILE_NAME = re.compile(
    r"\A.*?\bwhats\s?app\b(?:[\s_-]*chat)?\s+(?:[-–]|with|mit|con|com|avec|met|med|z|ze|с|ile|na|dengan)\s+"
    r"(?P<name>.+?)(?:\s*\(\d+\))?\Z",
    re.I,
)


@dataclass
class Entry:
    """One message as written: its line, local wall-clock time, sender (None: an Android event)
    and what its text is."""

    number: int
    wall: datetime  # naive: the phone's wall clock
    sender: str | None
    body: phrases.Body


@dataclass
class Chat:
    name: str
    is_group: bool
    messages: list[Message] = field(default_factory=list)


def name_from_file(file_name: str) -> str:
    """The chat's name a WhatsApp export's file (or folder) name gives, else ""."""
    stem = file_name.rsplit("/", 1)[-1]
    if "." in stem and stem.rsplit(".", 1)[1].lower() in ("txt", "zip"):
        stem = stem.rsplit(".", 1)[0]
    m = _FILE_NAME.match(stem.strip())
    return clean_name(m["name"]) if m else ""


def clean_name(name: str) -> str:
    """A sender or chat name as shown: direction marks gone, spaces plain and single, and without
    the "~ " WhatsApp puts before a member who is not in the phone's contacts."""
    name = " ".join(_SPACES.sub(" ", name).split())
    return name[1:].strip() if name.startswith("~") and len(name) > 1 else name


def entries(text: str) -> tuple[list[tuple[Line, list[str]]], list[int], str]:
    """(messages as split, stray line numbers, the date order) of an export's text; Unreadable
    when no line starts a message."""
    split, stray = lines.split(text)
    if not split:
        raise Unreadable(NOT_AN_EXPORT)
    return split, stray, lines.date_order([head for head, _ in split])


def entry(head: Line, more: list[str], order: str) -> Entry:
    """One message from its first line and continuation lines; Unreadable for an impossible date."""
    try:
        wall = lines.wall_time(head, order)
    except ValueError as exc:
        raise Unreadable(f"impossible time {'/'.join(head.parts)} {head.hour}:{head.minute:02d} ({exc})") from None
    m = _SENDER.match(head.rest)
    sender = clean_name(m["sender"]) if m else None
    rest = head.rest[m.end() :] if m else head.rest
    body = phrases.classify("\n".join([rest, *more]), sender is not None)
    return Entry(head.number, wall, sender or None, body)


def assemble(found: Iterable[Entry], hints: list[str], zone: tzinfo | None, me: Iterable[str]) -> Chat:
    """The chat the entries make: its name (the first of ``hints``, the export's file names, that
    names it; else the sender of iOS's encryption notice, which is the contact or the group; else
    a "created group" line's name; else the other senders), whether it is a group, who is me,
    and its messages in time order."""
    found = list(found)
    said = [e for e in found if e.sender and e.body.kind != phrases.SYSTEM]
    events = [e for e in found if e.body.kind == phrases.SYSTEM]
    senders = list(dict.fromkeys(e.sender for e in said if e.sender))
    notice = next((e.sender for e in events if e.sender and phrases.encryption_notice(e.body.text)), None)
    only_events = [s for s in dict.fromkeys(e.sender for e in events if e.sender) if s not in senders]
    is_group = (
        len(senders) > 2
        or any(phrases.group_event(e.body.text) for e in events)
        or (bool(only_events) and len(senders) >= 2)
    )
    named = next((clean_name(h) for h in hints if h.strip()), "")
    name = (
        named
        or notice
        or next((phrases.created_name(e.body.text) for e in events if phrases.created_name(e.body.text)), "")
    )
    mine_names = {_key(n) for n in me if n and n.strip()}
    if not mine_names:
        mine_names = _inferred_me(said, senders, named or notice or "", is_group)
    if not name:
        others = [s for s in senders if _key(s) not in mine_names]
        name = ", ".join(others[:3]) + (" …" if len(others) > 3 else "") if others else (only_events or [""])[0]
    messages = []
    last = None
    for e in said:
        if e.body.kind not in (phrases.TEXT, phrases.MEDIA) or not e.body.text.strip():
            continue
        mine = _key(e.sender or "") in mine_names
        when = lines.instant(e.wall, zone).astimezone(UTC)
        if last is not None and when < last:  # the hour a clock change repeats: its second pass
            later = lines.instant(e.wall.replace(fold=1), zone).astimezone(UTC)
            when = later if later >= last else when
        last = max(when, last) if last is not None else when
        messages.append(Message(when, ME if mine else e.sender or "?", e.body.text, mine))
    messages.sort(key=lambda m: m.when)  # stable: a message out of order takes its place in time
    return Chat(name, is_group, messages)


def _key(name: str) -> str:
    return clean_name(name).casefold()


def _inferred_me(said: list[Entry], senders: list[str], name: str, is_group: bool) -> set[str]:
    """Who the exporting user is when the source does not say: the sender of "You deleted this
    message"; in a direct chat of two senders, the one who is not the chat's contact (the
    contact being who the file or the encryption notice names)."""
    deleted = Counter(_key(e.sender or "") for e in said if e.body.mine)
    if deleted:
        return {deleted.most_common(1)[0][0]}
    if not is_group and len(senders) == 2 and name:
        others = [s for s in senders if _key(s) != _key(name)]
        if len(others) == 1:
            return {_key(others[0])}
    return set()
