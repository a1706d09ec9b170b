"""mbox files: messages split at postmark lines (``From <sender> <date>``), ``>From `` escaping
undone, read incrementally from the byte offset after the last complete message."""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from ragbag.connectors._isolate import each_file, each_record
from ragbag.connectors.mail.message import MAX_MESSAGE_BYTES, Broken, Mail, Run, parse_message
from ragbag.core.records import ReadError, utc
from ragbag.text.unreadable import Unreadable, human_size

_HASH_BYTES = 4096
_PIECE = 1 << 16  # bytes of a line read at a time

# "From <sender> <ctime date>" (Thunderbird "From - Tue Jan  2 09:30:00 2024", Gmail "From
# 1789...@xxx Tue Jan 02 09:30:00 +0000 2024"; some tools write an RFC 822 date instead).
_POSTMARK = re.compile(rb"^From \S+ +(\w{3},? +)?(\w{3} +\d{1,2}|\d{1,2} +\w{3}( +\d{4})?),? +\d{1,2}:\d\d")

HEADER_LINE = re.compile(rb"^[!-9;-~]+:")

# Some exporters write the separator with no date ("From 1844347792267117879@xxx"): a message
# starts there only when a header field follows, so a body line "From me" never splits one.
_BARE_POSTMARK = re.compile(rb"^From \S+[ \t]*\r?\n?$")


def is_postmark(line: bytes, following: bytes | None) -> bool:
    if not line.startswith(b"From "):
        return False
    if _POSTMARK.match(line):
        return True
    return bool(_BARE_POSTMARK.match(line)) and following is not None and bool(HEADER_LINE.match(following))


_ESCAPED_FROM = re.compile(rb"^>(>*From )", re.M)
_NONBLANK = re.compile(rb"\S")


def read_mbox(file: Path, rel: str, folder: str, st: os.stat_result, run: Run, prev: dict | None) -> Iterator:
    """Every message of one mbox file, behind the isolation boundary: whatever one message
    holds is that message's ReadError, whatever else goes wrong is the file's."""
    uri = str(file.absolute())
    yield from each_file(uri, lambda: _read_mbox(file, uri, rel, folder, st, run, prev))


def _read_mbox(
    file: Path, uri: str, rel: str, folder: str, st: os.stat_result, run: Run, prev: dict | None
) -> Iterator:
    stamp = [st.st_mtime_ns, st.st_size]
    state: dict[str, Any] = {
        "m": stamp[0],
        "s": stamp[1],
        "off": 0,
        "ids": [],
        "keys": {},
        "kids": {},
        "errors": [],
        "head": "",
        "edge": "",
    }
    start = 0
    with _open(file) as fh:
        if (
            prev
            and st.st_size >= prev.get("off", 0)
            and prev.get("head") == _hash_at(fh, 0, min(_HASH_BYTES, prev["off"]))
            and (
                [prev.get("m"), prev.get("s")] == stamp
                or _hash_at(fh, max(0, prev["off"] - _HASH_BYTES), prev["off"]) == prev.get("edge")
            )
        ):
            # The messages before the offset are as they were: vouch for them.
            keys, kids = prev.get("keys", {}), prev.get("kids", {})
            for native_id in prev.get("ids", []):
                yield from run.seen(native_id, keys.get(native_id), kids.get(native_id, []))
            for e in prev.get("errors", []):
                yield ReadError(*e)
            state.update(
                ids=list(prev.get("ids", [])), keys=dict(keys), kids=dict(kids), errors=list(prev.get("errors", []))
            )
            start = prev["off"]
        end = start
        first = len(state["ids"]) + len(state["errors"])
        for index, (offset, raw, size, complete) in enumerate(_mbox_messages(fh, start), first):
            record_uri = f"{uri}#{offset}"
            record = each_record(record_uri, _mbox_record, raw, size, run, record_uri, folder, rel, index)
            placed, key = (None, "")
            if isinstance(record, Mail):
                placed, key = run.place(record.doc)
            if complete:
                end = offset + size
                if isinstance(record, ReadError):
                    state["errors"].append([record.uri, record.error])
                elif record is not None:
                    state["ids"].append(record.doc.native_id)
                    state["keys"][record.doc.native_id] = key
            if isinstance(record, ReadError):
                yield record
            elif placed is not None and record is not None:
                yield placed
                found: list[int] = []
                yield from run.attachments_of(placed, record, found)
                if complete and found:
                    state["kids"][placed.native_id] = found
        state["off"] = end
        state["head"] = _hash_at(fh, 0, min(_HASH_BYTES, end))
        state["edge"] = _hash_at(fh, max(0, end - _HASH_BYTES), end)
    run.mbox[rel] = state


def _open(file: Path):
    try:
        return open(file, "rb")
    except OSError as exc:
        raise Unreadable(f"unreadable: {exc.strerror or exc}") from exc


def _hash_at(fh, start: int, end: int) -> str:
    fh.seek(start)
    return hashlib.blake2b(fh.read(max(0, end - start)), digest_size=8).hexdigest()


def _pieces(fh) -> Iterator[tuple[bytes, bool]]:
    """(piece, starts a line) for the lines of ``fh`` from where it stands, each line in pieces
    of at most ``_PIECE`` bytes: a file with no newline in a gigabyte is never one string."""
    at_start = True
    while piece := fh.readline(_PIECE):
        yield piece, at_start
        at_start = piece.endswith(b"\n")


def _mbox_messages(fh, start: int, limit: int | None = None) -> Iterator[tuple[int, bytearray | None, int, bool]]:
    """(offset, raw bytes incl. postmark, size, complete) for each message from ``start`` on.
    The raw bytes are None for a message of more than ``limit`` bytes: its bytes are not kept
    beyond the limit, so one message, not the file, is what reading holds at a time.

    A message is complete when another postmark follows or the file ends in a newline (a
    writer appending right now leaves a partial last message, re-read next time)."""
    limit = MAX_MESSAGE_BYTES if limit is None else limit
    fh.seek(start)
    raw: bytearray | None = bytearray()
    size, offset, last = 0, start, b""
    pieces = _pieces(fh)
    current = next(pieces, None)
    while current is not None:
        following = next(pieces, None)
        piece, at_start = current
        next_line = following[0] if following is not None and following[1] else None
        if size and at_start and is_postmark(piece, next_line):
            yield offset, raw, size, True
            raw, offset, size = bytearray(), offset + size, 0
        size += len(piece)
        if raw is not None:
            if size <= limit:
                raw += piece
            else:
                raw = None  # too large: counted on, no longer kept
        last, current = piece, following
    if size:
        yield offset, raw, size, last.endswith(b"\n")


def _mbox_record(raw: bytearray | None, size: int, run: Run, uri: str, folder: str, rel: str, index: int):
    """The Document of one mbox message (None for blank bytes between messages); raises when
    it cannot be one."""
    if raw is None:
        raise Broken(f"message larger than {human_size(MAX_MESSAGE_BYTES)} ({size:,} bytes), skipped")
    newline = raw.find(b"\n")
    postmark = bytes(raw[: newline if newline >= 0 else len(raw)])
    if not postmark.startswith(b"From "):
        if not raw.strip():
            return None
        raise Broken("text before the first 'From ' line")
    body = memoryview(raw)[newline + 1 :] if newline >= 0 else memoryview(b"")
    if _NONBLANK.search(body) is None:
        raise Broken("empty message")
    data: bytes | memoryview = _ESCAPED_FROM.sub(rb"\1", bytes(body)) if _ESCAPED_FROM.search(body) else body
    return parse_message(data, run.source, uri, folder, "mbox", rel, index, _postmark_date(postmark))


def _postmark_date(line: bytes) -> datetime | None:
    m = re.search(rb"(\w{3} \w{3} +\d+ \d\d:\d\d:\d\d(?: [+-]\d{4})? \d{4})", line)
    if not m:
        return None
    text = m.group(1).decode("ascii", "replace")
    for fmt in ("%a %b %d %H:%M:%S %z %Y", "%a %b %d %H:%M:%S %Y"):
        try:
            return utc(datetime.strptime(re.sub(" +", " ", text), fmt))
        except ValueError:
            continue
    return None
