"""Header fields as text: RFC 2047 and raw 8-bit values decoded, addresses, Message-IDs, dates
and subjects (reply and forward prefixes)."""

from __future__ import annotations

import email.header
import email.utils
import re
from collections.abc import Iterable
from datetime import datetime
from email.message import EmailMessage

from ragbag.connectors.mail.charsets import decode_bytes
from ragbag.core.records import utc

# No two unbounded quantifiers over the same characters side by side ("re" + spaces + "[2]"
# + spaces used to try every split of a run of spaces): linear on any subject.
_PREFIX = re.compile(
    r"^\s*((re|fw|fwd|aw|wg|tr|sv|vs|antw|odp|rif|r|res|enc|答复|回复|回覆|转发|轉寄|转寄)"
    r"\s*(?:\[\d+\]\s*)?[:：]\s*|\[[^\]]*\]\s*)",
    re.I,
)
_REPLY = re.compile(r"^\s*(re|aw|sv|vs|antw|odp|rif|r|res|答复|回复|回覆)\s*(?:\[\d+\]\s*)?[:：]", re.I)
_FORWARD = re.compile(r"^\s*(fw|fwd|wg|tr|enc|转发|轉寄|转寄)\s*[:：]", re.I)
_MSGID = re.compile(r"<([^<>\s]+)>")


def header_values(msg: EmailMessage, hints: Iterable[str] = ()) -> dict[str, list[str]]:
    """Lower-cased header names → decoded values, our own charset fallback (not the policy's);
    ``hints``: the charsets the message declares, for raw 8-bit values."""
    out: dict[str, list[str]] = {}
    for name, raw in msg.raw_items():
        value = raw if isinstance(raw, str) else str(raw)
        out.setdefault(name.lower(), []).append(decode_header(value, hints))
    return out


def unescape(raw: str, hints: Iterable[str] = ()) -> str:
    """A header value whose raw 8-bit bytes (which the parser keeps as lone surrogates) are
    decoded: UTF-8, else the charset detector, ``hints`` (the message's declared charsets)
    breaking its ties. Without this a ``To: danglüe@…`` sent as raw UTF-8 reached the store as
    surrogates, which it cannot hold."""
    if not any("\udc80" <= ch <= "\udcff" for ch in raw):
        return raw
    return decode_bytes(raw.encode("utf-8", "surrogateescape"), None, hints)


def decode_header(raw: str, hints: Iterable[str] = ()) -> str:
    """An RFC 2047 (or raw 8-bit) header value as text, whatever its charsets."""
    raw = unescape(raw, hints)
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


# An unquoted address used as a display name ("alice@x <bob@x>"): the parser would read two
# addresses and make alice the sender; quoted, it is the name of bob.
_QUOTE_ADDRESS_NAME = re.compile(r'(^|,)\s*([^\s,<>"@]+@[^\s,<>"]+)\s*<')
_ADDR_SPEC = re.compile(r'[^\s<>,;:()"@]+@[^\s<>,;:()"@]+')


def addresses(msg: EmailMessage, field: str, hints: Iterable[str] = ()) -> list[tuple[str, str]]:
    """(display name, lower-cased address) pairs of an address header, each address once.

    Split before decoding: an RFC 2047 display name may hold a comma
    (``=?iso-8859-1?Q?Last=DFName=2C_First?= <a@x>``), which decoded first would split the
    name into a false address. A name that only repeats its address is dropped."""
    raws = [
        _QUOTE_ADDRESS_NAME.sub(
            r'\1"\2" <', re.sub(r"\r?\n[ \t]+", " ", unescape(v if isinstance(v, str) else str(v), hints))
        )
        for k, v in msg.raw_items()
        if k.lower() == field
    ]
    try:
        pairs = email.utils.getaddresses(raws)
    except Exception:  # noqa: BLE001 — one field's parser failure (a RecursionError on nested
        # comments) costs that field its display names, not the message
        pairs = [("", m.group()) for raw in raws for m in _ADDR_SPEC.finditer(raw)]
    out, seen = [], set()
    for name, addr in pairs:
        name, addr = " ".join(decode_header(name, hints).split()).strip("'\" "), addr.strip().lower()
        if name.lower().strip("<>") == addr:
            name = ""
        key = addr or name.lower()
        if key and key not in seen:
            seen.add(key)
            out.append((name, addr))
    return out


def person(name: str, addr: str) -> str:
    return f"{name} <{addr}>" if name and addr and name.lower() != addr else (addr or name)


def msgid(raw: str) -> str:
    m = _MSGID.search(raw)
    return m.group(1) if m else raw.strip().strip("<>").strip()


def message_ids(value: str) -> list[str]:
    """The ``<...>`` ids in a References or In-Reply-To value, brackets removed, in order."""
    return _MSGID.findall(value)


def is_reply(subject: str) -> bool:
    """Whether a subject says it answers another message (``Re:``, ``AW:``, ``回复:``...)."""
    return _REPLY.match(subject) is not None


def is_forward(subject: str) -> bool:
    """Whether a subject says it forwards another message (``Fwd:``, ``WG:``, ``转发:``...)."""
    return _FORWARD.match(subject) is not None


def parse_date(raw: str) -> datetime | None:
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
