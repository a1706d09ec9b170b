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

Files inside the export: what users uploaded (a message's ``metadata.attachments``: ``{id:
"file-AbC…", name, mime_type, size}``) and the pictures shown (an ``image_asset_pointer`` part:
``asset_pointer`` ``file-service://file-AbC…``, or ``sediment://file_00…`` with an optional
``?query``; generated images come in the image tool's messages) on the conversation's path
become documents of their own when the export holds them. The export names each stored file by
its id (:meth:`ExportFiles.find` matches the id as the start of a base name, followed by nothing or a
separator, in any folder): ``file-AbC-report.pdf`` and ``file-AbC.png`` at the top (2023-24),
``dalle-generations/file-AbC-<uuid>.webp``, ``user-<id>/file_00…-<uuid>.png`` and
``<conversation id>/image/file_00…-<uuid>.png`` (sediment files), and ``file-AbC.dat`` in 2026
exports, whose ``conversation_asset_file_names.json`` gives each ``.dat`` its real name (the
format then comes from the upload's name or type, that name, or the first bytes). A loose
``conversations.json`` is an extracted export when ``chat.html``, ``user.json`` or ``file-…``
files lie beside it (its folder is searched three levels deep, links as the source's option
says); a conversation file on its own has no files. Each file a reader handles
(:func:`ragbag.text.documents.document_text`: PDF, office documents, text, pictures through
OCR with the source's cache) is read behind its own isolation boundary into a document:
native id ``<conversation id>/attachment/<file id>`` (replaced and deleted with its
conversation), title ``<name> (attachment of: <conversation title>)``, first line
``Attachment <name> of the ChatGPT conversation “<title>”, <day it was sent>``; metadata
``parent_doc_id``/``parent_native_id`` (the conversation), ``conversation`` (its title),
``conversation_id``, ``url``, ``file``, ``model``, then ``filename``, ``mime``, ``ext``, ``size``,
``file_id``, ``role`` (who sent it: ``user``, or ``tool``/``assistant`` for generated images),
``member`` (where it is stored), ``attachment`` and the format's facts. Chunked as the same file
in a folder. Reported once per conversation, never dropped in silence: the files it refers to
that the export does not hold (exports leave many out) in one ``ReadError`` saying how many,
which and why, and the files not read for another reason (formats no reader handles, damaged
files, the per-message limits of :mod:`connectors._inside`) in another. A picture with nothing
to index (no text recognised, no date or place, or pixels that do not decode; with ``ocr:
false`` every picture without a date or place) is no document and not reported: the
conversation shows it as ``[image]``, and most pictures in an export (generated art, photos)
are such. ``attachments: false`` reads no files; ``ocr: false`` reads no text in pictures and
scanned pages.

Incremental: per export file (size, mtime → conversation ids, their files' ids, and update
times): unchanged files yield ``Seen`` for the conversations and their files' documents (and
repeat their reports); a conversation in several exports is kept once, the copy with the latest
``update_time`` (a file only an older copy's export holds is kept from there). The cursor's
version names the ``attachments``/``ocr``/limit settings: a cursor made with others is ignored
and everything is read again. A loose export folder's files count as read with its
``conversations.json``: files added later beside an unchanged one are not noticed.

Left out: voice messages and video frames (their transcriptions are in the text), files
made by code (``sandbox:/mnt/data/…`` links: not in exports), files in the other parts of a
multi-part export (``export_manifest.json``), ``library_files.json``,
``shared_conversations.json``, feedback, projects' files, and ``discover()`` (exports have no
default place).

The files an export holds are found and read in :mod:`connectors._chatgpt_files`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
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
from ragbag.connectors._chatgpt_files import ExportFiles, conversation_files
from ragbag.connectors._inside import Inside, inside
from ragbag.connectors._isolate import each_record
from ragbag.connectors._walk import excluded_paths, follows_outside
from ragbag.core.records import Cursor, Document, ReadError, Seen, Span
from ragbag.text.chunking import TokenCounter, paged_spans, prose_spans
from ragbag.text.documents import PAGED
from ragbag.text.unreadable import Unreadable

NAME = "chatgpt"
SCHEDULE = "0 4 * * *"  # exports change when the user exports again: daily is plenty
_VERSION = "chatgpt-2"  # 2: the files inside exports; the cursor's version also holds the inside settings
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
    """Every conversation in the exports under ``path`` (a zip, a JSON file or a folder), and the
    files of the export each one refers to (see the module doc). ``options``: the source's
    options (None: those in ``sources.yaml``), see :mod:`connectors._walk` and
    :mod:`connectors._inside`."""
    path = Path(path)
    reads = inside(source, options)
    follow = follows_outside(options)
    single = path.is_file()
    exports: dict[Path, ExportFiles | None | Exception] = {}  # each export's files, opened once per read

    def files_of(key: str) -> ExportFiles | None:
        file = path if single else path / key
        if file not in exports:
            try:
                exports[file] = ExportFiles.of(file, follow)
            except Exception as exc:  # noqa: BLE001 — reported for each conversation that needs it
                exports[file] = exc
        found = exports[file]
        if isinstance(found, Exception):
            raise found
        return found

    id_of = lambda conv: conv.get("conversation_id") or conv.get("id")  # noqa: E731

    def build(conv: dict, conv_id: str, uri: str, key: str) -> list:
        attach = (lambda: files_of(key)) if reads.attachments else None
        return _conversation(conv, conv_id, uri, key, source, attach, reads)

    # The cursor's version names the settings too: other ones read everything again.
    version = f"{_VERSION}:{','.join(str(v) for v in reads.signature)}"
    try:
        yield from read_conversation_exports(
            path, cursor, version, "ChatGPT", "chat_messages", id_of, build, follow, excluded_paths(options)
        )
    finally:
        for files in exports.values():
            if isinstance(files, ExportFiles):
                files.close()


def spans(doc: Document, count: TokenCounter, max_tokens: int) -> list[Span]:
    """A conversation's chunks hold whole exchanges; a file's are the same file's in a folder."""
    if doc.metadata.get("attachment"):
        if doc.metadata.get("format") in PAGED:
            return paged_spans(doc.text, count, max_tokens)
        return prose_spans(doc.text, count, max_tokens)
    return turn_spans(doc.text, count, max_tokens)


def _conversation(
    conv: dict,
    conv_id: str,
    uri: str,
    key: str,
    source: str,
    attach: Callable[[], ExportFiles | None] | None = None,
    reads: Inside | None = None,
) -> list:
    """[ReadErrors of parts left out, (document, stamp)], then, when ``attach`` gives the
    export's files, a (document, stamp) per file the conversation refers to and the reports of
    those not read (:func:`conversation_files`)."""
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
    stamp = updated.timestamp() if updated else 0.0
    made: list = [*lost, (doc, stamp)]
    if attach is not None and reads is not None:
        # The isolation boundary: whatever finding the files fails costs the files, not the text.
        files = each_record(f"{uri}/attachment", conversation_files, doc, nodes, attach, reads, stamp)
        made += [files] if isinstance(files, ReadError) else files
    return made


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
