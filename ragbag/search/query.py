"""Search the published indexes: the one search behind notebooks, the CLI, MCP and agents.

A :class:`~ragbag.search.request.SearchRequest` says what to look for; this module selects the
sources it names, masks the rows its filters exclude (before any ranking, so a selective filter
still returns k hits when k chunks match), takes the best vector candidates (their languages
taken out: ``ragbag.search.languages``) and keyword candidates, fuses them, optionally reranks,
lifts exact matches, collapses near-duplicates and widens hits to their context, over published
snapshots (``ragbag.search.snapshot``), without Dagster running."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np

from ragbag.core.errors import RagbagError
from ragbag.core.home import Home
from ragbag.core.records import citation_for
from ragbag.core.rows import Hit, fields
from ragbag.core.threads import one_blas_thread
from ragbag.index import bm25, hnsw, published
from ragbag.index.compact.graph import Compact
from ragbag.index.compact.search import search_compact
from ragbag.index.params import Params
from ragbag.index.published import home_model
from ragbag.models import embedding
from ragbag.search import filters, fusion, languages, mentions, people, rare_words, snapshot
from ragbag.search.fusion import Candidate
from ragbag.search.request import SearchRequest
from ragbag.search.snapshot import Snapshot, load, published_anywhere
from ragbag.text import exact

if TYPE_CHECKING:
    import pandas as pd

COLUMNS = fields(Hit)


def search(request: SearchRequest | str, home: Home | str | None = None, **options: Any) -> pd.DataFrame:
    """Ranked chunks for a request, best first, as a DataFrame with the fields of ``COLUMNS``.

    ``request`` is a SearchRequest, or the query text with the request's other fields as keyword
    arguments, as notebooks call it: ``search("gate code", k=5, sources=["notes"], where={"ext":
    "md"}, after="30d")``. With ``context=N`` a hit's ``text`` is the merged passage and
    ``chunk_text`` the hit itself. ``rerank=N`` re-scores the best N candidates with the
    second-stage encoders (``ragbag.search.rerank``: seconds per query until their encodings are
    cached in this process); ``score`` is then the fused first-stage and reranker score.
    The CLI, MCP, the agent and the search page take ``results`` instead: the same hits as
    dicts, without importing pandas (a third of a cold search's imports).
    """
    import pandas as pd

    return pd.DataFrame(results(request, home, **options), columns=COLUMNS)


def results(request: SearchRequest | str, home: Home | str | None = None, **options: Any) -> list[Hit]:
    """The hits of ``search``, best first, each a dict of ``COLUMNS`` in that order (a missing
    score or date is None)."""
    if not isinstance(request, SearchRequest):
        request = SearchRequest.parse(request, **options)
    elif options:
        raise TypeError(f"search() got a SearchRequest and options {sorted(options)}: put them in the request")
    with one_blas_thread():  # a query's products are small: see ``core.threads``
        return _results(request, home)


def _results(r: SearchRequest, home: Home | str | None) -> list[Hit]:
    home = home if isinstance(home, Home) else Home(home)
    snaps = _select(home, r.sources, r.connectors)
    if not snaps:
        return []

    masks = [_mask(s, r.where, r.after, r.before, r.as_of) for s in snaps]
    _check_fields(r.where, snaps)
    if r.person is not None:
        masks = _of_person(home, r.person, snaps, masks)
    pool = max(100, 10 * r.k)
    known = _contacts(home)  # who the people fields name: the lift below, the names of the hits
    vec: list[Candidate] | None = None
    kw: list[Candidate] | None = None
    model = _one_model(home, snaps) if r.mode in ("hybrid", "vector") else None
    if model is not None:
        qv = embedding.encode_query(r.query, model)
        vec = _vector_top(home, snaps, r, qv, masks, pool, model)
    ceilings = [1.0] * len(snaps)
    kw_scores: list[np.ndarray] = []
    if r.mode in ("hybrid", "keyword"):
        tokens = bm25.tokenize(r.query)
        if r.mode == "hybrid" and r.fusion == "calibrated":
            ceilings = [bm25.ceiling(s.keyword, tokens) if s.keyword is not None else 1.0 for s in snaps]
        kw_scores = [
            (bm25.scores(s.keyword, tokens, len(s.rows)) if s.keyword is not None else np.zeros(len(s.rows))) / c
            for s, c in zip(snaps, ceilings)
        ]
        kw = _top(kw_scores, masks, pool, positive=True)

    if r.mode == "hybrid":
        share = r.alpha if r.alpha is not None else fusion.vector_share(r.query, model, r.fusion)
        ranked = fusion.fuse(vec, kw, r.fusion, share, r.rrf_k, model)
        named = None if r.person is not None else _named(known, r.query, snaps, masks)
        if named is not None:  # the people the query names: their best rows, lifted
            theirs_vec = _vector_top(home, snaps, r, qv, named, pool, model) if model else None
            theirs_kw = _top(kw_scores, named, pool, positive=True)
            theirs = fusion.fuse(theirs_vec, theirs_kw, r.fusion, share, r.rrf_k, model)
            ranked = mentions.lift(ranked, theirs)
        ranked = rare_words.lift(ranked, r.query, [s.keyword for s in snaps], [len(s.rows) for s in snaps], masks)
    else:
        ranked = (vec if r.mode == "vector" else kw) or []
    if r.rerank > 0:
        from ragbag.search import rerank as second_stage

        ranked = second_stage.rerank(
            r.query, ranked, lambda items: [snaps[i].index_text(j) for i, j, _ in items], depth=r.rerank
        )
    if r.mode != "vector":
        ranked = exact.promote(ranked, exact.terms(r.query), lambda i, j: _searchable(snaps[i].records[j]))
    if r.mode == "hybrid" and len(snaps) > 1:
        ranked = fusion.make_room(ranked, r.k)
    if r.min_score is not None:
        ranked = [t for t in ranked if t[2] >= r.min_score]
    if r.collapse:  # with context, later hits may fold into earlier passages: keep a margin
        ranked = _collapse(ranked, snaps, 3 * r.k if r.context > 0 else r.k)
    vec_d = {(i, j): sc for i, j, sc in (vec or [])}
    kw_d = {(i, j): sc * ceilings[i] for i, j, sc in (kw or [])}  # BM25, whatever the fusion
    out: list[Hit] = []
    covered: set[tuple[int, int]] = set()
    contacts = people.book(known) if ranked else None
    for i, j, score in ranked:
        if len(out) == r.k:
            break
        row = snaps[i].records[j]
        rows = _neighbours(snaps[i], j, r.context) if r.context > 0 else [j]
        if r.context > 0 and any((i, x) in covered for x in rows):
            continue  # already inside the passage of a better hit
        covered.update((i, x) for x in rows)
        out.append(
            Hit(
                text="\n".join(snaps[i].records[x]["text"] for x in rows),
                score=float(score),
                source=row["source"],
                connector=row["connector"],
                uri=row["uri"],
                title=row["title"],
                doc_id=row["doc_id"],
                chunk_id=row["chunk_id"],
                citation=citation_for(row["chunk_id"]),
                metadata=row["metadata"],
                date=row["date"],
                ordinal=row["ordinal"],
                start=row["start"],
                end=row["end"],
                vector_score=float(vec_d[(i, j)]) if (i, j) in vec_d else None,
                keyword_score=float(kw_d[(i, j)]) if (i, j) in kw_d else None,
                chunk_text=row["text"],
                version=row.get("version") or 1,
                valid_from=row.get("valid_from"),
                valid_to=row.get("valid_to"),
                people=people.names_in(contacts, row) if contacts else {},
            )
        )
    return out


def sources_status(home: Home | str | None = None) -> dict[str, dict[str, Any] | None]:
    """The published manifest of every registered source (None when never built)."""
    home = home if isinstance(home, Home) else Home(home)
    return {n: published.published_manifest(home, s) for n, s in home.sources().items()}


def _check_fields(conditions: Sequence[filters.Condition], snaps: list[Snapshot]) -> None:
    """A ``where`` field no record of the searched sources has is a typo far more often than a
    wish for nothing: a one-line error naming the fields they do have, not an empty result.
    (Each snapshot gathers its fields once, not on every search.)"""
    asked = {c.field for c in conditions if c.field != "version"}
    if not asked:
        return
    known = frozenset().union(*(s.fields() for s in snaps))
    unknown = sorted(asked - known)
    if unknown:
        shown = ", ".join(sorted(known - {"text", "metadata", "vector"}))
        raise RagbagError(f"unknown where field {unknown[0]!r}: no indexed record has it; the fields here: {shown}")


def _select(home: Home, sources: tuple[str, ...], connectors: tuple[str, ...]) -> list[Snapshot]:
    registered = home.sources()  # re-read only when sources.yaml changed (a stat)
    snapshot.keep_only(home, registered)
    wanted = list(sources) if sources else list(registered)
    for name in wanted:
        if name not in registered:
            raise RagbagError(f"no source named {name!r}; see `ragbag list`")
    conns = set(connectors)
    snaps = []
    for name in wanted:
        src = registered[name]
        if conns and src.connector not in conns:
            continue
        snap = load(home, src.connector, name)
        if snap is not None:
            snaps.append(snap)
    if not snaps and not published_anywhere(home):
        raise RagbagError("nothing is indexed yet: `ragbag add CONNECTOR NAME PATH`, then `ragbag build`")
    return snaps


def _searchable(record: dict[str, Any]) -> str:
    """What an exact term is looked for in: the chunk, its document's title and URI."""
    return f"{record['text']}\n{record.get('title') or ''}\n{record.get('uri') or ''}"


def _collapse(ranked: list[Candidate], snaps: list[Snapshot], limit: int, threshold: float = 0.9) -> list[Candidate]:
    """The first ``limit`` hits, skipping chunks whose words nearly repeat a better hit's
    (Jaccard ≥ threshold). Sets whose sizes differ by more than the threshold allows are never
    compared, which keeps this linear in practice."""
    kept: list[Candidate] = []
    seen_sets: list[frozenset[str]] = []
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
    """Rows of the same document within n chunks of row j, in reading order: of the current
    version, or for an earlier version's row, of the version it was last cut from."""
    doc_id = snap.records[j]["doc_id"]
    if np.isnat(snap.valid_to[j]):
        siblings = snap.by_doc[doc_id]
    else:
        t = snap.valid_to[j] - np.timedelta64(1, "us")
        siblings = sorted(
            (x for x in snap.all_rows[doc_id] if _valid_at(snap, x, t)), key=lambda x: snap.records[x]["ordinal"]
        )
    pos = siblings.index(j)
    return siblings[max(0, pos - n) : pos + n + 1]


def _one_model(home: Home, snaps: list[Snapshot]) -> str:
    configured = home_model(home)
    for s in snaps:
        if s.manifest["model"] != configured:
            raise RagbagError(
                f"source {s.manifest['source']!r} was indexed with {s.manifest['model']} but "
                f"the configured model is {configured}: rebuild it with `ragbag build {s.manifest['source']}`"
            )
    return configured


def _mask(
    s: Snapshot,
    conditions: Sequence[filters.Condition],
    lo: datetime | None,
    hi: datetime | None,
    as_of: datetime | None = None,
) -> np.ndarray | None:
    """Rows that pass the filters (None = all), computed before any ranking. Rows of earlier
    document versions pass only as of a time when they were valid or when a ``version``
    condition asks for them."""
    mask = None
    if lo is not None or hi is not None:
        mask = ~np.isnat(s.dates)
        if lo is not None:
            mask &= s.dates >= np.datetime64(lo.replace(tzinfo=None), "us")
        if hi is not None:
            mask &= s.dates < np.datetime64(hi.replace(tzinfo=None), "us")
    versions = [c for c in conditions if c.field == "version"]
    others = [c for c in conditions if c.field != "version"]
    if others:
        cm = np.fromiter((filters.matches(r, others) for r in s.records), np.bool_, len(s.records))
        mask = cm if mask is None else mask & cm
    if as_of is not None:
        t = np.datetime64(as_of.replace(tzinfo=None), "us")  # NaT compares false: an unknown start always was
        vm = (np.isnat(s.valid_from) | (s.valid_from <= t)) & (np.isnat(s.valid_to) | (s.valid_to > t))
    elif not versions and s.past:
        vm = np.isnat(s.valid_to)
    else:
        vm = None
    if versions:
        cm = np.fromiter((_in_version(r, versions) for r in s.records), np.bool_, len(s.records))
        vm = cm if vm is None else vm & cm
    if vm is not None:
        mask = vm if mask is None else mask & vm
    return mask


def _contacts(home: Home) -> list[dict[str, Any]]:
    """Every contact record of the home, whichever sources a search reads."""
    return [rec for s in _select(home, (), (people.CONNECTOR,)) for rec in s.records]


def _named(
    contacts: list[dict[str, Any]], query: str, snaps: list[Snapshot], masks: list[np.ndarray | None]
) -> list[np.ndarray | None] | None:
    """The rows of the people ``query`` names (``search.mentions``), within ``masks``."""
    return mentions.masks(query, contacts, snaps, masks)


def _of_person(
    home: Home, asked: str, snaps: list[Snapshot], masks: list[np.ndarray | None]
) -> list[np.ndarray | None]:
    """The masks narrowed to the records of the person ``asked`` names, resolved through every
    contacts source of the home, searched or not (``search.mentions.person``)."""
    person = mentions.person(asked, _contacts(home), snaps)
    out: list[np.ndarray | None] = []
    for s, m in zip(snaps, masks):
        theirs = people.holders_of(s.rows.column("metadata"), s.memo).rows(person)
        out.append(theirs if m is None else m & theirs)
    return out


def _valid_at(s: Snapshot, j: int, t: np.datetime64) -> bool:
    """Whether row j's text was its document's at time t (an unknown start: always was)."""
    start, end = s.valid_from[j], s.valid_to[j]
    return bool((np.isnat(start) or start <= t) and (np.isnat(end) or end > t))


def _in_version(record: dict[str, Any], conditions: Sequence[filters.Condition]) -> bool:
    """Whether some version the row belongs to (``first_version`` to ``version``) passes."""
    last = record.get("version") or 1
    first = record.get("first_version") or last
    return any(all(c.test(v) for c in conditions) for v in range(first, last + 1))


def _vector_top(
    home: Home,
    snaps: list[Snapshot],
    r: SearchRequest,
    qv: np.ndarray,
    masks: list[np.ndarray | None],
    n: int,
    model: str,
) -> list[Candidate]:
    """The n best rows by cosine over all sources (exactly where vectors are kept and the source
    is small or filtered, else through the graph), re-scored without their languages."""
    cands: list[Candidate] = []
    whole: dict[int, np.ndarray | None] = {}  # sources scored exactly: every row allowed is re-scored
    for i, (s, mask) in enumerate(zip(snaps, masks)):
        if isinstance(s.graph, Compact):
            ids, scores = search_compact(
                s.graph, qv, n, partial(s.exact_vectors, model=model), Params(), mask, r.width, r.recompute
            )
        elif s.graph is not None and mask is None and len(s.rows) >= snapshot.EXACT_BELOW:
            ids, scores = hnsw.search_fast(s.graph, qv, n, r.width or Params().ef_search)
            if s.twins:  # a node stands for every row of its text: they score alike
                pairs = [(row, sc) for j, sc in zip(ids, scores) for row in s.twins.get(int(j), [int(j)])]
                cands.extend((i, int(row), float(sc)) for row, sc in pairs)
                continue
        else:
            if s.embedded is not None:  # an early version: rows not embedded yet are no vector hits
                mask = s.embedded if mask is None else mask & s.embedded
            cands.extend(_top([s.vectors @ qv if len(s.vectors) else np.zeros(0)], [mask], n, positive=False, index=i))
            if len(s.vectors):
                whole[i] = mask
            continue
        cands.extend((i, int(j), float(sc)) for j, sc in zip(ids, scores))
    cands.sort(key=lambda t: -t[2])
    return languages.rescore(
        cands, snaps, r.query, qv, lambda i, rows: snaps[i].exact_vectors(rows, model), home, n, whole
    )


def _top(
    per_source: list[np.ndarray], masks: list[np.ndarray | None], n: int, positive: bool, index: int = 0
) -> list[Candidate]:
    """The n best (source index, row, score) over all sources, filtered rows excluded."""
    cands: list[Candidate] = []
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
