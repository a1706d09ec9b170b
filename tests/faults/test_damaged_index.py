"""A damaged published index (issue #18, C) is one line that names the source and its repair.

One home is built for the module; every case damages a copy of it the way a crash, a full disk
or a stray `rm` would, then search, ask, status, list and MCP are asked about it. `ragbag build
NAME` must then really repair it: a damaged index never counts as "unchanged".
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from conftest import build_in_process, cli, strict_json, write

from ragbag.core.errors import DamagedIndex, RagbagError
from ragbag.core.home import Home
from ragbag.index import published
from ragbag.search import query

NOTES = {
    "lisbon.md": "# Lisbon\n\nThe gate code in Lisbon is 4711.\n",
    "bread.md": "# Sourdough\n\nFeed the starter twice a day.\n",
}


@pytest.fixture(scope="session")  # session: the slow tests run first, apart from the rest
def built(tmp_path_factory) -> Home:
    root = tmp_path_factory.mktemp("damaged") / "home"
    folder = write(root.parent / "notes", NOTES)
    env = _env(root)
    cli("add", "files", "notes", str(folder), env=env)
    cli("build", env=env)
    return Home(root)


@pytest.fixture
def copy(built, tmp_path, monkeypatch) -> Home:
    """A private copy of the built home, set as this test's RAGBAG_HOME."""
    root = tmp_path / "home"
    shutil.copytree(built.root, root, symlinks=True)
    for key, value in _env(root).items():
        monkeypatch.setenv(key, value)
    return Home(root)


def _env(root: Path) -> dict[str, str]:
    return {"RAGBAG_HOME": str(root), "DAGSTER_HOME": str(root / "dagster")}


def _version(home: Home) -> Path:
    base = home.index_dir("files", "notes")
    return base / os.readlink(base / "current")


def _cut(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: len(path.read_bytes()) // 2])


def _pin_chunks_at(home: Home, version: int) -> None:
    manifest = _version(home) / "manifest.json"
    body = json.loads(manifest.read_text())
    body["versions"]["chunks"] = version
    manifest.unlink()  # a hard link would carry the edit into other versions
    manifest.write_text(json.dumps(body))


# Damage to the files search reads: search, status and a rebuild all notice it.
DAMAGE = {
    "manifest cut short": lambda h: _cut(_version(h) / "manifest.json"),
    "current points at a missing version": lambda h: shutil.rmtree(_version(h)),
    "bm25 deleted": lambda h: shutil.rmtree(_version(h) / "bm25"),
    "bm25 array cut short": lambda h: _cut(next((_version(h) / "bm25").glob("*.npy"))),
    "graph deleted": lambda h: shutil.rmtree(_version(h) / "graph"),
    "rows cut short": lambda h: _cut(_version(h) / "rows.arrow"),
    "rows deleted": lambda h: (_version(h) / "rows.arrow").unlink(),
    "vectors deleted": lambda h: (_version(h) / "vectors.npy").unlink(),
    "vectors cut short": lambda h: _cut(_version(h) / "vectors.npy"),
    "aligned vectors deleted": lambda h: (_version(h) / "aligned.npy").unlink(),
    "aligned vectors cut short": lambda h: _cut(_version(h) / "aligned.npy"),
    "chunk_ids cut short": lambda h: _cut(_version(h) / "chunk_ids.json"),
    "chunk_ids of the wrong length": lambda h: (_version(h) / "chunk_ids.json").write_text('["x"]'),
    "chunk_ids reordered": lambda h: (_version(h) / "chunk_ids.json").write_text(
        json.dumps(json.loads((_version(h) / "chunk_ids.json").read_text())[::-1])
    ),
}
# Damage to the LanceDB tables (the store of record): search answers from the version's own
# copy of the rows (rows.arrow, vectors.npy), while status, the document tools and a rebuild
# notice it.
TABLE_DAMAGE = {
    "chunks table deleted": lambda h: shutil.rmtree(h.lance_dir / "chunks.lance"),
    "chunks version cleaned up": lambda h: _pin_chunks_at(h, 10_000),
}


def _says_how_to_repair(message: str) -> None:
    assert "\n" not in message and "source 'notes'" in message and "`ragbag build notes`" in message, message


def _rebuild(home: Home) -> dict:
    """`ragbag build notes` in-process, stage by stage as assets/chain.py runs them."""
    return build_in_process(home, "notes")


@pytest.mark.parametrize("case", list(DAMAGE))
def test_search_names_the_damage_and_a_rebuild_repairs_it(copy, case):
    DAMAGE[case](copy)
    with pytest.raises(DamagedIndex) as caught:
        query.search("gate code lisbon", home=copy, mode="keyword")
    _says_how_to_repair(str(caught.value))
    src = copy.source("notes")
    with pytest.raises(DamagedIndex):
        published.published(copy, src)
    assert published.published_manifest(copy, src) is None

    report = _rebuild(copy)  # a damaged index never counts as "unchanged": it is published anew
    assert report["unchanged"] is False and published.published(copy, src)["chunks"] == 2
    hits = query.search("gate code lisbon", home=copy, mode="keyword", k=1)
    assert hits.iloc[0]["uri"].endswith("lisbon.md")


@pytest.mark.parametrize("case", list(TABLE_DAMAGE))
def test_damaged_tables_leave_search_answering_and_a_rebuild_repairs_them(copy, case):
    TABLE_DAMAGE[case](copy)
    hits = query.search("gate code lisbon", home=copy, mode="keyword", k=1)
    assert hits.iloc[0]["uri"].endswith("lisbon.md")
    src = copy.source("notes")
    with pytest.raises(DamagedIndex) as caught:
        published.published(copy, src)
    _says_how_to_repair(str(caught.value))
    report = _rebuild(copy)
    assert report["unchanged"] is False and published.published(copy, src)["chunks"] == 2


def test_every_command_says_it_in_one_line(copy):
    DAMAGE["rows cut short"](copy)
    for args in (("search", "gate code lisbon"), ("ask", "what is the gate code?")):
        proc = cli(*args, check=False)
        assert proc.returncode == 2 and proc.stderr.startswith("ragbag: error: "), (args, proc.stderr)
        _says_how_to_repair(proc.stderr.strip())
    assert "rows.arrow of v" in strict_json(cli("status", "--json").stdout)[0]["damaged"]


def test_status_names_damaged_tables_in_one_line(copy):
    TABLE_DAMAGE["chunks version cleaned up"](copy)
    status = strict_json(cli("status", "--json").stdout)[0]
    assert status["source"] == "notes" and status["built"] is False
    assert "chunks table's version 10000 is gone" in status["damaged"]
    assert "damaged" in cli("status").stdout and "ragbag build notes" in cli("status").stdout
    assert "damaged" in cli("list").stdout


def test_a_dangling_current_link_is_one_line_too(copy):
    DAMAGE["current points at a missing version"](copy)
    proc = cli("search", "gate code", "--json", check=False)
    assert proc.returncode == 2 and proc.stdout == "" and "which is missing" in proc.stderr
    _says_how_to_repair(proc.stderr.strip())
    assert "which is missing" in strict_json(cli("status", "notes", "--json").stdout)["damaged"]


@pytest.mark.parametrize("case", ["manifest cut short", "rows deleted"])
def test_mcp_tools_say_it_instead_of_internal_error(copy, case):
    from ragbag.apps.mcp_server import Backend

    DAMAGE[case](copy)
    backend = Backend(copy)
    for tool, args in (("search", {"query": "gate code", "mode": "keyword"}), ("find_files", {"name": "lisbon.md"})):
        with pytest.raises(RagbagError) as caught:
            backend.call(tool, args)
        _says_how_to_repair(str(caught.value))
    assert backend.call("list_sources", {})["sources"][0]["built"] is False


@pytest.mark.slow(seconds=30)
def test_ragbag_build_repairs_it(copy):
    DAMAGE["bm25 deleted"](copy)
    cli("build", "notes")
    hits = strict_json(cli("search", "gate code lisbon", "-k", "1", "--json").stdout)
    assert hits[0]["uri"].endswith("lisbon.md")
    assert strict_json(cli("status", "notes", "--json").stdout)["damaged"] is None


def test_a_sound_index_is_not_damaged(copy):
    assert published.published(copy, copy.source("notes"))["chunks"] == 2
    assert strict_json(cli("status", "notes", "--json").stdout)["damaged"] is None
    assert _rebuild(copy)["unchanged"] is True  # and a no-change rebuild still costs only a scan


def test_an_unknown_connector_is_refused_where_an_index_exists(copy):
    """Silent acceptance (issue #18, B): this used to exit 0 with no hits."""
    proc = cli("search", "gate code", "--connector", "nosuch", check=False)
    assert proc.returncode == 2 and "unknown connector 'nosuch'" in proc.stderr
