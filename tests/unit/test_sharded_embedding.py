"""One source's embedding in shards on a two-worker Dask cluster (ragbag.pipeline.shards): every
worker encodes, the vectors equal a one-process build's, and the build stays incremental."""

from __future__ import annotations

import numpy as np
import pytest

from ragbag import connectors
from ragbag.core.errors import RagbagError
from ragbag.index.published import home_model
from ragbag.index.store import Store
from ragbag.models import embedding
from ragbag.pipeline import chunk, embed, graph_stage, ingest, publish, shards
from ragbag.search import snapshot
from ragbag.search.query import search

pytest.importorskip("dask.distributed")

TOPICS = ["boiler service", "passport renewal", "tax return", "piano lesson", "garden fence"]


def _notes(folder, n: int) -> None:
    folder.mkdir(exist_ok=True)
    for i in range(n):
        (folder / f"n{i:02d}.md").write_text(f"# {TOPICS[i % 5].title()} {i}\n\nAbout the {TOPICS[i % 5]}, item {i}.\n")


def _chunked(home, name):
    src, store = home.source(name), Store(home.lance_uri)
    module = connectors.get(src.connector)
    ingest.ingest(store, home, src, module.read)
    chunk.chunk(store, src, module.spans, home_model(home))
    return src, store


@pytest.mark.slow(seconds=10)
def test_one_source_embeds_across_two_workers_as_one_process_would(home, tmp_path, monkeypatch):
    monkeypatch.setattr(shards, "SHARD_TEXTS", 5)
    _notes(tmp_path / "notes", 40)
    home.add_source("notes", "files", str(tmp_path / "notes"), known=("files",))
    home.set_config("build.embed_cluster", "local:2")
    src, store = _chunked(home, "notes")
    model = home_model(home)

    monkeypatch.setattr(embedding, "_torch_e5", {})  # this test's own engine state
    embedding.prepare_passage_encoder(model)  # torch loaded in this process: the workers choose for themselves
    report = embed.embed(store, src, model, cluster=home.embed_cluster)
    assert report["chunks_embedded"] == 40 and report["embed_workers"] == 2  # 8 shards, both workers

    rows = store.rows("chunks", "notes", ["chunk_id", "index_text"]).to_pydict()
    stored = store.rows("embeddings", "notes", ["chunk_id", "vector"]).to_pydict()
    by_id = dict(zip(stored["chunk_id"], stored["vector"]))
    # One fresh process, in order: the engine its build of these tokens loads (the workers each
    # chose the same, and the report says which).
    embedding._torch_e5.clear()
    count = embedding.token_counter(model)
    total = sum(count(t) for t in rows["index_text"])
    assert report["encoder"] == embedding.prepare_passage_encoder(model, total_tokens=total)
    here = embedding.encode_passages(rows["index_text"], model, total_tokens=total)
    there = np.asarray([by_id[c] for c in rows["chunk_id"]], dtype=np.float32)
    assert np.allclose(here, there, atol=1e-5)

    graph_stage.build_graph(store, home, src, model)
    publish.publish(store, home, src, model)
    snapshot._loaded.clear()
    assert search("renewing my passport", k=1, sources=["notes"], mode="vector")["title"][0].startswith("Passport")

    (tmp_path / "notes" / "n07.md").write_text("# Passport Renewal 7\n\nThe appointment moved to Friday.\n")
    src, store = _chunked(home, "notes")
    again = embed.embed(store, src, model, cluster=home.embed_cluster)
    assert again["chunks_embedded"] == 1 and again["from_cache"] == 0  # only the changed note


def test_the_cluster_setting_is_checked(home):
    for good, stored in (("local:2", "local:2"), (" tcp://10.0.0.5:8786 ", "tcp://10.0.0.5:8786"), ("", "")):
        home.set_config("build.embed_cluster", good)
        assert home.embed_cluster == stored
    for bad in ("local:0", "local:two", "10.0.0.5:8786", "http://x"):
        with pytest.raises(RagbagError, match="build.embed_cluster"):
            home.set_config("build.embed_cluster", bad)
