"""Chat exports: what the connectors of exported conversations share (wechat, chatgpt, claude).
Finding and incrementally reading the export files themselves is :mod:`connectors._exports`.

- **AI conversations** (:func:`read_conversation_exports`, :func:`render_turns`,
  :func:`turn_spans`): ``User: …`` / ``Assistant: …`` paragraphs; chunks hold whole exchanges
  (a question and its answer) where they fit.
- **Chat windows** (:func:`windows`, :func:`window_spans`): messages split into conversation
  windows at time gaps and a size bound; one line per message, chunks of whole lines.
- **Times** (:func:`parse_time`): the epoch numbers and ISO strings exports write.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from ragbag.connectors._exports import Record, export_files, load_json, read_exports, zip_members
from ragbag.connectors._isolate import each_record
from ragbag.core.records import ME, Cursor, Document, ReadError, Seen, Span
from ragbag.text.chunking import TokenCounter, pack, pack_ranges, prose_spans
from ragbag.text.unreadable import Unreadable


def parse_time(value: Any, naive_tz: timezone | None = UTC) -> datetime | None:
    """An aware UTC datetime from epoch seconds (milliseconds when too large to be seconds), a
    numeric string, or an ISO string (naive ones taken in ``naive_tz``; None: local time)."""
    if value is None or isinstance(value, bool) or value == "":
        return None
    if isinstance(value, str):
        value = value.strip()
        try:
            value = float(value)
        except ValueError:
            try:
                dt = datetime.fromisoformat(value.replace("Z", "+00:00"))
            except ValueError:
                return None
            if dt.tzinfo is None:
                dt = dt.replace(tzinfo=naive_tz) if naive_tz else dt.astimezone()
            return dt.astimezone(UTC)
    if not isinstance(value, (int, float)) or value != value or value <= 0:
        return None
    if value > 1e11:  # milliseconds since 1970 (seconds would be past the year 5000)
        value /= 1000
    try:
        return datetime.fromtimestamp(value, tz=UTC)
    except (OverflowError, OSError, ValueError):
        return None


# --- AI conversations: exports ----------------------------------------------------------------


# The key that marks the other AI vendor's conversations.json: (vendor, its connector).
FOREIGN = {"chat_messages": ("Claude", "claude"), "mapping": ("ChatGPT", "chatgpt")}


def _conversation_list(data: Any, own: str) -> list | None:
    """The conversations of a parsed export file: the vendor's list itself, the list under a
    ``conversations`` key (account-wrapped dumps), or one conversation object on its own (what
    browser exporters and the web app's API write per conversation); None for anything else."""
    if isinstance(data, list):
        return data
    if isinstance(data, dict):
        if isinstance(data.get("conversations"), list):
            return data["conversations"]
        if own in data or any(key in data for key in FOREIGN):
            return [data]
    return None


def read_conversation_exports(
    path: Path,
    cursor: dict | None,
    version: str,
    vendor: str,
    foreign: str,
    id_of: Callable[[dict], Any],
    build: Callable[[dict, str, str, str], Record | None],
    follow_outside: bool = False,
    exclude: Sequence[str] = (),
) -> Iterator[Document | ReadError | Seen | Cursor]:
    """``read()`` of the AI chat connectors: every ``conversations*.json`` under ``path``, loose
    or in export zips (or ``path`` itself, whatever its name), holds conversations;
    ``build(conversation, id, uri, key)`` makes one record (None: nothing to index; a list:
    the record and ReadErrors for parts left out). Any exception fails that conversation alone
    (:func:`connectors._isolate.each_record`), reported with its id. A list whose conversations carry the
    ``foreign`` key is the other vendor's export of the same name: one error says so and which
    connector reads it (never an empty success)."""

    own = next(key for key, (name, _) in FOREIGN.items() if name == vendor)

    def wanted(name: str) -> bool:
        name = name.lower()
        return name.startswith("conversations") and name.endswith(".json")

    def convert(data: bytes, uri: str, key: str) -> Iterator:
        try:
            convs = load_json(data)
        except Unreadable as exc:
            yield ReadError(uri, str(exc))
            return
        convs = _conversation_list(convs, own)
        if convs is None:
            yield ReadError(
                uri, f"not a {vendor} export: expected a list of conversations, or one conversation with {own!r}"
            )
            return
        if any(isinstance(c, dict) and foreign in c for c in convs[:20]):
            other = FOREIGN[foreign]
            yield ReadError(
                uri,
                f"a {other[0]} export (conversations with {foreign!r}), not a {vendor} one: "
                f"add it with `ragbag add {other[1]} NAME PATH`",
            )
            return
        for index, conv in enumerate(convs):
            conv_id = str(id_of(conv) or "") if isinstance(conv, dict) else ""
            # The isolation boundary: whatever one conversation holds fails that conversation alone.
            items = each_record(f"{uri}#{conv_id or index}", _built, build, conv, conv_id, uri, key)
            if isinstance(items, ReadError):
                yield items
            else:
                yield from items

    def parse(file: Path, key: str) -> Iterator:
        if file.suffix.lower() == ".zip":
            for item in zip_members(file, wanted):
                if isinstance(item, ReadError):
                    yield item
                else:
                    yield from convert(item[1], item[0], key)
            return
        try:
            data = file.read_bytes()
        except OSError as exc:
            yield ReadError(str(file.absolute()), f"unreadable: {exc.strerror or exc}")
            return
        yield from convert(data, str(file.absolute()), key)

    files, errors = export_files(
        Path(path), lambda name: name.lower().endswith(".zip") or wanted(name), follow_outside, exclude
    )
    yield from errors
    yield from read_exports(files, parse, cursor, version)


def _built(build: Callable, conv: Any, conv_id: str, uri: str, key: str) -> list:
    """What ``build`` makes of one conversation, as a list: its record (if any) and the
    ReadErrors of the parts it had to leave out (a build may return either, or a list)."""
    if not isinstance(conv, dict):
        raise Unreadable(f"not a conversation object ({type(conv).__name__})")
    if not conv_id:
        raise Unreadable("conversation has no id")
    made = build(conv, conv_id, f"{uri}#{conv_id}", key)
    if made is None:
        return []
    return list(made) if isinstance(made, list) else [made]


def conversation_title(name: Any, turns: Sequence[tuple[str, str]]) -> str:
    """The conversation's name, else its first question (cut at 80 characters)."""
    title = " ".join(str(name or "").split())
    if not title:
        first = next((text for role, text in turns if role == "user" and text.strip()), "")
        title = " ".join(first.split())
        title = title[:77] + "…" if len(title) > 80 else title
    return title or "Untitled conversation"


def conversation_metadata(
    conv_id: str, title: str, roles: list[str], created, updated, url: str, key: str
) -> dict[str, Any]:
    meta: dict[str, Any] = {"title": title, "conversation_id": conv_id, "turns": len(roles), "url": url, "file": key}
    if created:
        meta["created"] = created.isoformat()
    if updated:
        meta["updated"] = updated.isoformat()
    return meta


# --- AI conversations: turns ------------------------------------------------------------------

LABELS = {"user": "User", "assistant": "Assistant"}
_ROLE_OF = {v: k for k, v in LABELS.items()}
_TURN = re.compile(r"(?:\A|(?<=\n\n))(User|Assistant): ")


def render_turns(turns: Iterable[tuple[str, str]]) -> tuple[str, list[str]]:
    """(text, roles): ``User: …`` / ``Assistant: …`` paragraphs, consecutive messages of one
    role merged into one turn. A line inside a message that would read as a turn label gets a
    space before its colon, so the text always parses back into the same turns."""
    merged: list[list[str]] = []
    for role, text in turns:
        text = text.strip()
        if not text:
            continue
        text = _TURN.sub(lambda m: f"{m.group(1)} : ", text)
        if merged and merged[-1][0] == role:
            merged[-1][1] += "\n\n" + text
        else:
            merged.append([role, text])
    text = "\n\n".join(f"{LABELS[role]}: {body}" for role, body in merged)
    return (text + "\n" if text else ""), [role for role, _ in merged]


def _turns(text: str) -> list[tuple[int, int, str]]:
    """(start, end, role) of each turn, ends trimmed of the blank line between turns."""
    starts = [(m.start(), _ROLE_OF[m.group(1)]) for m in _TURN.finditer(text)]
    out = []
    for n, (start, role) in enumerate(starts):
        end = starts[n + 1][0] if n + 1 < len(starts) else len(text)
        while end > start and text[end - 1].isspace():
            end -= 1
        out.append((start, end, role))
    return out


def turn_spans(text: str, count: TokenCounter, max_tokens: int) -> list[Span]:
    """Chunks of whole exchanges (a user turn and the replies to it), neighbouring exchanges
    packed together while they fit; an exchange too long for one chunk is cut at its turns,
    then like prose (headings, paragraphs, sentences), the question packed with the start of
    its answer. Span metadata: ``roles`` (in order), ``turn_start``/``turn_end`` (1-based)."""
    turns = _turns(text)
    if not turns:
        return prose_spans(text, count, max_tokens)
    exchanges: list[list[int]] = []
    for i, (_, _, role) in enumerate(turns):
        if role == "user" or not exchanges:
            exchanges.append([i])
        else:
            exchanges[-1].append(i)
    units: list[tuple[int, int, bool]] = []  # (start, end, a whole exchange)
    for group in exchanges:
        start, end = turns[group[0]][0], turns[group[-1]][1]
        if count(text[start:end]) <= max_tokens:
            units.append((start, end, True))
            continue
        pieces = []
        for i in group:
            s, e, _ = turns[i]
            pieces += [(s + p.start, s + p.end) for p in prose_spans(text[s:e], count, max_tokens)]
        units += [(s, e, False) for s, e in pack_ranges(text, pieces, count, max_tokens)]
    merged: list[tuple[int, int, bool]] = []
    for start, end, whole in units:
        if merged and whole and merged[-1][2] and count(text[merged[-1][0] : end]) <= max_tokens:
            merged[-1] = (merged[-1][0], end, True)
        else:
            merged.append((start, end, whole))
    spans = []
    for start, end, _ in merged:
        inside = [(n, role) for n, (s, e, role) in enumerate(turns, 1) if s < end and e > start]
        roles = list(dict.fromkeys(role for _, role in inside))
        spans.append(Span(start, end, {"roles": roles, "turn_start": inside[0][0], "turn_end": inside[-1][0]}))
    return spans


# --- chat apps: conversation windows ----------------------------------------------------------

_LINE = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d) (.*?): ", re.M)


@dataclass
class Message:
    when: datetime  # aware
    sender: str
    text: str
    is_from_me: bool


def windows(messages: Sequence[Message], gap: timedelta, max_messages: int, max_chars: int) -> list[list[Message]]:
    """Messages (in time order) cut into conversation windows: a new window after a silence of
    more than ``gap``, or once a window holds ``max_messages`` or ``max_chars``. Cuts depend only
    on what came before, so messages appended to a chat never move an earlier window."""
    out: list[list[Message]] = []
    chars = 0
    for msg in messages:
        if not out or msg.when - out[-1][-1].when > gap or len(out[-1]) >= max_messages or chars >= max_chars:
            out.append([])
            chars = 0
        out[-1].append(msg)
        chars += len(msg.text)
    return out


def window_document(
    lines: Sequence[Message],
    *,
    source: str,
    connector: str,
    native_id: str,
    uri: str,
    chat: str,
    chat_id: str,
    is_group: bool,
    title: str | None = None,
    span: tuple[datetime, datetime] | None = None,
    **extra: Any,
) -> Document:
    """A conversation window as every chat connector indexes it, so all chats read, cite and
    filter alike: its messages as lines (:func:`render_lines`), titled "``title`` (the chat) ·
    day", from its first message to its last (``span``: other bounds, such as a thread's replies
    opening with the older message they answer), the senders as authors; metadata ``chat chat_id
    is_group sender is_from_me date messages`` and then ``extra`` (``file``, ``chat_type`` …)."""
    start, end = span or (lines[0].when, lines[-1].when)
    senders = list(dict.fromkeys(m.sender for m in lines))
    day = f"{start.astimezone(UTC):%Y-%m-%d}"
    return Document(
        source=source,
        connector=connector,
        native_id=native_id,
        uri=uri,
        title=f"{title or chat} · {day}",
        text=render_lines(lines),
        created_at=start,
        updated_at=end,
        authors=senders,
        metadata={
            "chat": chat,
            "chat_id": chat_id,
            "is_group": is_group,
            "sender": senders,
            "is_from_me": any(m.is_from_me for m in lines),
            "date": day,
            "messages": len(lines),
            **extra,
        },
    )


def render_lines(messages: Iterable[Message]) -> str:
    """``YYYY-MM-DD HH:MM sender: text`` per message, continuation lines indented. Times are UTC,
    as in the imessage connector: local time would change every document (and re-embed it)
    whenever the machine's zone does."""
    lines = []
    for m in messages:
        sender = " ".join(m.sender.replace(": ", " ").split()) or "?"
        body = "\n  ".join(line.rstrip() for line in m.text.strip().splitlines() if line.strip())
        lines.append(f"{m.when.astimezone(UTC):%Y-%m-%d %H:%M} {sender}: {body}")
    return "\n".join(lines) + "\n"


def window_spans(text: str, count: TokenCounter, max_tokens: int) -> list[Span]:
    """Chunks of whole message lines (a long message is cut like prose); span metadata
    ``sender`` (the chunk's senders, in order) and ``is_from_me`` (one of them is me)."""
    heads = [(m.start(), m.group(2)) for m in _LINE.finditer(text)]
    if not heads:
        return prose_spans(text, count, max_tokens)
    bounds = [s for s, _ in heads] + [len(text)]
    pieces = [(s, e - (text[e - 1] == "\n")) for s, e in zip(bounds, bounds[1:])]
    out = []
    for sp in pack(text, pieces, count, max_tokens):
        s, e = sp.start, sp.end
        while s < e and text[s].isspace():
            s += 1
        while e > s and text[e - 1].isspace():
            e -= 1
        if s == e:
            continue
        senders = [name for (hs, name), he in zip(heads, bounds[1:]) if hs < e and he > s]
        senders = list(dict.fromkeys(senders))
        out.append(Span(s, e, {"sender": senders, "is_from_me": ME in senders}))
    return out
