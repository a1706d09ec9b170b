"""The asset chain through a real Dagster instance and real LanceDB files: content, increments,
deletions, filters before ranking, partition isolation and the model guard."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from datetime import UTC, datetime

import pytest
from conftest import ROOT, materialize_source, write

from ragbag.core.errors import RagbagError
from ragbag.index.published import home_model
from ragbag.index.store import Store
from ragbag.models import embedding
from ragbag.models.bert_numpy import encoder
from ragbag.pipeline.retention import remove
from ragbag.pipeline.stages import ALLOW_EMPTY_TAG
from ragbag.search import query

KNOWN = ("files", "code")
CORPUS = {
    "kitchen.md": "# Fixing the kitchen faucet\n\nThe kitchen faucet leaked for weeks. Replacing the "
    "worn rubber washer inside the valve stopped the drip completely.\n",
    "sky/astronomy.txt": "Meteor showers\n\nThe Perseids peak in mid August; lie on your back away from "
    "city lights after midnight to see the most meteors.\n",
    "money/taxes.md": "# Taxes\n\nThe income tax return must be filed by the end of April; keep receipts "
    "for charitable donations.\n",
    "travel/huangshan.txt": "我们坐缆车上了黄山，山顶的云海特别壮观。\n",
}


def _search_titles(home, q, **kw):
    return [os.path.basename(u) for u in query.search(q, home=home, **kw)["uri"]]


@pytest.fixture
def built(home, instance, tmp_path):
    docs = write(tmp_path / "docs", CORPUS)
    home.add_source("notes", "files", str(docs), known=KNOWN)
    meta = materialize_source(home, instance, "notes")
    return docs, meta


def test_paraphrased_query_finds_the_right_document(built, home):
    _, meta = built
    assert meta["documents"]["documents"] == 4 and meta["documents"]["added"] == 4
    assert meta["embeddings"]["chunks_embedded"] == meta["chunks"]["chunks"] > 0
    assert isinstance(meta["documents"]["table_version"], int)
    assert "| title |" in meta["documents"]["preview"]
    assert _search_titles(home, "how to repair a dripping tap", k=1) == ["kitchen.md"]
    assert _search_titles(home, "when can I watch shooting stars", k=1, mode="vector") == ["astronomy.txt"]
    hits = query.search("deadline for filing my tax return", home=home, k=2)
    assert os.path.basename(hits.iloc[0]["uri"]) == "taxes.md"
    assert set(query.COLUMNS) <= set(hits.columns)
    row = hits.iloc[0]
    assert row["source"] == "notes" and row["connector"] == "files" and len(row["citation"]) == 6
    assert row["chunk_id"].startswith(row["citation"]) and isinstance(row["metadata"], dict)


def test_chinese_keywords_are_tokenised(built, home):
    for mode in ("keyword", "hybrid"):
        assert _search_titles(home, "黄山 缆车", k=1, mode=mode) == ["huangshan.txt"]


def test_unchanged_rebuild_embeds_nothing_and_edits_embed_only_changes(built, home, instance):
    docs, first = built
    again = materialize_source(home, instance, "notes")
    assert (again["documents"]["added"], again["documents"]["changed"], again["documents"]["deleted"]) == (0, 0, 0)
    assert again["embeddings"]["chunks_embedded"] == 0
    assert again["chunks"]["new_chunks"] == 0
    assert again["bm25"]["unchanged"] is True and first["bm25"]["unchanged"] is False

    # A clean run stores no log lines: each is an event written to the instance, a cost every
    # step of every refresh pays (the lock's wait is in the materialisation's metadata instead).
    run = instance.get_runs(limit=1)[0]
    assert [e.user_message for e in instance.all_logs(run.run_id) if e.dagster_event is None] == []
    assert again["bm25"]["writers_lock"]["waited_s"] >= 0

    # One file edited: only its changed chunk is embedded again.
    (docs / "kitchen.md").write_text(CORPUS["kitchen.md"] + "\n## Tools\n\nAn adjustable wrench and plumber's tape.\n")
    edited = materialize_source(home, instance, "notes")
    assert edited["documents"]["changed"] == 1 and edited["documents"]["added"] == 0
    assert 1 <= edited["embeddings"]["chunks_embedded"] < edited["chunks"]["chunks"]
    hits = query.search("which tools does plumbing need", home=home, k=1)
    assert "adjustable wrench" in hits.iloc[0]["text"]

    # One file deleted: gone from the documents and from search; its last version is kept (its
    # chunks closed, found only --as-of before now), and with no history it is gone altogether.
    (docs / "sky" / "astronomy.txt").unlink()
    deleted = materialize_source(home, instance, "notes")
    assert deleted["documents"]["deleted"] == 1 and deleted["documents"]["versions_kept"] >= 1
    store = Store(home.lance_dir)
    assert not any(u.endswith("astronomy.txt") for u in store.rows("documents", "notes", ["uri"])["uri"].to_pylist())
    closed = [
        r for r in store.rows("chunks", "notes", ["uri", "valid_to"]).to_pylist() if r["uri"].endswith("astronomy.txt")
    ]
    assert closed and all(r["valid_to"] is not None for r in closed)
    assert not any(u.endswith("astronomy.txt") for u in query.search("stars and planets", home=home, k=10)["uri"])
    home.set_config("history.versions", "1")
    materialize_source(home, instance, "notes")
    for table in ("documents", "chunks", "document_versions"):
        uris = store.rows(table, "notes", ["uri"]).column("uri").to_pylist()
        assert not any(u.endswith("astronomy.txt") for u in uris)
    chunk_ids = set(store.rows("chunks", "notes", ["chunk_id"]).column("chunk_id").to_pylist())
    emb_ids = set(store.rows("embeddings", "notes", ["chunk_id"]).column("chunk_id").to_pylist())
    assert emb_ids == chunk_ids
    assert "astronomy.txt" not in _search_titles(home, "meteor showers in August", k=10)
    assert "astronomy.txt" not in _search_titles(home, "Perseids", k=10, mode="keyword")


def test_filters_apply_before_ranking(home, instance, tmp_path):
    files = {f"garden/bed-{i:02d}.md": f"# Bed {i}\n\nTomatoes and basil grow in raised bed {i}.\n" for i in range(40)}
    files |= {f"garden/log-{i:02d}.txt": f"Log {i}: watered the roses and pruned the hedge.\n" for i in range(12)}
    docs = write(tmp_path / "g", files)
    home.add_source("garden", "files", str(docs), known=KNOWN)
    for i in range(12):  # dates: logs 0-5 in 2020, the rest now
        if i < 6:
            t = datetime(2020, 6, 1, tzinfo=UTC).timestamp()
            os.utime(docs / "garden" / f"log-{i:02d}.txt", (t, t))
    materialize_source(home, instance, "garden")

    hits = query.search("tomatoes in raised beds", home=home, k=10, where={"ext": {"==": "txt"}})
    assert len(hits) == 10 and all(u.endswith(".txt") for u in hits["uri"])
    hits = query.search("tomatoes", home=home, k=10, where=json.dumps({"ext": {"in": ["txt"]}}), mode="vector")
    assert len(hits) == 10
    old = query.search("roses", home=home, k=20, before="2021-01-01")
    assert sorted(os.path.basename(u) for u in old["uri"]) == [f"log-{i:02d}.txt" for i in range(6)]
    recent = query.search("roses", home=home, k=50, after="2021-01-01", where={"ext": {"==": "txt"}})
    assert len(recent) == 6
    none = query.search("roses", home=home, k=5, where={"path": {"starts_with": "nowhere/"}})
    assert none.empty


def test_sources_are_isolated_and_remove_only_touches_its_own(home, instance, tmp_path):
    a = write(tmp_path / "a", {"a.md": "# Alpha\n\nThe alpha project ships in March.\n"})
    b = write(tmp_path / "b", {"b.md": "# Beta\n\nThe beta project ships in June.\n"})
    home.add_source("alpha", "files", str(a), known=KNOWN)
    home.add_source("beta", "files", str(b), known=KNOWN)
    materialize_source(home, instance, "alpha")
    materialize_source(home, instance, "beta")
    assert set(query.search("project ships", home=home, k=5)["source"]) == {"alpha", "beta"}
    assert set(query.search("project ships", home=home, k=5, sources=["beta"])["source"]) == {"beta"}
    # Rebuilding alpha with its folder emptied (on purpose: an emptied source is kept otherwise)
    # must not touch beta's rows.
    (a / "a.md").unlink()
    materialize_source(home, instance, "alpha", tags={ALLOW_EMPTY_TAG: "true"})
    assert set(query.search("project ships", home=home, k=5)["source"]) == {"beta"}
    remove(Store(home.lance_dir), home, home.source("beta"))
    home.remove_source("beta")
    assert Store(home.lance_dir).rows("chunks", "beta").num_rows == 0
    assert not home.index_dir("files", "beta").exists()


def test_query_under_another_model_is_refused(built, home, monkeypatch):
    other = embedding.ModelSpec("other-model", "x", 384, 256, path=embedding.spec(embedding.MINILM).path)
    monkeypatch.setitem(embedding.models(), "other-model", other)
    home.config_file.write_text("embedding:\n  model: other-model\n")
    with pytest.raises(RagbagError, match="rebuild"):
        query.search("faucet", home=home)
    assert not query.search("faucet", home=home, mode="keyword").empty


def test_numpy_encoder_matches_sentence_transformers():
    """Queries and small builds run the NumPy forward pass; it must give the vectors
    sentence-transformers gives (texts past the 256-token limit truncated the same way)."""
    texts = ["how do I reset my password", "黄山 缆车", "a" * 3000, " ".join(["lisbon gate code"] * 200)]
    ref = embedding._sentence_transformer(embedding.MINILM).encode(texts, normalize_embeddings=True)
    s = embedding.spec(embedding.MINILM)
    enc = encoder(str(s.path()), s.max_tokens)
    for text, r in zip(texts, ref):
        assert float(embedding.encode_query(text, embedding.MINILM) @ r) > 0.9999
        assert float(enc.encode(text) @ r) > 0.9999


def test_a_small_batch_of_passages_is_embedded_without_importing_torch():
    code = (
        "import sys; from ragbag.models import embedding\n"
        "v = embedding.encode_passages(['one short passage', 'and another'], embedding.MINILM)\n"
        "big = embedding.NUMPY_PASSAGE_TOKENS + 1\n"
        "assert v.shape == (2, 384) and 'torch' not in sys.modules, sorted(sys.modules)\n"
        "w = embedding.encode_passages(['one short passage'], embedding.MINILM, total_tokens=big)\n"
        "assert 'torch' in sys.modules and float(w[0] @ v[0]) > 0.9999\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert out.returncode == 0, out.stderr[-3000:]


def test_incremental_readers_use_cursor_and_seen(home, tmp_path):
    from ragbag.core.records import Cursor, Document, Seen
    from ragbag.pipeline.ingest import ingest

    records = {"1": "alpha", "2": "beta"}
    calls = []

    def read(root, source, cursor, options=None):  # reads past the cursor, vouches for older records
        calls.append(cursor)
        last = (cursor or {}).get("last", 0)
        for key in sorted(records, key=int):
            if int(key) <= last:
                yield Seen(key)
            else:
                yield Document(source, "files", key, f"rec:{key}", key, records[key])
        yield Cursor({"last": max(map(int, records))})

    src = home.add_source("inc", "files", str(tmp_path), known=KNOWN)
    store = Store(home.lance_dir)
    first = ingest(store, home, src, read)
    assert (first["added"], first["read"], calls[-1]) == (2, 2, None)
    records["3"] = "gamma"
    second = ingest(store, home, src, read)
    assert calls[-1] == {"last": 2}
    assert (second["read"], second["added"], second["deleted"], second["documents"]) == (1, 1, 0, 3)
    del records["1"]
    third = ingest(store, home, src, read)
    assert third["deleted"] == 1 and third["documents"] == 2
    cursor_file = home.state_dir / "inc.cursor.json"
    assert oct(cursor_file.stat().st_mode & 0o777) == "0o600"
    # Pointing the source elsewhere resets the cursor: everything is read again.
    home.remove_source("inc")
    moved = home.add_source("inc", "files", str(home.root), known=KNOWN)
    ingest(store, home, moved, read)
    assert calls[-1] is None


def test_switching_the_embedding_model_rebuilds_everything_with_it(built, home, instance):
    from conftest import cli

    # The default, multilingual model understands a Chinese paraphrase in vector mode.
    assert home_model(home) == "multilingual-e5-small"
    hits = query.search("在黄山乘坐索道看云海", home=home, k=1, mode="vector")
    assert os.path.basename(hits.iloc[0]["uri"]) == "huangshan.txt"
    cli("config", "set", "embedding.model", "all-MiniLM-L6-v2")
    assert home_model(home) == "all-MiniLM-L6-v2"
    with pytest.raises(RagbagError, match="rebuild"):
        query.search("faucet", home=home)
    meta = materialize_source(home, instance, "notes")
    assert meta["chunks"]["chunked_documents"] == 4  # budget changed with the model: re-chunked
    assert meta["embeddings"]["chunks_embedded"] == meta["chunks"]["chunks"]
    assert meta["embeddings"]["model"] == "all-MiniLM-L6-v2"
    assert not query.search("faucet", home=home).empty
    proc = cli("config", "set", "embedding.model", "no-such-model", check=False)
    assert proc.returncode == 2 and "unknown embedding model" in proc.stderr


def test_asset_checks_pass_on_a_good_build_and_block_a_bad_one(built, home, instance, monkeypatch):
    from ragbag.pipeline import checks, stages

    _, meta = built
    store = Store(home.lance_dir)
    src = home.source("notes")
    for stage in stages.TABLE:
        for fn in stage.checks:
            c = fn(store, home, src)
            assert c.passed, (c.name, c.description)
    # Corrupt the store behind the pipeline's back: an orphan vector and a chunk without one.
    import pyarrow as pa

    store.add(
        "embeddings",
        pa.table(
            {
                "chunk_id": ["ghost"],
                "source": ["notes"],
                "content_hash": ["x"],
                "model": ["all-MiniLM-L6-v2"],
                "vector": [[0.0] * 384],
            }
        ),
    )
    c = checks.embeddings_match_chunks(store, home, src)
    assert not c.passed and c.metadata["orphans"] == 1
    # Through Dagster: the failing blocking check stops the chain before publication.
    import dagster as dg

    from ragbag import connectors
    from ragbag.orchestration.chain import RagbagHome, connector_chain

    def embeddings_match_chunks(st, h, s):
        return checks.Check("embeddings_match_chunks", False, "forced failure")

    forced = tuple(
        dataclasses.replace(s, checks=(embeddings_match_chunks,)) if s.key == "embeddings" else s for s in stages.TABLE
    )
    monkeypatch.setattr(stages, "TABLE", forced)
    before = query.sources_status(home)["notes"]["built_at"]
    built[0].joinpath("kitchen.md").write_text("# Changed\n\nA new faucet text.\n")
    result = dg.materialize(
        connector_chain("files", connectors.get("files")),
        partition_key="notes",
        instance=instance,
        resources={"ragbag": RagbagHome(root=str(home.root))},
        raise_on_error=False,
    )
    assert not result.success
    done = {ev.asset_key.path[-1] for ev in result.get_asset_materialization_events()}
    assert "bm25" not in done
    assert query.sources_status(home)["notes"]["built_at"] == before
