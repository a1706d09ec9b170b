"""The files a WeChat export's messages point at: found beside the export, unmasked, and read
as attachments of their conversation window (:mod:`connectors._chat_attachments`).

PyWxDump's rows name a message's file in ``src``: the path WeChat stored it at, relative to the
account's ``WeChat Files\\<wxid>`` folder, written with the exporting machine's separators —
``FileStorage\\File\\2024-03\\lease.pdf`` for a file, ``FileStorage\\MsgAttach\\<md5>\\Image\\
2024-03\\<md5>.dat`` for a picture (``…\\Thumb\\…`` when only the thumbnail was downloaded),
``FileStorage\\Video\\2024-03\\<md5>.mp4`` for a video; an absolute path is cut at its
``FileStorage`` part. The export itself copies none of these files, so :func:`locate` looks
for the path under the export file's folder and each folder above it up to the source's folder:
copying (or linking, with ``follow_links_outside``) the account's ``FileStorage`` folder next to
the exports, or adding the ``WeChat Files\\<wxid>`` folder that holds exports and files, makes
them readable. Nothing outside the source's folder is opened (links resolved, as the walker
does), nor a path its exclusion rules name.

Pictures are stored masked: every byte XORed with one key byte per account. :func:`sniff` finds
the key from the first bytes (the key that turns them into a JPEG, PNG, GIF, BMP, TIFF or WebP
signature, checked on every signature byte, not only the first), so the picture is read as the
image it is; WeChat 4's ``.dat`` files (``\\x07\\x08V1\\x08\\x07`` / ``V2`` headers) are encrypted
with a key kept by the running app and are reported as such, never guessed at.
"""

from __future__ import annotations

import mimetypes
import os
import re
from dataclasses import dataclass
from pathlib import Path

from ragbag.connectors._chat_attachments import MISSING, OUTSIDE, Attachment, Place
from ragbag.connectors._walk import refusal
from ragbag.core.exclusions import path_excluded
from ragbag.core.records import stable_hash

PLACE = Place(
    "the source's folder",
    "not beside the export (PyWxDump's export does not copy the files its messages point at: copy"
    " the account's FileStorage folder, WeChat Files\\<wxid>\\FileStorage, next to the export)",
)
STORAGE = "FileStorage"
_SIGNATURES = (
    (b"\xff\xd8\xff", "jpg"),
    (b"\x89PNG\r\n\x1a\n", "png"),
    (b"GIF8", "gif"),
    (b"II*\x00", "tif"),
    (b"MM\x00*", "tif"),
    (b"RIFF", "webp"),
    (b"BM", "bmp"),
)
_WECHAT4 = (b"\x07\x08V1\x08\x07", b"\x07\x08V2\x08\x07")
_ENCRYPTED = "encrypted by WeChat 4 with a key only the running app holds: not read"
_SEPARATORS = re.compile(r"[\\/]+")


@dataclass(frozen=True)
class Folders:
    """Where an export's files may lie: the source's folder (resolved) and the export file's
    folder; the folders between them are searched too."""

    root: Path
    export_dir: Path
    follow_outside: bool
    exclude: tuple[str, ...]


def stored_parts(src: str) -> list[str]:
    """The parts of the relative path ``src`` names (either separator; from ``FileStorage`` on
    when there is one), or [] for what names no file here (an empty value, an API address such
    as ``/api/audio/…``, a path climbing out with ``..``)."""
    parts = [p for p in _SEPARATORS.split(src.strip()) if p and p != "."]
    if STORAGE in parts:
        parts = parts[parts.index(STORAGE) :]
    elif not parts or src.strip().startswith(("/", "\\")) or ":" in parts[0]:
        return []
    return [] if ".." in parts else parts


def locate(src: str, folders: Folders) -> tuple[Path | None, str]:
    """(the file ``src`` names, "") or (None, ``MISSING`` / ``OUTSIDE`` / why it is not read)."""
    parts = stored_parts(src)
    if not parts:
        return None, MISSING
    root = os.path.realpath(folders.root)
    here = folders.export_dir
    outside = ""
    while True:
        candidate = here.joinpath(*parts)
        rel = os.path.relpath(candidate, folders.root).replace(os.sep, "/")
        if folders.exclude and path_excluded(folders.exclude, rel):
            return None, "excluded by the source's rules"
        try:
            st = os.stat(candidate)
            why = refusal(os.path.realpath(candidate), st, root, folders.follow_outside)
            if why is None and os.path.isfile(candidate):
                return candidate, ""
            outside = outside or (OUTSIDE if why else "")
        except (OSError, ValueError):  # not there; a NUL in the name; a loop of links
            pass
        if here == folders.root or here.parent == here or not here.is_relative_to(folders.root):
            break
        here = here.parent
    return None, outside or MISSING


def sniff(head: bytes) -> tuple[int, str] | str:
    """(the XOR key, the picture's format) of a masked WeChat picture from its first 16 bytes,
    or why it cannot be read."""
    if head.startswith(_WECHAT4):
        return _ENCRYPTED
    for signature, ext in _SIGNATURES:
        if len(head) < len(signature):
            continue
        key = head[0] ^ signature[0]
        if all(h ^ key == s for h, s in zip(head, signature, strict=False)):
            if ext == "webp" and head[8:12] and bytes(b ^ key for b in head[8:12]) != b"WEBP":
                continue
            return key, ext
    return "not a WeChat picture: no image format under its mask"


def found(src: str, folders: Folders) -> tuple[Path | None, str, int]:
    """(the file, its fingerprint: size and time, else why there is none; its size): a stat,
    not a read, so every refresh can ask it of every file an export points at."""
    path, why = locate(src, folders)
    try:
        st = path.stat() if path is not None else None
    except OSError:
        st, why = None, MISSING
    if path is None or st is None:
        return None, why, 0
    return path, f"{st.st_size}:{st.st_mtime_ns}", st.st_size


def attachment(ident: str, src: str, folders: Folders) -> Attachment:
    """The file a message points at, named as stored and located (see :func:`found`); a masked
    picture gets its key and is named after its own format."""
    name = stored_parts(src)[-1]
    a = Attachment(ident, src, name, "", hidden=False)
    a.path, a.stamp, a.size = found(src, folders)
    picture = name.lower().endswith(".dat")
    if a.path is None:
        a.why = "" if a.stamp in (MISSING, OUTSIDE) else a.stamp
        a.mime = "image/jpeg" if picture else ""  # reported as the (most often JPEG) picture it is
    elif picture:
        with open(a.path, "rb") as f:
            sniffed = sniff(f.read(16))
        if isinstance(sniffed, str):
            a.why = sniffed
        else:
            a.mask, ext = sniffed
            a.name = f"{Path(name).stem}.{ext}"
            a.mime = mimetypes.guess_type(a.name)[0] or ""
    return a


def fingerprint(srcs: list[str], folders: Folders) -> str:
    """What an export file's documents owe to the files beside it: changing, adding or removing
    any of them reads the export file again."""
    return stable_hash(*(f"{src}={found(src, folders)[1]}" for src in srcs), length=16) if srcs else ""
