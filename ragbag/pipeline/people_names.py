"""The people a source's published rows name, counted at publish for search's directory of names
(``ragbag.search.mentions``): without the count, the first search of every process read every
record of every source to gather them, seconds on a mailbox. Their spellings in Latin letters are
written beside the count (``spell``): made at search, they imported pypinyin's phrase dictionary
into the first search of every process of a home with a Chinese name (a quarter of a second).

A refresh counts only what changed: the rows' metadata as a multiset against the version before's,
each distinct metadata text read once (a document's chunks share theirs), the names of what came
added and what went subtracted from that version's count.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pyarrow as pa

from ragbag.core.errors import DamagedIndex
from ragbag.core.people_fields import names_in, record_of
from ragbag.index import published
from ragbag.text import name_spellings


def count(rows: pa.Table, previous: Path | None, source: str) -> dict[str, int]:
    """How many of ``rows`` (the version being published) name each person; ``previous``: the
    version before, whose count is updated when it has one and its rows."""
    now = Counter(rows.column("metadata").to_pylist())
    before = _previous(previous, source) if previous is not None else None
    if before is None:
        return _positive(_names(now))
    counts, then = before
    counts.update(_names(now - then))
    counts.subtract(_names(then - now))
    return _positive(counts)


def write_spellings(version: Path, counts: dict[str, int], previous: Path | None, source: str) -> None:
    """``spell``'s spellings into the version being published, under the rules that made them."""
    published.write_spellings(version, spell(counts, previous, source), name_spellings.SPELLINGS_VERSION)


def spell(counts: dict[str, int], previous: Path | None, source: str) -> dict[str, list[list[str]]]:
    """The spellings of each counted name that has any (``name_spellings.spellings``): those the
    version before wrote are taken as they are, so a refresh spells only the names it adds."""
    known: dict[str, list[list[str]]] = {}
    if previous is not None:
        try:
            known = published.read_spellings(previous, source, name_spellings.SPELLINGS_VERSION) or {}
        except (DamagedIndex, OSError, ValueError):
            known = {}  # damaged or gone: spelled anew
    out = {}
    for name in counts:
        spelled = known[name] if name in known else [sorted(s) for s in name_spellings.spellings(name)]
        if spelled:
            out[name] = spelled
    return out


def _previous(version: Path, source: str) -> tuple[Counter[str], Counter[str | None]] | None:
    try:
        counts = published.read_people(version, source)
        rows = published.read_rows(version, ["metadata"])
    except (DamagedIndex, OSError, ValueError, pa.ArrowException):  # ArrowInvalid: a file cut short
        return None  # damaged or gone: counted anew
    if counts is None or rows is None or "metadata" not in rows.column_names:
        return None
    return Counter(counts), Counter(rows.column("metadata").to_pylist())


def _names(metadata: Counter[str | None]) -> Counter[str]:
    out: Counter[str] = Counter()
    for text, rows in metadata.items():
        for name in names_in(record_of(text)):
            out[name] += rows
    return out


def _positive(counts: Counter[str]) -> dict[str, int]:
    return {name: n for name, n in sorted(counts.items()) if n > 0}
