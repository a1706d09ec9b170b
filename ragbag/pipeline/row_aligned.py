"""Each published row's vector by the encoder aligned across languages (``ragbag.models.aligned``),
what search weighs beside e5's (``ragbag.search.languages``).

Encoded at publish, once per text: a row whose text the previous version already encoded keeps
that vector (by its content hash), so a refresh of one record encodes one text. A compact source
keeps no vectors, these neither: its rows are compared by e5 alone.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa

from ragbag.core import progress
from ragbag.core.errors import DamagedIndex
from ragbag.index import published
from ragbag.models import aligned

# In the source's and the publish's fingerprints: a version published by another encoder (or
# before there was one) is published again once, unchanged otherwise.
VERSION = 1
_BATCH = 512  # texts encoded between two progress reports


def write(target: Path, rows: pa.Table, before: Path | None, source: str) -> int:
    """``rows`` in the version's order; ``before``: the version replaced. Returns how many texts
    were encoded (the others were known)."""
    hashes = rows.column("content_hash").to_pylist()
    known = _known(before, source) if before is not None else {}
    todo: dict[str, str] = {}  # content hash -> text, each new text once
    for h, text in zip(hashes, rows.column("index_text").to_pylist()):
        if h not in known and h not in todo:
            todo[h] = text or ""
    fresh: dict[str, np.ndarray] = {}
    pending = list(todo.items())
    for start in range(0, len(pending), _BATCH):
        part = pending[start : start + _BATCH]
        fresh.update(zip((h for h, _ in part), aligned.encode([t for _, t in part])))
        progress.report("aligned", source, start + len(part), len(pending))
    out = np.zeros((len(hashes), aligned.DIM), dtype=np.float16)
    for i, h in enumerate(hashes):
        out[i] = fresh[h] if h in fresh else known[h]
    published.write_aligned(target, out)
    return len(todo)


def _known(before: Path, source: str) -> dict[str, np.ndarray]:
    """The vectors the previous version holds, by text (none when it holds none)."""
    try:
        old = published.read_rows(before, ["content_hash"])
        vectors = published.read_aligned(before, old.num_rows, source) if old is not None else None
    except (OSError, ValueError, DamagedIndex):  # unreadable: encoded again, as on a first build
        return {}
    if old is None or vectors is None or "content_hash" not in old.column_names:
        return {}
    return dict(zip(old.column("content_hash").to_pylist(), vectors))
