"""The fields of a record that name people, and how their values are read: search's ``--person``
and the names a question may name (``ragbag.search.people``, ``ragbag.search.mentions``), and
the names a publish counts for them (``ragbag.pipeline.people_names``), read alike.

Mail ``from``/``to``/``cc`` (and ``from_name``), chat ``sender``/``participants``/``chat``/
``chat_id``, a contact's ``display_name``, calendar ``organizer``/``attendees``. A value is a
string, a list of them, (label, value) pairs or dicts of strings (``strings``).
"""

from __future__ import annotations

import json
import re
from typing import Any

FIELDS = (
    "from",
    "from_name",
    "to",
    "cc",
    "sender",
    "participants",
    "chat",
    "chat_id",  # a WeChat chat's wxid, which a contact's X-WECHAT or IMPP handle may give
    "display_name",
    "organizer",
    "attendees",
)
# The fields whose values name a person (a chat's title may name a group, not a person).
NAMING = tuple(f for f in FIELDS if f != "chat")
_BRACKETED = re.compile(r"<[^>]*>|\([^)]*\)")
_NAME = re.compile(r"[^\W\d_][^\d@<>:/\\|#]*")  # starts with a letter; no digits, address or path marks


def strings(value: Any) -> list[str]:
    """The strings a people field holds: itself, a list's items, (label, value) pairs' values."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list | tuple):
        out: list[str] = []
        for v in value:
            if isinstance(v, str):
                out.append(v)
            elif isinstance(v, list | tuple) and v and isinstance(v[-1], str):  # (label, value) pairs
                out.append(v[-1])
            elif isinstance(v, dict):
                out += [str(x) for x in v.values() if isinstance(x, str)]
        return out
    return []


def display_name(value: str) -> str | None:
    """The person's name a people field's value holds: "Anna Weber <anna@…>" holds Anna Weber; an
    address, a number or a handle alone holds none."""
    text = _BRACKETED.sub(" ", value).replace('"', " ").strip(" ,;'")
    if not text or "@" in text:
        return None
    m = _NAME.fullmatch(" ".join(text.split()))
    return m.group() if m and len(m.group()) >= 2 else None


def record_of(metadata: str | None) -> dict[str, Any]:
    """A row's ``metadata`` text as the record whose people fields are read; {} where it is
    missing or not a JSON object (not written by ragbag: it names no one)."""
    try:
        record = json.loads(metadata or "{}")
    except ValueError:
        return {}
    return record if isinstance(record, dict) else {}


def names_in(record: dict[str, Any]) -> set[str]:
    """The people's names a record's naming fields hold."""
    found = {display_name(value) for key in NAMING for value in strings(record.get(key))}
    return {n for n in found if n}
