"""Language-aware keyword tokens."""

from ragbag.index import bm25


def test_chinese_is_segmented_and_digits_split_from_han():
    toks = bm25.tokenize("全长175公里，我们坐缆车上了黄山")
    assert "175" in toks and "公里" in toks and "缆车" in toks and "黄山" in toks
    assert "175公里" not in toks


def test_english_is_stemmed_without_stop_words_and_kana_is_bigrammed():
    assert bm25.tokenize("The cables were running") == ["cabl", "run"]
    assert bm25.tokenize("すしを") == ["すし", "しを"]


def test_scores_rank_the_matching_text_first(tmp_path):
    bm25.write(["我们坐缆车上了黄山，山顶的云海特别壮观", "The cable car climbed the mountain"], tmp_path)
    r = bm25.load(tmp_path)
    s = bm25.scores(r, bm25.tokenize("黄山 缆车"), 2)
    assert s[0] > 0 and s[1] == 0
    assert not bm25.scores(r, bm25.tokenize("zzz"), 2).any()


def test_the_light_reader_scores_exactly_as_bm25s_does(tmp_path):
    """Search reads the saved index without bm25s; the scores must be the library's own."""
    import bm25s
    import numpy as np

    texts = [f"parcel {i} left the depot in Leipzig" if i % 3 else f"note {i} on sourdough bread" for i in range(60)]
    texts += ["Leipzig Leipzig parcel parcel depot", "黄山的缆车", ""]
    bm25.write(texts, tmp_path)
    mine, theirs = bm25.load(tmp_path), bm25s.BM25.load(str(tmp_path))
    for q in ("parcel Leipzig", "parcel parcel depot", "sourdough", "黄山 缆车", "nothing known here"):
        tokens = bm25.tokenize(q)
        known = [t for t in tokens if t in theirs.vocab_dict]
        want = theirs.get_scores(known) if known else np.zeros(len(texts), np.float32)
        np.testing.assert_array_equal(bm25.scores(mine, tokens, len(texts)), want)
        assert bm25.ceiling(mine, tokens) == bm25.ceiling(theirs, tokens)


def test_a_new_version_tokenizes_only_the_texts_the_last_one_lacked(tmp_path, monkeypatch):
    """A refresh pays for what changed: unchanged texts reuse the tokens saved beside the index."""
    texts = ["我们坐缆车上了黄山", "The cable car climbed the mountain", "Sourdough wants a warm kitchen"]
    bm25.write(texts, tmp_path / "v1")
    seen: list[str] = []
    real = bm25.tokenize
    monkeypatch.setattr(bm25, "tokenize", lambda t: seen.append(t) or real(t))
    bm25.write([*texts, "A new parcel left Leipzig"], tmp_path / "v2", previous=tmp_path / "v1")
    assert seen == ["A new parcel left Leipzig"]
    fresh = tmp_path / "fresh"
    bm25.write([*texts, "A new parcel left Leipzig"], fresh)
    for name in ("vocab.index.json", "data.csc.index.npy", "indices.csc.index.npy", "indptr.csc.index.npy"):
        assert (tmp_path / "v2" / name).read_bytes() == (fresh / name).read_bytes(), name
    (tmp_path / "v2" / bm25.TOKENS).write_bytes(b"cut short")  # unreadable: tokenize everything again
    seen.clear()
    bm25.write(texts, tmp_path / "v3", previous=tmp_path / "v2")
    assert seen == texts
