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
    bm25.save(bm25.build(["我们坐缆车上了黄山，山顶的云海特别壮观", "The cable car climbed the mountain"]), tmp_path)
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
    bm25.save(bm25.build(texts), tmp_path)
    mine, theirs = bm25.load(tmp_path), bm25s.BM25.load(str(tmp_path))
    for q in ("parcel Leipzig", "parcel parcel depot", "sourdough", "黄山 缆车", "nothing known here"):
        tokens = bm25.tokenize(q)
        known = [t for t in tokens if t in theirs.vocab_dict]
        want = theirs.get_scores(known) if known else np.zeros(len(texts), np.float32)
        np.testing.assert_array_equal(bm25.scores(mine, tokens, len(texts)), want)
        assert bm25.ceiling(mine, tokens) == bm25.ceiling(theirs, tokens)
