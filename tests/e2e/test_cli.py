"""The `ragbag` entry point end to end, in subprocesses, against a private RAGBAG_HOME. Reads that
only repeat what a process of their own already showed (more searches, list, status) run the
same ``main`` in the test process (``read``), as the rest of the suite's calls do."""

from __future__ import annotations

import json
import stat

import pytest
from conftest import cli as _cli
from conftest import strict_json, write


def cli(*args: str, **kw):
    """The installed entry point in a process of its own: this module covers the command itself."""
    return _cli(*args, fresh=True, **kw)


def cli_json(*args: str, **kw):
    return strict_json(cli(*args, "--json", **kw).stdout)


def read(*args: str) -> list | dict:
    """A read's --json, from ``main`` in this process."""
    return strict_json(_cli(*args, "--json").stdout)


DOCS = {
    "recipes/pancakes.md": "# Pancakes\n\nWhisk two eggs with milk and flour; rest the batter ten minutes "
    "before frying in butter.\n",
    "work/standup.txt": "Standup notes: the database migration is blocked on the security review.\n",
    "web/page.html": "<html><head><title>Cycling route</title><script>var junk='tracker';</script></head>"
    "<body><nav>Home | Shop</nav><main><p>The coastal cycling route is 42 km with one "
    "steep climb near the lighthouse.</p></main></body></html>",
    "empty.md": "",
    "blob.txt": b"\x00\x01\x02binary\x00",
}


def test_add_rejects_bad_input_with_one_line_and_changes_nothing(home, tmp_path):
    docs = write(tmp_path / "d", {"a.md": "# A\n\nalpha\n"})
    cli("add", "files", "notes", str(docs))
    before = home.sources_file.read_bytes()
    cases = [
        (("add", "nosuch", "x", str(docs)), "unknown connector"),
        (("add", "files", "other", str(tmp_path / "missing")), "path does not exist"),
        (("add", "files", "notes", str(docs)), "already exists"),
        (("add", "files", "bad name!", str(docs)), "invalid source name"),
    ]
    for args, message in cases:
        proc = cli(*args, check=False)
        assert proc.returncode == 2, proc.stderr
        assert message in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
        assert "Traceback" not in proc.stderr
    assert home.sources_file.read_bytes() == before
    assert stat.S_IMODE(home.root.stat().st_mode) == 0o700
    assert stat.S_IMODE(home.sources_file.stat().st_mode) == 0o600


@pytest.mark.slow(seconds=70)
def test_build_search_list_status_remove(home, tmp_path):
    docs = write(tmp_path / "docs", DOCS)
    code = write(tmp_path / "repo", {"util.py": "def celsius_to_fahrenheit(c):\n    return c * 9 / 5 + 32\n"})
    cli("add", "code", "repo", str(code))
    reports = cli_json("build", "my-docs", "--docs", str(docs))
    (rep,) = reports
    assert rep["source"] == "my-docs" and rep["connector"] == "files" and rep["status"] == "success"
    assert rep["documents"] == 3 and rep["added"] == 3 and rep["chunks"] >= 3
    assert rep["chunks_embedded"] == rep["chunks"]
    bad = {e["uri"].rsplit("/", 1)[-1] for e in rep["errors"]}
    assert bad == {"empty.md", "blob.txt"} and all(e["error"] for e in rep["errors"])
    for key in ("changed", "deleted"):
        assert rep[key] == 0

    reports = {r["source"]: r for r in cli_json("build")}
    assert reports["my-docs"]["chunks_embedded"] == 0 and reports["repo"]["chunks_embedded"] >= 1

    hits = cli_json("search", "how long is the bike ride along the coast", "-k", "2")
    assert hits[0]["title"] == "Cycling route" and "42 km" in hits[0]["text"]
    assert "tracker" not in hits[0]["text"] and "Shop" not in hits[0]["text"]
    for field in ("text", "score", "source", "connector", "uri", "title", "doc_id", "chunk_id", "citation", "metadata"):
        assert field in hits[0]
    hits = read("search", "convert temperature units", "--connector", "code", "-k", "1")
    assert hits[0]["source"] == "repo" and "celsius_to_fahrenheit" in hits[0]["text"]
    hits = read("search", "migration", "--where", '{"ext": {"==": "md"}}', "--mode", "keyword")
    assert hits == []

    reranked = read("search", "how long is the bike ride along the coast", "-k", "2", "--rerank")
    assert reranked[0]["title"] == "Cycling route" and reranked[0]["score"] > reranked[1]["score"] >= 0
    human = _cli("search", "pancake batter", "-k", "1").stdout
    assert "Pancakes" in human and "[c:" in human and "[my-docs]" in human

    listing = {r["source"]: r for r in read("list")}
    assert listing["my-docs"]["documents"] == 3 and listing["my-docs"]["bytes"] > 0
    assert listing["repo"]["last_build"]
    st = read("status", "repo")
    assert st["built"] and st["model"] == "multilingual-e5-small" and st["path_exists"]

    # A source that cannot be read fails alone, with a one-line reason; the others still build
    # and its previous index stays searchable.
    import shutil

    shutil.rmtree(code)
    proc = cli("build", "--json", check=False)
    assert proc.returncode == 1
    reports = {r["source"]: r for r in json.loads(proc.stdout)}
    assert reports["repo"]["status"] == "failed" and "path does not exist" in reports["repo"]["failure"]
    assert reports["my-docs"]["status"] == "success"
    assert read("search", "celsius", "--source", "repo", "-k", "1")[0]["source"] == "repo"

    cli("remove", "my-docs")
    assert set(read("list")[0].values()) >= {"repo"}
    hits = read("search", "pancake batter", "-k", "3")
    assert {h["source"] for h in hits} == {"repo"}
    assert not home.index_dir("files", "my-docs").exists()


def test_bad_filters_and_dates_are_one_line_errors(home):
    for args, message in [
        (("search", "x", "--where", "{not json"), "not valid JSON"),
        (("search", "x", "--where", '{"ext": {"~=": "md"}}'), "unknown operator"),
        (("search", "x", "--after", "yesterday-ish"), "cannot read"),
        (("search", "x"), "nothing is indexed yet"),
        (("remove", "ghost"), "no source named"),
        (("build", "ghost"), "no source named"),
    ]:
        proc = cli(*args, check=False)
        assert proc.returncode == 2 and message in proc.stderr, (args, proc.stderr)
        assert len(proc.stderr.strip().splitlines()) == 1


def test_a_source_that_reads_nothing_is_a_warning_not_a_quiet_success(home, tmp_path):
    folder = write(tmp_path / "exports", {"notes.xyz": "not a format the mail connector reads\n"})
    cli("add", "mail", "inbox", str(folder))
    (rep,) = cli_json("build", "inbox")
    assert rep["status"] == "success" and rep["documents"] == 0 and rep["errors"] == []
    assert len(rep["warnings"]) == 1 and "read 0 records and reported no errors" in rep["warnings"][0]
    assert "warning: mail read 0 records" in cli("build", "inbox").stdout


def test_status_speaks_words_and_the_same_folder_twice_is_noted(home, tmp_path):
    """Issue 34: `status` printed Python values (False, None) and nothing at all with no sources;
    the same folder added under two names got no warning."""
    assert cli("status").stdout.strip() == "no sources yet: `ragbag add CONNECTOR NAME PATH`"
    folder = write(tmp_path / "notes", {"a.md": "# A\n\nText.\n"})
    first = cli("add", "files", "notes", str(folder))
    assert "already reads" not in first.stderr
    again = cli("add", "files", "notes-again", str(folder) + "/")
    assert "note: notes already reads" in again.stderr and "indexed twice" in again.stderr
    assert cli("add", "code", "repo", str(folder)).stderr == ""  # another connector reads it otherwise
    shown = cli("status", "notes").stdout
    assert "built: no" in shown and "last_build: never" in shown and "path_exists: yes" in shown
    assert "False" not in shown and "None" not in shown
