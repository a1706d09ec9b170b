"""Documents from e-mail: one message per document, quoted replies and signatures trimmed.

Formats, found anywhere under the given file or folder (one folder may hold all of them):

- **mbox** (Gmail Takeout ``*.mbox``, Thunderbird ``Inbox`` / ``Foo.sbd/Bar``, mutt ``~/mail``):
  a file whose first line is a ``From `` postmark. A new message starts at a postmark line
  (``From <sender> <weekday month day hh:mm...>``), so an unescaped "From here..." body line
  does not split a message; ``>From `` escaping (mboxrd) is undone in the body.
- **Maildir** (``cur/`` and ``new/``, ``tmp/`` ignored; Maildir++ ``.Sent`` folders).
- **Apple Mail** ``.emlx`` / ``.partial.emlx``: a byte-count first line, that many bytes of RFC 822
  message, then an XML plist trailer (its ``date-received`` is the fallback date).
- **Loose RFC 822 files** (``*.eml``, the CMU Enron layout ``maildir/<user>/<folder>/<n>.``): any
  other file whose header block has ``From:`` and ``Date:`` or ``Message-ID:`` is one message;
  files that do not look like that (``.msf`` summaries, plists, SQLite indexes) are ignored.

Decoding uses the stdlib ``email`` package (``policy.default``) for structure and transfer
encodings, but headers and bodies are decoded here with a charset fallback: GB2312/GBK are read
as GB18030, Latin-1/ASCII labels as cp1252, unknown or lying labels try UTF-8 and finally
Latin-1 with replacement; raw 8-bit headers try UTF-8 then GB18030. HTML-only bodies become text
with BeautifulSoup (quoted ``<blockquote>``/``gmail_quote`` blocks removed first). Attachments are
listed by name and type (``attachments``, ``attachment_types``); small text attachments add
their text. A message that cannot be read is a ``ReadError("{file}#{index or offset}", reason)``.

Text: a ``From · To · Date · Subject`` summary line, then the body with quoted lines (``>``),
"On ... wrote:" / Outlook "-----Original Message-----" tails and the ``-- `` signature trimmed.
Forwards (``Fwd:``/``FW:``/``WG:``/``转发:``) keep the forwarded text: it is what was sent.
Title = subject; ``created_at`` = the Date header in UTC (else emlx date-received, the Maildir
delivery time, the mbox postmark date).

Metadata: ``from`` (address), ``from_name``, ``to``, ``cc`` (address lists), ``subject``,
``date`` (ISO UTC), ``message_id``, ``thread_id``, ``thread_subject``, ``folder``,
``has_attachments``, ``attachments``, ``attachment_types``, ``labels`` (Gmail ``X-Gmail-Labels``),
``format`` (mbox, maildir, emlx, eml).

Ids: ``native_id`` is the Message-ID without brackets, else a hash of the file (Maildir: its
unique name, so a new→cur move keeps it) and index in the file. The same Message-ID in two
folders is kept once: the first in sorted path order (then file order) wins. ``thread_id`` is
the root of References (else In-Reply-To); a message with neither is a thread root — its own
Message-ID — unless its subject says it is a reply (``Re:``/``AW:``/``回复:``; Outlook/Exchange
exports such as Enron carry no References), then ``subject:<normalised subject>``.
``thread_subject`` (the normalised subject) always groups such threads.

Incremental: the cursor holds, per mbox file, the byte offset after the last complete message,
the file's size and mtime, a hash of its first 4 KiB and of the 4 KiB before the offset (both
within the part already read), and
the native ids of the messages before the offset. An mbox whose size and mtime are unchanged is
not opened; one that grew with both hashes intact is read from the offset only; otherwise it is
read again in full. Ids are stored rather than re-scanned because re-scanning headers means
reading the whole file, which is what the offset avoids (cost: ~50 bytes of cursor per
message). Maildir, emlx and loose files: the cursor maps relative path → (mtime, size, native
id); an unchanged file yields ``Seen`` without being opened, a deleted file's message is
deleted. Missed by design: an mbox edited in place before the offset that keeps its size
growing and both hashed regions intact, and (for duplicates) the folder/uri of a kept copy whose
file was deleted while an unchanged duplicate vouches for it.

Left out: attachment text other than small text/* parts (no PDF/Office extraction), Apple Mail's
``Envelope Index`` database (flags, mailbox names beyond the ``.mbox`` folder names), Thunderbird
``.msf`` summaries (deleted-but-not-compacted mbox messages are indexed), message bodies beyond
1 M characters (cut).
"""

from __future__ import annotations

import codecs
import email
import email.header
import email.utils
import hashlib
import os
import plistlib
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email import policy
from email.message import EmailMessage
from pathlib import Path
from typing import Any

from bs4 import BeautifulSoup

from ragbag.connectors._walk import Entry, follows_outside, walk
from ragbag.connectors.files import html_text
from ragbag.core.records import Cursor, Document, ReadError, Seen, Span, stable_hash, utc
from ragbag.text.chunking import TokenCounter, prose_spans

NAME = "mail"
SCHEDULE = "*/30 * * * *"
MAX_MESSAGE_BYTES = 100 * 1024 * 1024
MAX_BODY_CHARS = 1_000_000
MAX_ATTACHMENT_TEXT = 20_000
MAX_RECIPIENTS_SHOWN = 6
_SNIFF_BYTES = 8192
_HASH_BYTES = 4096
_CURSOR_VERSION = 1

# "From <sender> <ctime date>" (Thunderbird "From - Tue Jan  2 09:30:00 2024", Gmail "From
# 1789...@xxx Tue Jan 02 09:30:00 +0000 2024"; some tools write an RFC 822 date instead).
_POSTMARK = re.compile(rb"^From \S+ +(\w{3},? +)?(\w{3} +\d{1,2}|\d{1,2} +\w{3}( +\d{4})?),? +\d{1,2}:\d\d")
_HEADER_LINE = re.compile(rb"^[!-9;-~]+:")
# Some exporters write the separator with no date ("From 1844347792267117879@xxx"): a message
# starts there only when a header field follows, so a body line "From me" never splits one.
_BARE_POSTMARK = re.compile(rb"^From \S+[ \t]*\r?\n?$")


def _is_postmark(line: bytes, following: bytes | None) -> bool:
    if not line.startswith(b"From "):
        return False
    if _POSTMARK.match(line):
        return True
    return bool(_BARE_POSTMARK.match(line)) and following is not None and bool(_HEADER_LINE.match(following))


_ESCAPED_FROM = re.compile(rb"^>(>*From )", re.M)
_PREFIX = re.compile(
    r"^\s*((re|fw|fwd|aw|wg|tr|sv|vs|antw|odp|rif|r|res|enc|答复|回复|回覆|转发|轉寄|转寄)"
    r"\s*(\[\d+\])?\s*[:：]\s*|\[[^\]]*\]\s*)",
    re.I,
)
_REPLY = re.compile(r"^\s*(re|aw|sv|vs|antw|odp|rif|r|res|答复|回复|回覆)\s*(\[\d+\])?\s*[:：]", re.I)
_FORWARD = re.compile(r"^\s*(fw|fwd|wg|tr|enc|转发|轉寄|转寄)\s*[:：]", re.I)
_MSGID = re.compile(r"<([^<>\s]+)>")
_CHARSET_ALIASES = {
    "gb2312": "gb18030",
    "gbk": "gb18030",
    "x-gbk": "gb18030",
    "cp936": "gb18030",
    "gb_2312-80": "gb18030",
    "euc-cn": "gb18030",
    "x-euc-cn": "gb18030",
    "chinese": "gb18030",
    "big5": "big5hkscs",
    "iso-8859-1": "cp1252",
    "latin-1": "cp1252",
    "latin1": "cp1252",
    "us-ascii": "cp1252",
    "ascii": "cp1252",
    "ansi_x3.4-1968": "cp1252",
    "ks_c_5601-1987": "cp949",
    "euc-kr": "cp949",
    "shift_jis": "cp932",
    "shift-jis": "cp932",
    "x-sjis": "cp932",
    "iso-8859-8-i": "iso-8859-8",
    "utf8": "utf-8",
    "unicode-1-1-utf-7": "utf-7",
}
# Where a reply's quoted tail begins (the cut goes from that line to the end).
_QUOTE_HEADS = [
    re.compile(p, re.I | re.M)
    for p in (
        r"^[ \t]*-{2,}[ \t]*(Original Message|Ursprüngliche Nachricht|Message d'origine|原始邮件|原始郵件)"
        r"[ \t]*-{2,}",
        r"^[ \t]*_{10,}[ \t]*\n+[ \t*]*(From|Von|De|发件人)[ \t]*[:：]",  # Outlook's rule line
        r"^[ \t*]*(From|Von|De|发件人)[ \t]*[:：].*\n[ \t*]*(Sent|Gesendet|Envoyé|Date|发送时间)[ \t]*[:：]",
    )
]
# The verb may be followed by the name: German clients write "Am 06.10.2025 um 09:12 schrieb
# Ingrid Baumann <i.b@…>:" (Gmail: "… Uhr schrieb X <…>:").
_WROTE = re.compile(
    r"^(?!>)[^\n]{0,200}?(wrote|schrieb|a écrit|escribió|ha scritto|skrev|schreef|"
    r"写道|寫道)(?:[ \t][^\n]{0,150}?)?[ \t]*[:：][ \t]*$",
    re.I | re.M,
)
_ON_WROTE_START = re.compile(r"^[ \t]*(On|Am|Le|El|Il|Op|Den|在)\b", re.I | re.M)
_MOBILE_SIG = re.compile(r"\n[ \t]*(Sent from my \w+.*|Get Outlook for \w+.*|发自我的\S+)[ \t]*\s*$", re.I)


# ----------------------------------------------------------------------------- discovery


def discover() -> tuple[list[Path], list[str]]:
    """Apple Mail V* trees, Thunderbird profiles' Mail/ImapMail, ~/Maildir and ~/mail."""
    home = Path(os.environ.get("HOME") or Path.home())
    patterns = [
        "Library/Mail/V*",
        ".thunderbird/*/Mail",
        ".thunderbird/*/ImapMail",
        "snap/thunderbird/common/.thunderbird/*/Mail",
        "snap/thunderbird/common/.thunderbird/*/ImapMail",
        "Library/Thunderbird/Profiles/*/Mail",
        "Library/Thunderbird/Profiles/*/ImapMail",
        "Maildir",
        "mail",
    ]
    found: list[Path] = []
    for pattern in patterns:
        found += sorted(p for p in home.glob(pattern) if p.is_dir())
    return found, [str(home / p) for p in patterns]


# ----------------------------------------------------------------------------- reading


@dataclass
class _Run:
    """State of one read: what has been emitted (for duplicates) and the next cursor."""

    source: str
    emitted: set[str] = field(default_factory=set)
    files: dict[str, list] = field(default_factory=dict)
    mbox: dict[str, dict] = field(default_factory=dict)


def read(
    path: Path | None, source: str, cursor: dict | None = None, options: dict | None = None
) -> Iterator[Document | ReadError | Seen | Cursor]:
    """Every message under ``path`` (``None``: ``discover()``'s places), then the new cursor.
    ``options``: the source's options (None: those in ``sources.yaml``), see :mod:`connectors._walk`."""
    follow_outside = follows_outside(options)
    if path is None:
        roots, _ = discover()
        if not roots:
            yield ReadError("mail:default places", "no mail folders found in the default places")
            return
    else:
        roots = [Path(path)]
    old_roots = (cursor or {}).get("roots", {}) if (cursor or {}).get("v") == _CURSOR_VERSION else {}
    new_roots: dict[str, Any] = {}
    for root in roots:
        key = str(root.absolute())
        if not root.exists():
            yield ReadError(key, "no such file or directory")
            continue
        old = old_roots.get(key, {})
        run = _Run(source)
        yield from _read_root(root, run, old.get("files", {}), old.get("mbox", {}), follow_outside)
        new_roots[key] = {"files": run.files, "mbox": run.mbox}
    yield Cursor({"v": _CURSOR_VERSION, "roots": new_roots})


def _read_root(root: Path, run: _Run, old_files: dict, old_mbox: dict, follow_outside: bool = False) -> Iterator:
    errors: list[ReadError] = []
    entries = [(root, root.name)] if root.is_file() else _walk(root, errors, follow_outside)
    for file, rel in entries:
        try:
            st = file.stat()
        except OSError as exc:
            yield ReadError(str(file.absolute()), f"unreadable: {exc.strerror or exc}")
            continue
        stamp = [st.st_mtime_ns, st.st_size]
        prev = old_files.get(rel)
        if prev is not None and prev[:2] == stamp:  # an unchanged one-message file
            run.files[rel] = prev
            if prev[2] not in run.emitted:
                run.emitted.add(prev[2])
                yield Seen(prev[2])
            continue
        kind = _kind(file, rel)
        if kind is None:
            kind = _sniff(file)
        if kind is None:
            if root.is_file():  # the user named this very file: say why it gives nothing
                yield ReadError(
                    str(file.absolute()),
                    "not mail: no mbox 'From ' line and no header block "
                    "with From: (and Date:, Message-ID:, To: or Subject:)",
                )
            continue
        if kind == "mbox":
            yield from _read_mbox(file, rel, st, run, old_mbox.get(rel))
        else:
            yield from _read_single(file, rel, kind, stamp, run)
    yield from errors


def _walk(root: Path, errors: list[ReadError], follow_outside: bool = False) -> list[tuple[Path, str]]:
    """(file, relative posix path), sorted; hidden entries skipped except Maildir++ folders,
    Maildir ``tmp`` folders skipped; links leaving ``root`` are followed only with
    ``follow_outside`` (see :mod:`connectors._walk`)."""
    maildirs: dict[Path, bool] = {}

    def keep(entry: Entry) -> bool:
        if not entry.is_dir:
            return not entry.name.startswith(".")
        folder = entry.path.parent
        if folder not in maildirs:
            maildirs[folder] = _is_maildir(folder)
        if maildirs[folder] and entry.name == "tmp":
            return False
        return not entry.name.startswith(".") or _is_maildir(entry.path)

    return walk(root, errors, keep=keep, follow_outside=follow_outside)


def _is_maildir(folder: Path) -> bool:
    return (folder / "cur").is_dir() or (folder / "new").is_dir()


def _kind(file: Path, rel: str) -> str | None:
    """The format a path's name tells; None means: look inside."""
    name = file.name.lower()
    if name.endswith(".emlx"):
        return "emlx"
    parts = rel.split("/")
    if len(parts) >= 2 and parts[-2] in ("cur", "new") and _is_maildir(file.parent.parent):
        return "maildir"
    if name.endswith(".msg"):
        return "msg"
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


def _sniff(file: Path) -> str | None:
    """'mbox' for a postmark first line, 'eml' for a mail header block, else None (not mail)."""
    try:
        with open(file, "rb") as fh:
            head = fh.read(_SNIFF_BYTES)
    except OSError:
        return "eml" if file.suffix.lower() == ".eml" else None  # reported when read
    first, _, after = head.partition(b"\n")
    if _is_postmark(first + b"\n", after.split(b"\n", 1)[0]):
        return "mbox"
    if file.suffix.lower() == ".eml":
        return "eml"
    return "eml" if _looks_like_headers(head) else None


def _looks_like_headers(head: bytes) -> bool:
    """A header block (first line a field) holding From: and one of Date:, Message-ID:, To:,
    Subject: (a saved draft or a hand-made message often has neither date nor id)."""
    if not _HEADER_LINE.match(head):
        return False
    block = re.split(rb"\r?\n\r?\n", head, maxsplit=1)[0]
    names = {m.group(1).lower() for m in re.finditer(rb"^([!-9;-~]+):", block, re.M)}
    return b"from" in names and bool(names & {b"date", b"message-id", b"to", b"subject"})


def _read_single(file: Path, rel: str, kind: str, stamp: list, run: _Run) -> Iterator:
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
            raise _Broken(f"larger than {MAX_MESSAGE_BYTES // 2**20} MB ({stamp[1]} bytes), skipped")
        data = file.read_bytes()
        if not data.strip():
            raise _Broken("empty file")
        fallback_date = None
        if kind == "emlx":
            data, fallback_date = _unwrap_emlx(data)
        elif kind == "maildir":
            fallback_date = _maildir_date(file.name)
        location = rel
        if kind == "maildir":  # cur/new and the :2,flags suffix change; the unique name does not
            parts = rel.split("/")
            location = "/".join(parts[:-2] + [parts[-1].split(":")[0]])
        doc = _message(data, run.source, uri, _folder(rel, kind), kind, location, 0, fallback_date)
    except _Broken as exc:
        yield ReadError(f"{uri}#0", str(exc))
        return
    except OSError as exc:
        yield ReadError(f"{uri}#0", f"unreadable: {exc.strerror or exc}")
        return
    except Exception as exc:  # the email package raises many kinds on damaged input
        yield ReadError(f"{uri}#0", f"unparseable message: {_one_line(exc)}")
        return
    run.files[rel] = stamp + [doc.native_id]
    if doc.native_id not in run.emitted:
        run.emitted.add(doc.native_id)
        yield doc


class _Broken(Exception):
    """A message that is not readable; the text is the one-line reason."""


def _unwrap_emlx(data: bytes) -> tuple[bytes, datetime | None]:
    """(RFC 822 bytes, date-received) of an Apple Mail .emlx / .partial.emlx file."""
    first, _, rest = data.partition(b"\n")
    if not first.strip().isdigit():
        raise _Broken("not an emlx file: first line is not a byte count")
    n = int(first.strip())
    if n > len(rest):
        raise _Broken(f"truncated emlx: byte count {n} but only {len(rest)} bytes follow")
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


def _folder(rel: str, kind: str) -> str:
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


# ----------------------------------------------------------------------------- mbox


def _read_mbox(file: Path, rel: str, st: os.stat_result, run: _Run, prev: dict | None) -> Iterator:
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
            folder = _folder(rel, "mbox")
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
        if lines and _is_postmark(line, following):
            yield offset, b"".join(lines), True
            lines, offset = [], pos
        lines.append(line)
        pos += len(line)
        line = following
    if lines:
        yield offset, b"".join(lines), lines[-1].endswith(b"\n")


def _mbox_record(raw: bytes, run: _Run, uri: str, folder: str, rel: str, index: int, offset: int):
    postmark, _, body = raw.partition(b"\n")
    if not postmark.startswith(b"From "):
        return None if not raw.strip() else ReadError(f"{uri}#{offset}", "text before the first 'From ' line")
    try:
        if not body.strip():
            raise _Broken("empty message")
        data = _ESCAPED_FROM.sub(rb"\1", body)
        doc = _message(data, run.source, f"{uri}#{offset}", folder, "mbox", rel, index, _postmark_date(postmark))
    except _Broken as exc:
        return ReadError(f"{uri}#{offset}", str(exc))
    except Exception as exc:
        return ReadError(f"{uri}#{offset}", f"unparseable message: {_one_line(exc)}")
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


# ----------------------------------------------------------------------------- one message


def _message(
    data: bytes, source: str, uri: str, folder: str, fmt: str, location: str, index: int, fallback_date: datetime | None
) -> Document:
    """Parse one RFC 822 message into a Document; raises _Broken (or anything) when unusable."""
    msg = email.message_from_bytes(data, policy=policy.default)
    headers = _headers(msg)
    if not any(k in headers for k in ("from", "to", "subject", "date", "message-id")):
        raise _Broken("no mail headers (From/To/Subject/Date/Message-ID) found")
    subject = " ".join(headers.get("subject", [""])[0].split())
    sender = _addresses(msg, "from")
    to = _addresses(msg, "to")
    cc = _addresses(msg, "cc")
    message_id = _msgid(headers.get("message-id", [""])[0])
    created = _date(headers.get("date", [""])[0]) or fallback_date

    body, attachments = _body(msg)
    body = _trim(body, forward=bool(_FORWARD.match(subject)))
    if len(body) > MAX_BODY_CHARS:
        body = body[:MAX_BODY_CHARS]
    names = [name for name, _, _ in attachments]
    types = [ctype for _, ctype, _ in attachments]
    extra = [f"[attachment {name}]\n{text.strip()}" for name, _, text in attachments if text.strip()]

    from_name, from_addr = sender[0] if sender else ("", "")
    if sender and not from_name and headers.get("x-from"):  # Exchange exports (Enron)
        from_name = " ".join(re.sub(r"<[^>]*>", "", headers["x-from"][0]).split()).strip("'\" ")
        from_name = "" if from_name.lower() == from_addr else from_name
    summary = [f"From: {_person(from_name, from_addr)}" if sender else "From: (unknown)"]
    if to:
        shown = ", ".join(_person(n, a) for n, a in to[:MAX_RECIPIENTS_SHOWN])
        more = len(to) - MAX_RECIPIENTS_SHOWN
        summary.append(f"To: {shown}" + (f" and {more} more" if more > 0 else ""))
    if created:
        summary.append(f"Date: {created:%Y-%m-%d %H:%M} UTC")
    summary.append(f"Subject: {subject or '(no subject)'}")
    parts = [" · ".join(summary), body.strip()]
    if names:
        parts.append("Attachments: " + ", ".join(f"{n} ({t})" for n, t in zip(names, types)))
    parts += extra
    text = "\n\n".join(p for p in parts if p) + "\n"

    refs = _MSGID.findall(" ".join(headers.get("references", [])))
    reply_to = _MSGID.findall(" ".join(headers.get("in-reply-to", [])))
    norm_subject = normalise_subject(subject)
    if refs or reply_to:
        thread_id = (refs or reply_to)[0]
    elif message_id and not _REPLY.match(subject):
        thread_id = message_id
    else:
        thread_id = "subject:" + norm_subject.lower()
    labels = [x.strip() for x in ",".join(headers.get("x-gmail-labels", [])).split(",") if x.strip()]
    meta = {
        "from": from_addr,
        "from_name": from_name,
        "to": [a for _, a in to],
        "cc": [a for _, a in cc],
        "subject": subject,
        "date": created.isoformat() if created else "",
        "message_id": message_id,
        "thread_id": thread_id,
        "thread_subject": norm_subject,
        "folder": folder,
        "has_attachments": bool(names),
        "attachments": names,
        "attachment_types": types,
        "labels": labels,
        "format": fmt,
    }
    native_id = message_id or "nomid:" + stable_hash(location, str(index))
    return Document(
        source=source,
        connector=NAME,
        native_id=native_id,
        uri=uri,
        title=subject or "(no subject)",
        text=text,
        created_at=created,
        updated_at=None,
        authors=[_person(from_name, from_addr)] if sender else [],
        metadata=meta,
    )


def _headers(msg: EmailMessage) -> dict[str, list[str]]:
    """Lower-cased header names → decoded values, our own charset fallback (not the policy's)."""
    out: dict[str, list[str]] = {}
    for name, raw in msg.raw_items():
        value = raw if isinstance(raw, str) else str(raw)
        out.setdefault(name.lower(), []).append(decode_header(value))
    return out


def decode_header(raw: str) -> str:
    """An RFC 2047 (or raw 8-bit) header value as text, whatever its charsets."""
    if any("\udc80" <= ch <= "\udcff" for ch in raw):  # raw 8-bit bytes kept by surrogateescape
        raw = decode_bytes(raw.encode("ascii", "surrogateescape"), None)
    raw = re.sub(r"\r?\n[ \t]+", " ", raw)
    if "=?" not in raw:
        return raw.strip()
    try:
        pieces = email.header.decode_header(raw)
    except Exception:
        return raw.strip()
    out = []
    for value, charset in pieces:
        out.append(value if isinstance(value, str) else decode_bytes(value, charset))
    return "".join(out).strip()


def decode_bytes(data: bytes, charset: str | None) -> str:
    """Text from bytes in a declared charset, falling back instead of failing: a Latin-1/ASCII
    label is tried as UTF-8 first (mislabelled UTF-8 is common), any other label before UTF-8;
    unlabelled bytes try UTF-8, GB18030, cp1252; the last resort is Latin-1 with replacement."""
    declared = ""
    if charset:
        name = charset.strip().strip('"').lower()
        name = _CHARSET_ALIASES.get(name, name)
        try:
            declared = codecs.lookup(name).name
        except LookupError:
            declared = ""
    if not declared:
        order = ["utf-8", "gb18030", "cp1252"]
    elif declared == "cp1252":
        order = ["utf-8", "cp1252"]
    else:
        order = [declared, "utf-8"]
    for enc in order:
        try:
            return data.decode(enc)
        except (UnicodeDecodeError, LookupError):
            continue
    return data.decode(declared or "latin-1", errors="replace")


# An unquoted address used as a display name ("alice@x <bob@x>"): the parser would read two
# addresses and make alice the sender; quoted, it is the name of bob.
_QUOTE_ADDRESS_NAME = re.compile(r'(^|,)\s*([^\s,<>"]+@[^\s,<>"]+)\s*<')


def _addresses(msg: EmailMessage, field: str) -> list[tuple[str, str]]:
    """(display name, lower-cased address) pairs of an address header, each address once.

    Split before decoding: an RFC 2047 display name may hold a comma
    (``=?iso-8859-1?Q?Last=DFName=2C_First?= <a@x>``), which decoded first would split the
    name into a false address. A name that only repeats its address is dropped."""
    raws = [
        _QUOTE_ADDRESS_NAME.sub(r'\1"\2" <', re.sub(r"\r?\n[ \t]+", " ", v if isinstance(v, str) else str(v)))
        for k, v in msg.raw_items()
        if k.lower() == field
    ]
    out, seen = [], set()
    for name, addr in email.utils.getaddresses(raws):
        name, addr = " ".join(decode_header(name).split()).strip("'\" "), addr.strip().lower()
        if name.lower().strip("<>") == addr:
            name = ""
        key = addr or name.lower()
        if key and key not in seen:
            seen.add(key)
            out.append((name, addr))
    return out


def _person(name: str, addr: str) -> str:
    return f"{name} <{addr}>" if name and addr and name.lower() != addr else (addr or name)


def _msgid(raw: str) -> str:
    m = _MSGID.search(raw)
    return m.group(1) if m else raw.strip().strip("<>").strip()


def _date(raw: str) -> datetime | None:
    if not raw:
        return None
    try:
        return utc(email.utils.parsedate_to_datetime(raw))
    except (TypeError, ValueError, IndexError, OverflowError):
        return None


def normalise_subject(subject: str) -> str:
    """The subject without reply/forward prefixes (Re:, Fwd:, AW:, 回复:, [list] tags)."""
    prev = None
    while prev != subject:
        prev, subject = subject, _PREFIX.sub("", subject, count=1)
    return " ".join(subject.split())


def _body(msg: EmailMessage) -> tuple[str, list[tuple[str, str, str]]]:
    """(body text, [(attachment name, type, text)]): the first inline text/plain part, unless it
    is empty or only a stand-in for the HTML ("view this email in your browser"), else the first
    inline text/html one; parts with a file name or ``attachment`` disposition are
    attachments, inline images with a Content-ID (logos) are neither. Each header is parsed
    once per part: the policy's header objects are what reading costs most."""
    attachments: list[tuple[str, str, str]] = []
    plain = html = None
    for part, ctype in _leaves(msg):
        filename = _filename(part)
        disposition = part.get_content_disposition()
        if ctype.startswith("image/") and disposition != "attachment" and part["content-id"]:
            continue  # an inline logo or signature image
        if ctype == "message/rfc822" or filename or disposition == "attachment":
            text = ""
            if ctype in ("text/plain", "text/markdown", "text/csv"):
                text = _part_text(part)[:MAX_ATTACHMENT_TEXT]
            attachments.append((filename or _attached_subject(part) or "(unnamed)", ctype, text))
        elif ctype == "text/plain" and plain is None:
            plain = part
        elif ctype == "text/html" and html is None:
            html = part
        elif ctype.startswith("text/") and plain is None and ctype != "text/html":
            plain = part  # text/enriched, text/x-...: better than nothing
    text = _part_text(plain) if plain is not None else ""
    if html is not None and _stands_in(text):
        rendered = _html(_part_text(html))
        if rendered.strip():
            text = rendered
    return text.replace("\r\n", "\n").replace("\r", "\n"), attachments


# What senders put in text/plain when the content is only in the HTML part.
_STAND_IN = re.compile(
    r"(html|rich[- ]text).{0,40}(content|version|message|mail|format)|view (it|this( e-?mail| message)?) "
    r"(in|with) (your|a|an) (web )?browser|(e-?mail|message) (client|program) (does not|doesn't|cannot|can't) "
    r"(support|display)|online version|im browser (an|öffnen)|webversion|version en ligne|versión web",
    re.I,
)


def _stands_in(plain: str) -> bool:
    """Whether a text/plain alternative carries no text of its own: empty, or a short notice
    that the message is HTML ("This message contains HTML content", "view this email in your
    browser"), so the HTML part is the content."""
    words = plain.split()
    return not words or (len(words) <= 40 and _STAND_IN.search(plain) is not None)


def _leaves(part, depth: int = 0) -> Iterator[tuple[Any, str]]:
    """(part, content type) of every non-multipart part; an attached message is one leaf."""
    ctype = part.get_content_type()
    if ctype.startswith("multipart/") and depth < 20 and isinstance(part.get_payload(), list):
        for sub in part.get_payload():
            yield from _leaves(sub, depth + 1)
    else:
        yield part, ctype


def _attached_subject(part) -> str:
    payload = part.get_payload()
    inner = payload[0] if isinstance(payload, list) and payload else None
    if inner is None:
        return ""
    for name, raw in inner.raw_items():
        if name.lower() == "subject":
            return decode_header(str(raw)) + ".eml"
    return ""


def _filename(part) -> str:
    try:
        name = part.get_filename()
    except Exception:
        name = None
    if name is None:
        return ""
    return decode_header(str(name)) if "=?" in str(name) else str(name).strip()


def _part_text(part) -> str:
    payload = part.get_payload(decode=True)
    if payload is None:
        payload = part.get_payload()
        return payload if isinstance(payload, str) else ""
    return decode_bytes(payload, part.get_content_charset())


def _html(html: str) -> str:
    """Text of an HTML body, quoted blocks of earlier messages removed first."""
    soup = BeautifulSoup(html, "html.parser")
    for tag in soup.select(
        "blockquote[type=cite], div.gmail_quote, div#appendonsend, "
        "div#divRplyFwdMsg, div.moz-cite-prefix, blockquote.gmail_quote"
    ):
        tag.decompose()
    return html_text(str(soup))[1]


def _trim(body: str, forward: bool) -> str:
    """The body without quoted earlier messages and the signature; untrimmed if that is all."""
    text = body.strip("\n")
    if not forward:
        cut = min([m.start() for p in _QUOTE_HEADS if (m := p.search(text))] + [len(text)])
        wrote = _wrote_line(text[:cut])
        text = text[: cut if wrote is None else wrote]
        text = "\n".join(line for line in text.split("\n") if not line.lstrip().startswith(">"))
    lines = text.rstrip().split("\n")
    for i in range(len(lines) - 1, max(-1, len(lines) - 16), -1):
        if lines[i] in ("-- ", "--"):
            lines = lines[:i]
            break
    text = _MOBILE_SIG.sub("", "\n".join(lines))
    text = re.sub(r"\n{3,}", "\n\n", text).strip()
    return text if text else body.strip()


def _wrote_line(text: str) -> int | None:
    """Where an "On <date>, <name> wrote:" attribution starts (it may wrap over two lines); a
    "wrote:" line counts only when it opens like one or quoted lines follow it."""
    for m in _WROTE.finditer(text):
        start = m.start()
        before = text[:start].rstrip("\n").rsplit("\n", 1)[-1] if start else ""
        after = text[m.end() :].lstrip("\n")
        if _ON_WROTE_START.match(m.group(0)):
            return start
        if (
            before
            and _ON_WROTE_START.match(before)
            and text[:start].endswith("\n")
            and not text[:start].endswith("\n\n")
        ):
            return start - len(before) - 1
        if after.lstrip().startswith(">") or not after.strip():
            return start
    return None


def _one_line(exc: Exception) -> str:
    return " ".join(str(exc).split())[:200] or type(exc).__name__


# ----------------------------------------------------------------------------- chunks


def spans(doc: Document, count: TokenCounter, max_tokens: int) -> list[Span]:
    """A message is one chunk when it fits; longer ones split at paragraphs, then sentences."""
    if count(doc.text) <= max_tokens:
        s, e = 0, len(doc.text.rstrip())
        return [Span(s, e)] if doc.text.strip() else []
    return prose_spans(doc.text, count, max_tokens)
