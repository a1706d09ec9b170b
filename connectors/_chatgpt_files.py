"""The files inside a ChatGPT export, found for the conversations that refer to them, and read
as documents of their own linked to their conversation (:mod:`connectors.chatgpt`'s module doc
says which layouts exports have used, and what is reported).
"""

from __future__ import annotations

import bisect
import mimetypes
import os
import re
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from ragbag.connectors._chat import (
    parse_time,
)
from ragbag.connectors._exports import load_json
from ragbag.connectors._inside import Inside
from ragbag.connectors._isolate import each_record
from ragbag.connectors._walk import Entry, walk
from ragbag.core.records import Document, ReadError
from ragbag.text.documents import FORMATS, document_text, extension_for
from ragbag.text.unreadable import Unreadable

# -----------------------------------------------------------------

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
class ExportFiles:
    """The files of one export (its zip, or the folder a loose ``conversations.json`` was
    extracted to), found by the id that starts their names."""

    zf: zipfile.ZipFile | None
    root: Path | None
    names: list[tuple[str, str]]  # (base name, where), sorted: ids are prefixes of base names
    sizes: dict[str, int]
    mapped: dict[str, str]  # file id → its name in the asset-name index

    @classmethod
    def of(cls, file: Path, follow_outside: bool) -> ExportFiles | None:
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


def conversation_files(
    conv: Document, nodes: list[tuple[str, dict]], attach: Callable[[], ExportFiles | None], reads: Inside, stamp: float
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
        why = reads.admit(counted, ref.node, stored.size)
        if why:
            unread.append(f"{label} ({why})")
            continue
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
    conv: Document, ref: _Ref, stored: _Stored, files: ExportFiles, uri: str, reads: Inside
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
        title, text = document_text(data, name, ext, meta, reads.ocr, reads.speech)
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
