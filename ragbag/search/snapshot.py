"""One source's published index, loaded for search: rows, vectors, keyword index and graph.

Reads what the last completed build of a source published (``ragbag.index.published`` owns
that layout: pinned LanceDB versions plus the BM25 and graph files), without Dagster running.
A loaded snapshot stays in memory and is reloaded only when a newer build is published, so a
notebook, the MCP server or an agent pays for loading once. Every search checks, by a readlink of
``current`` and the registry's stat, that what it holds is still registered and published; a
removed source is dropped from memory at once.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from ragbag.core.cache import LRU, RowCache
from ragbag.core.errors import DamagedIndex, RagbagError
from ragbag.core.home import Home
from ragbag.index import bm25, graph, hnsw, published
from ragbag.index.compact.graph import Compact, attach_rows
from ragbag.models import embedding
from ragbag.search.records import Records, datetimes
from ragbag.text import name_spellings

if TYPE_CHECKING:
    from ragbag.index.store import Store

# A fast source below this many chunks is searched exactly (a matrix product is as quick as the
# graph there and has perfect recall); above it, and unfiltered, through its HNSW graph.
EXACT_BELOW = 20_000
# A publish may swap a source's ``current`` while ``load`` reads the version it named. That
# version stays for ``published.SUPERSEDED_GRACE_S``; a read slower than that, which finds files
# gone, follows ``current`` again, this many times in all, before it calls the index damaged.
LOAD_ATTEMPTS = 3
# What a search keeps of each row (index_text is read only when reranking or recomputing).
_FIELDS = [f for f in published.ROW_FIELDS if f not in ("content_hash", "index_text")]
_WORDS = re.compile(r"\w+")


_RECOMPUTED = RowCache()  # compact sources' exact vectors, recomputed for recent searches
# Each version's languages, read once (search's means read every source's): the latest kept.
_LANGUAGES: LRU[str, dict[str, Any]] = LRU(256)


def languages_at(directory: Path, source: str) -> dict[str, Any] | None:
    """A version's ``published.read_languages``, sums as arrays; None when published without."""
    body = _LANGUAGES.get(str(directory))
    if body is None:
        raw = published.read_languages(directory, source) or {}
        body = {**raw, "sums": {lang: np.asarray(v, np.float64) for lang, v in raw.get("sums", {}).items()}}
        _LANGUAGES.put(str(directory), body if raw else {})
    return body or None


@dataclass
class Snapshot:
    """One published source, in memory: rows, vectors and keyword index, aligned by row."""

    key: str
    manifest: dict[str, Any]
    rows: pa.Table
    records: Records
    vectors: np.ndarray
    keyword: Any
    dates: np.ndarray  # datetime64[us] UTC, NaT where unknown
    by_doc: dict[str, list[int]]  # current rows of each document in reading order
    graph: Any = None  # a Compact graph, a faiss index, or None (exact search only)
    home: Home | None = None  # where it was read from (for columns read only when needed)
    directory: Path | None = None  # the version directory it was read from
    twins: dict[int, list[int]] = field(default_factory=dict)  # fast graph: a node's row -> rows of its text
    # Document versions (``ragbag.pipeline.history``): when each row's text was valid (NaT: open
    # ended) and, per document with kept versions, all its rows; ``past`` is False when every
    # row is current, so an unfiltered search masks nothing.
    valid_from: np.ndarray = field(default_factory=lambda: np.zeros(0, "datetime64[us]"))
    valid_to: np.ndarray = field(default_factory=lambda: np.zeros(0, "datetime64[us]"))
    past: bool = False
    all_rows: dict[str, list[int]] = field(default_factory=dict)
    # An early version (``ragbag.pipeline.early``): the rows with a vector so far; None when all have.
    embedded: np.ndarray | None = None
    _words: dict[int, frozenset[str]] = field(default_factory=dict)
    _indexed: dict[str, tuple[str, str]] | None = None
    _store: Store | None = None
    _fields: frozenset[str] | None = None
    # What other search modules derive from the rows once per snapshot (``search.mentions``'
    # names), keyed by their module.
    memo: dict[str, Any] = field(default_factory=dict)

    def fields(self) -> frozenset[str]:
        """Every field a record of this snapshot has (document fields and metadata keys), for
        telling a ``where`` typo from a field some record lacks; gathered once per snapshot."""
        if self._fields is None:
            known: set[str] = set()
            for rec in self.records:
                known.update(rec)
            self._fields = frozenset(known)
        return self._fields

    def words(self, j: int) -> frozenset[str]:
        """The lower-cased word set of row j (for near-duplicate collapsing), memoised."""
        if j not in self._words:
            self._words[j] = frozenset(_WORDS.findall(self.records[j]["text"].lower()))
        return self._words[j]

    def exact_vectors(self, rows: Sequence[int] | np.ndarray, model: str) -> np.ndarray:
        """Rows' exact vectors: those kept, or a compact source's recomputed (a cache of the latest)."""
        if len(self.vectors):
            return np.asarray(self.vectors[list(rows)])
        recs = [self.index_text(int(j)) for j in rows]
        return _RECOMPUTED.get_many(
            [f"{model}:{h}" for h, _ in recs],
            lambda todo: embedding.encode_passages([recs[t][1] for t in todo], model, embedding.RECOMPUTE_BATCH),
        )

    def index_text(self, j: int) -> tuple[str, str]:
        """(content hash, the text as embedded: title line + chunk) of row j. Read from the
        published chunks on first use: only reranking and compact recomputing need them."""
        rec = self.records[j]
        if "index_text" in rec:
            return rec["content_hash"], rec["index_text"]
        if self._indexed is None:
            fields = ["chunk_id", "content_hash", "index_text"]
            table = published.read_rows(self.directory, fields) if self.directory else None
            if table is None:  # published before search kept its own copy of the rows
                table = self.store.published_rows("chunks", rec["source"], self.manifest["versions"]["chunks"], fields)
            t = table.to_pydict()
            self._indexed = {c: (h, x) for c, h, x in zip(t["chunk_id"], t["content_hash"], t["index_text"])}
        return self._indexed[rec["chunk_id"]]

    def people_names(self) -> dict[str, int] | None:
        """The names the rows' people fields hold, with how many rows hold each, as the publish
        counted them (``ragbag.pipeline.people_names``); None for a version published without."""
        counted = "people" in self.manifest
        names: dict[str, int] | None = self._once(
            "people_names", lambda d, s: published.read_people(d, s) if counted else None
        )
        return names

    def languages(self) -> dict[str, Any] | None:
        """Each row's language and each language's summed vectors (``pipeline.row_languages``)."""
        source = self.manifest.get("source", self.key)
        return languages_at(self.directory, source) if self.directory is not None else None

    def aligned(self) -> np.ndarray | None:
        """Each row's vector by the encoder aligned across languages (``pipeline.row_aligned``),
        memory-mapped; None for a version published without them."""
        found: np.ndarray | None = self._once("aligned", lambda d, s: published.read_aligned(d, len(self.rows), s))
        return found

    def people_spellings(self) -> dict[str, list[list[str]]] | None:
        """The counted names' spellings in Latin letters, as the publish wrote them (a counted name
        absent has none); None for a version published without them, or spelled by other rules
        (spelled again at search then)."""
        rules = name_spellings.SPELLINGS_VERSION
        spelled: dict[str, list[list[str]]] | None = self._once(
            "people_spellings", lambda d, s: published.read_spellings(d, s, rules)
        )
        return spelled

    def _once(self, name: str, read: Callable[[Path, str], Any]) -> Any:
        """``read(version directory, source)``, on first use (None for a snapshot read without one)."""
        if name not in self.memo:
            where = self.directory
            self.memo[name] = read(where, self.manifest.get("source", self.key)) if where is not None else None
        return self.memo[name]

    @property
    def store(self) -> Store:
        """The LanceDB store it was published from, opened on first use: only the agent's
        document tools and versions published before ``rows.arrow`` read the tables."""
        if self._store is None:
            assert self.home is not None
            from ragbag.index.store import Store

            self._store = Store(self.home.lance_uri)
        return self._store


_loaded: dict[tuple[str, str], Snapshot] = {}


def load(home: Home, connector: str, source: str) -> Snapshot | None:
    """The published snapshot of a source (None: never built), from memory when it has not been
    rebuilt since. An index that cannot be read is a ``DamagedIndex`` naming the source and the
    rebuild that repairs it, unless a publish swapped versions meanwhile: then the new one is read
    (``LOAD_ATTEMPTS``)."""
    base = home.index_dir(connector, source)
    cache_key = (str(home.root), source)
    failure: DamagedIndex | None = None
    for _ in range(LOAD_ATTEMPTS):
        key = published.current_version(base, source)
        if key is None:
            _loaded.pop(cache_key, None)  # removed (or its index deleted): hold none of its rows
            return None
        cached = _loaded.get(cache_key)
        if cached is not None and cached.key == key:
            return cached
        try:
            snap = _read(home, source, base / key, key)
        except DamagedIndex as e:
            if published.current_version(base, source) == key:
                _loaded.pop(cache_key, None)
                raise  # still what search is told to read: really damaged
            failure = e
            continue
        _loaded[cache_key] = snap
        return snap
    assert failure is not None
    raise failure


def keep_only(home: Home, names: Collection[str]) -> None:
    """Drop the snapshots of this home's sources that are no longer registered, so a source
    removed under a running server leaves its memory at the next search, not when it exits.
    (``load`` drops one whose ``current`` is gone; this catches those no search names any more.)"""
    root = str(home.root)
    for key in list(_loaded):
        if key[0] == root and key[1] not in names:
            _loaded.pop(key, None)


def published_anywhere(home: Home) -> bool:
    """Whether any registered source has ever been published (its ``current`` exists)."""
    return any(published.current_link(home.index_dir(s.connector, n)).exists() for n, s in home.sources().items())


def forget() -> None:
    """Drop every loaded snapshot: the next load reads from disk, as a fresh process does."""
    _loaded.clear()


def _read(home: Home, source: str, directory: Path, key: str) -> Snapshot:
    """One published version in memory; anything that keeps it from being read is damage."""
    manifest, ids = published.check_version(directory, source)
    try:
        return _snapshot(home, source, directory, key, manifest, ids)
    except RagbagError:
        raise
    except Exception as e:  # a file cut short or gone, a table version cleaned up, …
        raise DamagedIndex(source, _reason(e, directory)) from e


def _reason(error: Exception, directory: Path) -> str:
    if isinstance(error, FileNotFoundError) and error.filename:
        path = Path(error.filename)
        return f"{path.relative_to(directory.parent) if path.is_relative_to(directory.parent) else path} is missing"
    if isinstance(error, (OSError, ValueError)):  # LanceDB's "Version 10 no longer exists", …
        return str(error)[:300]
    return f"{type(error).__name__}: {str(error)[:300]}"


def _snapshot(home: Home, source: str, directory: Path, key: str, manifest: dict[str, Any], ids: list[str]) -> Snapshot:
    graph_dir = directory / published.GRAPH_DIR
    g = None
    # A small fast source is searched exactly, so its HNSW file is not even read (nor faiss
    # imported): a cold `ragbag search` stays quick.
    if graph_dir.exists() and (len(ids) >= EXACT_BELOW or graph.profile_of(graph_dir) == "compact"):
        g, _ = graph.load(graph_dir, manifest["model"], manifest["dim"])
    compact = isinstance(g, Compact)
    # A compact source stores no vectors: keep what recomputing them needs instead.
    fields = [*_FIELDS, *(["content_hash"] if g is not None else []), *(["index_text"] if compact else [])]
    rows, vectors, store = _rows_and_vectors(home, source, directory, manifest, ids, fields, compact)
    if isinstance(g, Compact):
        attach_rows(g, rows.column("content_hash").to_pylist())  # rows with one text share a node
    stamps = {f.name: datetimes(rows.column(f.name)) for f in rows.schema if pa.types.is_timestamp(f.type)}
    records = Records(rows, stamps)
    keyword = bm25.load(directory / published.BM25_DIR) if ids else None
    never = np.full(len(ids), np.datetime64("NaT"), "datetime64[us]")  # a column older versions lack
    dates, valid_from, valid_to = (stamps.get(f, never) for f in ("date", "valid_from", "valid_to"))
    current = np.isnat(valid_to)
    doc_ids = rows.column("doc_id").to_pylist()
    ordinals = rows.column("ordinal").to_pylist()
    by_doc: dict[str, list[int]] = {}
    all_rows: dict[str, list[int]] = {}
    for j in sorted(range(len(doc_ids)), key=lambda j: (doc_ids[j], ordinals[j])):
        if current[j]:
            by_doc.setdefault(doc_ids[j], []).append(j)
        else:
            all_rows[doc_ids[j]] = []
    if all_rows:  # every row of a document with versions, for context as of then
        for j, d in enumerate(doc_ids):
            if d in all_rows:
                all_rows[d].append(j)
    twins = hnsw.twins(rows.column("content_hash").to_pylist()) if g is not None and not compact else {}
    return Snapshot(
        key,
        manifest,
        rows,
        records,
        vectors,
        keyword,
        dates,
        by_doc,
        g,
        home,
        directory,
        twins,
        valid_from,
        valid_to,
        not bool(current.all()),
        all_rows,
        embedded=np.any(vectors != 0, axis=1) if "embedding" in manifest else None,
        _store=store,
    )


def _rows_and_vectors(
    home: Home,
    source: str,
    directory: Path,
    manifest: dict[str, Any],
    ids: list[str],
    fields: list[str],
    compact: bool,
) -> tuple[pa.Table, np.ndarray, Store | None]:
    """The rows (in chunk_ids order) and vectors of a version: from its own memory-mapped copy,
    or, for a version published before it kept one, from the LanceDB table versions it pins."""
    no_vectors = np.zeros((0, manifest["dim"]), np.float32)
    table = published.read_rows(directory, fields) if manifest.get("rows") else None
    if table is not None:
        if table.column("chunk_id").to_pylist() != ids:
            raise DamagedIndex(source, f"{published.ROWS} of {directory.name} does not hold its chunks in order")
        vectors = None if compact else published.read_vectors(directory)
        if not compact and (vectors is None or vectors.shape != (len(ids), manifest["dim"])):
            raise DamagedIndex(source, f"{published.VECTORS} of {directory.name} does not match its rows")
        return table, (no_vectors if vectors is None else vectors), None
    from ragbag.index.store import Store

    store = Store(home.lance_uri)
    versions = manifest["versions"]
    rows = store.published_rows("chunks", source, versions["chunks"], fields)
    at = {c: n for n, c in enumerate(rows.column("chunk_id").to_pylist())}
    unknown = sum(1 for c in ids if c not in at)
    if unknown:
        raise DamagedIndex(
            source,
            f"chunk_ids.json names {unknown} chunks the chunks table (version {versions['chunks']}) does not hold",
        )
    rows = rows.take(pa.array([at[c] for c in ids], pa.int64()))
    if compact:
        return rows, no_vectors, store
    emb = store.published_rows("embeddings", source, versions["embeddings"], ["chunk_id", "vector"])
    return rows, published.vectors_in_order(emb, ids, manifest["dim"]), store
