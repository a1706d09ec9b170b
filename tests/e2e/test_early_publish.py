"""A first build publishes keyword search before it embeds and vectors in slices as they come
(ragbag.pipeline.early): searched between the slices, the source answers by keyword at once and by
vector for what is embedded, status says how far embedding has come, and the publish step then
replaces the last slice with the full index."""

from __future__ import annotations

import pytest

from ragbag import connectors
from ragbag.index import published
from ragbag.index.published import home_model
from ragbag.index.store import Store
from ragbag.models import embedding
from ragbag.pipeline import chunk, early, embed, graph_stage, ingest, publish
from ragbag.pipeline.pending import pending_path
from ragbag.search import snapshot
from ragbag.search.query import search
from ragbag.search.sources import embedding_note, status

WORDS = ["heron", "copper", "lantern", "glacier", "orchid", "saddle", "quarry", "violin", "tundra", "walnut"]


def _notes(folder, n: int) -> None:
    folder.mkdir()
    for i in range(n):
        (folder / f"note{i:02d}.md").write_text(f"# Note {i}\n\nThe {WORDS[i % 10]} ledger entry number z{i}q.\n")


def _stages_to_chunks(home, name: str):
    src, store = home.source(name), Store(home.lance_uri)
    module = connectors.get(src.connector)
    ingest.ingest(store, home, src, module.read)
    chunk.chunk(store, src, module.spans, home_model(home))
    return src, store


@pytest.fixture
def seen(home, tmp_path, monkeypatch):
    """A 24-note source embedded 4 at a time with early publishing from 10 passages and the first
    vector slice at 4; what search and status saw at each slice, then the final publish."""
    monkeypatch.setattr(early, "FIRST_SLICE", 4)
    # Superseded slices deleted at once, as a real build's are: its slices are minutes apart,
    # past the grace (the first slice, whose files the others linked, was deleted under a build).
    monkeypatch.setattr(published, "SUPERSEDED_GRACE_S", 0.0)
    home.set_config("build.early_publish", "10")
    _notes(tmp_path / "notes", 24)
    home.add_source("notes", "files", str(tmp_path / "notes"), known=("files",))
    src, store = _stages_to_chunks(home, "notes")
    model = home_model(home)
    publisher = early.early_publisher(store, home, src, model)
    assert publisher is not None
    views: list[dict] = []

    def watched(done, total, vector_of, work=None):
        before = publisher.slices
        publisher(done, total, vector_of, work)
        if publisher.slices > before:
            snapshot._loaded.clear()
            views.append(
                {
                    "done": done,
                    "keyword": search("z20q", k=3, sources=["notes"], mode="keyword")["title"].tolist(),
                    "vector": search("the walnut ledger", k=24, sources=["notes"], mode="vector")["title"].tolist(),
                    "embedding": status(home, src, ("embedding",))["embedding"],
                    "people": snapshot.load(home, "files", "notes").people_names(),
                }
            )

    embed.embed(store, src, model, batch_size=4, early=watched)
    graph_stage.build_graph(store, home, src, model)
    final = publish.publish(store, home, src, model)
    snapshot._loaded.clear()
    return views, final, home, src


def test_keyword_search_is_published_before_anything_is_embedded(seen):
    views, *_ = seen
    first = views[0]
    assert first["done"] == 0 and first["keyword"] == ["Note 20"]
    assert first["vector"] == []  # nothing embedded: no vector hit at all, not 24 zero-score rows
    assert first["embedding"]["embedded"] == 0 and first["embedding"]["to_embed"] == 24
    assert first["embedding"]["eta_seconds"] is None
    assert embedding_note(first["embedding"]) == "still embedding: 0 of 24 passages; keyword search covers all"


def test_vectors_arrive_in_doubling_slices_each_searchable(seen):
    views, *_ = seen
    assert [v["done"] for v in views] == [0, 4, 8, 16]
    for view in views[1:]:
        assert len(view["vector"]) == view["embedding"]["embedded"] == view["done"]
        assert view["embedding"]["eta_seconds"] is not None and view["embedding"]["eta_seconds"] >= 0
        assert view["keyword"] == ["Note 20"]


def test_every_slice_carries_the_count_of_names_so_search_reads_no_record_for_them(seen):
    """Notes name no one: an empty count, not a missing one (which would send the first search of
    every process through every record of a mailbox being built)."""
    views, *_ = seen
    assert [v["people"] for v in views] == [{}] * len(views)


def test_the_publish_step_replaces_the_slices_with_the_full_index(seen):
    _, final, home, src = seen
    manifest = published.published_manifest(home, src)
    assert "embedding" not in manifest and manifest["graph"]["profile"] == "fast"
    assert status(home, src, ("embedding",))["embedding"] is None
    assert len(search("the walnut ledger", k=24, sources=["notes"], mode="vector")) == 24
    assert final["chunks"] == 24
    assert early.early_publisher(Store(home.lance_uri), home, src, home_model(home)) is None  # searchable now


def test_small_builds_and_homes_that_turn_it_off_publish_only_at_the_end(home, tmp_path):
    _notes(tmp_path / "few", 6)
    home.add_source("few", "files", str(tmp_path / "few"), known=("files",))
    src, store = _stages_to_chunks(home, "few")
    publisher = early.early_publisher(store, home, src, home_model(home))
    embed.embed(store, src, home_model(home), batch_size=2, early=publisher)
    assert publisher is not None and publisher.slices == 0  # 6 passages: below build.early_publish
    assert published.published_manifest(home, src) is None
    home.set_config("build.early_publish", "0")
    assert early.early_publisher(store, home, src, home_model(home)) is None


class _Killed(BaseException):
    """What a kill looks like to the stage: it stops mid-loop, nothing after runs."""


@pytest.mark.parametrize("profile", ["fast", "compact"])
def test_a_build_killed_while_embedding_resumes_from_what_it_embedded(home, tmp_path, monkeypatch, profile):
    monkeypatch.setattr(early, "FIRST_SLICE", 4)
    home.set_config("build.early_publish", "10")
    home.set_config("graph.profile", profile)
    _notes(tmp_path / "notes", 24)
    home.add_source("notes", "files", str(tmp_path / "notes"), known=("files",))
    src, store = _stages_to_chunks(home, "notes")
    model = home_model(home)
    real = embedding.encode_passages
    encoded: list[str] = []

    def dying(texts, *args, **kwargs):
        if len(encoded) >= 12:
            raise _Killed
        encoded.extend(texts)
        return real(texts, *args, **kwargs)

    monkeypatch.setattr(embedding, "encode_passages", dying)
    with pytest.raises(_Killed):
        embed.embed(
            store,
            src,
            model,
            batch_size=4,
            early=early.early_publisher(store, home, src, model),
            pending=pending_path(home, src),
        )
    assert len(encoded) == 12
    snapshot._loaded.clear()  # the last slice stays what search reads
    assert len(search("the walnut ledger", k=24, sources=["notes"], mode="vector")) == 8
    assert search("z20q", k=1, sources=["notes"], mode="keyword")["title"].tolist() == ["Note 20"]

    monkeypatch.setattr(
        embedding, "encode_passages", lambda texts, *a, **k: encoded.extend(texts) or real(texts, *a, **k)
    )
    encoded.clear()
    report = embed.embed(store, src, model, batch_size=4, pending=pending_path(home, src))
    graph_stage.build_graph(store, home, src, model)
    publish.publish(store, home, src, model)
    # fast: every finished batch went to the embedding cache; compact: to the pending file
    # (doubling: after 4 and 8 of the 12). Either way what was embedded is not embedded again.
    assert len(encoded) == 24 - (12 if profile == "fast" else 8) == report["chunks_embedded"]
    snapshot._loaded.clear()
    assert len(search("the walnut ledger", k=24, sources=["notes"], mode="vector")) == 24


def test_the_eta_is_paced_in_tokens_from_when_encoding_began(monkeypatch):
    """The 200,000-message build's first slice said 179,751 s left: its pace was texts since the
    keyword publication (minutes) and the longest texts come first. The ETA is the tokens left
    at the pace of the tokens encoded since encoding began."""
    clock = [100.0]
    monkeypatch.setattr(early.time, "monotonic", lambda: clock[0])
    pub = object.__new__(early.Early)  # only the pacing: no store, home or source needed
    pub.work, pub.paced = [], 0.0
    assert pub._eta(3) is None  # no pace yet
    clock[0] = 400.0  # the keyword publication and the count took 300 s: not encoding time
    pub.work, pub.paced = [400, 700, 900, 1000, 1050, 1100], clock[0]
    assert pub._eta(0) is None
    clock[0] = 407.0  # 700 tokens (two long texts) in 7 s: 100 tokens/s, 400 left
    assert pub._eta(2) == 4.0
    clock[0] = 410.0
    assert pub._eta(6) == 0.0 and pub._eta(99) == 0.0  # all done (a count past the list: the last)
