"""Signal Desktop's ``db.sqlite`` opened without disturbing Signal, and its rows read the same way
from every schema version (``PRAGMA user_version``, Signal's migration number) since 20.

The columns this reads, and the migrations (``ts/sql/migrations``) that made them:
``conversations`` (4: ``id, json, type, name, profileName``; 19: ``profileFamilyName``; 20:
``e164, uuid``; 88: ``uuid`` renamed ``serviceId``), ``messages`` (1: ``id, json, conversationId,
sent_at, received_at, source``; 2: ``type, expireTimer``; 8: ``body``; 16: ``isErased``; 17:
``isViewOnce``; 20: ``sourceUuid``; 45: ``storyId``; 88: ``sourceUuid`` renamed
``sourceServiceId``; 1270: ``received_at_ms``, and ``source`` again), and ``message_attachments``
(1360: a message's files leave its JSON for rows of their own). A column an older database lacks
is read as NULL, and the JSON copy of the field is used where Signal keeps one.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragbag.connectors._sqlite import SQLITE_MAGIC, snapshot
from ragbag.text.unreadable import Unreadable

# sqlcipher3-wheels and sqlcipher3-binary both ship SQLCipher 4 as the module sqlcipher3; the
# first has wheels for Linux, macOS and Windows, where Signal Desktop runs.
NEEDS_SQLCIPHER = "reading Signal's encrypted database needs the sqlcipher3 module (pip install sqlcipher3-wheels)"
MESSAGE_COLUMNS = (
    "id",
    "json",
    "conversationId",
    "type",
    "body",
    "sent_at",
    "received_at",
    "received_at_ms",
    "sourceServiceId",
    "sourceUuid",
    "source",
    "expireTimer",
    "isErased",
    "isViewOnce",
    "storyId",
)
_CHAT_COLUMNS = ("id", "json", "type", "name", "profileName", "profileFamilyName", "e164", "serviceId", "uuid")


@contextmanager
def opened(db_file: Path, key: Callable[[], str]) -> Iterator[Any]:
    """A read-only connection to ``db_file`` through :func:`connectors._sqlite.snapshot` (a private
    copy while Signal's WAL is live). A SQLCipher database is keyed with ``key()`` (asked only
    then: a database already decrypted, as sigtop's ``export-database`` leaves one, needs none);
    a key that does not open it is Unreadable."""
    with open(db_file, "rb") as f:
        head = f.read(len(SQLITE_MAGIC))
    if head == SQLITE_MAGIC:
        with snapshot(db_file) as conn:
            conn.text_factory = bytes  # text decoded per row: one bad value must not stop the file
            yield conn
        return
    if len(head) < len(SQLITE_MAGIC):
        raise Unreadable("empty or truncated file: not a Signal Desktop database")
    try:
        import sqlcipher3  # SQLCipher 4 built in: the format Signal writes
    except ImportError:
        raise Unreadable(NEEDS_SQLCIPHER) from None
    hex_key = key()  # validated 64 hex digits: safe inside the pragma's literal

    def connect(target: str, **kwargs: Any) -> Any:
        conn = sqlcipher3.connect(target, **kwargs)
        conn.execute("PRAGMA cipher_log_level = NONE")  # a wrong key is reported here, not on stderr
        conn.execute(f"PRAGMA key = \"x'{hex_key}'\"")  # Signal's raw key (ts/sql/Server: keyDatabase)
        try:
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except sqlcipher3.DatabaseError:
            conn.close()
            raise Unreadable(
                "the key does not open the database (a wrong key, or not a Signal Desktop database)"
            ) from None
        return conn

    with snapshot(db_file, connect) as conn:
        conn.text_factory = bytes  # text decoded per row: one bad value must not stop the file
        yield conn


def columns(conn: Any, table: str) -> set[str]:
    return {_text(r[1]) for r in conn.execute(f"PRAGMA table_info({table})")}


def user_version(conn: Any) -> int:
    return int(conn.execute("PRAGMA user_version").fetchone()[0] or 0)


@dataclass
class Chat:
    """A conversation as Signal titles it (``ts/util/getTitle``)."""

    id: str
    title: str
    is_group: bool
    service_id: str  # lower case: the ACI its messages name as their source
    e164: str


def chats(conn: Any) -> dict[str, Chat]:
    """Every conversation by id. A conversation's broken JSON leaves its columns to title it."""
    have = columns(conn, "conversations")
    if not {"id", "json", "type"} <= have:
        raise Unreadable("not a Signal Desktop database (no conversations table)")
    out: dict[str, Chat] = {}
    for row in conn.execute(f"SELECT {_select(_CHAT_COLUMNS, have)} FROM conversations"):
        r = dict(zip(_CHAT_COLUMNS, row))
        data = _object_or_empty(r["json"])
        is_group = _text(r["type"]) == "group"
        chat_id = _text(r["id"])
        service = _text(r["serviceId"] or r["uuid"]) or str(data.get("serviceId") or data.get("uuid") or "")
        e164 = _text(r["e164"]) or str(data.get("e164") or "")
        title = _group_title(r, data) if is_group else _contact_title(r, data, e164)
        out[chat_id] = Chat(chat_id, title, is_group, service.lower(), e164)
    return out


def own_aci(conn: Any) -> str:
    """The account's own ACI (item ``uuid_id``: ``"<aci>.<device>"``): its conversation is Note to Self."""
    if "items" not in tables(conn):
        return ""
    row = conn.execute("SELECT json FROM items WHERE id = 'uuid_id'").fetchone()
    value = _object_or_empty(row[0]).get("value") if row else None
    return value.split(".", 1)[0].lower() if isinstance(value, str) else ""


def tables(conn: Any) -> set[str]:
    return {_text(r[0]) for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def message_rows(conn: Any) -> Iterator[dict[str, Any]]:
    """Every message row (the columns of :data:`MESSAGE_COLUMNS` this schema has, NULL for the
    rest, values raw), a conversation's messages together."""
    have = columns(conn, "messages")
    if not {"id", "json", "conversationId"} <= have:
        raise Unreadable("not a Signal Desktop database (no messages table)")
    sql = f"SELECT {_select(MESSAGE_COLUMNS, have)} FROM messages ORDER BY conversationId, rowid"
    for row in conn.execute(sql):
        yield dict(zip(MESSAGE_COLUMNS, row))


def attachment_rows(conn: Any) -> dict[str, list[tuple[str, str]]]:
    """(file name, content type) of each message's own files, by message id, in their order:
    ``message_attachments`` rows of the message itself (not of an earlier version), from schema
    1360 on. Earlier databases keep them in the message's JSON."""
    if "message_attachments" not in tables(conn):
        return {}
    out: dict[str, list[tuple[str, str]]] = {}
    for message_id, name, kind in conn.execute(
        "SELECT messageId, fileName, contentType FROM message_attachments"
        " WHERE editHistoryIndex = -1 AND attachmentType = 'attachment' ORDER BY messageId, orderInMessage"
    ):
        out.setdefault(_text(message_id), []).append((_text(name), _text(kind)))
    return out


def load_object(raw: Any) -> dict[str, Any] | None:
    """A JSON column as a dict; None for NULL, and Unreadable for anything that is not an object."""
    if raw is None:
        return None
    try:
        data = json.loads(raw.decode("utf-8") if isinstance(raw, bytes) else str(raw))
    except ValueError:  # UnicodeDecodeError included
        raise Unreadable("its json column is not JSON") from None
    if not isinstance(data, dict):
        raise Unreadable(f"its json column is a {type(data).__name__}, not an object")
    return data


def _object_or_empty(raw: Any) -> dict[str, Any]:
    """A JSON column that only names things: {} when it is missing or broken."""
    try:
        return load_object(raw) or {}
    except Unreadable:
        return {}


def text_of(raw: Any) -> str:
    """A text column's value; Unreadable for bytes that are not UTF-8."""
    if raw is None:
        return ""
    if isinstance(raw, bytes):
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise Unreadable("a text column is not UTF-8") from None
    return str(raw)


def _text(raw: Any) -> str:
    """A name or id: undecodable bytes replaced, never a failure (it only labels)."""
    if raw is None:
        return ""
    return raw.decode("utf-8", errors="replace") if isinstance(raw, bytes) else str(raw)


def _select(wanted: tuple[str, ...], have: set[str]) -> str:
    return ", ".join(f'"{c}"' if c in have else "NULL" for c in wanted)


def _combine(*parts: Any) -> str:
    return " ".join(_text(p).strip() for p in parts if isinstance(p, (str, bytes)) and _text(p).strip())


def _unwrap_isolates(name: str) -> str:
    """Signal stores some names inside a first-strong isolate (U+2068 … U+2069)."""
    name = " ".join(name.split())
    if name.startswith("\u2068") and name.endswith("\u2069"):
        name = name[1:-1]
    return name


def _contact_title(row: dict[str, Any], data: dict[str, Any], e164: str) -> str:
    """Signal's order: the nickname the user gave, the system contact's name, the profile name,
    the phone number, the username."""
    title = (
        _combine(data.get("nicknameGivenName"), data.get("nicknameFamilyName"))
        or _text(row["name"])
        or _combine(data.get("systemGivenName"), data.get("systemFamilyName"))
        or _combine(
            _text(row["profileName"]) or data.get("profileName"),
            _text(row["profileFamilyName"]) or data.get("profileFamilyName"),
        )
        or e164
        or str(data.get("username") or "")
    )
    return _unwrap_isolates(title) or "Unknown contact"


def _group_title(row: dict[str, Any], data: dict[str, Any]) -> str:
    return _unwrap_isolates(_text(row["name"]) or str(data.get("name") or "")) or "Unknown group"
