"""Claude exports, differentially: ragbag's conversations against a plain walk of the JSON.

The reference parses the file with :mod:`json` alone: every conversation object with a
``chat_messages`` list; its messages are the objects in it (a ``null`` entry skipped) whose
sender is ``human`` or ``assistant``; where messages name parents (``parent_message_uuid``),
only the current branch (from ``current_leaf_message_uuid``, else the leaf with the latest
``created_at``, back to the root); text = the ``text`` blocks of ``content``, else ``text``.
Checks: see :mod:`tests.differential._ai_chats`.
"""

from __future__ import annotations

from pathlib import Path

from tests.differential import _ai_chats
from tests.differential.common import FIXTURES, PUBLIC, Outcome

CONNECTOR = "claude"
EXPLAINED: dict[str, str] = {}


def units() -> list[Path]:
    files = []
    for root in (PUBLIC / CONNECTOR, FIXTURES / "realworld" / CONNECTOR):
        files += sorted(p for p in root.rglob("*.json") if p.is_file())
    return files


def _branch(messages: list[dict], leaf) -> list[dict]:
    if not any(m.get("parent_message_uuid") for m in messages):
        return messages
    by_id = {m.get("uuid"): m for m in messages}
    if leaf not in by_id:
        parents = {m.get("parent_message_uuid") for m in messages}
        tips = [m for m in messages if m.get("uuid") not in parents] or messages
        leaf = max(tips, key=lambda m: _ai_chats.when(m.get("created_at")) or _ai_chats.when(0.001)).get("uuid")
    out, seen = [], set()
    while leaf in by_id and leaf not in seen:
        seen.add(leaf)
        out.append(by_id[leaf])
        leaf = by_id[leaf].get("parent_message_uuid")
    return out[::-1]


def reference(path: Path) -> dict[str, _ai_chats.Conversation]:
    out = {}
    for conv in _ai_chats.conversations(path):
        messages = conv.get("chat_messages")
        if not isinstance(messages, list) or not conv.get("uuid"):
            continue
        c = out[str(conv["uuid"])] = _ai_chats.Conversation(_ai_chats.when(conv.get("created_at")))
        for msg in _branch([m for m in messages if isinstance(m, dict)], conv.get("current_leaf_message_uuid")):
            role = {"human": "user", "assistant": "assistant"}.get(msg.get("sender"))
            if role is None:
                continue
            blocks = [
                b.get("text") for b in msg.get("content") or [] if isinstance(b, dict) and b.get("type") == "text"
            ]
            text = "\n".join(t for t in blocks if isinstance(t, str) and t.strip()) or str(msg.get("text") or "")
            c.messages.append((role, text))
    return out


def compare(path: Path) -> Outcome:
    return _ai_chats.compare(CONNECTOR, path, reference(path))
