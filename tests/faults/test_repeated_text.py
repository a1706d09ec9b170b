"""Repeated text (a disclaimer pasted 150 times) neither fails the graph check nor breaks search."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import cli, cli_json, write

from ragbag.index import hnsw, quality
from ragbag.index.params import Params

DISCLAIMER = (
    "CONFIDENTIALITY NOTICE: This e-mail and any attachments are confidential and intended solely "
    "for the addressee. If you received it in error, notify the sender and delete it."
)


def _cluster(copies: int = 150, others: int = 60, d: int = 384) -> tuple[np.ndarray, list[str]]:
    rng = np.random.default_rng(3)
    dup = rng.normal(size=d)
    rest = rng.normal(size=(others, d))
    v = np.vstack(
        [np.tile(dup / np.linalg.norm(dup), (copies, 1)), rest / np.linalg.norm(rest, axis=1, keepdims=True)]
    ).astype(np.float32)
    return v, ["disclaimer"] * copies + [f"text-{i}" for i in range(others)]


def test_identical_vectors_are_one_node_and_every_other_text_stays_findable():
    v, keys = _cluster()
    g = hnsw.build_fast(v, keys)
    assert g.ntotal == 61  # one node for the 150 copies
    recall, queries = quality.self_recall(g, v)
    assert recall == 1.0 and queries == 61
    for row in range(150, 210):  # each distinct text finds itself first
        ids, _ = hnsw.search_fast(g, v[row], 10, Params().ef_search)
        assert ids[0] == row
    assert hnsw.twins(keys)[0] == list(range(150))


def test_in_place_additions_add_only_new_texts():
    v, keys = _cluster()
    g = hnsw.build_fast(v[:100], keys[:100])
    added = hnsw.add_fast(g, v[100:], keys[100:], offset=100, present=frozenset(keys[:100]))
    assert added == 60 and g.ntotal == 61
    assert quality.self_recall(g, v)[0] == 1.0


def test_a_record_without_text_is_reported_never_stored(home, tmp_path):
    """Whatever a connector yields: an empty record must not fail the source's checks."""
    from ragbag.core.records import Document
    from ragbag.index.store import Store
    from ragbag.pipeline import checks
    from ragbag.pipeline.ingest import ingest

    def read(root, source, cursor, options=None):
        yield Document(source, "files", "a", "rec:a", "A", "the harbour log")
        yield Document(source, "files", "b", "rec:b", "B", " \n\t")

    src = home.add_source("recs", "files", str(tmp_path), known=("files",))
    store = Store(home.lance_dir)
    report = ingest(store, home, src, read)
    assert report["added"] == 1 and report["errors"] == [{"uri": "rec:b", "error": "no text to index"}]
    assert checks.no_empty_documents(store, home, src).passed


@pytest.mark.slow(seconds=40)
def test_a_source_full_of_one_disclaimer_is_published_and_searchable(home, tmp_path):
    docs = write(
        tmp_path / "mail",
        {
            "archive.txt": "\n\n".join([DISCLAIMER] * 150),
            "empty.txt": "   \n",  # one file with no text: reported, and the rest still published
            **{
                f"note-{i}.md": f"# Note {i}\n\nKayak booking number KX{i:04d} for the harbour trip.\n"
                for i in range(40)
            },
        },
    )
    cli("add", "files", "mail", str(docs))
    (report,) = cli_json("build", check=False)
    assert report["status"] == "success", report["failure"]
    assert report["graph"]["recall_at_10"] >= quality.RECALL_FLOOR
    assert [e["error"] for e in report["errors"]] == ["empty file (whitespace only)"]
    hits = cli_json("search", "KX0007", "-k", "3")
    assert hits[0]["title"] == "Note 7"
    hits = cli_json("search", "confidentiality notice", "-k", "3")
    assert hits[0]["uri"].endswith("archive.txt")


def test_a_search_through_the_fast_graph_answers_with_every_row_of_a_text(home, tmp_path, monkeypatch):
    from ragbag.search import query, snapshot

    docs = write(
        tmp_path / "mail",
        {
            **{f"copy-{i:02d}.txt": DISCLAIMER for i in range(30)},  # one text, thirty chunks
            **{f"n{i}.md": f"# Note {i}\n\nKayak booking number KX{i:04d} for the harbour trip.\n" for i in range(20)},
        },
    )
    cli("add", "files", "mail", str(docs))
    cli("build")
    monkeypatch.setattr(snapshot, "EXACT_BELOW", 1)  # search through the graph, as a big source does
    snapshot.forget()
    snap = snapshot.load(home, "files", "mail")
    assert snap.graph is not None and snap.graph.ntotal == 21  # one node per distinct text
    hits = query.search(DISCLAIMER, home=home, k=40, mode="vector", collapse=False)
    assert sum(1 for u in hits["uri"] if "copy-" in u) == 30  # every copy, as exact search gives
    hits = query.search("harbour trip booking KX0007", home=home, k=5, mode="vector")
    assert "Note 7" in list(hits["title"])
