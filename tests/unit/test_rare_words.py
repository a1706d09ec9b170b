"""A word written as a name that one record holds lifts that record (``ragbag.search.rare_words``):
counted over every searched source, within its filters and its rows."""

from __future__ import annotations

import numpy as np

from ragbag.index import bm25
from ragbag.search import rare_words


def _index(rows_of: dict[str, list[int]], docs: int) -> bm25.Keywords:
    """A keyword index in bm25s's layout: each token's rows (CSC), all scoring 1."""
    vocab, indices, indptr = {}, [], [0]
    for t, rows in rows_of.items():
        vocab[t] = len(vocab)
        indices += rows
        indptr.append(len(indices))
    scores = {
        "data": np.ones(len(indices), np.float32),
        "indices": np.array(indices, np.int64),
        "indptr": np.array(indptr, np.int64),
        "num_docs": docs,
    }
    return bm25.Keywords(vocab, scores, "float32")


KAUTION, MIETE = bm25.tokenize("Kaution")[0], bm25.tokenize("Miete")[0]


def test_the_one_record_holding_a_capitalised_word_is_lifted_and_a_shared_word_lifts_none():
    notes = _index({KAUTION: [3], MIETE: [1, 2]}, 5)
    ranked = [(0, 0, 0.15), (0, 1, 0.1)]  # scores as low as a German record's for an English question
    lifted = rare_words.lift(ranked, "how much was the Kaution and the Miete?", [notes], [5], [None])
    assert lifted[0] == (0, 3, rare_words.LIFT) and {(i, j) for i, j, _ in lifted} == {(0, 0), (0, 1), (0, 3)}
    assert rare_words.lift(ranked, "how much was the kaution?", [notes], [5], [None]) == ranked  # not a name


def test_a_word_two_sources_hold_lifts_neither_and_filters_and_rows_bound_it():
    a, b = _index({KAUTION: [0]}, 3), _index({KAUTION: [2]}, 3)
    question = "the Kaution?"
    assert rare_words.lift([], question, [a, b], [3, 3], [None, None]) == []
    only_a = rare_words.lift([], question, [a, b], [3, 3], [None, np.array([True, True, False])])
    assert only_a == [(0, 0, rare_words.LIFT)]  # b's row is filtered out: a's is the one record
    assert rare_words.lift([], question, [a, b], [3, 2], [None, None]) == [(0, 0, rare_words.LIFT)]  # past b's rows
