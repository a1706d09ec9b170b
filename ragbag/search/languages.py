"""A vector's likeness without its language: the vector list re-scored with each text's language
taken out of its vector.

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
language cannot be told (a code, a number) takes the mean of all. The vector search's candidates
are re-scored, best first, and their new scores laid over the old scores' range, so fusion's
calibration of cosines still holds. ``SHARE`` and ``SHRINK`` were chosen on persona A's questions
alone; personas B and C are held out (benchmarks/README.md, "A vector's language taken out").
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ragbag.core.errors import DamagedIndex
from ragbag.core.home import Home, Source
from ragbag.index import published
from ragbag.search.fusion import Candidate
from ragbag.search.snapshot import Snapshot, languages_at
from ragbag.text.languages import identify

SHARE = 0.5  # how much of a language's mean vector is taken out
SHRINK = 20  # a language's mean counts the mean of all as this many rows more


def means(home: Home) -> tuple[dict[str, np.ndarray], np.ndarray] | None:
    """Each language's mean vector over the home's published sources, drawn toward the mean of
    all, and the mean of all; None when no source told its languages with vectors. Over every
    source, not only those searched, so a question ranks a source's rows alike however the
    search selects (and a compact source, which keeps no vectors to sum, is compared as a fast
    one)."""
    return combine([_told(home, source) for source in home.sources().values()])


def combine(told: list[dict[str, tuple[np.ndarray, int]]]) -> tuple[dict[str, np.ndarray], np.ndarray] | None:
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
    return {lang: (sums[lang] + SHRINK * overall) / (counts[lang] + SHRINK) for lang in sums}, overall


def _told(home: Home, source: Source) -> dict[str, tuple[np.ndarray, int]]:
    """A source's sums and counts per language, as its current version wrote them; none when it
    was never published, or published without them."""
    base = home.index_dir(source.connector, source.name)
    try:
        version = published.current_version(base, source.name)
        body = languages_at(base / version, source.name) if version is not None else None
    except (OSError, ValueError, DamagedIndex):  # damaged: skipped here as search skips it
        return {}
    return {lang: (total, int(body["counts"].get(lang, 0))) for lang, total in body["sums"].items()} if body else {}


def rescore(
    cands: list[Candidate],
    snaps: list[Snapshot],
    query: str,
    qv: np.ndarray,
    vectors_of: Callable[[int, list[int]], np.ndarray],
    home: Home,
) -> list[Candidate]:
    """The vector list's candidates ranked by their likeness with the languages taken out, on the
    range of their scores before; as they were when no source told its languages.
    ``vectors_of(i, rows)``: the exact vectors of rows of source i (a compact source's were just
    recomputed by its search)."""
    found = means(home) if len(cands) > 1 else None
    if found is None:
        return cands
    by_lang, overall = found
    q = _without(qv, by_lang.get(identify(query) or "", overall))
    new: dict[tuple[int, int], float] = {}
    for i, s in enumerate(snaps):
        js = [j for k, j, _ in cands if k == i]
        if not js:
            continue
        langs = (s.languages() or {}).get("rows", [])
        for j, v in zip(js, vectors_of(i, js)):
            lang = langs[j] if j < len(langs) else None
            new[(i, j)] = float(_without(v, by_lang.get(lang or "", overall)) @ q)
    if len(new) < 2:
        return cands
    old = {(i, j): sc for i, j, sc in cands if (i, j) in new}
    lo, hi, span = min(old.values()), max(old.values()), max(new.values()) - min(new.values())
    low = min(new.values())
    placed = {key: lo + (sc - low) / span * (hi - lo) if span > 0 else old[key] for key, sc in new.items()}
    out = [(i, j, placed.get((i, j), sc)) for i, j, sc in cands]
    out.sort(key=lambda t: -t[2])
    return out


def _without(v: np.ndarray, mean: np.ndarray) -> np.ndarray:
    w = np.asarray(v, np.float64) - SHARE * mean
    norm = np.linalg.norm(w)
    return w / norm if norm > 0 else w
