"""Language-aware keyword tokens and the keyword index."""

import subprocess
import sys
from pathlib import Path

import numpy as np

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


def _real_texts() -> list[str]:
    """Text nobody wrote for this test, three lines a piece: the demo data and the personas'
    records (German, Polish, Korean, Chinese, Japanese, English and more), empty pieces included."""
    root = Path(__file__).resolve().parents[2]
    files = sorted(p for p in [*(root / "sample").rglob("*"), *(root / "evalsets").rglob("*")] if p.is_file())
    texts = []
    for path in files:
        if path.suffix in {".md", ".txt", ".html", ".py", ".go", ".ts", ".json"}:
            lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
            texts += ["\n".join(lines[i : i + 3]) for i in range(0, len(lines), 3)]
    return texts


def _zipf_texts(n: int) -> list[list[str]]:
    rng = np.random.default_rng(7)
    return [[f"w{k}" for k in rng.zipf(1.3, size=rng.integers(0, 60)) % 5000] for _ in range(n)]


def test_the_index_is_the_one_bm25s_builds_bit_for_bit():
    """ragbag builds the index itself (bm25s would import scipy at every publish); every token's
    rows and scores must be bm25s's own, on real text and on a long-tailed random corpus."""
    import bm25s

    real = [bm25.tokenize(t) for t in _real_texts()]
    assert len(real) > 1000 and sum(map(len, real)) > 50_000
    for tokens in (real, _zipf_texts(3000), [["solo"]], [["a"], [], ["a", "a", "b"]]):
        theirs = bm25s.BM25()
        theirs.index([list(t) for t in tokens], show_progress=False)
        vocab, data, indices, indptr = bm25.index(tokens)
        assert vocab.keys() == theirs.vocab_dict.keys()
        s = theirs.scores
        for token, i in theirs.vocab_dict.items():
            if token == "":
                continue
            j = vocab[token]
            np.testing.assert_array_equal(
                indices[indptr[j] : indptr[j + 1]], s["indices"][s["indptr"][i] : s["indptr"][i + 1]]
            )
            np.testing.assert_array_equal(
                data[indptr[j] : indptr[j + 1]], s["data"][s["indptr"][i] : s["indptr"][i + 1]]
            )
    assert bm25.index(real)[0] == bm25.index(real)[0]  # the same texts number their tokens alike


def test_bm25s_reads_the_saved_index_and_scores_as_the_light_reader_does(tmp_path):
    """Search reads the saved index without bm25s; bm25s's own loader reads it too, and the
    scores of both are the same."""
    import bm25s

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


def test_writing_the_index_imports_neither_bm25s_nor_scipy(tmp_path):
    code = (
        "import sys; from pathlib import Path; from ragbag.index import bm25; "
        f"bm25.write(['a parcel left Leipzig', 'sourdough'], Path({str(tmp_path)!r})); "
        "print(sorted(m for m in ('bm25s', 'scipy') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


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
