"""A first build's early publications: keyword search over every chunk before anything is
embedded, then the vectors in slices as they come.

Embedding is most of a first build (hours for a large mailbox on two cores), and until the
publish step nothing of the source could be searched. Here a source that has no complete
published index (its first build, or one killed before it published) and that has at least
``build.early_publish`` passages to embed is published early, by the embed stage itself:

- at once, with every chunk's row and the keyword index, and no vector yet;
- then whenever the embedded count has doubled since the last slice, with the vectors so far.

An early version is an ordinary published version (``ragbag.index.published`` owns the layout)
with no graph: vector search is exact over ``vectors.npy``, where a passage not yet embedded is
a zero vector (a keyword hit only, never a vector hit). Its manifest says how far embedding has
come (``embedding``: embedded, to_embed, chunks, eta_seconds), which ``ragbag status``, the
build report and the search page show. Each slice is one swap of ``current``; the rows, the
keyword index and the count of the names in the rows' people fields (``people_names``) are
written once and hard-linked from slice to slice, so a slice costs its vectors and manifest.
Doubling keeps all slices together within a small multiple of one full publication's writes.
The publish step then replaces the last slice with the full index (graph included) as always.
A build killed halfway leaves the last slice readable, and the next build embeds only what the
embedding cache does not hold yet.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from ragbag.core.home import Home, Source
from ragbag.core.records import stable_hash
from ragbag.index import bm25, published
from ragbag.index.store import Store, lit
from ragbag.models import embedding
from ragbag.pipeline import people_names

# The embedded count of the first slice with vectors (one encoder batch of the embed stage): a
# vector hit as soon as there can be one; each later slice holds at least twice the last.
FIRST_SLICE = 128
_LINKED = frozenset({published.ROWS, published.CHUNK_IDS, published.PEOPLE})

VectorOf = Callable[[str], Any]  # a content hash → its vector, or None while not embedded


@dataclass
class Early:
    """The early publications of one source's build (see the module docstring)."""

    store: Store
    home: Home
    source: Source
    model: str
    min_chunks: int
    base: Path = field(init=False)
    # The last early version: its rows and keyword index (the first's, hard-linked) are linked
    # into the next. Not the first: a superseded version is deleted once its grace has passed
    # (``published.swap_current``), and slices of a large source are minutes apart.
    last: Path | None = None
    ids: list[str] = field(default_factory=list)  # the early versions' rows, in order
    hashes: list[str] = field(default_factory=list)  # their content hashes
    published_at: int = -1  # the embedded count of the last slice
    slices: int = 0
    named: int = 0  # the people the rows name (``people_names``: search's names without a scan)
    # Tokens to encode, cumulative in the embed stage's order (longest texts first), and when
    # encoding began: the ETA is paced in tokens from then, not in texts since the keyword
    # publication (whose minutes, and the long texts first, made a first slice's ETA hours).
    work: list[int] = field(default_factory=list)
    paced: float = 0.0

    def __post_init__(self) -> None:
        self.base = self.home.index_dir(self.source.connector, self.source.name)

    def __call__(self, done: int, total: int, vector_of: VectorOf, work: list[int] | None = None) -> None:
        """After each batch the embed stage encodes (and before the texts are counted, and
        before the first batch with ``work``): publish a slice when this is the start or the
        embedded count has doubled."""
        if total < self.min_chunks:
            return
        if work is not None:
            self.work, self.paced = work, time.monotonic()
        if self.last is None:
            self._publish(0, total, vector_of)
            return
        if done >= max(FIRST_SLICE, 2 * self.published_at) and done < total:
            self._publish(done, total, vector_of)

    def _publish(self, done: int, total: int, vector_of: VectorOf) -> None:
        dim = embedding.spec(self.model).dim
        target = published.new_version(self.base)
        if self.last is None:
            self._first_version(target)
        else:  # the rows and keyword index of the last slice, hard-linked
            published.link_tree(self.last, target, skip=frozenset(p.name for p in self.last.iterdir()) - _LINKED)
            if (self.last / published.BM25_DIR).is_dir():
                published.link_tree(self.last / published.BM25_DIR, target / published.BM25_DIR)
        vectors = np.zeros((len(self.hashes), dim), dtype=np.float32)
        embedded = 0
        for i, h in enumerate(self.hashes):
            v = vector_of(h)
            if v is not None:
                vectors[i] = v
                embedded += 1
        np.save(target / published.VECTORS, vectors)
        eta = self._eta(done)
        manifest = {
            "source": self.source.name,
            "connector": self.source.connector,
            "model": self.model,
            "dim": dim,
            "documents": self.store.table("documents").count_rows(f"source = {lit(self.source.name)}"),
            "chunks": len(self.ids),
            "store_bytes": 0,
            "versions": self.store.versions(),
            "tokenizer": bm25.TOKENIZER_VERSION,
            "fingerprint": stable_hash("early", self.model, str(len(self.ids)), str(done)),
            "rows": {"count": len(self.ids), "vectors": True},
            "people": self.named,
            "built_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "embedding": {
                "embedded": embedded,
                "chunks": len(self.ids),
                "to_embed": total,
                "done": done,
                "eta_seconds": eta,
            },
        }
        published.write_manifest(target, manifest)
        self.store.publish(self.source.name)
        published.swap_current(target)
        self.last = target
        self.published_at = done
        self.slices += 1

    def _eta(self, done: int) -> float | None:
        """Seconds left at the pace of the tokens encoded so far; None before any."""
        if not done or not self.work:
            return None
        spent = self.work[min(done, len(self.work)) - 1]
        if spent <= 0:
            return None
        return round((time.monotonic() - self.paced) / spent * (self.work[-1] - spent), 1)

    def _first_version(self, target: Path) -> None:
        """Rows and keyword index of every chunk, in the chunks table's order."""
        rows = self.store.rows("chunks", self.source.name, list(published.ROW_FIELDS))
        self.ids = rows.column("chunk_id").to_pylist()
        self.hashes = rows.column("content_hash").to_pylist()
        target.mkdir(parents=True, exist_ok=True)
        if self.ids:
            bm25.write(rows.column("index_text").to_pylist(), target / published.BM25_DIR, None)
        published.write_chunk_ids(target, self.ids)
        published.write_rows(target, rows, None)
        counts = people_names.count(rows, None, self.source.name)
        published.write_people(target, counts)
        people_names.write_spellings(target, counts, None, self.source.name)
        self.named = len(counts)


def early_publisher(store: Store, home: Home, source: Source, model: str) -> Early | None:
    """The early publications for this build of ``source``, or None when it publishes only at
    the end: early publishing is off (``build.early_publish`` 0), or search already has a
    complete index of the source, which it keeps until this build publishes."""
    if home.early_publish <= 0:
        return None
    current = published.published_manifest(home, source)  # None when damaged: publish early
    if current is not None and "embedding" not in current:
        return None
    return Early(store, home, source, model, home.early_publish)


def progress_of(manifest: dict[str, Any] | None) -> dict[str, Any] | None:
    """How far a published version's embedding has come (None: complete, or never built)."""
    return (manifest or {}).get("embedding")
