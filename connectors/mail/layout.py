"""Where the messages of a mail folder lie: which files are mail and in which format (by name,
else by their first bytes), and the folder name each message is filed under."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from ragbag.connectors._walk import Entry, walk
from ragbag.connectors.mail.mbox import HEADER_LINE, is_postmark
from ragbag.core.records import ReadError

_SNIFF_BYTES = 8192
_OLE = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"  # an Outlook .msg (a ".msg" may also be RFC 822 text)
# A header block of nothing but fields, naming one of these and one of _CORE, is mail too (a
# message without From:, a bounce whose only headers are Return-Path, Subject, Content-Type).
_TRANSPORT = {
    b"mime-version",
    b"content-type",
    b"received",
    b"return-path",
    b"delivered-to",
    b"sender",
    b"reply-to",
    b"cc",
}
_CORE = {b"from", b"to", b"subject", b"date", b"message-id"}


def mail_files(
    root: Path, errors: list[ReadError], follow_outside: bool = False, exclude: Sequence[str] = ()
) -> list[tuple[Path, str]]:
    """(file, relative posix path), sorted; hidden entries skipped except Maildir++ folders,
    Maildir ``tmp`` folders skipped; links leaving ``root`` are followed only with
    ``follow_outside`` (see :mod:`connectors._walk`)."""
    maildirs: dict[Path, bool] = {}

    def keep(entry: Entry) -> bool:
        if not entry.is_dir:
            return not entry.name.startswith(".")
        folder = entry.path.parent
        if folder not in maildirs:
            maildirs[folder] = is_maildir(folder)
        if maildirs[folder] and entry.name == "tmp":
            return False
        return not entry.name.startswith(".") or is_maildir(entry.path)

    return walk(root, errors, keep=keep, follow_outside=follow_outside, exclude=exclude)


def is_maildir(folder: Path) -> bool:
    return (folder / "cur").is_dir() or (folder / "new").is_dir()


def kind_by_name(file: Path, rel: str) -> str | None:
    """The format a path's name tells; None means: look inside."""
    name = file.name.lower()
    if name.endswith(".emlx"):
        return "emlx"
    parts = rel.split("/")
    if len(parts) >= 2 and parts[-2] in ("cur", "new") and is_maildir(file.parent.parent):
        return "maildir"
    if name.endswith(
        (
            ".msf",
            ".sqlite",
            ".db",
            ".plist",
            ".json",
            ".html",
            ".dat",
            ".wal",
            ".sqlite-wal",
            ".sqlite-shm",
            ".db-wal",
            ".db-shm",
        )
    ):
        return "skip"
    return None


def sniff(file: Path) -> str | None:
    """'mbox' for a postmark first line, 'eml' for a mail header block, else None (not mail)."""
    try:
        with open(file, "rb") as fh:
            head = fh.read(_SNIFF_BYTES)
    except OSError:
        return "eml" if file.suffix.lower() == ".eml" else None  # reported when read
    if head.startswith(_OLE):
        return "msg" if file.suffix.lower() == ".msg" else None
    first, _, after = head.partition(b"\n")
    if is_postmark(first + b"\n", after.split(b"\n", 1)[0]):
        return "mbox"
    if file.suffix.lower() == ".eml":
        return "eml"
    return "eml" if _looks_like_headers(head) else None


def _looks_like_headers(head: bytes) -> bool:
    """A header block (first line a field) holding From: and one of Date:, Message-ID:, To:,
    Subject: (a saved draft or a hand-made message often has neither date nor id); or a block
    of nothing but fields that names one of those and a MIME or transport field."""
    if not HEADER_LINE.match(head):
        return False
    block = re.split(rb"\r?\n\r?\n", head, maxsplit=1)[0]
    names = {m.group(1).lower() for m in re.finditer(rb"^([!-9;-~]+):", block, re.M)}
    if b"from" in names and bool(names & {b"date", b"message-id", b"to", b"subject"}):
        return True
    whole = len(block) < len(head) and all(
        HEADER_LINE.match(line) or line[:1] in (b" ", b"\t") for line in block.splitlines()
    )
    return whole and bool(names & _CORE) and bool(names & _TRANSPORT)


def folder_name(rel: str, kind: str) -> str:
    """A readable folder name: the path without Maildir cur/new, .mbox/.sbd suffixes, dots."""
    parts = rel.split("/")
    if kind == "mbox":
        parts[-1] = re.sub(r"\.mbox$", "", parts[-1], flags=re.I)
    else:
        parts = parts[:-1]
        if kind == "maildir" and parts and parts[-1] in ("cur", "new"):
            parts = parts[:-1]
    mailboxes = [p[:-5] for p in parts if p.lower().endswith(".mbox")]
    if kind == "emlx" and mailboxes:  # Apple Mail: <account>/INBOX.mbox/<uuid>/Data/0/1/Messages
        return "/".join(mailboxes)
    out: list[str] = []
    for p in parts:
        p = re.sub(r"\.(mbox|sbd|mbox\.sbd)$", "", p, flags=re.I)
        if p.startswith(".") and kind == "maildir":
            out += [q for q in p.split(".") if q]
        elif p:
            out.append(p)
    return "/".join(out) or "INBOX"
