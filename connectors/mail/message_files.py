"""Files that hold one message each: Maildir entries, Apple Mail ``.emlx`` files and loose RFC
822 files (``*.eml``, the Enron layout)."""

from __future__ import annotations

import plistlib
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

from ragbag.connectors.mail.message import Broken, Run, parse_message
from ragbag.core.records import ReadError
from ragbag.text.unreadable import one_line

MAX_MESSAGE_BYTES = 100 * 1024 * 1024


def read_message_file(file: Path, rel: str, kind: str, folder: str, stamp: list, run: Run) -> Iterator:
    """One message in one file (Maildir, emlx, loose RFC 822)."""
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
    try:
        if stamp[1] > MAX_MESSAGE_BYTES:
            raise Broken(f"larger than {MAX_MESSAGE_BYTES // 2**20} MB ({stamp[1]} bytes), skipped")
        data = file.read_bytes()
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
        doc = parse_message(data, run.source, uri, folder, kind, location, 0, fallback_date)
    except Broken as exc:
        yield ReadError(f"{uri}#0", str(exc))
        return
    except OSError as exc:
        yield ReadError(f"{uri}#0", f"unreadable: {exc.strerror or exc}")
        return
    except Exception as exc:  # the email package raises many kinds on damaged input
        yield ReadError(f"{uri}#0", f"unparseable message: {one_line(exc)}")
        return
    run.files[rel] = stamp + [doc.native_id]
    if doc.native_id not in run.emitted:
        run.emitted.add(doc.native_id)
        yield doc


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
