"""The graph index: hub-preserving pruning, CSR files, search recall against brute force,
in-place updates, the compact profile through the real pipeline (vectors really gone from disk),
and the model guard."""

from __future__ import annotations

import os

import numpy as np
import pytest
from conftest import cli_json, materialize_source, write

from ragbag.core.errors import RagbagError
from ragbag.index import graph, nodes, quality
from ragbag.index.compact import build, pack, pq, prune
from ragbag.index.compact import graph as compact_graph
from ragbag.index.compact import search as compact_search
from ragbag.index.params import Params
from ragbag.index.published import home_model
from ragbag.index.store import Store
from ragbag.models import embedding
from ragbag.pipeline.staged import staged_graph
from ragbag.search import query

SMALL = Params(
    build_m=16,
    ef_construction=64,
    hub_fraction=0.02,
    hub_degree=16,
    degree=6,
    pq_m=16,
    pq_bits=8,
    ef_search=64,
    recompute=32,
)


def clustered(n: int, d: int = 32, seed: int = 0) -> np.ndarray:
    """Unit vectors in 40 clusters: the shape real embeddings have (topics), unlike uniform noise."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(40, d))
    x = centres[rng.integers(0, 40, n)] + 0.35 * rng.normal(size=(n, d))
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def recall(g, x: np.ndarray, queries: np.ndarray, params=SMALL) -> float:
    hits = 0
    for q in queries:
        truth = set(np.argsort(-(x @ q))[:10].tolist())
        got, _ = compact_search.search_compact(g, q, 10, lambda ids: x[ids], params)
        hits += len(truth & set(got.tolist()))
    return hits / (10 * len(queries))


def test_pruning_keeps_hub_degrees_and_bounds_the_rest():
    x = clustered(800)
    cand = prune.proximity_candidates(x, SMALL)
    lists, hubs = prune.prune(x, cand, SMALL)
    assert len(hubs) == 16  # 2 % of 800
    is_hub = np.zeros(len(x), bool)
    is_hub[hubs] = True
    degrees = np.array([len(r) for r in lists])
    assert degrees[hubs].min() == SMALL.hub_degree  # hubs are filled to M by their reverse edges
    others = degrees[~is_hub]
    assert others.max() <= SMALL.degree + 1 and others.mean() <= SMALL.degree  # +1: a reconnecting edge
    # Reverse edges into hubs are kept: an edge v -> hub comes back while the hub has room.
    for h in hubs:
        incoming = [v for v in range(len(x)) if h in lists[v]]
        back = set(lists[h].tolist())
        assert sum(v in back for v in incoming) >= min(len(incoming), SMALL.hub_degree) // 2
    assert prune.reachable(lists, hubs).all()  # nothing pruned off
    for i, row in enumerate(lists):
        assert i not in row and len(set(row.tolist())) == len(row)


def test_csr_files_round_trip(tmp_path):
    for bits in (2, 4, 8):
        x = clustered(600, seed=bits)
        g = build.build_compact(x, Params(**{**SMALL.__dict__, "pq_bits": bits}))
        graph.save(tmp_path / str(bits), "compact", g, {"model": "m", "dim": 32})
        back, meta = graph.load(tmp_path / str(bits), "m", 32)
        assert meta["profile"] == "compact" and back.bits == bits
        assert back.offsets.dtype == np.int32 and back.neighbors.dtype == np.int32
        assert np.array_equal(back.offsets, g.offsets) and np.array_equal(back.hubs, g.hubs)
        assert all(np.array_equal(np.sort(back.row(i)), np.sort(g.row(i))) for i in range(g.n))
        assert np.array_equal(back.codes, g.codes)
        assert np.allclose(back.centroids, g.centroids, atol=1e-3)
        # The file is compact: codes, delta-coded neighbours and a float16 codebook.
        size = os.path.getsize(tmp_path / str(bits) / "graph.bin")
        codebook = 2**bits * 32 * 2
        assert size - codebook < x.nbytes / 3  # 32-d here; 384-d embeddings shrink far more


def test_search_reaches_the_recall_bound_against_brute_force():
    x = clustered(3000, seed=1)
    g = build.build_compact(x, SMALL)
    rng = np.random.default_rng(7)
    queries = x[rng.choice(len(x), 60, replace=False)] + 0.2 * rng.normal(size=(60, 32)).astype(np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    assert recall(g, x, queries) >= 0.90
    measured, n = quality.self_recall(g, x, SMALL, queries=100)
    assert n == 100 and measured >= 0.90
    # A filter is applied inside the traversal: only allowed rows come back.
    mask = np.zeros(len(x), bool)
    mask[::3] = True
    got, _ = compact_search.search_compact(g, queries[0], 10, lambda ids: x[ids], SMALL, mask=mask)
    assert len(got) == 10 and mask[got].all()


def test_in_place_insert_and_delete_keep_recall():
    x = clustered(2400, seed=2)
    old, new = x[:2000], x[2000:]
    g = build.build_compact(old, SMALL)
    keep = np.array([i for i in range(2000) if i % 8 != 0])  # delete one node in eight
    g2 = build.update_compact(g, keep, new, SMALL)
    now = np.vstack([old[keep], new])
    assert g2.n == len(now) and quality.dangling(g2) == 0
    assert prune.reachable(g2.lists(), g2.hubs).all()
    rng = np.random.default_rng(3)
    queries = now[rng.choice(len(now), 60, replace=False)] + 0.2 * rng.normal(size=(60, 32)).astype(np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    assert recall(g2, now, queries) >= 0.90
    assert quality.findability(g2, np.arange(len(keep), g2.n), new, SMALL) >= 0.95


def test_layouts_walk_down_code_sizes_trying_fewer_edges_first():
    from ragbag.index.compact import size as graph_size

    small = graph_size.layouts(5000, 384, degree=8)
    assert [(o.degree, o.pq_m, o.bits) for o in small[:4]] == [(8, 96, 2), (6, 96, 2), (8, 64, 2), (6, 64, 2)]
    assert [o.code_bytes for o in small] == sorted((o.code_bytes for o in small), reverse=True)
    large = graph_size.layouts(50_000, 384, degree=8)
    assert all(o.bits == 8 for o in large) and not any(o.rotate for o in small)
    # From 20,000 nodes codes are also tried rotated (OPQ), worth 1.5 times their bytes.
    assert [(o.pq_m, o.rotate) for o in large[::2]] == [
        (32, True),
        (24, True),
        (32, False),
        (16, True),
        (24, False),
        (12, True),
        (16, False),
        (8, True),
        (12, False),
        (8, False),
    ]
    assert [o.degree for o in large[:4]] == [8, 6, 8, 6]
    assert graph_size.layouts(5000, 384, degree=6, pq_m=16, pq_bits=8) == [graph_size.Layout(6, 16, 8)]
    assert all(100 % o.pq_m == 0 for o in graph_size.layouts(5000, 100, degree=8))  # only divisors
    # choose: the best layout whose bytes fit; the smallest when none does; the best unbounded.
    measured = []

    def size_of(layout):
        measured.append(layout)
        return int(layout.code_bytes * 5000) + (50_000 if layout.degree == 8 else 40_000)

    assert graph_size.choose(small, None, size_of) == 0 and not measured  # nothing to measure
    assert graph_size.choose(small, size_of(small[3]), size_of) == 3
    assert graph_size.choose(small, 10, size_of) == len(small) - 1


def test_a_compact_graph_is_sized_to_its_text_and_never_below_the_recall_floor():
    x, later = np.split(clustered(3200, d=384, seed=5), [3000])
    roomy, _, _ = build.build_within(x, raw_bytes=3000 * 4000)
    assert (roomy.meta["degree"], roomy.codes.shape[1], roomy.bits) == (8, 96, 2)  # the best fits
    allowed = 0.05 * 3000 * 300  # 15 bytes a node
    tight, recall, queries = build.build_within(x, raw_bytes=3000 * 300)
    assert tight.meta["budget_bytes"] == int(allowed) and queries == 200
    assert tight.codes.shape[1] * tight.bits < 96 * 2 and recall >= quality.RECALL_FLOOR
    assert len(pack.pack_compact(tight)) <= allowed < len(pack.pack_compact(roomy))
    # Text too short for any layout: the smallest, whatever the budget says.
    tiny, recall, _ = build.build_within(x, raw_bytes=3000 * 100)
    assert (tiny.meta["degree"], tiny.codes.shape[1], tiny.bits) == (6, 32, 2) and recall >= quality.RECALL_FLOOR
    # A floor no layout reaches walks back to the best layout rather than shipping a worse one
    # (measuring each layout on the way: fewer queries, as no recall can pass).
    best, _, measured = build.build_within(x, raw_bytes=3000 * 300, floor=1.01, queries=40)
    assert measured == 40
    assert (best.meta["degree"], best.codes.shape[1], best.bits) == (8, 96, 2)
    # The degree and the residual norms travel with the file, and insertions keep them.
    back = pack.unpack_compact(pack.pack_compact(tiny))
    assert back.meta["degree"] == 6 and np.allclose(back.residual, tiny.residual, atol=1 / 255)
    grown = build.update_compact(back, np.arange(back.n), later)  # default Params say degree 8
    assert np.diff(grown.offsets)[back.n :].mean() <= 6 and grown.meta["degree"] == 6
    assert np.allclose(grown.residual[back.n :], pq.residuals(grown, np.arange(back.n, grown.n), later))


def test_an_opq_rotation_codes_closer_and_travels_with_the_graph():
    from ragbag.index.compact.size import Layout

    # Variance piled into the first coordinates: unrotated PQ spends as many bits on the flat
    # sub-spaces at the end as on the busy ones at the front.
    rng = np.random.default_rng(8)
    x = rng.normal(size=(3000, 64)) * np.geomspace(3, 0.05, 64)
    x = (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)
    x, later = x[:2700], x[2700:]
    plain = build.build_compact(x, SMALL, Layout(6, 8, 4))
    rotated = build.build_compact(x, SMALL, Layout(6, 8, 4, rotate=True))
    assert plain.rotation is None and rotated.rotation.shape == (64, 64)
    r = rotated.rotation
    assert np.allclose(r @ r.T, np.eye(64), atol=0.01)  # orthonormal, to float16 precision
    assert np.mean(rotated.residual**2) < 0.9 * np.mean(plain.residual**2)
    assert np.allclose(rotated.residual, pq.residuals(rotated, np.arange(len(x)), x))
    # Code scores are inner products in the embedding's space, rotation or not.
    q = x[0]
    approx = compact_search.adc_table(rotated, q)[np.arange(8)[:, None], rotated.codes[:5].T].sum(0)
    assert np.allclose(approx, pq.decode_pq(rotated, np.arange(5)) @ q, atol=1e-4)
    # The rotation is in the file; search and in-place insertion use it.
    back = pack.unpack_compact(pack.pack_compact(rotated))
    assert np.array_equal(back.rotation, rotated.rotation)
    queries = x[rng.choice(len(x), 40, replace=False)]
    wider = Params(**{**SMALL.__dict__, "recompute": 100})  # 4-byte codes
    found = recall(back, x, queries, wider)
    assert found >= 0.85 and found >= recall(plain, x, queries, wider) + 0.15  # measured 0.885, 0.56
    grown = build.update_compact(back, np.arange(back.n), later, SMALL)
    assert np.array_equal(grown.rotation, rotated.rotation)
    assert quality.findability(grown, np.arange(back.n, grown.n), later, SMALL) >= 0.95
    assert np.allclose(grown.residual[back.n :], pq.residuals(grown, np.arange(back.n, grown.n), later))


def test_rows_with_one_text_share_a_node_and_all_come_back():
    distinct = clustered(900, seed=4)
    rng = np.random.default_rng(5)
    copies = rng.integers(0, 900, 500)  # mail quotes itself: 500 rows repeat an earlier text
    rows = np.concatenate([np.arange(900), copies])
    rng.shuffle(rows)
    x = distinct[rows]
    keys = [f"h{r}" for r in rows]
    node_of_row = nodes.row_nodes(keys)
    reps = nodes.first_rows(node_of_row)
    assert len(reps) == 900 and all(keys[r] == keys[reps[node_of_row[r]]] for r in range(len(rows)))
    assert all(node_of_row[r] <= node_of_row[:r].max(initial=-1) + 1 for r in range(len(rows)))  # first-seen order
    g = compact_graph.attach_rows(build.build_compact(x[reps], SMALL), keys)
    asked: list[int] = []

    def vectors_of(ids):
        asked.extend(ids.tolist())
        return x[ids]

    # A text held by three rows: the query finds all three, with one score, embedded once.
    triple = next(v for v in range(900) if (node_of_row == v).sum() >= 3)
    held = np.flatnonzero(node_of_row == triple)
    got, scores = compact_search.search_compact(g, x[held[0]], len(held), vectors_of, SMALL)
    assert sorted(got.tolist()) == sorted(held.tolist()) and np.allclose(scores, scores[0])
    assert len(asked) == len(set(asked)) and set(asked) <= set(reps.tolist())
    # A filter on rows: a node passes through any allowed row, and only allowed rows return.
    mask = np.ones(len(rows), bool)
    mask[held[1:]] = False
    got, _ = compact_search.search_compact(g, x[held[0]], 5, vectors_of, SMALL, mask=mask)
    assert got[0] == held[0] and not set(got.tolist()) & set(held[1:].tolist()) and mask[got].all()
    # Tie-aware recall over rows against brute force.
    queries = x[rng.choice(len(x), 50, replace=False)] + 0.2 * rng.normal(size=(50, 32)).astype(np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    hits = 0
    for q in queries:
        s = x @ q
        kth = np.sort(s)[-10]
        got, _ = compact_search.search_compact(g, q, 10, lambda ids: x[ids], SMALL)
        hits += int((s[got] >= kth - 1e-6).sum())
    assert hits / (10 * len(queries)) >= 0.9
    with pytest.raises(RagbagError, match="distinct texts"):
        compact_graph.attach_rows(build.build_compact(x[reps[:800]], SMALL), keys)


def test_renumbering_nodes_keeps_the_graph():
    x = clustered(500, seed=6)
    g = build.build_compact(x, SMALL)
    order = np.random.default_rng(1).permutation(500)
    p = compact_graph.permute(g, order)
    assert np.array_equal(p.codes, g.codes[order]) and quality.dangling(p) == 0
    assert np.array_equal(p.residual, g.residual[order])
    assert sorted(order[p.hubs].tolist()) == sorted(g.hubs.tolist())
    for i in (0, 17, 499):
        assert sorted(order[p.row(i)].tolist()) == sorted(g.row(int(order[i])).tolist())
    q = x[3]
    a, _ = compact_search.search_compact(g, q, 10, lambda ids: x[ids], SMALL)
    b, _ = compact_search.search_compact(p, q, 10, lambda ids: x[order[ids]], SMALL)
    assert order[b].tolist() == a.tolist()


def test_a_poorly_coded_node_is_recomputed_before_a_well_coded_one_of_equal_score():
    x = clustered(300, seed=7)
    g = build.build_compact(x, SMALL)
    ids = np.array([10, 20, 30])
    approx = np.array([0.5, 0.5, 0.49], np.float32)
    g.residual = np.zeros(300, np.float32)
    g.residual[20] = 0.3  # its code may be 0.3 off: 4 sd of that error is worth a recompute first
    assert compact_search.recompute_order(g, ids, approx)[0].tolist() == [20, 10, 30]
    g.residual = None  # a file from before residuals: code order
    assert compact_search.recompute_order(g, ids, approx)[0].tolist() == [10, 20, 30]


def test_a_graph_from_another_model_is_refused(tmp_path):
    x = clustered(300)
    graph.save(tmp_path, "compact", build.build_compact(x, SMALL), {"model": "all-MiniLM-L6-v2", "dim": 32})
    with pytest.raises(RagbagError, match="was built with all-MiniLM-L6-v2 \\(32-d\\).*rebuild"):
        graph.load(tmp_path, "multilingual-e5-small", 384)


DOCS = {
    f"note{i}.md": f"# Note {i}\n\n" + text
    for i, text in enumerate(
        [
            "The kitchen faucet leaked until the rubber washer in the valve was replaced.",
            "Perseid meteors peak in August; watch after midnight far from city lights.",
            "File the income tax return by the end of April and keep donation receipts.",
            "Sourdough needs a lively starter, a long cold proof and a very hot oven.",
            "Rotate the car tyres every ten thousand kilometres to even out the wear.",
            "The quarterly budget review moved to Thursday afternoon in room 4.",
        ]
    )
}


FILLER = {
    f"filler{i}.md": f"# Filler {i}\n\nA line about topic number {i} and its {i * 3} variations." for i in range(6)
}


def test_compact_profile_drops_vectors_and_searches_by_recomputing(home, instance, tmp_path):
    docs = write(tmp_path / "docs", {**DOCS, **FILLER})
    home.set_config("history.versions", "1")  # no history: a deleted file's chunks go (a graph deletion)
    home.add_source("fastnotes", "files", str(docs), known=("files",))
    home.add_source("notes", "files", str(docs), known=("files",), options={"profile": "compact"})
    fast_meta = materialize_source(home, instance, "fastnotes")
    meta = materialize_source(home, instance, "notes")
    assert fast_meta["graph"]["profile"] == "fast" and meta["graph"]["profile"] == "compact"
    assert meta["graph"]["vectors_held"] == meta["chunks"]["chunks"] == 12
    assert meta["graph"]["vectors_dropped"] == 0  # never stored in LanceDB in the first place
    assert not (home.index_dir("files", "notes") / "pending_vectors.npz").exists()
    assert meta["graph"]["recall_at_10"] >= 0.9
    store = Store(home.lance_dir)
    vectors = store.rows("embeddings", "notes", ["vector"]).column("vector")
    assert vectors.null_count == len(vectors) == 12  # the rows say "embedded"; the vectors are gone
    assert store.rows("embeddings", "fastnotes", ["vector"]).column("vector").null_count == 0
    published = home.index_dir("files", "notes") / "current" / "graph"
    assert (published / "graph.bin").exists() and not (published / "hnsw.faiss").exists()

    for q, want in [
        ("how do I fix a dripping tap", "note0.md"),
        ("when to see shooting stars", "note1.md"),
        ("bread baking", "note3.md"),
    ]:
        hits = query.search(q, home=home, sources=["notes"], mode="vector", k=3)
        exact = query.search(q, home=home, sources=["fastnotes"], mode="vector", k=3)
        assert os.path.basename(hits.iloc[0]["uri"]) == want
        assert [os.path.basename(u) for u in hits["uri"]] == [os.path.basename(u) for u in exact["uri"]]
        assert np.allclose(hits["vector_score"], exact["vector_score"], atol=1e-5)

    # A new file, a copy of an old one and a deletion: the compact graph is updated in place,
    # not rebuilt; the copy shares its original's node (one node per distinct text) and comes
    # back beside it; the new vectors are dropped too, and search sees the change.
    (docs / "note5.md").unlink()
    write(
        docs,
        {
            "note6.md": "# Note 6\n\nThe dentist appointment is on Monday at nine in the morning.",
            "again/note0.md": DOCS["note0.md"],
        },
    )
    again = materialize_source(home, instance, "notes")
    assert again["graph"]["mode"] == "updated" and again["graph"]["inserted"] == 2
    assert again["graph"]["deleted"] == 1 and again["graph"]["nodes"] == 13
    assert again["graph"]["graph_nodes"] == 12 and again["graph"]["inserted_found"] == 1.0
    # Only the new text was embedded: the copy's text already had a node, so it needs no vector.
    assert again["embeddings"]["chunks_embedded"] == 1 and again["embeddings"]["in_graph"] == 1
    assert again["graph"]["vectors_held"] == 1, again["graph"]
    assert store.rows("embeddings", "notes", ["vector"]).column("vector").null_count == 13
    both = query.search("how do I fix a dripping tap", home=home, sources=["notes"], mode="vector", k=2, collapse=False)
    assert sorted(os.path.relpath(u, docs) for u in both["uri"]) == ["again/note0.md", "note0.md"]
    assert both["vector_score"].iloc[0] == pytest.approx(both["vector_score"].iloc[1], abs=1e-6)
    hits = query.search("when is my dentist visit", home=home, sources=["notes"], mode="vector", k=1)
    assert os.path.basename(hits.iloc[0]["uri"]) == "note6.md"
    assert "note5.md" not in {
        os.path.basename(u) for u in query.search("budget review", home=home, sources=["notes"], k=12)["uri"]
    }
    assert staged_graph(home, home.source("notes"))["churn"] == 3  # rows inserted + deleted
    # The CLI passes the search width and recompute budget through; list shows the profile.
    (hit,) = cli_json(
        "search",
        "when is my dentist visit",
        "--source",
        "notes",
        "--mode",
        "vector",
        "--width",
        "16",
        "--recompute",
        "8",
        "-k",
        "1",
    )
    assert os.path.basename(hit["uri"]) == "note6.md"
    assert {r["source"]: r["profile"] for r in cli_json("list")} == {"fastnotes": "fast", "notes": "compact"}


def test_compact_vectors_really_leave_the_disk(home, instance, tmp_path):
    """Bytes on disk: a compact home's LanceDB embeddings plus its graph weigh far less than the
    float32 vectors would, once the old table versions are reclaimed at publication."""
    words = "faucet meteor tax sourdough tyres budget dentist garden river violin".split()
    files = {f"n{i}.txt": " ".join(words[(i * 7 + j) % 10] + f" item{i}-{j}" for j in range(30)) for i in range(40)}
    home.set_config("graph.profile", "compact")
    home.add_source("bulk", "files", str(write(tmp_path / "bulk", files)), known=("files",))
    meta = materialize_source(home, instance, "bulk")
    n = meta["chunks"]["chunks"]
    raw = n * embedding.spec(home_model(home)).dim * 4
    lance = sum(p.stat().st_size for p in (home.lance_dir / "embeddings.lance").rglob("*") if p.is_file())
    cache = sum(p.stat().st_size for p in (home.lance_dir / "embedding_cache.lance").rglob("*") if p.is_file())
    assert lance < raw / 4, (lance, raw)
    assert cache < raw / 4, (cache, raw)  # compact sources keep their vectors out of the cache
    assert meta["graph"]["bytes"] < raw / 10
    # (collapse off: these texts share all their words but one, so they are near-duplicates)
    assert len(query.search("violin river", home=home, k=3, collapse=False)) == 3
    # The plan: 5 % of the text by default; these chunks are too short for any layout to fit,
    # so the smallest one that passes the recall check is taken. A looser budget gives more.
    assert meta["graph"]["budget_bytes"] == int(0.05 * meta["graph"]["raw_text_bytes"])
    assert (meta["graph"]["degree"], meta["graph"]["pq_m"], meta["graph"]["pq_bits"]) == (6, 32, 2)
    assert not meta["graph"]["rotated"]  # a rotation would outweigh the codes of a small source
    with pytest.raises(RagbagError, match="between 0 and 1"):
        home.set_config("graph.budget", "5%")
    home.set_config("graph.budget", "1")
    loose = materialize_source(home, instance, "bulk")
    assert loose["graph"]["mode"] == "built" and loose["embeddings"]["chunks_embedded"] == 0
    assert (loose["graph"]["degree"], loose["graph"]["pq_m"], loose["graph"]["pq_bits"]) == (8, 96, 2)
    assert loose["graph"]["bytes"] > meta["graph"]["bytes"] and loose["graph"]["recall_at_10"] >= 0.9


def test_build_reports_graph_and_asset_checks(home, instance, tmp_path):
    import dagster as dg

    from ragbag import connectors
    from ragbag.orchestration.chain import RagbagHome, connector_chain, partitions_for

    home.add_source("notes", "files", str(write(tmp_path / "d", DOCS)), known=("files",))
    instance.add_dynamic_partitions(partitions_for("files").name, ["notes"])
    result = dg.materialize(
        connector_chain("files", connectors.get("files")),
        partition_key="notes",
        instance=instance,
        resources={"ragbag": RagbagHome(root=str(home.root))},
    )
    checks = {e.check_name: e for e in result.get_asset_check_evaluations()}
    assert checks["graph_recall"].passed and checks["graph_matches_chunks"].passed
    assert checks["graph_recall"].metadata["recall_at_10"].value >= 0.9


def test_switching_profiles_drops_and_restores_vectors(home, instance, tmp_path):
    home.add_source("notes", "files", str(write(tmp_path / "d", DOCS)), known=("files",))
    store = Store(home.lance_dir)
    nulls = lambda: store.rows("embeddings", "notes", ["vector"]).column("vector").null_count  # noqa: E731
    first = materialize_source(home, instance, "notes")
    assert first["graph"]["profile"] == "fast" and nulls() == 0
    home.set_config("graph.profile", "compact")
    compact = materialize_source(home, instance, "notes")
    assert compact["embeddings"]["chunks_embedded"] == 0  # nothing re-embedded to switch
    assert compact["graph"]["vectors_dropped"] == 6 and nulls() == 6
    home.set_config("graph.profile", "fast")
    fast = materialize_source(home, instance, "notes")
    assert fast["embeddings"]["from_cache"] == 6 and nulls() == 0  # the cache still had them
    hits = query.search("dripping tap", home=home, mode="vector", k=1)
    assert os.path.basename(hits.iloc[0]["uri"]) == "note0.md"


def test_fast_graph_takes_additions_in_place_and_rebuilds_after_a_deletion(home, instance, tmp_path):
    docs = write(tmp_path / "d", DOCS)
    home.set_config("history.versions", "1")  # no history: a deleted file's chunks go (a graph deletion)
    home.add_source("notes", "files", str(docs), known=("files",))
    assert materialize_source(home, instance, "notes")["graph"]["mode"] == "built"
    write(docs, {"note6.md": "# Note 6\n\nThe dentist appointment is on Monday at nine in the morning."})
    added = materialize_source(home, instance, "notes")["graph"]
    assert added["mode"] == "updated" and added["inserted"] == 1 and added["recall_at_10"] >= 0.9
    hits = query.search("when is my dentist visit", home=home, mode="vector", k=1)
    assert os.path.basename(hits.iloc[0]["uri"]) == "note6.md"
    (docs / "note0.md").unlink()
    removed = materialize_source(home, instance, "notes")["graph"]
    assert removed["mode"] == "built" and removed["nodes"] == 6
