"""The vector list re-scored across languages: each text's language taken out of its vector, and
an encoder trained on translations weighed beside e5.

A multilingual encoder's vectors carry their text's language as well as its meaning: every
German passage leans the same way, so an English question finds English passages about
something else before the German passage that answers it (the personas' ``crosslingual``
questions, and the attachments and scans written in another language than the question).
Taking each language's mean vector out of its texts' vectors, partly, before comparing
(Yang et al., 2021, "A simple and effective method to remove language identity from multilingual
representations") leaves more of the meaning to compare. Here the means are the home's own:
each published version sums its rows' vectors per language (``ragbag.pipeline.row_languages``;
a compact source, which keeps no vectors, adds none),
a language of few rows is drawn toward the mean of all (``SHRINK`` rows of it), and the
question's language is told as the rows' were (``ragbag.text.languages``); a question whose
language cannot be told (a code, a number) takes the mean of all. Every row a source keeps a
vector of is compared so, not only the plain cosine's best.

The second voice is ``ragbag.models.aligned`` (USE multilingual v3, trained on translation
pairs): its cosine, where the rows have its vectors, is weighed with e5's at ``ALIGNED_SHARE``,
each scaled between its best and its ``NORM_DEPTH``-th score, in proportion to the home's rows
in other languages than the question's (``MIXED``). The result is laid over the plain scores'
range, so fusion's calibration of cosines still holds. ``SHARE``, ``SHRINK`` and
``ALIGNED_SHARE`` were chosen on persona A's questions alone; personas B and C are held out
(benchmarks/README.md, "A vector's language taken out", "A second encoder, aligned across
languages").
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ragbag.core.cache import LRU
from ragbag.core.errors import DamagedIndex
from ragbag.core.home import Home, Source
from ragbag.index import published
from ragbag.models import aligned
from ragbag.search.fusion import NORM_DEPTH, Candidate
from ragbag.search.snapshot import Snapshot, languages_at
from ragbag.text.languages import identify

SHARE = 0.5  # how much of a language's mean vector is taken out
SHRINK = 20  # a language's mean counts the mean of all as this many rows more
ALIGNED_SHARE = 0.5  # the aligned encoder's weight beside e5's, each scaled between best and 100th
MIXED = 0.1  # the share of a home's rows in other languages than a question's that gets it whole

Means = tuple[dict[str, np.ndarray], np.ndarray, dict[str, int]]  # by language, of all, counts
_MEANS: LRU[tuple[str, ...], Means | None] = LRU(8)  # by the sources' current versions


def means(home: Home) -> Means | None:
    """Each language's mean vector over the home's published sources, drawn toward the mean of
    all, the mean of all, and each language's count of rows; None when no source told its
    languages with vectors. Over every source, not only those searched, so a question ranks a
    source's rows alike however the search selects (and a compact source, which keeps no vectors
    to sum, is compared as a fast one). The same object while no source publishes again, so
    what a snapshot derives from it is kept (``_whole``)."""
    told = [_told(home, source) for source in home.sources().values()]
    key = tuple(where for where, _ in told)
    if key not in _MEANS:
        _MEANS.put(key, combine([sums for _, sums in told]))
    return _MEANS.get(key)


def combine(told: list[dict[str, tuple[np.ndarray, int]]]) -> Means | None:
    """``means`` of sources' sums and counts per language."""
    sums: dict[str, np.ndarray] = {}
    counts: dict[str, int] = {}
    for per_source in told:
        for lang, (total, n) in per_source.items():
            sums[lang] = sums.get(lang, np.zeros(len(total))) + total
            counts[lang] = counts.get(lang, 0) + n
    if not counts:
        return None
    overall: np.ndarray = np.stack(list(sums.values())).sum(axis=0) / sum(counts.values())
    by_lang = {lang: (sums[lang] + SHRINK * overall) / (counts[lang] + SHRINK) for lang in sums}
    return by_lang, overall, counts


def _told(home: Home, source: Source) -> tuple[str, dict[str, tuple[np.ndarray, int]]]:
    """A source's current version, and its sums and counts per language as that version wrote
    them; none when it was never published, or published without them."""
    base = home.index_dir(source.connector, source.name)
    try:
        version = published.current_version(base, source.name)
        body = languages_at(base / version, source.name) if version is not None else None
    except (OSError, ValueError, DamagedIndex):  # damaged: skipped here as search skips it
        return "", {}
    where = str(base / version) if version is not None else ""
    return where, {
        lang: (total, int(body["counts"].get(lang, 0))) for lang, total in body["sums"].items()
    } if body else {}


def rescore(
    cands: list[Candidate],
    snaps: list[Snapshot],
    query: str,
    qv: np.ndarray,
    vectors_of: Callable[[int, list[int]], np.ndarray],
    home: Home,
    n: int,
    whole: dict[int, np.ndarray | None] | None = None,
) -> list[Candidate]:
    """The ``n`` best vector candidates by their likeness with the languages taken out, weighed
    with the aligned encoder's likeness where the rows have its vectors, laid over the range of
    the plain scores; the plain top ``n`` when no source told its languages.

    ``cands``: each source's plain best (as many as ``n``), best first. ``whole``: the sources whose
    vectors are all at hand, and the rows allowed in each (None: all); those are
    re-scored whole, so a passage far down the plain list that answers in another language is not
    cut before it is compared. The others' candidates are re-scored (``vectors_of(i, rows)``: a
    compact source's exact vectors, just recomputed). Every range is taken between the best and
    the ``NORM_DEPTH``-th score, which every ``n`` reaches, so asking for more results never
    reorders the first ones."""
    found = means(home) if len(cands) > 1 else None
    if found is None:
        return cands[:n]
    by_lang, overall, counts = found
    asked = identify(query) or ""
    q = _without(qv, by_lang.get(asked, overall))
    share = aligned_share(counts, asked)
    qa = aligned.encode_query(query) if share > 0 and any(s.aligned() is not None for s in snaps) else None
    whole = whole or {}
    rows: list[np.ndarray] = []
    scored: list[np.ndarray] = []
    theirs: list[np.ndarray] = []
    sources: list[np.ndarray] = []
    for i, s in enumerate(snaps):
        kept = s.aligned() if qa is not None else None
        if i in whole:
            mask = whole[i]
            js = np.flatnonzero(mask) if mask is not None else np.arange(len(s.vectors))
            new = _whole(s, found, q)[js]
            their = _whole_aligned(s, kept, qa)[js] if kept is not None and qa is not None else None
        else:
            js = np.asarray([j for k, j, _ in cands if k == i], dtype=np.int64)
            if not len(js):
                continue
            told = _told_rows(s)[js]
            new = np.asarray(
                [_without(v, by_lang.get(t, overall)) @ q for t, v in zip(told, vectors_of(i, js.tolist()))]
            )
            their = np.asarray(kept[js], np.float32) @ qa if kept is not None and qa is not None else None
        rows.append(js)
        scored.append(new)
        theirs.append(their if their is not None else np.full(len(js), np.nan))
        sources.append(np.full(len(js), i))
    every = np.concatenate(scored) if scored else np.zeros(0)
    if len(every) < 2:
        return cands[:n]
    flat_rows, flat_sources = np.concatenate(rows), np.concatenate(sources)
    mix = _unit(every)
    aligned_scores = np.concatenate(theirs)
    has = ~np.isnan(aligned_scores)
    if has.sum() > 1:
        mix[has] = (1 - share) * mix[has] + share * _unit(aligned_scores[has])
    old = np.asarray([sc for _, _, sc in cands])
    lo, hi = _depth_score(old), float(old.max())
    lo = lo if lo < hi else float(old.min())  # the plain scores tie to their depth
    placed = lo + mix * (hi - lo) if hi > lo else mix - 1 + hi
    best = np.lexsort((flat_rows, flat_sources, -placed))[:n]  # ties in a fixed order, whatever n
    return [(int(flat_sources[t]), int(flat_rows[t]), float(placed[t])) for t in best]


def aligned_share(counts: dict[str, int], asked: str) -> float:
    """The aligned encoder's weight for a question in language ``asked`` ("" untold: the home's
    most common): in proportion to the home's rows in other languages, whole from ``MIXED`` of
    them. It is weaker than e5 within a language, so a home written in the question's language
    alone (the public sets) ranks by e5 as before."""
    total = sum(counts.values())
    if not total:
        return 0.0
    other = total - counts.get(asked, max(counts.values()))
    return ALIGNED_SHARE * min(1.0, other / (MIXED * total))


def _unit(scores: np.ndarray) -> np.ndarray:
    """Scores mapped to 1 at the best and 0 at the ``NORM_DEPTH``-th (lower ones below 0)."""
    low, top = _depth_score(scores), float(scores.max()) if len(scores) else 0.0
    return (scores - low) / (top - low) if top > low else np.zeros(len(scores))


def _depth_score(scores: np.ndarray) -> float:
    """The ``NORM_DEPTH``-th best of ``scores`` (the lowest where there are fewer)."""
    if len(scores) <= NORM_DEPTH:
        return float(scores.min())
    return float(np.partition(scores, len(scores) - NORM_DEPTH)[len(scores) - NORM_DEPTH])


def _whole(s: Snapshot, found: Means, q: np.ndarray) -> np.ndarray:
    """Every kept row of ``s`` compared with ``q`` without its language: (v − a·m)·q / ‖v − a·m‖.
    What depends on the home's means alone (each row's v·m and ‖v − a·m‖) is kept with the
    snapshot until the means change, so a question costs one product over the vectors."""
    by_lang, overall, _ = found
    memo = getattr(s, "memo", {})
    held = memo.get("without_languages")
    if held is None or held[0] is not found or held[1] != SHARE:
        codes, index = _language_index(s)
        m = np.stack([by_lang.get(c, overall) for c in codes]).astype(np.float32)
        v = np.asarray(s.vectors, np.float32)
        vm = np.einsum("ij,ij->i", v, m[index])
        norm = np.sqrt(
            np.maximum(np.einsum("ij,ij->i", v, v) - 2 * SHARE * vm + SHARE**2 * (m * m).sum(1)[index], 1e-12)
        )
        held = memo["without_languages"] = (found, SHARE, m, index, norm)
    _, _, m, index, norm = held
    q32 = q.astype(np.float32)
    out: np.ndarray = (np.asarray(s.vectors, np.float32) @ q32 - SHARE * (m @ q32)[index]) / norm
    return out


def _whole_aligned(s: Snapshot, kept: np.ndarray, qa: np.ndarray) -> np.ndarray:
    """Every row's aligned cosine with the question; the half-precision vectors widened once
    and kept with the snapshot (a source searched whole holds under ``EXACT_BELOW`` rows)."""
    memo = getattr(s, "memo", {})
    if "aligned32" not in memo:
        memo["aligned32"] = np.asarray(kept, np.float32)
    out: np.ndarray = memo["aligned32"] @ qa
    return out


def _language_index(s: Snapshot) -> tuple[list[str], np.ndarray]:
    """The languages of ``s``'s rows ("" untold) and each row's index among them."""
    told = _told_rows(s)
    codes = sorted(set(told.tolist()))
    at = {c: k for k, c in enumerate(codes)}
    return codes, np.fromiter((at[t] for t in told), np.int64, len(told))


def _told_rows(s: Snapshot) -> np.ndarray:
    """Each row's language ("" where untold), kept with the snapshot."""
    memo = getattr(s, "memo", {})
    if "language_rows" not in memo:
        langs = (s.languages() or {}).get("rows", [])
        told = np.full(len(s.rows), "", dtype=object)
        told[: min(len(langs), len(told))] = [x or "" for x in langs[: len(told)]]
        memo["language_rows"] = told
    found: np.ndarray = memo["language_rows"]
    return found


def _without(v: np.ndarray, mean: np.ndarray) -> np.ndarray:
    w = np.asarray(v, np.float64) - SHARE * mean
    norm = np.linalg.norm(w)
    return w / norm if norm > 0 else w
