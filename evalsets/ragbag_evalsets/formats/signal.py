"""Signal Desktop's data folder as Signal leaves it: ``config.json`` with the database key (plain,
or wrapped by Chromium's basic text store as Signal 7.16+ does on Linux without a keyring) and
``sql/db.sqlite``, a SQLCipher 4 database keyed with it.

The tables are built by replaying Signal's own migrations (``ts/sql/migrations``) up to a schema
version, for the tables and columns a reader of messages needs (``conversations``, ``messages``,
``items``, ``message_attachments``); the migrations' other tables and indexes are left out. A
message's JSON holds what Signal keeps there at that version: everything before 1270, the fields
without a column after it, the attachments until 1360 moved them to rows of their own.

SQLCipher draws a fresh IV for every page it writes, and starts the header's change counter at a
random number; so that the same data gives the same bytes, the counter is set to 1 and each page
is then encrypted again under an IV made from its number, with its HMAC recomputed as
SQLCipher 4 does (AES-256-CBC, HMAC-SHA512 over the page, its IV and its number, the HMAC key
PBKDF2-HMAC-SHA512 of the raw key over the salt ^ 0x3a, two iterations). SQLCipher reads the
result like its own (the connector tests open it with it).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import tempfile
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from ragbag_evalsets.formats import h

LATEST = 1360
PAGE = 4096  # SQLCipher 4's default page size
RESERVE = 80  # per page: its IV (16) and HMAC-SHA512 (64)
SALT_BYTES = 16

# (schema version, the statements of that migration that shape the tables written here)
MIGRATIONS: list[tuple[int, str]] = [
    (
        1,
        """CREATE TABLE messages(id STRING PRIMARY KEY ASC, json TEXT, unread INTEGER, expires_at INTEGER,
        sent_at INTEGER, schemaVersion INTEGER, conversationId STRING, received_at INTEGER, source STRING,
        sourceDevice STRING, hasAttachments INTEGER, hasFileAttachments INTEGER, hasVisualMediaAttachments INTEGER);""",
    ),
    (
        2,
        """ALTER TABLE messages ADD COLUMN expireTimer INTEGER;
        ALTER TABLE messages ADD COLUMN expirationStartTimestamp INTEGER;
        ALTER TABLE messages ADD COLUMN type STRING;""",
    ),
    (
        4,
        """CREATE TABLE conversations(id STRING PRIMARY KEY ASC, json TEXT, active_at INTEGER, type STRING,
        members TEXT, name TEXT, profileName TEXT);""",
    ),
    (6, "CREATE TABLE items(id STRING PRIMARY KEY ASC, json TEXT);"),
    (8, "ALTER TABLE messages ADD COLUMN body TEXT;"),
    (
        16,
        """ALTER TABLE messages ADD COLUMN messageTimer INTEGER;
        ALTER TABLE messages ADD COLUMN messageTimerStart INTEGER;
        ALTER TABLE messages ADD COLUMN messageTimerExpiresAt INTEGER;
        ALTER TABLE messages ADD COLUMN isErased INTEGER;""",
    ),
    (17, "ALTER TABLE messages ADD COLUMN isViewOnce INTEGER;"),
    (
        19,
        """ALTER TABLE conversations ADD COLUMN profileFamilyName TEXT;
        ALTER TABLE conversations ADD COLUMN profileFullName TEXT;""",
    ),
    (
        20,
        """ALTER TABLE conversations ADD COLUMN e164 TEXT;
        ALTER TABLE conversations ADD COLUMN uuid TEXT;
        ALTER TABLE conversations ADD COLUMN groupId TEXT;
        ALTER TABLE messages ADD COLUMN sourceUuid TEXT;""",
    ),
    (24, "ALTER TABLE conversations ADD COLUMN profileLastFetchedAt INTEGER;"),
    (
        25,
        """DROP TABLE messages;
        CREATE TABLE messages(rowid INTEGER PRIMARY KEY ASC, id STRING UNIQUE, json TEXT, unread INTEGER,
        expires_at INTEGER, sent_at INTEGER, schemaVersion INTEGER, conversationId STRING, received_at INTEGER,
        source STRING, sourceDevice STRING, hasAttachments INTEGER, hasFileAttachments INTEGER,
        hasVisualMediaAttachments INTEGER, expireTimer INTEGER, expirationStartTimestamp INTEGER, type STRING,
        body TEXT, messageTimer INTEGER, messageTimerStart INTEGER, messageTimerExpiresAt INTEGER,
        isErased INTEGER, isViewOnce INTEGER, sourceUuid TEXT);
        CREATE INDEX messages_conversation ON messages (conversationId, received_at);""",
    ),
    (32, "ALTER TABLE messages ADD COLUMN serverGuid STRING NULL;"),
    (
        38,
        """ALTER TABLE messages RENAME COLUMN sourceDevice TO deprecatedSourceDevice;
        ALTER TABLE messages ADD COLUMN sourceDevice INTEGER;""",
    ),
    (39, "ALTER TABLE messages RENAME COLUMN unread TO readStatus;"),
    (45, "ALTER TABLE messages ADD COLUMN storyId STRING;"),
    (
        88,
        """ALTER TABLE conversations RENAME COLUMN uuid TO serviceId;
        ALTER TABLE messages RENAME COLUMN sourceUuid TO sourceServiceId;""",
    ),
    (
        1270,
        """ALTER TABLE messages ADD COLUMN timestamp INTEGER;
        ALTER TABLE messages ADD COLUMN received_at_ms INTEGER;
        ALTER TABLE messages ADD COLUMN unidentifiedDeliveryReceived INTEGER;
        ALTER TABLE messages ADD COLUMN serverTimestamp INTEGER;
        ALTER TABLE messages RENAME COLUMN source TO legacySource;
        ALTER TABLE messages ADD COLUMN source TEXT;
        ALTER TABLE messages DROP COLUMN legacySource;""",
    ),
    (
        1360,
        """CREATE TABLE message_attachments (messageId TEXT NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
        editHistoryIndex INTEGER NOT NULL, attachmentType TEXT NOT NULL, orderInMessage INTEGER NOT NULL,
        conversationId TEXT NOT NULL, sentAt INTEGER NOT NULL, clientUuid TEXT, size INTEGER NOT NULL,
        contentType TEXT NOT NULL, path TEXT, plaintextHash TEXT, localKey TEXT, caption TEXT, fileName TEXT,
        blurHash TEXT, height INTEGER, width INTEGER, digest TEXT, key TEXT, iv TEXT, downloadPath TEXT,
        version INTEGER, pending INTEGER,
        PRIMARY KEY (messageId, editHistoryIndex, attachmentType, orderInMessage)) STRICT;""",
    ),
]
# Fields Signal keeps in a column and, from schema 1270 on, no longer in the JSON.
_COLUMN_FIELDS = (
    "id body conversationId expireTimer isErased isViewOnce received_at received_at_ms "
    "sent_at source sourceServiceId storyId type timestamp"
).split()


def schema(version: int) -> str:
    return "\n".join(sql for v, sql in MIGRATIONS if v <= version) + f"\nPRAGMA user_version = {version};"


def uuid_of(*parts: object) -> str:
    """A UUID-shaped id (Signal's conversation, message and service ids), fixed by ``parts``."""
    x = h(*parts)
    return f"{x[:8]}-{x[8:12]}-4{x[13:16]}-8{x[17:20]}-{x[20:32]}"


@dataclass
class SignalDesktop:
    """One Signal Desktop folder: conversations, then messages said in them."""

    version: int = LATEST
    account: str = "me"  # fixes the key, the own ACI and every id
    conversations: list[dict[str, Any]] = field(default_factory=list)
    messages: list[dict[str, Any]] = field(default_factory=list)

    @property
    def key(self) -> str:
        return h("signal key", self.account, n=32)

    @property
    def aci(self) -> str:
        return uuid_of("aci", self.account)

    def contact(self, name: str = "", *, e164: str = "", profile: str = "", nickname: str = "") -> str:
        """A direct chat with a contact (``name``: the system contact name); its conversation id."""
        cid = uuid_of("conversation", self.account, len(self.conversations))
        data: dict[str, Any] = {"id": cid, "type": "private", "profileName": profile or None, "e164": e164 or None}
        if nickname:
            data["nicknameGivenName"] = nickname
        self.conversations.append(
            {"id": cid, "type": "private", "name": name, "profileName": profile, "e164": e164, "json": data}
        )
        self.conversations[-1]["service"] = uuid_of("aci", self.account, cid)
        return cid

    def note_to_self(self) -> str:
        cid = self.contact(profile="Me myself")
        self.conversations[-1]["service"] = self.aci
        return cid

    def group(self, name: str) -> str:
        cid = uuid_of("conversation", self.account, len(self.conversations))
        self.conversations.append(
            {"id": cid, "type": "group", "name": name, "json": {"id": cid, "type": "group", "name": name}}
        )
        return cid

    def service_of(self, cid: str) -> str:
        return next(c["service"] for c in self.conversations if c["id"] == cid)

    def say(
        self,
        chat: str,
        when: datetime,
        sender: str | None,
        body: str,
        *,
        attachments: tuple[tuple[str, str], ...] = (),
        edits: tuple[tuple[datetime, str], ...] = (),
        kind: str | None = None,
        **extra: Any,
    ) -> str:
        """A message in ``chat`` by the contact ``sender`` (its conversation id; None: the account);
        ``edits``: later versions (time, text), the last one current; ``extra``: more of Signal's
        message attributes (``deletedForEveryone``, ``expireTimer``, ``sticker``…). Its id."""
        mid = uuid_of("message", self.account, len(self.messages))
        sent = int(when.timestamp() * 1000)
        msg: dict[str, Any] = {
            "id": mid,
            "conversationId": chat,
            "type": kind or ("outgoing" if sender is None else "incoming"),
            "body": body,
            "sent_at": sent,
            "timestamp": sent,
            "received_at": len(self.messages) + 1,  # a counter, as current versions keep it
            "received_at_ms": sent + 900,
            "attachments": [
                {"fileName": n, "contentType": t, "size": 1000 + i} for i, (n, t) in enumerate(attachments)
            ],
            **extra,
        }
        if sender is not None:
            msg["sourceServiceId"] = self.service_of(sender)
        if edits:
            versions = [(when, body), *edits]
            msg["editHistory"] = [{"body": b, "timestamp": int(t.timestamp() * 1000)} for t, b in reversed(versions)]
            msg["body"] = edits[-1][1]
            msg["editMessageTimestamp"] = int(edits[-1][0].timestamp() * 1000)
        self.messages.append(msg)
        return mid

    def config(self, wrap: str = "plain") -> bytes:
        """``config.json``: the key in plain text, or (``v10``) wrapped by Chromium's basic store."""
        if wrap == "plain":
            data: dict[str, Any] = {"key": self.key, "mediaPermissions": True}
        else:
            data = {"encryptedKey": oscrypt_wrap(self.key).hex(), "safeStorageBackend": "basic_text"}
        return json.dumps(data, indent=2).encode()

    def database(self, key: str | None = None) -> bytes:
        """``sql/db.sqlite`` keyed with ``key`` (default: the account's), the same bytes every run."""
        key = key or self.key
        salt = bytes.fromhex(h("signal salt", self.account, key))
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "db.sqlite"
            self._fill(path, key, salt)
            data = path.read_bytes()
        return reencrypt(data, bytes.fromhex(key))

    def files(self, wrap: str = "plain") -> dict[str, bytes]:
        return {"config.json": self.config(wrap), "sql/db.sqlite": self.database()}

    def write(self, folder: Path, wrap: str = "plain") -> Path:
        for rel, data in self.files(wrap).items():
            (folder / rel).parent.mkdir(parents=True, exist_ok=True)
            (folder / rel).write_bytes(data)
        return folder

    def _fill(self, path: Path, key: str, salt: bytes) -> None:
        import sqlcipher3  # the SQLCipher Signal writes with

        conn = sqlcipher3.connect(str(path))
        conn.execute(f"PRAGMA key = \"x'{key}{salt.hex()}'\"")
        conn.execute("PRAGMA journal_mode = DELETE")
        conn.executescript(schema(self.version))
        have = {t: {r[1] for r in conn.execute(f"PRAGMA table_info({t})")} for t in ("conversations", "messages")}
        if self.version >= 20:
            conn.execute(
                "INSERT INTO items VALUES ('uuid_id', ?)", (json.dumps({"id": "uuid_id", "value": f"{self.aci}.1"}),)
            )
        for c in self.conversations:
            row = {"id": c["id"], "json": json.dumps(c["json"]), "type": c["type"], "name": c.get("name") or None}
            row |= {"profileName": c.get("profileName") or None, "e164": c.get("e164") or None}
            row["serviceId" if self.version >= 88 else "uuid"] = c.get("service")
            _insert(conn, "conversations", row, have["conversations"])
        for m in self.messages:
            self._insert_message(conn, m, have["messages"])
        conn.commit()
        conn.close()

    def _insert_message(self, conn: Any, m: dict[str, Any], have: set[str]) -> None:
        attrs = dict(m)
        if self.version < 88 and "sourceServiceId" in attrs:
            attrs["sourceUuid"] = attrs.pop("sourceServiceId")
        files = attrs.pop("attachments") if self.version >= 1360 else attrs["attachments"]
        attrs["hasAttachments"] = 1 if m["attachments"] else 0
        row = {k: v for k, v in attrs.items() if k in have and not isinstance(v, (dict, list))}
        kept = {k: v for k, v in attrs.items() if self.version < 1270 or k not in _COLUMN_FIELDS}
        row["json"] = json.dumps(kept, ensure_ascii=False)
        _insert(conn, "messages", row, have)
        if self.version >= 1360:
            for order, a in enumerate(files):
                conn.execute(
                    "INSERT INTO message_attachments (messageId, editHistoryIndex, attachmentType,"
                    " orderInMessage, conversationId, sentAt, size, contentType, fileName)"
                    " VALUES (?, -1, 'attachment', ?, ?, ?, ?, ?, ?)",
                    (
                        m["id"],
                        order,
                        m["conversationId"],
                        m["sent_at"],
                        a["size"],
                        a["contentType"],
                        a["fileName"] or None,
                    ),
                )


def _insert(conn: Any, table: str, row: dict[str, Any], have: set[str]) -> None:
    cols = [k for k in row if k in have]
    conn.execute(
        f"INSERT INTO {table} ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})", [row[c] for c in cols]
    )


def oscrypt_wrap(text: str, password: bytes = b"peanuts", iterations: int = 1, prefix: bytes = b"v10") -> bytes:
    """``safeStorage.encryptString`` as Chromium's OSCrypt does it on Linux and macOS: ``prefix`` +
    AES-128-CBC under PBKDF2-HMAC-SHA1(``password``, "saltysalt", ``iterations``), IV of 16 spaces.
    The defaults are Linux's basic text store (``os_crypt_linux``: the fixed password "peanuts");
    ``v11`` and a keyring's password are Linux's Secret Service or KWallet, ``v10`` with 1003
    iterations the macOS Keychain's (``os_crypt_mac``)."""
    from cryptography.hazmat.primitives import padding
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

    key = hashlib.pbkdf2_hmac("sha1", password, b"saltysalt", iterations, 16)
    padder = padding.PKCS7(128).padder()
    plain = padder.update(text.encode()) + padder.finalize()
    encryptor = Cipher(algorithms.AES(key), modes.CBC(b" " * 16)).encryptor()
    return prefix + encryptor.update(plain) + encryptor.finalize()


def reencrypt(data: bytes, key: bytes) -> bytes:
    """The SQLCipher 4 database ``data`` (raw ``key``, default page layout) with every page
    encrypted again under an IV fixed by its number (see the module doc)."""
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

    salt = data[:SALT_BYTES]
    mac_key = hashlib.pbkdf2_hmac("sha512", key, bytes(b ^ 0x3A for b in salt), 2, 32)
    out = bytearray(data)
    for n in range(len(data) // PAGE):
        start = n * PAGE + (SALT_BYTES if n == 0 else 0)
        end = (n + 1) * PAGE - RESERVE
        old_iv = data[end : end + 16]
        decryptor = Cipher(algorithms.AES(key), modes.CBC(old_iv)).decryptor()
        plain = decryptor.update(data[start:end]) + decryptor.finalize()
        if n == 0:  # the header's change counter and its copy start at a random number here: fixed
            counter = (1).to_bytes(4, "big")
            plain = plain[: 24 - start] + counter + plain[28 - start : 92 - start] + counter + plain[96 - start :]
        iv = bytes.fromhex(h("signal page", n + 1))
        encryptor = Cipher(algorithms.AES(key), modes.CBC(iv)).encryptor()
        sealed = encryptor.update(plain) + encryptor.finalize() + iv
        mac = hmac.new(mac_key, sealed + (n + 1).to_bytes(4, "little"), hashlib.sha512).digest()
        out[start : (n + 1) * PAGE] = sealed + mac
    return bytes(out)
