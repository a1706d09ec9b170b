"""Signal Desktop databases, differentially: ragbag's windows against direct SQL.

The reference opens ``sql/db.sqlite`` with sqlcipher3 and ``config.json``'s plain ``key`` (or as
plain SQLite when it is already decrypted) and reads ``messages`` with SQL and the stdlib's
``json`` only: rows of type incoming/outgoing, not deleted for everyone, not disappearing, not
view-once, with a ``body``. The sender is ``Me`` for outgoing rows, else the conversation whose
``serviceId`` (``uuid`` before schema 88) is the row's source, titled by its ``name``, else its
profile name, else its number; in a direct chat the chat itself. It shares no code with the
connector.

Checks, per reference message: ``count`` (ragbag's windows hold as many message lines as the
reference has messages), ``times`` (a line of the message's UTC minute is in ragbag's text),
``people`` (that line names the same sender), ``text`` (its body's first line follows).

No public Signal Desktop database exists to read (tests/fixtures/public/signal/README.md says
where we looked and why the personal folders found in dotfiles repositories are not used), so
``units()`` finds none in the suite; the connector tests run ``compare`` on generated folders.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import quote

from tests.differential.common import FIXTURES, PUBLIC, Outcome, compare_messages, ragbag_read, rel

CONNECTOR = "signal"
EXPLAINED: dict[str, str] = {}


def units() -> list[Path]:
    """Every Signal folder (``config.json`` beside ``sql/db.sqlite``) of the corpus."""
    out = []
    for root in (PUBLIC / CONNECTOR, FIXTURES / "realworld" / CONNECTOR):
        if root.is_dir():
            out += sorted(db.parent.parent for db in root.rglob("db.sqlite") if db.parent.name == "sql")
    return out


def _connect(folder: Path):
    db = folder / "sql" / "db.sqlite"
    with open(db, "rb") as f:
        plain = f.read(16) == b"SQLite format 3\x00"
    if plain:
        return sqlite3.connect(f"file:{quote(str(db.absolute()))}?mode=ro&immutable=1", uri=True)
    import sqlcipher3

    key = json.loads((folder / "config.json").read_text())["key"]
    conn = sqlcipher3.connect(f"file:{quote(str(db.absolute()))}?mode=ro&immutable=1", uri=True)
    conn.execute(f"PRAGMA key = \"x'{key}'\"")
    return conn


def reference(folder: Path) -> list[tuple[datetime, str, str]]:
    """(UTC time, sender, body) of every message the database holds that a chat shows."""
    conn = _connect(folder)
    try:
        conv_cols = {r[1] for r in conn.execute("PRAGMA table_info(conversations)")}
        service = "serviceId" if "serviceId" in conv_cols else "uuid"
        names, kinds, by_service = {}, {}, {}
        for cid, kind, name, profile, e164, sid in conn.execute(
            f"SELECT id, type, name, profileName, e164, {service} FROM conversations"
        ):
            names[cid] = name or profile or e164 or ""
            kinds[cid] = kind
            if sid:
                by_service[sid.lower()] = names[cid]
        msg_cols = {r[1] for r in conn.execute("PRAGMA table_info(messages)")}
        source = "sourceServiceId" if "sourceServiceId" in msg_cols else "sourceUuid"
        out = []
        for cid, kind, body, raw, sent, src, timer, once in conn.execute(
            f"SELECT conversationId, type, body, json, sent_at, {source}, expireTimer, isViewOnce FROM messages"
        ):
            data = json.loads(raw or "{}")
            if kind not in ("incoming", "outgoing") or data.get("deletedForEveryone") or timer or once:
                continue
            if not (body or "").strip():
                continue
            if kind == "outgoing":
                who = "Me"
            elif kinds.get(cid) == "private":
                who = names.get(cid, "")
            else:
                who = by_service.get((src or "").lower(), "")
            out.append((datetime.fromtimestamp(sent / 1000, tz=UTC), who, body.strip()))
        return out
    finally:
        conn.close()


def compare(folder: Path) -> Outcome:
    ref = reference(folder)
    docs, errors = ragbag_read(CONNECTOR, folder)
    try:
        label = rel(folder)
    except ValueError:  # a generated folder (the connector tests), outside the corpus
        label = folder.name
    out = Outcome(label, folder.parent.name, len(ref), len(docs), len(errors))
    return compare_messages(out, docs, ref)
