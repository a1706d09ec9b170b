"""Writers of the real on-disk formats the evaluation homes are made of, one module per format:
mail (RFC 822, mbox, Maildir++), PDF, browser history and chat.db (SQLite), iCalendar, WeChat and
the ChatGPT and Claude exports, office files, and drawn pictures (scans, screenshots, photos).

Both personas are laid down through these writers, so a format is written one way in the project;
the connector tests build their own fixtures from the same schemas. Every writer is deterministic:
ids come from :func:`h` over what they identify, and the stamps a format carries are fixed, so the
same data gives the same bytes on every run.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime

# The stamp office files and drawn PDFs carry as written (their writers would take the clock's).
FIXED = datetime(2026, 1, 15, 9, 0, tzinfo=UTC)


def h(*parts: object, n: int = 16) -> str:
    """A hex digest of ``parts``: ids that look like a real program's yet never change between runs."""
    return hashlib.blake2b("\0".join(map(str, parts)).encode(), digest_size=n).hexdigest()
