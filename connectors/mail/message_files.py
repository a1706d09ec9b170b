"""Files that hold one message each: Maildir entries, Apple Mail ``.emlx`` files and loose RFC
822 files (``*.eml``, the Enron layout)."""

from __future__ import annotations

import plistlib
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from glob import escape as glob_escape
from pathlib import Path

from ragbag.connectors._isolate import each_file
from ragbag.connectors.mail.body import Attachment
from ragbag.connectors.mail.message import MAX_MESSAGE_BYTES, Broken, Run, parse_message
from ragbag.core.records import ReadError
from ragbag.text.unreadable import Unreadable, human_size


def read_message_file(file: Path, rel: str, kind: str, folder: str, stamp: list, run: Run) -> Iterator:
    """One message in one file (Maildir, emlx, loose RFC 822), behind the isolation boundary:
    whatever the file holds is at most its own ReadError (``<file>#0``)."""
    if kind == "skip":
        return
    uri = str(file.absolute())
    if kind == "msg":
        yield ReadError(
            uri,
            "an Outlook .msg (a binary OLE file) is not read: save it as .eml, or export "
            "the mailbox as mbox (File > Export in Outlook; Thunderbird's ImportExportTools)",
        )
        return
    yield from each_file(f"{uri}#0", lambda: _read(file, uri, rel, kind, folder, stamp, run))


def _read(file: Path, uri: str, rel: str, kind: str, folder: str, stamp: list, run: Run) -> Iterator:
    if stamp[1] > MAX_MESSAGE_BYTES:
        raise Broken(f"larger than {human_size(MAX_MESSAGE_BYTES)} ({stamp[1]:,} bytes), skipped")
    try:
        data = file.read_bytes()
    except OSError as exc:
        raise Unreadable(f"unreadable: {exc.strerror or exc}") from exc
    if not data.strip():
        raise Broken("empty file")
    fallback_date = None
    if kind == "emlx":
        data, fallback_date = _unwrap_emlx(data)
    elif kind == "maildir":
        fallback_date = _maildir_date(file.name)
    location = rel
    if kind == "maildir":  # cur/new and the :2,flags suffix change; the unique name does not
        parts = rel.split("/")
        location = "/".join(parts[:-2] + [parts[-1].split(":")[0]])
    mail = parse_message(data, run.source, uri, folder, kind, location, 0, fallback_date)
    if kind == "emlx" and file.name.endswith(".partial.emlx"):
        mail.attachments = [_with_stored_part(file, a, run.inside.max_bytes) for a in mail.attachments]
    doc, key = run.place(mail.doc)
    kids: list[int] = []
    run.files[rel] = stamp + [mail.doc.native_id, key, kids]
    if doc is not None:
        yield doc
        yield from run.attachments_of(doc, mail, kids)


def _with_stored_part(file: Path, attachment: Attachment, max_bytes: int) -> Attachment:
    """An attachment of a ``.partial.emlx`` with its bytes: Apple Mail keeps the message without
    its attachments and stores each one as a file of its own, at
    ``…/Data/…/Attachments/<message number>/<part number>/<file name>`` beside ``Messages/``."""
    if attachment.size or not attachment.name:
        return attachment
    number = file.name.split(".", 1)[0]
    folder = file.parent.parent / "Attachments" / number
    try:
        stored = sorted(p for p in folder.glob(f"*/{glob_escape(attachment.name)}") if p.is_file())
        if stored and stored[0].stat().st_size <= max_bytes:
            attachment.stored = stored[0].read_bytes()
    except OSError:
        pass
    return attachment


def _unwrap_emlx(data: bytes) -> tuple[bytes, datetime | None]:
    """(RFC 822 bytes, date-received) of an Apple Mail .emlx / .partial.emlx file."""
    first, _, rest = data.partition(b"\n")
    if not first.strip().isdigit():
        raise Broken("not an emlx file: first line is not a byte count")
    n = int(first.strip())
    if n > len(rest):
        raise Broken(f"truncated emlx: byte count {n} but only {len(rest)} bytes follow")
    message, trailer = rest[:n], rest[n:]
    received = None
    try:
        plist = plistlib.loads(trailer.strip()) if trailer.strip() else {}
        value = plist.get("date-received") if isinstance(plist, dict) else None
        if isinstance(value, (int, float)) and value > 0:
            received = datetime.fromtimestamp(value, tz=UTC)
    except Exception:  # a damaged trailer costs only the fallback date
        pass
    return message, received


def _maildir_date(name: str) -> datetime | None:
    m = re.match(r"(\d{9,10})\.", name)
    return datetime.fromtimestamp(int(m.group(1)), tz=UTC) if m else None
