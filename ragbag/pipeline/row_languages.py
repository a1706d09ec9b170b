"""Each published row's language, and each language's vectors summed: what search needs to take
the language out of a vector's likeness (``ragbag.search.languages``).

Told at publish, once per text: a row whose text the previous version already told keeps that
answer (by its content hash), so a refresh of one record tells one text.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa

from ragbag.core.errors import DamagedIndex
from ragbag.index import published
from ragbag.text.languages import identify

# In the source's and the publish's fingerprints: a version published by other rules (or before
# there were any) is published again once, unchanged otherwise.
VERSION = 1


def write(target: Path, rows: pa.Table, vectors: np.ndarray | None, before: Path | None, source: str) -> None:
    """``rows`` in the version's order, ``vectors`` aligned with them (None: a source that keeps
    none, whose rows are told but add nothing to the sums); ``before``: the version replaced."""
    known = _told(before, source) if before is not None else {}
    texts = zip(rows.column("content_hash").to_pylist(), rows.column("index_text").to_pylist())
    langs = [known[h] if h in known else identify(t or "") for h, t in texts]
    sums: dict[str, list[float]] = {}
    counts: dict[str, int] = {}
    if vectors is not None and len(vectors):
        for lang in sorted({x for x in langs if x}):
            mine = np.fromiter((x == lang for x in langs), bool, len(langs))
            sums[lang] = vectors[mine].astype(np.float64).sum(axis=0).round(6).tolist()
            counts[lang] = int(mine.sum())
    published.write_languages(target, langs, sums, counts)


def _told(before: Path, source: str) -> dict[str, str | None]:
    """The languages the previous version told, by text (none when it told none)."""
    try:
        body = published.read_languages(before, source)
        old = published.read_rows(before, ["content_hash"]) if body is not None else None
    except (OSError, ValueError, DamagedIndex):  # unreadable: told again, as on a first build
        return {}
    if body is None or old is None or "content_hash" not in old.column_names or old.num_rows != len(body["rows"]):
        return {}
    return dict(zip(old.column("content_hash").to_pylist(), body["rows"]))
