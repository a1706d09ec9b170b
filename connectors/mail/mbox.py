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

from ragbag.connectors.mail.message import Broken, Run, parse_message
from ragbag.core.records import Document, ReadError, Seen, utc
from ragbag.text.unreadable import one_line

_HASH_BYTES = 4096

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


def read_mbox(file: Path, rel: str, folder: str, st: os.stat_result, run: Run, prev: dict | None) -> Iterator:
    uri = str(file.absolute())
    stamp = [st.st_mtime_ns, st.st_size]
    state: dict[str, Any] = {"m": stamp[0], "s": stamp[1], "off": 0, "ids": [], "errors": [], "head": "", "edge": ""}
    start = 0
    try:
        with open(file, "rb") as fh:
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
                for native_id in prev.get("ids", []):
                    if native_id not in run.emitted:
                        run.emitted.add(native_id)
                        yield Seen(native_id)
                for e in prev.get("errors", []):
                    yield ReadError(*e)
                state.update(ids=list(prev.get("ids", [])), errors=list(prev.get("errors", [])))
                start = prev["off"]
            end = start
            first = len(state["ids"]) + len(state["errors"])
            for index, (offset, raw, complete) in enumerate(_mbox_messages(fh, start), first):
                record = _mbox_record(raw, run, uri, folder, rel, index, offset)
                if complete:
                    end = offset + len(raw)
                    if isinstance(record, ReadError):
                        state["errors"].append([record.uri, record.error])
                    elif record is not None:
                        state["ids"].append(record.native_id)
                if isinstance(record, Document):
                    if record.native_id in run.emitted:
                        continue
                    run.emitted.add(record.native_id)
                if record is not None:
                    yield record
            state["off"] = end
            state["head"] = _hash_at(fh, 0, min(_HASH_BYTES, end))
            state["edge"] = _hash_at(fh, max(0, end - _HASH_BYTES), end)
    except OSError as exc:
        yield ReadError(uri, f"unreadable: {exc.strerror or exc}")
        return
    run.mbox[rel] = state


def _hash_at(fh, start: int, end: int) -> str:
    fh.seek(start)
    return hashlib.blake2b(fh.read(max(0, end - start)), digest_size=8).hexdigest()


def _mbox_messages(fh, start: int) -> Iterator[tuple[int, bytes, bool]]:
    """(offset, raw bytes incl. postmark, complete) for each message from ``start`` on.

    A message is complete when another postmark follows or the file ends in a newline (a
    writer appending right now leaves a partial last message, re-read next time)."""
    fh.seek(start)
    lines: list[bytes] = []
    offset = pos = start
    rest = iter(fh)
    line = next(rest, None)
    while line is not None:
        following = next(rest, None)
        if lines and is_postmark(line, following):
            yield offset, b"".join(lines), True
            lines, offset = [], pos
        lines.append(line)
        pos += len(line)
        line = following
    if lines:
        yield offset, b"".join(lines), lines[-1].endswith(b"\n")


def _mbox_record(raw: bytes, run: Run, uri: str, folder: str, rel: str, index: int, offset: int):
    postmark, _, body = raw.partition(b"\n")
    if not postmark.startswith(b"From "):
        return None if not raw.strip() else ReadError(f"{uri}#{offset}", "text before the first 'From ' line")
    try:
        if not body.strip():
            raise Broken("empty message")
        data = _ESCAPED_FROM.sub(rb"\1", body)
        doc = parse_message(data, run.source, f"{uri}#{offset}", folder, "mbox", rel, index, _postmark_date(postmark))
    except Broken as exc:
        return ReadError(f"{uri}#{offset}", str(exc))
    except Exception as exc:
        return ReadError(f"{uri}#{offset}", f"unparseable message: {one_line(exc)}")
    return doc


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
