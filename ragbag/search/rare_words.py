"""A word written as a name that one record of the home holds: strong evidence for that record.

An English question about a German lease ("how much was the Kaution for my flat?") shares one
word with the record that answers it, and no other record holds that word; but the keyword list
weighs a tenth of a hybrid score, and the vector side ranks the English notes about flats above a
German contract. So a word written with a capital inside a question — a name, a place, a noun of
another language — that exactly one record of the searched sources holds lifts that record by
``LIFT``. A word more records hold is left to BM25's own weighing, and a lower-case word to the
fusion: in a small home most words are rare, and lifting them all ranked worse.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ragbag.index import bm25
from ragbag.search import mentions
from ragbag.search.fusion import Candidate

# Chosen on the personal set's tune half among 0.1, 0.2 and 0.5 (benchmarks/README.md, "A word
# one record holds"): hit@10 equal, MRR 0.7307 / 0.7301 / 0.7301 against 0.7272 without.
LIFT = 0.2


def lift(
    ranked: list[Candidate],
    query: str,
    keywords: Sequence[bm25.Keywords | None],
    sizes: Sequence[int],
    masks: Sequence[np.ndarray | None],
) -> list[Candidate]:
    """The ranking with the one record that holds a word of ``query`` written as a name lifted
    (per source: its keyword index, its number of rows and their mask)."""
    held: set[tuple[int, int]] = set()
    for word in mentions.written_as_names(query, caseless=False):  # a CJK question's words are no names
        tokens = bm25.tokenize(word)
        if len(tokens) != 1:
            continue
        rows = [
            (i, int(j))
            for i, (kw, n, m) in enumerate(zip(keywords, sizes, masks))
            if kw is not None
            for j in _held(kw, tokens[0], n, m)
        ]
        if len(rows) == 1:
            held.add(rows[0])
    if not held:
        return ranked
    best = {(i, j): s for i, j, s in ranked}
    for key in held:
        best[key] = best.get(key, 0.0) + LIFT
    return sorted(((i, j, s) for (i, j), s in best.items()), key=lambda t: -t[2])


def _held(kw: bm25.Keywords, token: str, n: int, mask: np.ndarray | None) -> np.ndarray:
    rows = bm25.holders(kw, token)
    rows = rows[rows < n]  # the index's rows past the snapshot's are none of its records
    return rows[mask[rows]] if mask is not None else rows
