"""Search overlapping a publish (issue #18, D): a reader never sees its version vanish.

`snapshot.load` follows `current` and then reads the files inside; a publish swaps `current`.
Superseded versions now stay for `published.SUPERSEDED_GRACE_S`, and a load that still finds its
files gone re-reads `current`. The publishes here are real ones (the stages a build runs, after
a file changed), called in-process because that is the cheapest real publish.
"""

from __future__ import annotations

import os
import shutil
import threading
import time
from pathlib import Path

import anyio
import pytest
from conftest import RAGBAG, build_in_process, cli, strict_json, write
from figures import record
from mcp import ClientSession, StdioServerParameters, stdio_client

from ragbag.core.home import Home
from ragbag.index import bm25
from ragbag.index import published as published_index
from ragbag.index.store import Store
from ragbag.pipeline import retention
from ragbag.search import query, snapshot

LISBON = "# Lisbon\n\nThe gate code in Lisbon is {code}.\n"


@pytest.fixture(scope="session")  # session: the slow tests run first, apart from the rest
def built(tmp_path_factory) -> Home:
    root = tmp_path_factory.mktemp("race") / "home"
    folder = write(
        root.parent / "notes",
        {"lisbon.md": LISBON.format(code=4711), "bread.md": "# Sourdough\n\nFeed the starter twice a day.\n"},
    )
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
    report = build_in_process(home, "notes")
    assert report["unchanged"] is False
    return Path(report["index_dir"]).name


def _current(home: Home) -> str:
    return os.readlink(home.index_dir("files", "notes") / "current")


def _load(home: Home) -> snapshot.Snapshot:
    snapshot.forget()  # read from disk every time, as a fresh process does
    snap = snapshot.load(home, "files", "notes")
    # two current chunks (the earlier versions of lisbon.md are kept beside them)
    assert snap is not None and sum(r.get("valid_to") is None for r in snap.records) == 2
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
    assert (superseded / "bm25").is_dir() and (superseded / published_index.SUPERSEDED).exists()


def test_a_load_slower_than_the_grace_follows_current_again(copy, monkeypatch):
    """Two publishes overtake the load: the second deletes the version it was reading."""
    monkeypatch.setattr(published_index, "SUPERSEDED_GRACE_S", 0.0)
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
    aged = time.time() - published_index.SUPERSEDED_GRACE_S - 1
    os.utime(base / first / published_index.SUPERSEDED, (aged, aged))
    third = publish_change(copy)
    versions = {p.name for p in base.iterdir() if p.name.startswith("v")}
    assert first not in versions and {second, third} <= versions  # `second`: superseded just now

    retention.remove(Store(copy.lance_uri), copy, copy.source("notes"))
    assert not base.exists()


def _cli_reader(home: Home, done: threading.Event, served: dict, failures: list) -> None:
    """`ragbag search` processes, one after another, until the publishes are over."""
    env = {"RAGBAG_HOME": str(home.root), "DAGSTER_HOME": str(home.dagster_home)}
    while not done.is_set():
        out = cli("search", "gate code lisbon", "--mode", "keyword", "-k", "1", "--json", env=env, check=False)
        if out.returncode or not strict_json(out.stdout)[0]["uri"].endswith("lisbon.md"):
            failures.append(f"cli: {out.returncode} {out.stderr[-300:]}")
        served["cli"] += 1


def _mcp_reader(home: Home, done: threading.Event, served: dict, failures: list) -> None:
    """One `ragbag mcp` server, searched through the SDK's stdio client until the publishes end."""
    env = {**os.environ, "RAGBAG_HOME": str(home.root), "DAGSTER_HOME": str(home.dagster_home)}

    async def run() -> None:
        params = StdioServerParameters(command=RAGBAG, args=["mcp"], env=env)
        async with stdio_client(params) as (read, write_), ClientSession(read, write_) as session:
            await session.initialize()
            while not done.is_set():
                res = await session.call_tool("search", {"query": "gate code lisbon", "mode": "keyword", "k": 1})
                text = res.content[0].text if res.content else ""
                if res.is_error or "lisbon.md" not in text:
                    failures.append(f"mcp: {text[:300]}")
                served["mcp"] += 1

    try:
        anyio.run(run)
    except Exception as e:  # noqa: BLE001 - a reader that died is a failure too
        while getattr(e, "exceptions", None):  # task groups nest the cause
            e = e.exceptions[0]
        failures.append(f"mcp: {type(e).__name__}: {e}")


@pytest.mark.slow(seconds=60)
def test_searching_while_publishing_never_fails(copy):
    """One thread publishes again and again while readers load and search — in this process,
    through `ragbag search` processes and through a `ragbag mcp` server: no failure."""
    home = copy
    failures: list[str] = []
    served = {"in_process": 0, "cli": 0, "mcp": 0}
    done = threading.Event()
    publishes = 8

    def publisher() -> None:
        try:
            time.sleep(2)  # the readers are up
            for _ in range(publishes):
                publish_change(home)
        except Exception as e:  # noqa: BLE001 - reported below
            failures.append(f"publish: {type(e).__name__}: {e}")
        finally:
            done.set()

    readers = [threading.Thread(target=fn, args=(home, done, served, failures)) for fn in (_cli_reader, _mcp_reader)]
    thread = threading.Thread(target=publisher)
    for t in [*readers, thread]:
        t.start()
    while not done.is_set() or served["in_process"] < 3:
        try:
            _load(home)
            hits = query.search("gate code lisbon", home=home, mode="keyword", k=1)
            assert hits.iloc[0]["uri"].endswith("lisbon.md")
        except Exception as e:  # noqa: BLE001 - every failure counts
            failures.append(f"{type(e).__name__}: {e}")
        served["in_process"] += 1
    for t in [thread, *readers]:
        t.join(120)
    assert failures == [] and served["in_process"] >= 3 and served["cli"] >= 1 and served["mcp"] >= 3
    record(
        "concurrency",
        {
            "publishes": publishes,
            "searches_during_publishes": sum(served.values()),
            **{f"searches_{k}": v for k, v in served.items()},
            "search_failures": 0,
        },
    )
