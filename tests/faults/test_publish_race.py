"""Search overlapping a publish (issue #18, D): a reader never sees its version vanish.

`query.load` follows `current` and then reads the files inside; a publish swaps `current`.
Superseded versions now stay for `stages.SUPERSEDED_GRACE_S`, and a load that still finds its
files gone re-reads `current`. The publishes here are real ones (the stages a build runs, after
a file changed), called in-process because that is the cheapest real publish.
"""

from __future__ import annotations

import os
import shutil
import threading
import time
from pathlib import Path

import pytest

import connectors
from conftest import cli, write
from ragbag import bm25, query, stages
from ragbag.home import Home
from ragbag.store import Store

LISBON = "# Lisbon\n\nThe gate code in Lisbon is {code}.\n"


@pytest.fixture(scope="session")  # session: the slow tests run first, apart from the rest
def built(tmp_path_factory) -> Home:
    root = tmp_path_factory.mktemp("race") / "home"
    folder = write(root.parent / "notes", {"lisbon.md": LISBON.format(code=4711),
                                           "bread.md": "# Sourdough\n\nFeed the starter twice a day.\n"})
    env = {"RAGBAG_HOME": str(root), "DAGSTER_HOME": str(root / "dagster")}
    cli("add", "files", "notes", str(folder), env=env)
    cli("build", env=env)
    return Home(root)


@pytest.fixture
def copy(built, tmp_path) -> Home:
    """A private copy of the built home: these tests publish and remove."""
    shutil.copytree(built.root, tmp_path / "home", symlinks=True)
    return Home(tmp_path / "home")


_codes = iter(range(5000, 10_000))


def publish_change(home: Home) -> str:
    """Change a document and run the build's stages in-process: one real publish. Returns the
    version it published."""
    src = home.source("notes")
    write(Path(src.path), {"lisbon.md": LISBON.format(code=next(_codes))})
    store, files = Store(home.lance_uri), connectors.get("files")
    stages.ingest(store, home, src, files.read)
    stages.chunk(store, src, files.spans, home.model)
    stages.embed(store, src, home.model, pending=stages.pending_path(home, src),
                 restore=stages.was_compact(home, src), in_graph=stages.graph_hashes(home, src, home.model))
    stages.build_graph(store, home, src, home.model)
    report = stages.publish(store, home, src, home.model)
    assert report["unchanged"] is False
    return Path(report["index_dir"]).name


def _current(home: Home) -> str:
    return os.readlink(home.index_dir("files", "notes") / "current")


def _load(home: Home) -> query.Snapshot:
    query._loaded.clear()  # read from disk every time, as a fresh process does
    snap = query.load(home, "files", "notes")
    assert snap is not None and len(snap.records) == 2
    return snap


def _publish_during_keyword_load(monkeypatch, home: Home, times: int = 1) -> list[str]:
    """Make the next load's read of bm25/ happen just after ``times`` publishes swapped `current`."""
    published: list[str] = []
    real = bm25.load

    def late(directory: Path):
        while len(published) < times:
            published.append(publish_change(home))
        return real(directory)

    monkeypatch.setattr(bm25, "load", late)
    return published


def test_a_load_that_a_publish_overtakes_still_reads_its_version(copy, monkeypatch):
    before = _current(copy)
    published = _publish_during_keyword_load(monkeypatch, copy)
    snap = _load(copy)
    assert published and _current(copy) == published[0] != before
    assert snap.key == before  # the version it started on, whole (it used to vanish mid-read)
    superseded = copy.index_dir("files", "notes") / before
    assert (superseded / "bm25").is_dir() and (superseded / stages._SUPERSEDED).exists()


def test_a_load_slower_than_the_grace_follows_current_again(copy, monkeypatch):
    """Two publishes overtake the load: the second deletes the version it was reading."""
    monkeypatch.setattr(stages, "SUPERSEDED_GRACE_S", 0.0)
    before = _current(copy)
    published = _publish_during_keyword_load(monkeypatch, copy, times=2)
    snap = _load(copy)
    assert not (copy.index_dir("files", "notes") / before).exists()
    assert snap.key == published[-1] == _current(copy)


def test_superseded_versions_go_after_the_grace_and_remove_deletes_everything(copy):
    base = copy.index_dir("files", "notes")
    first = _current(copy)
    second = publish_change(copy)
    assert (base / first).is_dir()  # superseded a moment ago: kept
    aged = time.time() - stages.SUPERSEDED_GRACE_S - 1
    os.utime(base / first / stages._SUPERSEDED, (aged, aged))
    third = publish_change(copy)
    versions = {p.name for p in base.iterdir() if p.name.startswith("v")}
    assert first not in versions and {second, third} <= versions  # `second`: superseded just now

    stages.remove(Store(copy.lance_uri), copy, copy.source("notes"))
    assert not base.exists()


@pytest.mark.slow(seconds=40)
def test_searching_while_publishing_never_fails(copy):
    """One thread publishes again and again while another loads and searches: no failure."""
    home = copy
    failures: list[str] = []
    loads = 0
    done = threading.Event()

    def publisher() -> None:
        try:
            for _ in range(6):
                publish_change(home)
        except Exception as e:  # noqa: BLE001 - reported below
            failures.append(f"publish: {type(e).__name__}: {e}")
        finally:
            done.set()

    thread = threading.Thread(target=publisher)
    thread.start()
    while not done.is_set() or loads < 3:
        try:
            _load(home)
            hits = query.search("gate code lisbon", home=home, mode="keyword", k=1)
            assert hits.iloc[0]["uri"].endswith("lisbon.md")
        except Exception as e:  # noqa: BLE001 - every failure counts
            failures.append(f"{type(e).__name__}: {e}")
        loads += 1
    thread.join()
    assert failures == [] and loads >= 3
