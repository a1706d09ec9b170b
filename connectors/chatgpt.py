"""Documents from ChatGPT data exports: one conversation per document, chunked by exchanges.

Formats: the export zip (Settings → Data controls → Export: ``conversations.json`` beside
``chat.html``, ``user.json``, images…) or ``conversations.json`` itself; a folder is searched for
both (several exports and loose ``conversations*.json`` files may sit side by side). The file is
a list of conversations ``{id | conversation_id, title, create_time, update_time, mapping,
current_node, default_model_slug, gizmo_id, …}``, times in seconds since 1970 UTC (floats).
A file given by its path may have any name and may hold one conversation object (what
per-conversation exporters and the web app's API write) or ``{"conversations": [...]}``.
Claude's export also names its file ``conversations.json``; those are recognised and left to
the claude connector.

Traps handled:

- ``mapping`` is a tree (every edit and regenerated answer is a branch): the conversation is
  the path from ``current_node`` back to the root, so dead branches are not indexed. Without a
  usable ``current_node`` the newest leaf is followed; cycles and dangling parents end the walk.
- Message content: ``text`` (string parts), ``code`` (``text``, kept as a fenced block: the
  assistant's tool calls and canvas edits), ``multimodal_text`` (strings mixed with dicts:
  images and audio are noted as ``[image]``/``[audio]``, audio transcriptions kept). Citation
  markers (``【4†source】``, private-use ``\\ue200cite…\\ue201``) are removed.
- Skipped: system messages, tool output (browsing, code results), hidden messages
  (``is_visually_hidden_from_conversation``: custom instructions, memory), reasoning
  (``thoughts``, ``reasoning_recap``, the ``analysis`` channel), assistant messages addressed to
  a tool other than as code (``recipient: "bio"`` memory writes; a user's message is always
  kept, whatever its recipient), empty parts.
- Bad input, isolated (:mod:`connectors._isolate`, any exception, not a list of types): a
  truncated zip, a broken JSON file, an undecodable file → ``ReadError`` for the file; a
  conversation without a usable tree, or that fails in any other way →
  ``ReadError("{file}#{conversation id}")``; a message that fails →
  ``ReadError("{file}#{conversation id}/{node id}")`` and the rest of its conversation is kept;
  a tree node on the current path that is not an object ends the walk there (reported). Every
  other conversation is still read.

Text: ``User: …`` / ``Assistant: …`` paragraphs (consecutive messages of one role are one turn).
Chunks hold a question with its answer where they fit (see ``connectors._chat.turn_spans``);
chunk metadata ``roles``, ``turn_start``, ``turn_end``.

Metadata: ``title``, ``conversation_id``, ``created``/``updated`` (ISO UTC; also
``created_at``/``updated_at``), ``turns``, ``model`` (default model slug), ``gpt`` (custom GPT
id), ``url`` (chatgpt.com link), ``file`` (the export it came from). ``native_id`` = the
conversation id.

Incremental: per export file (size, mtime → conversation ids and update times): unchanged files
yield ``Seen``; a conversation in several exports is kept once, the copy with the latest
``update_time``.

Left out: uploaded files and generated images themselves, ``shared_conversations.json``,
feedback, projects' files, and ``discover()`` (exports have no default place).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ragbag.connectors._chat import (
    conversation_metadata,
    conversation_title,
    parse_time,
    read_conversation_exports,
    render_turns,
    turn_spans,
)
from ragbag.connectors._isolate import each_record
from ragbag.connectors._walk import follows_outside
from ragbag.core.records import Cursor, Document, ReadError, Seen, Span
from ragbag.text.chunking import TokenCounter
from ragbag.text.unreadable import Unreadable

NAME = "chatgpt"
SCHEDULE = "0 4 * * *"  # exports change when the user exports again: daily is plenty
_VERSION = "chatgpt-1"
_SKIP_TYPES = {
    "thoughts",
    "reasoning_recap",
    "user_editable_context",
    "model_editable_context",
    "system_error",
    "tether_browsing_display",
    "tether_quote",
    "execution_output",
}
_CITATION = re.compile(r"[ \t]*(?:\ue200[^\ue201]*\ue201|【\d+(?::\d+)?†[^】]*】)|[\ue200-\ue2ff]")


def read(
    path: Path, source: str, cursor: dict | None = None, options: dict | None = None
) -> Iterator[Document | ReadError | Seen | Cursor]:
    """Every conversation in the exports under ``path`` (a zip, a JSON file or a folder).
    ``options``: the source's options (None: those in ``sources.yaml``), see :mod:`connectors._walk`."""
    id_of = lambda conv: conv.get("conversation_id") or conv.get("id")  # noqa: E731
    build = lambda conv, conv_id, uri, key: _conversation(conv, conv_id, uri, key, source)  # noqa: E731
    yield from read_conversation_exports(
        Path(path), cursor, _VERSION, "ChatGPT", "chat_messages", id_of, build, follows_outside(options)
    )


def spans(doc: Document, count: TokenCounter, max_tokens: int) -> list[Span]:
    return turn_spans(doc.text, count, max_tokens)


def _conversation(conv: dict, conv_id: str, uri: str, key: str, source: str):
    mapping = conv.get("mapping")
    if not isinstance(mapping, dict) or not mapping:
        raise Unreadable("no message tree (mapping)")
    nodes, lost = _path(mapping, conv.get("current_node"), uri)
    turns = []
    for node_id, node in nodes:
        # The isolation boundary: whatever one message holds fails that message alone.
        turn = each_record(f"{uri}/{node_id}", _turn, node)
        if isinstance(turn, ReadError):
            lost.append(turn)
        elif turn:
            turns.append(turn)
    text, roles = render_turns(turns)
    if not text:
        return lost  # an empty conversation (only a system message): nothing to find
    created = parse_time(conv.get("create_time"))
    updated = parse_time(conv.get("update_time")) or created
    title = conversation_title(conv.get("title"), turns)
    meta = conversation_metadata(conv_id, title, roles, created, updated, f"https://chatgpt.com/c/{conv_id}", key)
    for field, name in (("default_model_slug", "model"), ("gizmo_id", "gpt")):
        if isinstance(conv.get(field), str) and conv[field]:
            meta[name] = conv[field]
    doc = Document(
        source=source,
        connector=NAME,
        native_id=conv_id,
        uri=uri,
        title=title,
        text=text,
        created_at=created,
        updated_at=updated,
        metadata=meta,
    )
    return [*lost, (doc, updated.timestamp() if updated else 0.0)]


def _path(mapping: dict, current: Any, uri: str) -> tuple[list[tuple[str, dict]], list[ReadError]]:
    """(node id, node) from the root to ``current`` (else to the newest leaf), and a ReadError
    when a node on the way is not an object (the walk ends there: the older part is lost)."""
    if not isinstance(current, str) or current not in mapping:
        leaves = [k for k, n in mapping.items() if isinstance(n, dict) and not n.get("children")]
        if not leaves:
            raise Unreadable("message tree has no leaf")
        current = max(leaves, key=lambda k: _msg_time(mapping[k]))
    out, seen, node_id, lost = [], set(), current, []
    while isinstance(node_id, str) and node_id in mapping and node_id not in seen:
        seen.add(node_id)
        node = mapping[node_id]
        if not isinstance(node, dict):
            lost.append(
                ReadError(f"{uri}/{node_id}", f"tree node {node_id} is not an object: the messages before it are lost")
            )
            break
        out.append((node_id, node))
        node_id = node.get("parent")
    return out[::-1], lost


def _msg_time(node: Any) -> float:
    msg = node.get("message") if isinstance(node, dict) else None
    t = msg.get("create_time") if isinstance(msg, dict) else None
    return float(t) if isinstance(t, (int, float)) and t == t else 0.0


def _turn(node: dict) -> tuple[str, str] | None:
    """(role, text) of a node's message, None for what is not part of the conversation."""
    msg = node.get("message")
    if not isinstance(msg, dict):
        return None
    role = (msg.get("author") or {}).get("role")
    meta = msg.get("metadata") or {}
    if (
        role not in ("user", "assistant")
        or meta.get("is_visually_hidden_from_conversation")
        or meta.get("is_user_system_message")
    ):
        return None
    content = msg.get("content") or {}
    kind = content.get("content_type")
    if kind in _SKIP_TYPES or msg.get("channel") == "analysis":
        return None
    if role == "assistant" and msg.get("recipient") not in (None, "all") and kind != "code":
        return None  # a tool call in prose, hidden in the app: a memory write to "bio"
    if kind == "code":
        lang = content.get("language") if content.get("language") not in (None, "unknown") else ""
        body = str(content.get("text") or "").strip()
        text = f"```{lang}\n{body}\n```" if body else ""
    else:
        parts = [_part(p) for p in content.get("parts") or []]
        if isinstance(content.get("text"), str):
            parts.append(content["text"])
        text = "\n\n".join(p.strip() for p in parts if p and p.strip())
    text = _CITATION.sub("", text).strip()
    return (role, text) if text else None


def _part(part: Any) -> str:
    if isinstance(part, str):
        return part
    if not isinstance(part, dict):
        return ""
    kind = str(part.get("content_type") or "")
    if isinstance(part.get("text"), str):
        return part["text"]
    if "image" in kind:
        return "[image]"
    if "audio" in kind or "video" in kind:
        return "[audio]"
    return f"[{kind}]" if kind else ""
