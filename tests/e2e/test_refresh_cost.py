"""What a refresh of one record costs beyond its own work: the data files it appends to each
table are merged only once there are more than ``FRAGMENTS_KEPT`` (merging rewrites the whole
table), a removal merges them all, and the graph check measures its recall in one batched search
that finds what one search per query finds (benchmarks/README.md, "A refresh's fixed cost")."""

from __future__ import annotations

import json

import numpy as np
from conftest import cli, write

from ragbag.index import hnsw, quality
from ragbag.index.graph import search_any
from ragbag.index.params import Params
from ragbag.index.store import FRAGMENTS_KEPT, Store


def _fragments(home, table: str = "chunks") -> tuple[int, int]:
    """The table's data files and version."""
    t = Store(home.lance_uri).table(table)
    return t.stats()["fragment_stats"]["num_fragments"], t.version


def test_refreshes_append_files_until_enough_to_merge_and_a_removal_merges_all(home, tmp_path):
    notes = {f"n{i}.md": f"# Note {i}\n\nThe kettle is on shelf {i}.\n" for i in range(4)}
    docs = write(tmp_path / "docs", notes)
    other = write(tmp_path / "other", {"o.md": "# Other\n\nThe bicycle is in the cellar.\n"})
    cli("add", "files", "notes", str(docs))
    cli("add", "files", "other", str(other))
    cli("build", "--json")
    seen = [_fragments(home)[0]]
    for i in range(FRAGMENTS_KEPT + 2):
        (docs / f"new{i}.md").write_text(f"# New note {i}\n\nThe kettle moved, edit {i}.\n")
        (report,) = json.loads(cli("build", "notes", "--json").stdout)
        assert report["added"] == 1
        seen.append(_fragments(home)[0])
        hits = json.loads(cli("search", f"kettle moved edit {i}", "-k", "3", "--json").stdout)
        assert f"edit {i}" in hits[0]["text"]  # every refresh is searchable as it lands
    grew = [b - a for a, b in zip(seen, seen[1:])]
    assert max(seen) <= FRAGMENTS_KEPT + 2 and all(g >= 1 for g in grew[: FRAGMENTS_KEPT - seen[0]])
    assert any(g < 0 for g in grew)  # merged once there were more than FRAGMENTS_KEPT
    cli("remove", "other")
    assert _fragments(home)[0] == 1


def test_the_batched_recall_is_the_recall_of_one_search_per_query():
    rng = np.random.default_rng(3)
    vectors = rng.normal(size=(2500, 48)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    params = Params(ef_search=12)  # narrow: recall well below 1, so a difference would show
    g = hnsw.build_fast(vectors, [str(i) for i in range(len(vectors))], params)
    recall, queries = quality.self_recall(g, vectors, params, 150)
    rows = hnsw.node_rows(g)
    nodes = vectors[rows] if rows is not None else vectors
    position = {int(r): i for i, r in enumerate(rows)} if rows is not None else None
    sample = np.random.default_rng(0).choice(len(nodes), size=150, replace=False)
    hits = 0
    for q in nodes[sample]:
        sims = nodes @ q
        kth = -np.partition(-sims, 9)[9]
        got, _ = search_any(g, q, 10, lambda ids: vectors[ids], params)
        found = {position.get(int(j), -1) if position is not None else int(j) for j in got[:10]}
        hits += sum(1 for j in found if 0 <= j < len(nodes) and sims[j] >= kth - 1e-5)
    assert queries == 150 and recall == round(hits / 1500, 4) < 1.0
