"""Search the materialised indexes: from notebooks, the CLI, MCP and agents alike.

Reads what the last completed build of each source published (pinned LanceDB versions plus the
BM25 files), without Dagster running. Filters are applied before ranking, so a selective filter
still returns k hits when k chunks match. Loaded sources stay in memory and are reloaded only
when a newer build is published.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

import numpy as np
import pandas as pd

from ragbag import bm25, embedding, filters
from ragbag.documents import citation_for
from ragbag.errors import RagbagError
from ragbag.home import Home

MODES = ("hybrid", "vector", "keyword")
FUSIONS = ("rrf", "weighted")
RRF_K = 60
COLUMNS = [
    "text", "score", "source", "connector", "uri", "title", "doc_id", "chunk_id", "citation",
    "metadata", "date", "ordinal", "start", "end", "vector_score", "keyword_score",
]
_FIELDS = ("chunk_id", "doc_id", "source", "connector", "uri", "title", "text", "ordinal",
           "start", "end", "date", "created_at", "updated_at", "metadata")


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


_loaded: dict[tuple[str, str], Snapshot] = {}


def search(
    query: str,
    k: int = 10,
    sources: Iterable[str] | None = None,
    connectors: Iterable[str] | None = None,
    where: str | dict | None = None,
    after: Any = None,
    before: Any = None,
    mode: str = "hybrid",
    fusion: str = "rrf",
    alpha: float = 0.5,
    home: Home | str | None = None,
) -> pd.DataFrame:
    """Ranked chunks for a query, best first, as a DataFrame with the fields of ``COLUMNS``."""
    if mode not in MODES:
        raise RagbagError(f"unknown mode {mode!r}; use one of: {', '.join(MODES)}")
    if fusion not in FUSIONS:
        raise RagbagError(f"unknown fusion {fusion!r}; use one of: {', '.join(FUSIONS)}")
    conditions = filters.parse_where(where)
    lo, hi = filters.parse_time(after), filters.parse_time(before)
    home = home if isinstance(home, Home) else Home(home)
    snaps = _select(home, sources, connectors)
    if not query.strip() or k <= 0 or not snaps:
        return pd.DataFrame(columns=COLUMNS)

    masks = [_mask(s, conditions, lo, hi) for s in snaps]
    pool = max(100, 10 * k)
    vec = kw = None
    if mode in ("hybrid", "vector"):
        model = _one_model(home, snaps)
        qv = embedding.encode_query(query, model)
        vec = _top([(s.vectors @ qv if len(s.vectors) else np.zeros(0)) for s in snaps], masks, pool, positive=False)
    if mode in ("hybrid", "keyword"):
        tokens = bm25.tokenize(query)
        kw = _top([
            bm25.scores(s.keyword, tokens, len(s.rows)) if s.keyword is not None else np.zeros(len(s.rows))
            for s in snaps
        ], masks, pool, positive=True)

    ranked = _fuse(vec, kw, fusion, alpha) if mode == "hybrid" else (vec if mode == "vector" else kw)
    vec_d = dict(((i, j), sc) for i, j, sc in (vec or []))
    kw_d = dict(((i, j), sc) for i, j, sc in (kw or []))
    out = []
    for i, j, score in ranked[:k]:
        row = snaps[i].records[j]
        out.append({
            **{c: row[c] for c in ("text", "source", "connector", "uri", "title", "doc_id",
                                   "chunk_id", "metadata", "date", "ordinal", "start", "end")},
            "score": float(score), "citation": citation_for(row["chunk_id"]),
            "vector_score": float(vec_d[(i, j)]) if (i, j) in vec_d else None,
            "keyword_score": float(kw_d[(i, j)]) if (i, j) in kw_d else None,
        })
    return pd.DataFrame(out, columns=COLUMNS)


def sources_status(home: Home | str | None = None) -> dict[str, dict[str, Any]]:
    """The published manifest of every registered source (None when never built)."""
    from ragbag.stages import published_manifest

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
    """The published snapshot of a source, from memory when it has not been rebuilt since."""
    current = _current(home, connector, source)
    try:
        key = os.readlink(current)
    except OSError:
        return None
    cache_key = (str(home.root), source)
    cached = _loaded.get(cache_key)
    if cached is not None and cached.key == key:
        return cached
    from ragbag.store import Store

    directory = current.parent / key
    manifest = json.loads((directory / "manifest.json").read_text())
    ids: list[str] = json.loads((directory / "chunk_ids.json").read_text())
    store = Store(home.lance_dir)
    versions = manifest["versions"]
    rows = store.published_rows("chunks", source, versions["chunks"], list(_FIELDS)).to_pandas()
    emb = store.published_rows("embeddings", source, versions["embeddings"], ["chunk_id", "vector"])
    rows = rows.set_index("chunk_id").loc[ids].reset_index() if ids else rows
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
    snap = Snapshot(key, manifest, rows, records, vectors, keyword, dates)
    _loaded[cache_key] = snap
    return snap


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


def _top(per_source: list[np.ndarray], masks, n: int, positive: bool) -> list[tuple[int, int, float]]:
    """The n best (source index, row, score) over all sources, filtered rows excluded."""
    cands: list[tuple[int, int, float]] = []
    for i, (scores, mask) in enumerate(zip(per_source, masks)):
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


def _fuse(vec, kw, fusion: str, alpha: float) -> list[tuple[int, int, float]]:
    """Reciprocal-rank fusion (default) or weighted sum of min-max normalised scores."""
    fused: dict[tuple[int, int], float] = {}
    if fusion == "rrf":
        for lst in (vec, kw):
            for rank, (i, j, _) in enumerate(lst):
                fused[(i, j)] = fused.get((i, j), 0.0) + 1.0 / (RRF_K + rank + 1)
    else:
        for lst, w in ((vec, alpha), (kw, 1 - alpha)):
            if not lst:
                continue
            hi, lo = lst[0][2], lst[-1][2]
            span = (hi - lo) or 1.0
            for i, j, sc in lst:
                fused[(i, j)] = fused.get((i, j), 0.0) + w * (sc - lo) / span
    return sorted(((i, j, s) for (i, j), s in fused.items()), key=lambda t: -t[2])
