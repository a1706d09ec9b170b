"""Search the materialised indexes: from notebooks, the CLI, MCP and agents alike.

Reads what the last completed build of each source published (pinned LanceDB versions plus the
BM25 files), without Dagster running. Filters are applied before ranking, so a selective filter
still returns k hits when k chunks match. Loaded sources stay in memory and are reloaded only
when a newer build is published.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ragbag.core.errors import DamagedIndex, RagbagError
from ragbag.core.home import Home
from ragbag.core.records import citation_for
from ragbag.index import bm25, graph
from ragbag.models import embedding
from ragbag.search import filters
from ragbag.text import exact

MODES = ("hybrid", "vector", "keyword")
FUSIONS = ("rrf", "weighted", "calibrated")
RRF_K = 60
# Hybrid ranking (benchmarks/README.md, "Search on personal data"): a weighted sum of calibrated
# scores. The vector list's cosine is mapped through the model's ``cosine_range`` and the keyword
# list's BM25 is divided by the most the query could score (``bm25.ceiling``), so both lie in
# 0..1 whatever the query, the list's length or ties: a keyword list of one hit keeps its full
# weight, and a score means the same for every query. On msmarco-5k and dbpedia-5k it ranks as
# well as per-query min-max ("weighted", kept as an option) at the same share; 0.9 beat 0.8 on
# both. Exact terms (``ragbag.text.exact``) then lift the hits that contain them.
DEFAULT_FUSION = "calibrated"
VECTOR_SHARE = 0.9
CJK_VECTOR_SHARE = 0.5
# Weighted fusion normalises each list between its best score and its 100th (lower ones count
# 0), whatever the candidate pool: asking for 100 results must not reorder the first 10.
NORM_DEPTH = 100
COLUMNS = [
    "text",
    "score",
    "source",
    "connector",
    "uri",
    "title",
    "doc_id",
    "chunk_id",
    "citation",
    "metadata",
    "date",
    "ordinal",
    "start",
    "end",
    "vector_score",
    "keyword_score",
    "chunk_text",
]
# A fast source below this many chunks is searched exactly (a matrix product is as quick as the
# graph there and has perfect recall); above it, and unfiltered, through its HNSW graph.
EXACT_BELOW = 20_000
_FIELDS = (
    "chunk_id",
    "doc_id",
    "source",
    "connector",
    "uri",
    "title",
    "text",
    "ordinal",
    "start",
    "end",
    "date",
    "created_at",
    "updated_at",
    "metadata",
)
# A publish may swap a source's ``current`` while ``load`` reads the version it named. That
# version stays for ``stages.SUPERSEDED_GRACE_S``; a read slower than that, which finds files
# gone, follows ``current`` again, this many times in all, before it calls the index damaged.
LOAD_ATTEMPTS = 3


@dataclass
class Snapshot:
    """One published source, in memory: rows, vectors and keyword index, aligned by row."""

    key: str
    manifest: dict[str, Any]
    rows: pd.DataFrame
    records: list[dict[str, Any]]
    vectors: np.ndarray
    keyword: Any
    dates: np.ndarray  # datetime64[us] UTC, NaT where unknown
    by_doc: dict[str, list[int]]  # rows of each document in reading order
    graph: Any = None  # graph.Compact, a faiss index, or None (exact search only)
    store: Any = None  # the Store it was read from (for columns read only when needed)
    twins: dict[int, list[int]] = field(default_factory=dict)  # fast graph: a node's row -> rows of its text
    _words: dict[int, frozenset[str]] = field(default_factory=dict)
    _indexed: dict[str, tuple[str, str]] | None = None

    def words(self, j: int) -> frozenset[str]:
        """The lower-cased word set of row j (for near-duplicate collapsing), memoised."""
        if j not in self._words:
            self._words[j] = frozenset(_WORDS.findall(self.records[j]["text"].lower()))
        return self._words[j]

    def index_text(self, j: int) -> tuple[str, str]:
        """(content hash, the text as embedded: title line + chunk) of row j. Read from the
        published chunks on first use: only reranking and compact recomputing need them."""
        rec = self.records[j]
        if "index_text" in rec:
            return rec["content_hash"], rec["index_text"]
        if self._indexed is None:
            t = self.store.published_rows(
                "chunks", rec["source"], self.manifest["versions"]["chunks"], ["chunk_id", "content_hash", "index_text"]
            ).to_pydict()
            self._indexed = {c: (h, x) for c, h, x in zip(t["chunk_id"], t["content_hash"], t["index_text"])}
        return self._indexed[rec["chunk_id"]]


_loaded: dict[tuple[str, str], Snapshot] = {}
_WORDS = re.compile(r"\w+")


def search(
    query: str,
    k: int = 10,
    sources: Iterable[str] | None = None,
    connectors: Iterable[str] | None = None,
    where: str | dict | None = None,
    after: Any = None,
    before: Any = None,
    mode: str = "hybrid",
    fusion: str = DEFAULT_FUSION,
    alpha: float | None = None,
    rrf_k: int = RRF_K,
    min_score: float | None = None,
    context: int = 0,
    collapse: bool = True,
    width: int | None = None,
    recompute: int | None = None,
    rerank: int = 0,
    home: Home | str | None = None,
) -> pd.DataFrame:
    """Ranked chunks for a query, best first, as a DataFrame with the fields of ``COLUMNS``.

    ``min_score`` drops hits below a floor on the mode's own score (cosine for vector, BM25 for
    keyword, the fused score for hybrid). ``collapse`` drops near-duplicate chunks (same text
    mailed twice, a file copied). ``context=N`` widens each hit to N neighbouring chunks on each
    side of the same document, merged into one passage (``chunk_text`` keeps the hit itself).
    ``width`` (the graph search width) and ``recompute`` (exact embeddings recomputed per query
    in a compact source) trade speed for recall; the defaults are ``graph.Params``'.
    ``rerank=N`` re-scores the best N candidates with the second-stage encoders (``ragbag.models.rerank``:
    seconds per query until their encodings are cached in this process); ``score`` is then the
    fused first-stage and reranker score.
    """
    check_request(query, k=k, connectors=connectors, mode=mode, fusion=fusion, min_score=min_score)
    conditions = filters.parse_where(where)
    lo, hi = filters.parse_time(after), filters.parse_time(before)
    home = home if isinstance(home, Home) else Home(home)
    snaps = _select(home, sources, connectors)
    if not snaps:
        return pd.DataFrame(columns=COLUMNS)

    masks = [_mask(s, conditions, lo, hi) for s in snaps]
    pool = max(100, 10 * k)
    vec = kw = None
    model = _one_model(home, snaps) if mode in ("hybrid", "vector") else None
    if model is not None:
        qv = embedding.encode_query(query, model)
        vec = _vector_top(snaps, qv, masks, pool, model, width, recompute)
    ceilings = [1.0] * len(snaps)
    if mode in ("hybrid", "keyword"):
        tokens = bm25.tokenize(query)
        if mode == "hybrid" and fusion == "calibrated":
            ceilings = [bm25.ceiling(s.keyword, tokens) if s.keyword is not None else 1.0 for s in snaps]
        kw = _top(
            [
                (bm25.scores(s.keyword, tokens, len(s.rows)) if s.keyword is not None else np.zeros(len(s.rows))) / c
                for s, c in zip(snaps, ceilings)
            ],
            masks,
            pool,
            positive=True,
        )

    if mode == "hybrid":
        share = alpha if alpha is not None else vector_share(query, model, fusion)
        ranked = _fuse(vec, kw, fusion, share, rrf_k, model)
    else:
        ranked = vec if mode == "vector" else kw
    if rerank > 0:
        from ragbag.models import rerank as second_stage

        ranked = second_stage.rerank(
            query, ranked, lambda items: [snaps[i].index_text(j) for i, j, _ in items], depth=rerank
        )
    if mode != "vector":
        ranked = exact.promote(ranked, exact.terms(query), lambda i, j: _searchable(snaps[i].records[j]))
    if min_score is not None:
        ranked = [t for t in ranked if t[2] >= min_score]
    if collapse:  # with context, later hits may fold into earlier passages: keep a margin
        ranked = _collapse(ranked, snaps, 3 * k if context > 0 else k)
    vec_d = dict(((i, j), sc) for i, j, sc in (vec or []))
    kw_d = dict(((i, j), sc * ceilings[i]) for i, j, sc in (kw or []))  # BM25, whatever the fusion
    out, covered = [], set()
    for i, j, score in ranked:
        if len(out) == k:
            break
        row = snaps[i].records[j]
        rows = _neighbours(snaps[i], j, context) if context > 0 else [j]
        if context > 0 and any((i, r) in covered for r in rows):
            continue  # already inside the passage of a better hit
        covered.update((i, r) for r in rows)
        out.append(
            {
                **{
                    c: row[c]
                    for c in (
                        "source",
                        "connector",
                        "uri",
                        "title",
                        "doc_id",
                        "chunk_id",
                        "metadata",
                        "date",
                        "ordinal",
                        "start",
                        "end",
                    )
                },
                "text": "\n".join(snaps[i].records[r]["text"] for r in rows),
                "chunk_text": row["text"],
                "score": float(score),
                "citation": citation_for(row["chunk_id"]),
                "vector_score": float(vec_d[(i, j)]) if (i, j) in vec_d else None,
                "keyword_score": float(kw_d[(i, j)]) if (i, j) in kw_d else None,
            }
        )
    return pd.DataFrame(out, columns=COLUMNS)


def check_request(
    query: Any,
    k: int = 10,
    connectors: Iterable[str] | None = None,
    mode: str = "hybrid",
    fusion: str = DEFAULT_FUSION,
    min_score: float | None = None,
) -> None:
    """Refuse a search that cannot mean anything, before an index loads: the CLI, MCP, ``ask``
    and the agent all search through ``search``, so none of them answers "0 hits" to a typo."""
    if mode not in MODES:
        raise RagbagError(f"unknown mode {mode!r}; use one of: {', '.join(MODES)}")
    if fusion not in FUSIONS:
        raise RagbagError(f"unknown fusion {fusion!r}; use one of: {', '.join(FUSIONS)}")
    if not isinstance(query, str) or not query.strip():
        raise RagbagError("the query is empty: say what to look for")
    if k < 1:
        raise RagbagError(f"k must be at least 1, not {k}")
    check_min_score(min_score)
    check_connectors(connectors)


def check_min_score(min_score: float | None) -> None:
    """A score floor must be a number: NaN compares false with every score (nothing passes) and
    an infinite one lets everything or nothing through."""
    if min_score is not None and not math.isfinite(min_score):
        raise RagbagError(f"--min-score {min_score}: give a finite number")


def check_connectors(names: Iterable[str] | None) -> None:
    if not names:
        return
    import ragbag.connectors as registry  # only its name list: no connector module is imported

    for name in names:
        if name not in registry.NAMES:
            raise RagbagError(f"unknown connector {name!r}; choose one of: {', '.join(registry.NAMES)}")


def vector_share(query: str, model: str | None, fusion: str = DEFAULT_FUSION) -> float:
    """The vector list's weight in fusion (the keyword list gets the rest), by what the query is.
    A CJK query leans on keywords: jieba's words are precise in Chinese (cmrc2018 keyword nDCG@10
    0.985), and an even share under the multilingual model beats 0.9 there (0.994 vs 0.982). An
    English-only model cannot embed CJK text at all (MiniLM: 0.22), and even a 0.1 weight
    reorders the keyword top ranks, so under such a model a CJK query ranks by keywords;
    vector-only hits still follow when keywords find fewer than k."""
    if fusion == "rrf":
        return 0.5
    if model and bm25.has_cjk(query):
        return CJK_VECTOR_SHARE if embedding.spec(model).multilingual else 0.0
    return VECTOR_SHARE


def _searchable(record: dict[str, Any]) -> str:
    """What an exact term is looked for in: the chunk, its document's title and URI."""
    return f"{record['text']}\n{record.get('title') or ''}\n{record.get('uri') or ''}"


def _collapse(ranked, snaps: list[Snapshot], limit: int, threshold: float = 0.9):
    """The first ``limit`` hits, skipping chunks whose words nearly repeat a better hit's
    (Jaccard ≥ threshold). Sets whose sizes differ by more than the threshold allows are never
    compared, which keeps this linear in practice."""
    kept, seen_sets = [], []
    for t in ranked:
        words = snaps[t[0]].words(t[1])
        n = len(words)
        if any(
            min(n, len(w)) >= threshold * max(n, len(w)) and len(words & w) >= threshold * len(words | w)
            for w in seen_sets
        ):
            continue
        kept.append(t)
        seen_sets.append(words)
        if len(kept) >= limit:
            break
    return kept


def _neighbours(snap: Snapshot, j: int, n: int) -> list[int]:
    """Rows of the same document within n chunks of row j, in reading order."""
    siblings = snap.by_doc[snap.records[j]["doc_id"]]
    pos = siblings.index(j)
    return siblings[max(0, pos - n) : pos + n + 1]


def sources_status(home: Home | str | None = None) -> dict[str, dict[str, Any]]:
    """The published manifest of every registered source (None when never built)."""
    from ragbag.build.stages import published_manifest

    home = home if isinstance(home, Home) else Home(home)
    return {n: published_manifest(home, s) for n, s in home.sources().items()}


def _select(home: Home, sources, connectors) -> list[Snapshot]:
    registered = home.sources()
    wanted = list(sources) if sources else list(registered)
    for name in wanted:
        if name not in registered:
            raise RagbagError(f"no source named {name!r}; see `ragbag list`")
    conns = set(connectors or [])
    snaps = []
    for name in wanted:
        src = registered[name]
        if conns and src.connector not in conns:
            continue
        snap = load(home, src.connector, name)
        if snap is not None:
            snaps.append(snap)
    if not snaps and not any(_current(home, s.connector, n).exists() for n, s in registered.items()):
        raise RagbagError("nothing is indexed yet: `ragbag add CONNECTOR NAME PATH`, then `ragbag build`")
    return snaps


def _current(home: Home, connector: str, source: str) -> Path:
    return home.index_dir(connector, source) / "current"


def load(home: Home, connector: str, source: str) -> Snapshot | None:
    """The published snapshot of a source (None: never built), from memory when it has not been
    rebuilt since. An index that cannot be read is a ``DamagedIndex`` naming the source and the
    rebuild that repairs it, unless a publish swapped versions meanwhile: then the new one is read
    (``LOAD_ATTEMPTS``)."""
    from ragbag.build.stages import current_version

    base = home.index_dir(connector, source)
    cache_key = (str(home.root), source)
    failure: DamagedIndex | None = None
    for _ in range(LOAD_ATTEMPTS):
        key = current_version(base, source)
        if key is None:
            return None
        cached = _loaded.get(cache_key)
        if cached is not None and cached.key == key:
            return cached
        try:
            snap = _read(home, source, base / key, key)
        except DamagedIndex as e:
            if current_version(base, source) == key:
                raise  # still what search is told to read: really damaged
            failure = e
            continue
        _loaded[cache_key] = snap
        return snap
    assert failure is not None
    raise failure


def _read(home: Home, source: str, directory: Path, key: str) -> Snapshot:
    """One published version in memory; anything that keeps it from being read is damage."""
    from ragbag.build.stages import check_version

    manifest, ids = check_version(directory, source)
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
    from ragbag.index.store import Store

    store = Store(home.lance_uri)
    versions = manifest["versions"]
    g = None
    # A small fast source is searched exactly, so its HNSW file is not even read (nor faiss
    # imported): a cold `ragbag search` stays quick.
    if (directory / "graph").exists() and (
        len(ids) >= EXACT_BELOW or graph.profile_of(directory / "graph") == "compact"
    ):
        g, _ = graph.load(directory / "graph", manifest["model"], manifest["dim"])
    compact = isinstance(g, graph.Compact)
    # A compact source stores no vectors: keep what recomputing them needs instead.
    fields = list(_FIELDS) + (["content_hash"] if g is not None else []) + (["index_text"] if compact else [])
    rows = store.published_rows("chunks", source, versions["chunks"], fields).to_pandas()
    unknown = len(set(ids) - set(rows["chunk_id"]))
    if unknown:
        raise DamagedIndex(
            source,
            f"chunk_ids.json names {unknown} chunks the chunks table (version {versions['chunks']}) does not hold",
        )
    rows = rows.set_index("chunk_id").loc[ids].reset_index() if ids else rows
    if compact:
        graph.attach_rows(g, rows["content_hash"].tolist())  # rows with one text share a node
        vectors = np.zeros((0, manifest["dim"]), np.float32)
    else:
        emb = store.published_rows("embeddings", source, versions["embeddings"], ["chunk_id", "vector"])
        vectors = _vectors(emb, ids, manifest["dim"])
    records = []
    for r in rows.to_dict("records"):
        meta = json.loads(r["metadata"] or "{}")
        r["metadata"] = meta
        for f in ("date", "created_at", "updated_at"):
            r[f] = None if pd.isna(r[f]) else r[f].to_pydatetime()
        records.append({**meta, **r})
    keyword = bm25.load(directory / "bm25") if ids else None
    dates = rows["date"].to_numpy(dtype="datetime64[us]") if ids else np.zeros(0, "datetime64[us]")
    by_doc: dict[str, list[int]] = {}
    for j in sorted(range(len(records)), key=lambda j: (records[j]["doc_id"], records[j]["ordinal"])):
        by_doc.setdefault(records[j]["doc_id"], []).append(j)
    twins = graph.twins(rows["content_hash"].tolist()) if g is not None and not compact else {}
    return Snapshot(key, manifest, rows, records, vectors, keyword, dates, by_doc, g, store, twins)


def _vectors(emb, ids: list[str], dim: int) -> np.ndarray:
    if not ids:
        return np.zeros((0, dim), dtype=np.float32)
    col = emb.column("vector").combine_chunks()
    flat = np.asarray(col.flatten().to_numpy(zero_copy_only=False), dtype=np.float32)
    matrix = flat.reshape(len(col), dim)
    pos = {c: i for i, c in enumerate(emb.column("chunk_id").to_pylist())}
    return np.ascontiguousarray(matrix[[pos[c] for c in ids]])


def _one_model(home: Home, snaps: list[Snapshot]) -> str:
    configured = home.model
    for s in snaps:
        if s.manifest["model"] != configured:
            raise RagbagError(
                f"source {s.manifest['source']!r} was indexed with {s.manifest['model']} but "
                f"the configured model is {configured}: rebuild it with `ragbag build {s.manifest['source']}`"
            )
    return configured


def _mask(s: Snapshot, conditions, lo, hi) -> np.ndarray | None:
    """Rows that pass the filters (None = all), computed before any ranking."""
    mask = None
    if lo is not None or hi is not None:
        mask = ~np.isnat(s.dates)
        if lo is not None:
            mask &= s.dates >= np.datetime64(lo.replace(tzinfo=None), "us")
        if hi is not None:
            mask &= s.dates < np.datetime64(hi.replace(tzinfo=None), "us")
    if conditions:
        cm = np.fromiter((filters.matches(r, conditions) for r in s.records), bool, len(s.records))
        mask = cm if mask is None else mask & cm
    return mask


def _vector_top(
    snaps: list[Snapshot], qv: np.ndarray, masks, n: int, model: str, width: int | None, recompute: int | None
) -> list[tuple[int, int, float]]:
    """The n best rows by cosine over all sources: exactly where vectors are kept (and the
    source is small or filtered), through the graph otherwise."""
    cands: list[tuple[int, int, float]] = []
    for i, (s, mask) in enumerate(zip(snaps, masks)):
        if isinstance(s.graph, graph.Compact):
            ids, scores = graph.search_compact(
                s.graph, qv, n, _recomputer(s, model), graph.Params(), mask, width, recompute
            )
        elif s.graph is not None and mask is None and len(s.rows) >= EXACT_BELOW:
            ids, scores = graph.search_fast(s.graph, qv, n, width or graph.Params().ef_search)
            if s.twins:  # a node stands for every row of its text: they score alike
                pairs = [(r, sc) for j, sc in zip(ids, scores) for r in s.twins.get(int(j), [int(j)])]
                ids, scores = [r for r, _ in pairs], [sc for _, sc in pairs]
        else:
            cands.extend(_top([s.vectors @ qv if len(s.vectors) else np.zeros(0)], [mask], n, positive=False, index=i))
            continue
        cands.extend((i, int(j), float(sc)) for j, sc in zip(ids, scores))
    cands.sort(key=lambda t: -t[2])
    return cands[:n]


_RECOMPUTED = graph.VectorCache()


def _recomputer(s: Snapshot, model: str):
    """Exact vectors of a compact source's rows: from the LRU cache, else the model."""

    def vectors_of(rows: np.ndarray) -> np.ndarray:
        recs = [s.index_text(int(j)) for j in rows]
        return _RECOMPUTED.get_many(
            [f"{model}:{h}" for h, _ in recs],
            lambda todo: embedding.encode_passages([recs[t][1] for t in todo], model, embedding.RECOMPUTE_BATCH),
        )

    return vectors_of


def _top(per_source: list[np.ndarray], masks, n: int, positive: bool, index: int = 0) -> list[tuple[int, int, float]]:
    """The n best (source index, row, score) over all sources, filtered rows excluded."""
    cands: list[tuple[int, int, float]] = []
    for i, (scores, mask) in enumerate(zip(per_source, masks), start=index):
        if not len(scores):
            continue
        scores = scores.astype(np.float32, copy=True)
        if mask is not None:
            scores[~mask] = -np.inf
        if positive:
            scores[scores <= 0] = -np.inf
        take = min(n, len(scores))
        idx = np.argpartition(-scores, take - 1)[:take]
        cands.extend((i, int(j), float(scores[j])) for j in idx if np.isfinite(scores[j]))
    cands.sort(key=lambda t: -t[2])
    return cands[:n]


def _fuse(vec, kw, fusion: str, share: float, rrf_k: int = RRF_K, model: str | None = None):
    """Weighted sum of calibrated scores (cosine through the model's ``cosine_range``; the
    keyword list arrives already divided by its ceiling), of min-max normalised scores, or
    weighted reciprocal-rank fusion; ``share`` is the vector list's weight, ``1 - share`` the
    keyword list's."""
    fused: dict[tuple[int, int], float] = {}
    for lst, w in ((vec or [], share), (kw or [], 1.0 - share)):
        if not lst:
            continue
        if fusion == "calibrated":
            lo, hi = embedding.spec(model).cosine_range if lst is vec and model else (0.0, 1.0)
            for i, j, sc in lst:
                fused[(i, j)] = fused.get((i, j), 0.0) + w * min(1.0, max(0.0, (sc - lo) / (hi - lo)))
        elif fusion == "rrf":
            for rank, (i, j, _) in enumerate(lst):
                fused[(i, j)] = fused.get((i, j), 0.0) + w / (rrf_k + rank + 1)
        else:
            for (i, j), x in _normalised(lst, floor=0.0 if lst is kw else None).items():
                fused[(i, j)] = fused.get((i, j), 0.0) + w * x
    return sorted(((i, j, s) for (i, j), s in fused.items()), key=lambda t: -t[2])


def _normalised(lst, floor: float | None) -> dict[tuple[int, int], float]:
    """Scores mapped to [0, 1]: 1 at the list's best, 0 at its ``NORM_DEPTH``-th. A shorter list
    is cut before that depth because nothing else scored: the rest of the corpus sits at
    ``floor`` (0 for BM25), so a keyword list of one hit gives that hit 1, not 0. A list whose
    scores tie (or a shorter vector list, whose floor is unknown, of one score) is all best."""
    hi = lst[0][2]
    if len(lst) >= NORM_DEPTH:
        lo = lst[NORM_DEPTH - 1][2]
    else:
        lo = floor if floor is not None else lst[-1][2]
    span = hi - lo
    if span <= 0:
        return {(i, j): 1.0 for i, j, sc in lst if sc >= hi}
    return {(i, j): max(0.0, (sc - lo) / span) for i, j, sc in lst}
