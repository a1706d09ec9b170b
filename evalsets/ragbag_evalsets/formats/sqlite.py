"""SQLite files as the applications leave them: built in memory and serialised, so the same rows
give the same bytes; times in the epochs the formats count from."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

CHROME_EPOCH = datetime(1601, 1, 1, tzinfo=UTC)
UNIX_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
APPLE_EPOCH = datetime(2001, 1, 1, tzinfo=UTC)


def sqlite_bytes(schema: str, fill: Callable[[sqlite3.Connection], None]) -> bytes:
    """A database built in memory and serialised: the same bytes on every run."""
    conn = sqlite3.connect(":memory:")
    conn.executescript(schema)
    fill(conn)
    conn.commit()
    data = conn.serialize()
    conn.close()
    return bytes(data)


def us(dt: datetime, epoch: datetime) -> int:
    """Microseconds since ``epoch``, the unit Chrome, Firefox and (times 1000) Messages store."""
    return (dt - epoch) // timedelta(microseconds=1)
