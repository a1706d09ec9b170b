"""Telegram Desktop exports, differentially: ragbag's windows against a plain walk of the JSON.

The reference parses each file with :mod:`json` alone and shares no code with the connector:
every chat (the file itself when it has ``messages``, else ``chats.list`` and ``left_chats.list``),
every message whose ``type`` is not ``service``; its time is ``date_unixtime`` (UTC) or else
``date`` (zoneless, taken in this machine's zone as the connector does without a ``timezone``
option); its sender is ``from`` (None when the export wrote null), and the account's owner when
the export names one (``personal_information.user_id`` against ``from_id``, which old exports
wrote as a bare number); its text pieces are the strings of ``text`` (a string, or a list of
strings and entities whose ``text`` is a string).

Checks, per reference message: ``count`` (ragbag's windows hold as many message lines as the
reference has messages, per file), ``times`` (a line of the message's UTC minute is in ragbag's
text), ``people`` (such a line names the same sender: ``Me`` for the owner, the ``from`` name
otherwise; where the export does not name its owner, ``Me`` is accepted too, as the connector
infers it; a null ``from`` accepts any sender), ``text`` (every piece of its text, whitespace
removed, is in that line's message, whitespace removed: the connector joins blocks on lines of
their own and adds links' addresses).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from tests.differential.common import FIXTURES, PUBLIC, Outcome, chat_checks, ragbag_read, rel

CONNECTOR = "telegram"

_BUTTONS = (
    "Messages that carry nothing but inline bot buttons (empty text, no media): the app shows"
    " only the buttons, which the connector leaves out by design (see connectors/telegram.py),"
    " so it has no line for them; the reference counts every non-service message."
)
EXPLAINED: dict[str, str] = {
    "public/telegram/chat-history-manager/crates__loaders__resources__test__telegram_2024-01_inline-bot-buttons__result.json": _BUTTONS,
}


def units() -> list[Path]:
    files = []
    for root in (PUBLIC / CONNECTOR, FIXTURES / "realworld" / CONNECTOR):
        if root.is_dir():
            files += sorted(p for p in root.rglob("*") if p.is_file() and p.suffix.lower() in (".json", ".html"))
    return files


@dataclass
class RefMessage:
    when: datetime
    sender: str | None  # None: the export wrote no name
    pieces: list[str]


def _when(msg: dict) -> datetime | None:
    unix = msg.get("date_unixtime")
    if unix not in (None, ""):
        return datetime.fromtimestamp(int(unix), tz=UTC)
    date = msg.get("date")
    if not isinstance(date, str) or not date:
        return None
    dt = datetime.fromisoformat(date)
    return (dt if dt.tzinfo else dt.astimezone()).astimezone(UTC)


def _pieces(text) -> list[str]:
    if isinstance(text, str):
        return [text]
    if isinstance(text, list):
        return [p if isinstance(p, str) else p.get("text", "") for p in text if isinstance(p, (str, dict))]
    return []


def reference(path: Path) -> tuple[list[RefMessage], bool]:
    """The messages of the file, and whether the export names its owner."""
    try:
        data = json.loads(path.read_bytes().decode("utf-8-sig"))
    except ValueError:
        return [], False
    if not isinstance(data, dict):
        return [], False
    if isinstance(data.get("messages"), list):
        chats = [data]
    else:
        chats = [c for part in ("chats", "left_chats") for c in ((data.get(part) or {}).get("list") or [])]
    owner = (data.get("personal_information") or {}).get("user_id")
    out = []
    for chat in chats:
        for msg in chat.get("messages") or []:
            if not isinstance(msg, dict) or msg.get("type") == "service":
                continue
            when = _when(msg)
            if when is None:
                continue
            from_id = msg.get("from_id")
            mine = owner is not None and from_id in (owner, f"user{owner}")
            name = msg.get("from")
            sender = "Me" if mine else (" ".join(name.replace(": ", " ").split()) if isinstance(name, str) else None)
            out.append(RefMessage(when, sender, _pieces(msg.get("text"))))
    return out, owner is not None


def _entries(docs) -> list[tuple[str, str, str]]:
    """(minute stamp, sender, message text) of every message line in ragbag's windows."""
    out: list[list[str]] = []
    for doc in docs:
        for line in doc.text.splitlines():
            if line.startswith("  ") and out:
                out[-1][2] += "\n" + line
            elif line.strip():
                stamp, rest = line[:16], line[17:]
                sender, _, body = rest.partition(": ")
                out.append([stamp, sender, body])
    return [(a, b, c) for a, b, c in out]


def compare(path: Path) -> Outcome:
    ref, named_owner = reference(path)
    docs, errors = ragbag_read(CONNECTOR, path)
    entries = _entries(docs)
    out = Outcome(rel(path), path.parent.name, len(ref), len(docs), len(errors))
    timed = people = texts = 0
    for msg in ref:
        stamp = f"{msg.when:%Y-%m-%d %H:%M}"
        at = [e for e in entries if e[0] == stamp]
        if not at:
            out.disagreements.append(f"no line at {stamp} for {''.join(msg.pieces)[:40]!r}")
            continue
        timed += 1
        accepted = {msg.sender} | (set() if named_owner else {"Me"})
        by = at if msg.sender is None else [e for e in at if e[1] in accepted]
        if by:
            people += 1
        else:
            out.disagreements.append(f"at {stamp}: senders {[e[1] for e in at]}, reference {msg.sender!r}")
        wanted = ["".join(p.split()) for p in msg.pieces if p.strip()]
        if any(all(w in "".join(e[2].split()) for w in wanted) for e in by):
            texts += 1
        else:
            out.disagreements.append(f"text at {stamp}: {''.join(msg.pieces)[:40]!r} not found")
    return chat_checks(out, docs, len(ref), timed, people, texts)
