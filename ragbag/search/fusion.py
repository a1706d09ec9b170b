"""Fusing the vector and keyword candidate lists of a hybrid search into one ranking.

Three methods, ``SearchRequest.fusion``: ``calibrated`` (the default) maps each list onto 0..1
by what its score means: the vector list's cosine through the model's ``cosine_range``, the
keyword list's BM25 divided by the most the query could score (``bm25.ceiling``), so a keyword
list of one hit keeps its full weight and a score means the same for every query.
``weighted`` normalises each list per query between its best score and its ``NORM_DEPTH``-th;
``rrf`` is weighted reciprocal-rank fusion. Calibrated ranked as well as per-query min-max on
the public sets at the same share, and a vector share of 0.9 beat 0.8 there
(benchmarks/README.md, "Search on personal data"). Exact terms (``ragbag.text.exact``) then lift
the hits that contain them, outside fusion.

Candidates are ``(source index, row, score)`` tuples, best first.
"""

from __future__ import annotations

from ragbag.index import bm25
from ragbag.models import embedding
from ragbag.search.request import DEFAULT_FUSION, RRF_K

Candidate = tuple[int, int, float]

VECTOR_SHARE = 0.9
# The last place of a hybrid top k goes to the best hit of a source with none above it, when that
# hit scores at least SOURCE_FLOOR of the k-th: chosen on the personal set's tune half among
# one or two places and 0.25 / 0.5 / 0.75 (benchmarks/README.md, "A place for another source").
SOURCE_PLACES = 1
SOURCE_FLOOR = 0.5
CJK_VECTOR_SHARE = 0.5
# Weighted fusion normalises each list between its best score and its 100th (lower ones count
# 0), whatever the candidate pool: asking for 100 results must not reorder the first 10.
NORM_DEPTH = 100


def vector_share(query: str, model: str | None, fusion: str = DEFAULT_FUSION) -> float:
    """The vector list's weight in fusion (the keyword list gets the rest), by what the query is.
    A CJK query leans on keywords: jieba's words are precise in Chinese, and an even share under
    the multilingual model beats 0.9 there. An English-only model cannot embed CJK text at all,
    and even a small vector weight reorders the keyword top ranks, so under such a model a CJK
    query ranks by keywords; vector-only hits still follow when keywords find fewer than k."""
    if fusion == "rrf":
        return 0.5
    if model and bm25.has_cjk(query):
        return CJK_VECTOR_SHARE if embedding.spec(model).multilingual else 0.0
    return VECTOR_SHARE


def fuse(
    vec: list[Candidate] | None,
    kw: list[Candidate] | None,
    fusion: str,
    share: float,
    rrf_k: int = RRF_K,
    model: str | None = None,
) -> list[Candidate]:
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
            for (i, j), x in normalised(lst, floor=0.0 if lst is kw else None).items():
                fused[(i, j)] = fused.get((i, j), 0.0) + w * x
    return sorted(((i, j, s) for (i, j), s in fused.items()), key=lambda t: -t[2])


def normalised(lst: list[Candidate], floor: float | None) -> dict[tuple[int, int], float]:
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


def make_room(ranked: list[Candidate], k: int) -> list[Candidate]:
    """The ranking with its last ``SOURCE_PLACES`` of the top ``k`` given to the best hits of
    sources that have none above them. A question answered in one source can rank first there
    and still be pushed out of the top k by a source whose scores run higher for every question
    (an English mailbox against a Chinese chat, for an English question); the hits it takes the
    place of follow it, nothing is dropped."""
    if len(ranked) <= k or k <= SOURCE_PLACES:
        return ranked
    top = ranked[:k]
    seen = {i for i, _, _ in top}
    floor = top[-1][2] * SOURCE_FLOOR
    best: dict[int, Candidate] = {}
    for c in ranked[k:]:
        if c[0] not in seen:
            seen.add(c[0])  # only a source's best hit may take a place
            if c[2] >= floor:
                best[c[0]] = c
    room = sorted(best.values(), key=lambda t: -t[2])[:SOURCE_PLACES]
    if not room:
        return ranked
    moved = set(room)
    kept = k - len(room)
    return top[:kept] + room + top[kept:] + [c for c in ranked[k:] if c not in moved]
