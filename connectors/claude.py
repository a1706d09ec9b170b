"""Documents from Claude data exports: one conversation per document, chunked by exchanges.

Formats: the export zip (Settings → Privacy → Export data: ``conversations.json``,
``users.json``, ``projects.json``) or ``conversations.json`` itself; a folder is searched for
both. The file is a list of conversations ``{uuid, name, summary, created_at, updated_at,
chat_messages: [{uuid, sender: human|assistant, text, content: [blocks], created_at,
attachments: [{file_name, extracted_content}], files: [{file_name}]}]}``, times ISO 8601 UTC.
A file given by its path may have any name and may hold one conversation object (what
per-conversation exporters write) or ``{"conversations": [...]}``. ChatGPT's export also names
its file ``conversations.json``; those are left to the chatgpt connector.

Traps handled:

- ``content`` blocks are preferred to the flat ``text`` (which repeats the text blocks and
  drops the rest): ``text`` blocks kept; ``tool_use`` summarised as ``[tool name: input]`` and
  ``tool_result`` as ``[name result: first 200 characters]``; ``thinking`` dropped (hidden
  reasoning). Older exports without ``content`` use ``text``, less its "This block is not
  supported on your current device yet." placeholders.
- Attachments: their names are listed; their ``extracted_content`` (pasted or uploaded text) is
  kept up to 20,000 characters per attachment. Uploaded ``files`` (images, PDFs without
  extraction) are listed by name.
- Conversations with no messages (Claude keeps many) are skipped; an empty ``name`` gets the
  first question as title.
- Branches: an edited question or a retried answer makes the export list every branch's
  messages, each naming its parent (``parent_message_uuid``); the conversation is the current
  branch, from the current leaf (``current_leaf_message_uuid`` when present, else the leaf with
  the latest ``created_at``) back through the parents to the root, like ChatGPT's
  ``current_node`` walk; dead branches are not indexed. Exports without parents are read in
  list order.
- Bad input, isolated (:mod:`connectors._isolate`, any exception, not a list of types): a
  truncated zip, a broken JSON file, an undecodable file → ``ReadError`` for the file; a
  malformed conversation → ``ReadError("{file}#{uuid}")``; a ``null`` (or other non-object)
  entry in ``chat_messages``, or a message that fails → ``ReadError("{file}#{uuid}/messages/{n}")``
  and the rest of the conversation is kept; everything else still read.

Text: ``User: …`` / ``Assistant: …`` paragraphs; chunks hold a question with its answer where they
fit (``connectors._chat.turn_spans``); chunk metadata ``roles``, ``turn_start``, ``turn_end``.

Metadata: ``title`` (the conversation name, or ``title`` in single-conversation dumps),
``conversation_id`` (uuid), ``created``/``updated`` (ISO UTC; also ``created_at``/``updated_at``),
``turns``, ``attachments`` (file names), ``url`` (claude.ai link), ``file``. ``native_id`` = the conversation uuid.

Incremental: per export file (size, mtime → uuids and ``updated_at``): unchanged files yield
``Seen``; a conversation in several exports is kept once, the copy updated last.

Left out: ``projects.json`` (project knowledge documents), ``users.json``, artifacts beyond
what the messages' text holds, and ``discover()`` (exports have no default place).
"""

from __future__ import annotations

import json
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
from ragbag.connectors._walk import excluded_paths, follows_outside
from ragbag.core.records import Cursor, Document, ReadError, Seen, Span
from ragbag.text.chunking import TokenCounter
from ragbag.text.unreadable import Unreadable

NAME = "claude"
SCHEDULE = "0 4 * * *"  # exports change when the user exports again: daily is plenty
MAX_ATTACHMENT_CHARS = 20_000
_SUMMARY_CHARS = 200
_VERSION = "claude-1"
_ROLES = {"human": "user", "user": "user", "assistant": "assistant"}
_UNSUPPORTED = re.compile(r"(```\s*)?This block is not supported on your current device yet\.(\s*```)?")


def read(
    path: Path, source: str, cursor: dict | None = None, options: dict | None = None
) -> Iterator[Document | ReadError | Seen | Cursor]:
    """Every conversation in the exports under ``path`` (a zip, a JSON file or a folder).
    ``options``: the source's options (None: those in ``sources.yaml``), see :mod:`connectors._walk`."""
    build = lambda conv, conv_id, uri, key: _conversation(conv, conv_id, uri, key, source)  # noqa: E731
    yield from read_conversation_exports(
        Path(path),
        cursor,
        _VERSION,
        "Claude",
        "mapping",
        lambda conv: conv.get("uuid"),
        build,
        follows_outside(options),
        excluded_paths(options),
    )


def spans(doc: Document, count: TokenCounter, max_tokens: int) -> list[Span]:
    return turn_spans(doc.text, count, max_tokens)


def _conversation(conv: dict, conv_id: str, uri: str, key: str, source: str) -> list:
    """The conversation's record, after ReadErrors for the messages it had to leave out."""
    messages = conv.get("chat_messages")
    if not isinstance(messages, list):
        raise Unreadable("chat_messages is not a list")
    lost: list[ReadError] = []
    kept: list[tuple[int, dict]] = []
    for n, msg in enumerate(messages):
        if isinstance(msg, dict):
            kept.append((n, msg))
        else:  # a null (or other non-object) entry loses that entry alone
            lost.append(ReadError(f"{uri}/messages/{n}", f"message {n} is not an object ({type(msg).__name__})"))
    turns, attachments = [], []
    for n, msg in _current_branch(kept, conv.get("current_leaf_message_uuid")):
        role = _ROLES.get(str(msg.get("sender")))
        if role is None:
            continue
        # The isolation boundary: whatever one message holds fails that message alone.
        made = each_record(f"{uri}/messages/{msg.get('uuid') or n}", _message, msg)
        if isinstance(made, ReadError):
            lost.append(made)
            continue
        text, names = made
        attachments += names
        turns.append((role, text))
    text, roles = render_turns(turns)
    if not text:  # an empty conversation holds nothing to find; one whose messages say nothing is a loss
        return lost + ([ReadError(uri, f"{len(kept)} messages, none with text to index")] if kept else [])
    created = parse_time(conv.get("created_at"))
    updated = parse_time(conv.get("updated_at")) or created
    title = conversation_title(conv.get("name") or conv.get("title"), turns)
    meta = conversation_metadata(conv_id, title, roles, created, updated, f"https://claude.ai/chat/{conv_id}", key)
    meta["attachments"] = list(dict.fromkeys(attachments))
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


def _current_branch(messages: list[tuple[int, dict]], leaf: Any) -> list[tuple[int, dict]]:
    """The messages of the conversation as the app shows it. Exports of branched conversations
    (an edited question, a retried answer) list every branch's messages, each naming its parent
    (``parent_message_uuid``): the current branch is the path from the current leaf
    (``current_leaf_message_uuid`` where the export has it, else the leaf with the latest
    message) back through the parents to the root. Without parents the list is the
    conversation, in order; a cycle or a parent not in the export ends the walk."""
    by_id = {str(m["uuid"]): (n, m) for n, m in messages if m.get("uuid")}
    if not any(isinstance(m.get("parent_message_uuid"), str) for _, m in messages) or not by_id:
        return messages
    if not (isinstance(leaf, str) and leaf in by_id):
        parents = {str(m.get("parent_message_uuid")) for _, m in messages}
        leaves = [(n, m) for n, m in messages if m.get("uuid") and str(m["uuid"]) not in parents]

        def latest(nm: tuple[int, dict]) -> tuple[float, int]:  # ties: the later in the list
            when = parse_time(nm[1].get("created_at"))
            return (when.timestamp() if when else 0.0, nm[0])

        n, m = max(leaves or messages, key=latest)
        leaf = str(m.get("uuid") or "")
    path: list[tuple[int, dict]] = []
    seen: set[str] = set()
    while leaf in by_id and leaf not in seen:
        seen.add(leaf)
        path.append(by_id[leaf])
        leaf = str(by_id[leaf][1].get("parent_message_uuid") or "")
    return path[::-1] or messages


def _message(msg: dict) -> tuple[str, list[str]]:
    """(text, attachment names) of one message."""
    content = msg.get("content")
    blocks: list = content if isinstance(content, list) else []
    parts = [p for p in (_block(b) for b in blocks) if p]
    if not any(isinstance(b, dict) and b.get("type") == "text" and str(b.get("text") or "").strip() for b in blocks):
        # No text blocks: the flat text is the message (less the placeholders it has for others).
        parts.insert(0, _UNSUPPORTED.sub("", str(msg.get("text") or "")))
    names = []
    for att in msg.get("attachments") or []:
        if not isinstance(att, dict):
            continue
        name = str(att.get("file_name") or "attachment")
        names.append(name)
        body = str(att.get("extracted_content") or "").strip()
        if len(body) > MAX_ATTACHMENT_CHARS:
            body = body[:MAX_ATTACHMENT_CHARS] + " […]"
        parts.append(f"[attachment: {name}]\n{body}" if body else f"[attachment: {name}]")
    for f in msg.get("files") or []:
        name = str(f.get("file_name") or "") if isinstance(f, dict) else ""
        if name and name not in names:
            names.append(name)
            parts.append(f"[file: {name}]")
    return "\n\n".join(p.strip() for p in parts if p and p.strip()), names


def _block(block: Any) -> str:
    if not isinstance(block, dict):
        return ""
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text") or "")
    if kind == "tool_use":
        return f"[tool {block.get('name') or '?'}: {_summary(block.get('input'))}]"
    if kind == "tool_result":
        return f"[{block.get('name') or 'tool'} result: {_summary(block.get('content'))}]"
    return ""  # thinking, images, unknown blocks


def _summary(value: Any) -> str:
    """A short one-line rendering of a tool's input or output."""
    if isinstance(value, list):  # tool_result content: a list of blocks
        texts = [str(v.get("text") or v.get("title") or "") if isinstance(v, dict) else str(v) for v in value]
        value = " ".join(t for t in texts if t)
    elif isinstance(value, dict):
        strings = [str(v) for v in value.values() if isinstance(v, (str, int, float)) and str(v).strip()]
        value = "; ".join(strings) if strings else json.dumps(value, ensure_ascii=False)
    line = " ".join(str(value or "").split())
    return line[: _SUMMARY_CHARS - 1] + "…" if len(line) > _SUMMARY_CHARS else line
