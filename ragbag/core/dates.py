"""Dates as the tools, citations and ``ask --json`` show them: ISO 8601 text, or None.

A record's date arrives in several shapes: a ``datetime`` from an Arrow row, a pandas
``Timestamp`` (or ``NaT`` for a record without one) from a search frame. Every surface that
shows a date formats it here, so the same record never shows its date two ways.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any


def iso(value: Any) -> str | None:
    """``value`` as ISO 8601 text; None for a missing date (None, NaN, NaT); ``str(value)`` for
    anything pandas cannot read as a time."""
    if value is None:
        return None
    if isinstance(value, datetime):
        return value.isoformat()
    try:
        import pandas as pd

        if pd.isna(value):
            return None
        return pd.Timestamp(value).isoformat()
    except (TypeError, ValueError):
        return str(value)


def from_timestamp(seconds: float) -> datetime | None:
    """A file time (seconds since 1970) as UTC, or None when it cannot be a date: a file's mtime
    is whatever its last writer set, and one in the year 14645 must cost the file its date,
    never the file itself."""
    try:
        return datetime.fromtimestamp(seconds, tz=UTC)
    except (OverflowError, OSError, ValueError):
        return None
