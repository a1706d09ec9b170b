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
its id (:meth:`_Files.find` matches the id as the start of a base name, followed by nothing or a
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

Long because one export is read whole here: the conversations and the files they refer to come
from the same zip in one pass, share its cursor and its isolation boundaries, and the layouts
the export has used over the years are one format's knowledge, kept together.
"""

from __future__ import annotations

import bisect
import mimetypes
import os
import re
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
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
from ragbag.connectors._exports import load_json
from ragbag.connectors._inside import Inside, inside
from ragbag.connectors._isolate import each_record
from ragbag.connectors._walk import Entry, follows_outside, walk
from ragbag.core.records import Cursor, Document, ReadError, Seen, Span
from ragbag.text.chunking import TokenCounter, paged_spans, prose_spans
from ragbag.text.documents import FORMATS, PAGED, document_text, extension_for
from ragbag.text.unreadable import Unreadable, human_size

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
    exports: dict[Path, _Files | None | Exception] = {}  # each export's files, opened once per read

    def files_of(key: str) -> _Files | None:
        file = path if single else path / key
        if file not in exports:
            try:
                exports[file] = _Files.of(file, follow)
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
        yield from read_conversation_exports(path, cursor, version, "ChatGPT", "chat_messages", id_of, build, follow)
    finally:
        for files in exports.values():
            if isinstance(files, _Files):
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
    attach: Callable[[], _Files | None] | None = None,
    reads: Inside | None = None,
) -> list:
    """[ReadErrors of parts left out, (document, stamp)], then, when ``attach`` gives the
    export's files, a (document, stamp) per file the conversation refers to and the reports of
    those not read (:func:`_attachments`)."""
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
        files = each_record(f"{uri}/attachment", _attachments, doc, nodes, attach, reads, stamp)
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


# --- the files inside an export ---------------------------------------------------------------

_FILE_ID = re.compile(r"^file[-_][A-Za-z0-9]+$")
_ASSET_NAMES = "conversation_asset_file_names.json"  # 2026 exports: ``file-….dat`` → the file's own name
_EXPORT_MARKERS = {"chat.html", "user.json", "message_feedback.json", "export_manifest.json", _ASSET_NAMES}
_MAX_INDEX_BYTES = 64 << 20  # an asset-name index larger than this is not read (a zip bomb)
_MAX_DEPTH = 3  # ``<conversation id>/image/file_….png``: the deepest place exports put files
_NAMED = 5  # files named in one report, then "and N more"
_MAGIC = ((b"%PDF-", "pdf"), (b"\x89PNG\r\n\x1a\n", "png"), (b"\xff\xd8\xff", "jpg"), (b"GIF8", "gif"))


@dataclass
class _Ref:
    """A file a conversation refers to: uploaded (``metadata.attachments``) or shown (an image
    part's ``asset_pointer``), first met in message ``node``."""

    file_id: str
    ids: list[str]  # every id it goes by, looked for in this order
    node: str
    role: str
    when: datetime | None
    name: str = ""
    mime: str = ""


@dataclass
class _Stored:
    """A file found in the export: where (zip member or path relative to the export folder)."""

    where: str
    size: int
    mapped: str = ""  # its name in ``conversation_asset_file_names.json``


@dataclass
class _Files:
    """The files of one export (its zip, or the folder a loose ``conversations.json`` was
    extracted to), found by the id that starts their names."""

    zf: zipfile.ZipFile | None
    root: Path | None
    names: list[tuple[str, str]]  # (base name, where), sorted: ids are prefixes of base names
    sizes: dict[str, int]
    mapped: dict[str, str]  # file id → its name in the asset-name index

    @classmethod
    def of(cls, file: Path, follow_outside: bool) -> _Files | None:
        """The files of the export ``file`` is (a zip) or lies in (a loose JSON file: only in a
        folder an export was extracted to; a conversation file on its own has none)."""
        if file.suffix.lower() == ".zip":
            zf = zipfile.ZipFile(file.absolute())
            sizes = {
                i.filename: i.file_size
                for i in zf.infolist()
                if not i.is_dir() and not i.filename.startswith("__MACOSX/") and not _base(i.filename).startswith("._")
            }
            files = cls(zf, None, _sorted_names(sizes), sizes, {})
        else:
            folder = file.absolute().parent
            with os.scandir(folder) as it:
                here = {e.name for e in it}
            if not (here & _EXPORT_MARKERS or any(n.startswith(("file-", "file_")) for n in here)):
                return None

            def keep(entry: Entry) -> bool:
                return not entry.name.startswith(".") and (not entry.is_dir or entry.rel.count("/") < _MAX_DEPTH - 1)

            found = walk(folder, [], keep=keep, follow_outside=follow_outside)
            sizes = {}
            for path, rel in found:
                try:
                    sizes[rel] = path.stat().st_size
                except OSError:
                    continue
            files = cls(None, folder, _sorted_names(sizes), sizes, {})
        files.mapped = files._asset_names()
        return files

    def _asset_names(self) -> dict[str, str]:
        where = next((w for base, w in self.names if base == _ASSET_NAMES), None)
        if where is None or self.sizes[where] > _MAX_INDEX_BYTES:
            return {}
        try:
            index = load_json(self.read(where))
        except Exception:  # noqa: BLE001 — a damaged index costs the names, not the files
            return {}
        if not isinstance(index, dict):
            return {}
        return {_base(k).rsplit(".", 1)[0]: v for k, v in index.items() if isinstance(v, str) and v.strip()}

    def find(self, ids: list[str]) -> _Stored | None:
        """The file whose base name is one of ``ids`` or starts with it and a separator
        (``file-AbC-report.pdf``, ``file-AbC.dat``, ``dalle-generations/file-AbC-<uuid>.webp``,
        ``user-…/file_00…-<uuid>.png``); the shallowest such, then the first by name."""
        for file_id in ids:
            if len(file_id) < 8 or not file_id[-1].isalnum():
                continue  # not an id a file could be named by: "file" would match every file
            at = bisect.bisect_left(self.names, (file_id, ""))
            hits = []
            while at < len(self.names) and self.names[at][0].startswith(file_id):
                base, where = self.names[at]
                if len(base) == len(file_id) or not base[len(file_id)].isalnum():
                    hits.append(where)
                at += 1
            if hits:
                where = min(hits, key=lambda w: (w.count("/"), w))
                return _Stored(where, self.sizes[where], self.mapped.get(file_id, ""))
        return None

    def read(self, where: str) -> bytes:
        if self.zf is not None:
            return self.zf.read(where)
        assert self.root is not None
        return (self.root / where).read_bytes()

    def location(self, where: str) -> str:
        return f"{self.zf.filename}!/{where}" if self.zf is not None else str((self.root or Path()) / where)

    def close(self) -> None:
        if self.zf is not None:
            self.zf.close()


def _base(name: str) -> str:
    return name.rsplit("/", 1)[-1]


def _sorted_names(sizes: dict[str, int]) -> list[tuple[str, str]]:
    return sorted((_base(where), where) for where in sizes)


def _pointer_id(pointer: str) -> str:
    """``file-service://file-AbC`` → ``file-AbC``; ``sediment://file_00…?shared_conversation_id=…``
    → ``file_00…``."""
    return re.split(r"[?#]", pointer.split("://", 1)[-1])[0].strip("/ ")


def _dict(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def _references(nodes: list[tuple[str, dict]]) -> list[_Ref]:
    """The files the messages on the conversation's path refer to, each once (by file id), with
    the name and type its upload entry gives. Every role counts: generated images come in the
    messages of the image tool."""
    refs: dict[str, _Ref] = {}
    for node_id, node in nodes:
        msg = node.get("message")
        if not isinstance(msg, dict):
            continue
        author, meta, content = (_dict(msg.get(k)) for k in ("author", "metadata", "content"))
        role = str(author.get("role") or "")
        when = parse_time(msg.get("create_time"))
        uploads, parts = meta.get("attachments"), content.get("parts")
        found: list[tuple[list[str], str, str]] = []  # (ids, name, mime)
        for att in uploads if isinstance(uploads, list) else []:
            if isinstance(att, dict):
                ids = [str(att[k]).strip() for k in ("file_id", "id") if isinstance(att.get(k), str) and att[k].strip()]
                mime = att.get("mime_type") or att.get("mimeType") or ""
                found.append((list(dict.fromkeys(ids)), str(att.get("name") or ""), str(mime)))
        for part in parts if isinstance(parts, list) else []:
            if isinstance(part, dict) and "image" in str(part.get("content_type") or ""):
                pointer = part.get("asset_pointer")
                if isinstance(pointer, str) and _pointer_id(pointer):
                    found.append(([_pointer_id(pointer)], "", ""))
        for ids, name, mime in found:
            key = next((i for i in ids if _FILE_ID.match(i)), ids[0] if ids else f"{node_id}:{name}")
            ref = refs.get(key)
            if ref is None:
                refs[key] = _Ref(key, ids, node_id, role, when, name, mime)
            else:  # an uploaded picture is both an attachment and an image part: one file
                ref.name, ref.mime = ref.name or name, ref.mime or mime
                ref.ids += [i for i in ids if i not in ref.ids]
    return list(refs.values())


def _attachments(
    conv: Document, nodes: list[tuple[str, dict]], attach: Callable[[], _Files | None], reads: Inside, stamp: float
) -> list:
    """A (document, stamp) per file of ``conv`` that is in the export and read, then at most two
    reports for the conversation: the files not in the export, and those not read for another
    reason (limits, formats no reader handles, damaged files). A picture with nothing to index
    (no text recognised, no date or place, or undecodable) is no document and no report: the
    conversation already shows it as ``[image]``."""
    refs = _references(nodes)
    if not refs:
        return []
    files = attach()
    if files is None:
        return []  # a conversation file on its own: no export to find files in
    out: list = []
    missing: list[str] = []
    unread: list[str] = []
    counted: dict[str, int] = {}
    for ref in refs:
        label = ref.name or ref.file_id
        stored = files.find(ref.ids)
        if stored is None:
            missing.append(label)
            continue
        if counted.get(ref.node, 0) >= reads.max_attachments:
            unread.append(f"{label} (its message has more than {reads.max_attachments}: max_attachments)")
            continue
        if stored.size > reads.max_bytes:
            unread.append(f"{label} ({human_size(stored.size)}, over {human_size(reads.max_bytes)}: max_attachment_mb)")
            continue
        counted[ref.node] = counted.get(ref.node, 0) + 1
        uri = f"{conv.uri}/attachment/{ref.file_id}"
        made = each_record(uri, _file_document, conv, ref, stored, files, uri, reads)
        if isinstance(made, ReadError):
            unread.append(f"{label} ({made.error})")
        elif made is not None:
            out.append((made, stamp))
    if missing:
        out.append(
            ReadError(
                conv.uri,
                f"{_count(missing)} this conversation refers to {'is' if len(missing) == 1 else 'are'} not in "
                f"the export: {_names(missing)} (ChatGPT leaves out of its exports the files it no longer "
                "keeps, such as expired uploads and those of older conversations; the other parts of a "
                "multi-part export are not searched)",
            )
        )
    if unread:
        out.append(ReadError(conv.uri, f"{_count(unread)} of the export not read: {_names(unread)}"))
    return out


def _count(names: list[str]) -> str:
    return f"{len(names)} file{'s' if len(names) != 1 else ''}"


def _names(names: list[str]) -> str:
    more = f" and {len(names) - _NAMED} more" if len(names) > _NAMED else ""
    return "; ".join(names[:_NAMED]) + more


def _file_document(
    conv: Document, ref: _Ref, stored: _Stored, files: _Files, uri: str, reads: Inside
) -> Document | None:
    data = files.read(stored.where)
    if not data:
        raise Unreadable("empty file")
    name = ref.name or _base(stored.mapped) or _base(stored.where)
    ext = _extension([ref.name, stored.mapped, stored.where], ref.mime, data)
    mime = ref.mime or mimetypes.guess_type(f"x.{ext}")[0] or ""
    meta: dict[str, Any] = {
        k: conv.metadata[k] for k in ("conversation_id", "url", "file", "model", "gpt") if k in conv.metadata
    }
    meta.update(parent_doc_id=conv.doc_id, parent_native_id=conv.native_id, conversation=conv.title)
    meta.update(filename=name, mime=mime, ext=ext, size=len(data), file_id=ref.file_id, role=ref.role)
    meta.update(member=files.location(stored.where), attachment=True)
    try:
        title, text = document_text(data, name, ext, meta, reads.ocr)
    except Unreadable:
        if FORMATS.get(ext) == "image":
            return None  # a picture with nothing to index: see _attachments
        raise
    when = ref.when or conv.created_at
    head = f"Attachment {name} of the ChatGPT conversation “{conv.title}”" + (f", {when:%Y-%m-%d}" if when else "")
    if title and title != name:
        head += f" · {title}"
    return Document(
        source=conv.source,
        connector=conv.connector,
        native_id=f"{conv.native_id}/attachment/{ref.file_id}",
        uri=uri,
        title=f"{name} (attachment of: {conv.title})",
        text=f"{head}\n\n{text}",
        created_at=when,
        metadata=meta,
    )


def _extension(names: list[str], mime: str, data: bytes) -> str:
    """The format-naming extension of a file: its names' (the upload's, the asset-name index's,
    the stored file's), else its MIME type's, else its first bytes' (2026 exports store every
    file as ``file-….dat``), else what names it at all (for the report)."""
    for name in names:
        ext = extension_for(_base(name), "") if name else ""
        if ext in FORMATS:
            return ext
    ext = extension_for("", mime) if mime else ""
    if ext in FORMATS:
        return ext
    for magic, sniffed in _MAGIC:
        if data.startswith(magic):
            return sniffed
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "webp"
    return next((e for e in (extension_for(_base(n), mime) for n in names if n) if e), "")
