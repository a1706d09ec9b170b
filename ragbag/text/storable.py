"""Text and metadata a record may carry into the store: valid Unicode, of a bounded size.

What a parser hands back from a hostile or damaged file is not always storable: a raw 8-bit byte
in a header or a file name comes through Python as a lone surrogate (``surrogateescape``), which
Arrow refuses to encode, so one such record used to fail the whole batch it was written in; a
small compressed file can expand to hundreds of megabytes of text. :func:`storable_text` and
:func:`storable_value` repair the first and :data:`MAX_TEXT_CHARS` bounds the second; the
connectors' isolation boundary (``connectors._isolate``) applies them to every record.
"""

from __future__ import annotations

import math
import re
from datetime import date, datetime
from typing import Any

from ragbag.text.decode import decode
from ragbag.text.unreadable import Unreadable

# A record's text is cut here (and the cut reported): far beyond any real mail, note or chat
# window, well below what one record may cost in memory through chunking and embedding.
MAX_TEXT_CHARS = 4_000_000
# Metadata strings (a header, a title, a path) are cut here: they are labels, not content.
MAX_FIELD_CHARS = 20_000
_SURROGATES = re.compile(r"[\ud800-\udfff]+")
_ESCAPED = re.compile(r"[\udc80-\udcff]+")  # raw bytes 0x80-0xff as surrogateescape carries them


def storable_text(text: str, limit: int = MAX_FIELD_CHARS) -> str:
    """``text`` with every lone surrogate resolved and at most ``limit`` characters. Runs of
    escaped raw bytes are decoded as the bytes they stand for (UTF-8, else the charset detector's
    reading); any other surrogate becomes U+FFFD."""
    if _SURROGATES.search(text) is not None:
        text = _ESCAPED.sub(_bytes_as_text, text)
        text = _SURROGATES.sub("\ufffd", text)
    return text[:limit]


def storable_value(value: Any, limit: int = MAX_FIELD_CHARS, depth: int = 0) -> Any:
    """A metadata value JSON and Arrow can hold: strings repaired and bounded, NaN and infinite
    floats dropped to None, nesting bounded, keys made strings, unknown objects as text."""
    if value is None or isinstance(value, bool | int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, str):
        return storable_text(value, limit)
    if isinstance(value, datetime | date):
        return value
    if depth > 20:
        return storable_text(str(value), limit)
    if isinstance(value, dict):
        return {storable_text(str(k), 200): storable_value(v, limit, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [storable_value(v, limit, depth + 1) for v in value]
    if isinstance(value, bytes):
        return storable_text(value.decode("utf-8", "surrogateescape"), limit)
    return storable_text(str(value), limit)


def _bytes_as_text(match: re.Match[str]) -> str:
    raw = match.group().encode("utf-8", "surrogateescape")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        pass
    try:
        return decode(raw)[0]
    except Unreadable:
        return raw.decode("cp1252", "replace")
