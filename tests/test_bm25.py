"""Language-aware keyword tokens."""

from ragbag.index import bm25


def test_chinese_is_segmented_and_digits_split_from_han():
    toks = bm25.tokenize("全长175公里，我们坐缆车上了黄山")
    assert "175" in toks and "公里" in toks and "缆车" in toks and "黄山" in toks
    assert "175公里" not in toks


def test_english_is_stemmed_without_stop_words_and_kana_is_bigrammed():
    assert bm25.tokenize("The cables were running") == ["cabl", "run"]
    assert bm25.tokenize("すしを") == ["すし", "しを"]


def test_scores_rank_the_matching_text_first():
    r = bm25.build(["我们坐缆车上了黄山，山顶的云海特别壮观", "The cable car climbed the mountain"])
    s = bm25.scores(r, bm25.tokenize("黄山 缆车"), 2)
    assert s[0] > 0 and s[1] == 0
    assert not bm25.scores(r, bm25.tokenize("zzz"), 2).any()
