"""ChatGPT exports, differentially: ragbag's conversations against a plain walk of the JSON.

The reference parses the file with :mod:`json` alone: every conversation object with a
``mapping``; its messages are the path from ``current_node`` (else the leaf with the latest
``create_time``) back to the root, those whose author is ``user`` or ``assistant`` and not
hidden (``is_visually_hidden_from_conversation``), text = the string parts (and ``text`` of a
``code`` content). Checks: see :mod:`tests.differential._ai_chats`.
"""

from __future__ import annotations

from pathlib import Path

from tests.differential import _ai_chats
from tests.differential.common import FIXTURES, PUBLIC, Outcome

CONNECTOR = "chatgpt"

_SYNTHETIC = (
    "polylogue's schema representative, generated from its ChatGPT schema with random tokens:"
    " every message's recipient is a token like 'synthetic-40306'. In real exports an"
    " assistant message addressed to anything but 'all' is a tool call the app hides (a memory"
    " write to 'bio'); ragbag leaves those out by design, the plain reference keeps them, so the"
    " assistant's lines differ. ragbag's reading is the app's: acceptable. (Before issue 31 the"
    " same rule dropped the user's messages too, and the file read as 0 documents, 0 errors:"
    " the rule now applies to assistant messages only.)"
)
EXPLAINED: dict[str, str] = {
    "public/chatgpt/polylogue/polylogue__schemas__providers__chatgpt__representatives__sample-01.json": _SYNTHETIC,
    "realworld/chatgpt/polylogue/native-conversation-v1.json": (
        "The reference keeps every user/assistant string part on the current path; ragbag leaves out"
        " what the app does not show as conversation: reasoning (thoughts, the analysis channel) and"
        " tool output (by design, see connectors/chatgpt.py)."
    ),
}


def units() -> list[Path]:
    files = []
    for root in (PUBLIC / CONNECTOR, FIXTURES / "realworld" / CONNECTOR):
        files += sorted(p for p in root.rglob("*.json") if p.is_file())
    return files


def _path(mapping: dict, current) -> list[dict]:
    if current not in mapping:
        leaves = [k for k, n in mapping.items() if isinstance(n, dict) and not n.get("children")]
        stamp = lambda k: (mapping[k].get("message") or {}).get("create_time") or 0  # noqa: E731
        current = max(leaves, key=stamp) if leaves else None
    out, seen = [], set()
    while current in mapping and current not in seen and isinstance(mapping[current], dict):
        seen.add(current)
        out.append(mapping[current])
        current = mapping[current].get("parent")
    return out[::-1]


def reference(path: Path) -> dict[str, _ai_chats.Conversation]:
    out = {}
    for conv in _ai_chats.conversations(path):
        mapping = conv.get("mapping")
        conv_id = conv.get("conversation_id") or conv.get("id")
        if not isinstance(mapping, dict) or not conv_id:
            continue
        c = out[str(conv_id)] = _ai_chats.Conversation(_ai_chats.when(conv.get("create_time")))
        for node in _path(mapping, conv.get("current_node")):
            msg = node.get("message") or {}
            role = (msg.get("author") or {}).get("role")
            if role not in ("user", "assistant") or (msg.get("metadata") or {}).get(
                "is_visually_hidden_from_conversation"
            ):
                continue
            content = msg.get("content") or {}
            parts = [p for p in content.get("parts") or [] if isinstance(p, str)]
            if isinstance(content.get("text"), str):
                parts.append(content["text"])
            c.messages.append((role, "\n".join(parts)))
    return out


def compare(path: Path) -> Outcome:
    return _ai_chats.compare(CONNECTOR, path, reference(path))
