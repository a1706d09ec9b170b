"""Messages (chat.db), differentially: ragbag's windows against direct SQL.

The reference reads ``message``, ``handle`` and ``chat_message_join`` with :mod:`sqlite3` only:
every message joined to a chat, with a date (ns since 2001-01-01 UTC, or seconds in databases
before macOS 10.13), not a tapback (``associated_message_type`` 2000–3007) nor a system row
(``item_type`` ≠ 0), with text in its ``text`` column. The sender is ``Me`` for the owner's
messages, else the handle's id. It shares no code with the connector (the ``attributedBody``
decoding is the connector's own and is checked against imessage-exporter's blobs in
tests/connectors/test_realworld.py).

Checks, per reference message: ``count`` (ragbag's windows hold as many message lines as the
reference has messages, per file), ``times`` (a line of the message's UTC minute is in ragbag's
text), ``people`` (that line names the same sender), ``text`` (its first text line follows).
"""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import quote

from tests.differential.common import FIXTURES, PUBLIC, Outcome, compare_messages, ragbag_read, rel

CONNECTOR = "imessage"
EXPLAINED: dict[str, str] = {}
_EPOCH = datetime(2001, 1, 1, tzinfo=UTC)


def units() -> list[Path]:
    files = []
    for root in (PUBLIC / CONNECTOR, FIXTURES / "realworld" / CONNECTOR):
        if root.is_dir():
            files += [p for p in sorted(root.rglob("*")) if p.is_file() and _is_sqlite(p)]
    return files


def _is_sqlite(path: Path) -> bool:
    with open(path, "rb") as f:
        return f.read(16) == b"SQLite format 3\x00"


def reference(path: Path) -> list[tuple[datetime, str, str]]:
    """(UTC time, sender, text) of every text message the database holds."""
    conn = sqlite3.connect(f"file:{quote(str(path.absolute()))}?mode=ro&immutable=1", uri=True)
    try:
        cols = {r[1] for r in conn.execute("PRAGMA table_info(message)")}
        where = "m.date > 0 AND m.text IS NOT NULL"
        if "associated_message_type" in cols:
            where += " AND COALESCE(m.associated_message_type, 0) NOT BETWEEN 2000 AND 3007"
        if "item_type" in cols:
            where += " AND COALESCE(m.item_type, 0) = 0"
        out = []
        for date, mine, who, text in conn.execute(
            "SELECT m.date, m.is_from_me, h.id, m.text FROM message m"
            " JOIN chat_message_join j ON j.message_id = m.ROWID"
            f" LEFT JOIN handle h ON h.ROWID = m.handle_id WHERE {where}"
        ):
            text = text.replace("\ufffc", " ").strip()
            if not text:
                continue
            when = _EPOCH + (timedelta(microseconds=date // 1000) if date >= 10**12 else timedelta(seconds=date))
            out.append((when, "Me" if mine else who, text))
        return out
    finally:
        conn.close()


def compare(path: Path) -> Outcome:
    ref = reference(path)
    docs, errors = ragbag_read(CONNECTOR, path)
    out = Outcome(rel(path), path.parent.name, len(ref), len(docs), len(errors))
    return compare_messages(out, docs, ref)
