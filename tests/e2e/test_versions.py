"""Document versions: an edited record keeps its earlier texts (ragbag.pipeline.history), search
sees the current ones unless asked for a time (``--as-of``) or a version, the tools list, read
and diff versions, retention drops old ones, and ``remove`` leaves none behind."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from conftest import cli, cli_json, materialize_source, write

from ragbag.answer.tool_specs import ToolError
from ragbag.answer.tools import Tools
from ragbag.core.home import Home
from ragbag.core.records import Span
from ragbag.pipeline.chunk import _versioned_rows
from ragbag.search import query

V1 = "# Plan\n\nThe meeting point is the old lighthouse at dawn.\n"
V2 = "# Plan\n\nThe meeting point is the red harbour crane at noon.\n"
V3 = "# Plan\n\nThe meeting point is the train station clock at midnight.\n"
OTHER = "# Groceries\n\nMilk, bread and apples for the weekend.\n"
# Within the default 180 days of retention, whenever the test runs.
_BASE = datetime.now(UTC).replace(hour=9, minute=0, second=0, microsecond=0) - timedelta(days=90)
JAN, FEB, MAR = (_BASE + timedelta(days=d) for d in (0, 30, 60))


def _day(when: datetime, days: int = 0) -> str:
    return (when + timedelta(days=days)).date().isoformat()


def _edit(path: Path, text: str, when: datetime) -> None:
    """Write the file with a known modification time: a version is valid from its mtime."""
    path.write_text(text)
    os.utime(path, (when.timestamp(), when.timestamp()))


def _plan_texts(*args: str) -> list[str]:
    hits = cli_json("search", "meeting point", "-k", "10", *args)
    return [h["text"] for h in hits if h["uri"].endswith("plan.md")]


def _three_versions(tmp_path: Path, *add: str) -> Path:
    docs = write(tmp_path / "notes", {"groceries.md": OTHER})
    os.utime(docs / "groceries.md", ((JAN - timedelta(days=30)).timestamp(),) * 2)
    plan = docs / "plan.md"
    _edit(plan, V1, JAN)
    cli("add", "files", "notes", str(docs), *add)
    cli("build", "notes")
    _edit(plan, V2, FEB)
    cli("build", "notes")
    _edit(plan, V3, MAR)
    (report,) = cli_json("build", "notes")
    assert report["changed"] == 1 and report["chunks_embedded"] == 1  # only the new text is embedded
    return plan


def test_editing_twice_gives_three_versions_and_as_of_finds_the_middle_one(home, tmp_path):
    plan = _three_versions(tmp_path)

    history = cli_json("history", str(plan))
    assert [v["version"] for v in history["versions"]] == [1, 2, 3]
    assert [v["valid_from"][:10] for v in history["versions"]] == [_day(JAN), _day(FEB), _day(MAR)]
    assert [v["valid_to"] and v["valid_to"][:10] for v in history["versions"]] == [_day(FEB), _day(MAR), None]
    assert [v["chars"] for v in history["versions"]] == [len(V1), len(V2), len(V3)]
    assert [v["current"] for v in history["versions"]] == [False, False, True] and not history["deleted"]
    assert "valid to" in cli("history", str(plan)).stdout  # the table people read

    assert _plan_texts() == [V3.strip()]  # the current text only, by default
    (middle,) = _plan_texts("--as-of", _day(FEB, 10))
    assert "harbour crane" in middle and "lighthouse" not in middle and "station clock" not in middle
    assert "lighthouse" in _plan_texts("--as-of", _day(JAN, 10))[0]
    assert _plan_texts("--as-of", _day(JAN, -5)) == []  # before the file was written
    assert _plan_texts("--where", '{"version": 1}') == [V1.strip()]
    assert len(_plan_texts("--where", '{"version": {">=": 2}}')) == 2
    hit = next(h for h in cli_json("search", "harbour crane", "--as-of", _day(FEB, 10)) if h["uri"].endswith("plan.md"))
    assert hit["version"] == 2 and hit["valid_to"].startswith(_day(MAR))
    # the Python API, as a notebook calls it
    then = query.search("meeting point", home=home, as_of=_day(FEB, 10))
    assert list(then[then["uri"].str.endswith("plan.md")]["version"]) == [2]

    diff = cli_json("diff", str(plan), "1", "3")
    assert (diff["from_version"], diff["to_version"], diff["added_lines"], diff["removed_lines"]) == (1, 3, 1, 1)
    assert "-The meeting point is the old lighthouse at dawn." in diff["diff"]
    assert "+The meeting point is the train station clock at midnight." in diff["diff"]

    tools = Tools(home)
    doc_id = history["doc_id"]
    old = tools.call("read_file", {"doc_id": doc_id, "version": 2})
    assert old["text"] == V2 and old["version"] == 2
    (cite,) = old["citations"]
    assert V2[cite["start"] : cite["end"]].startswith("# Plan")
    shown = cli("show", f"c:{cite['citation']}", "--format", "text").stdout  # in its own version's text
    assert "»# Plan\n\nThe meeting point is the red harbour crane at noon.«" in shown
    assert tools.call("read_file", {"doc_id": doc_id})["text"] == V3
    with pytest.raises(ToolError, match="version 9 of .* is not kept; versions: 1, 2, 3"):
        tools.call("read_file", {"doc_id": doc_id, "version": 9})
    assert tools.call("diff", {"doc_id": doc_id, "from_version": 2})["to_version"] == 3
    (found,) = tools.call("find_files", {"name": "plan.md"})["documents"]
    assert (found["version"], found["versions"]) == (3, 3)
    assert tools.call("history", {"doc_id": doc_id}) == history

    plan.unlink()  # a deleted document keeps its versions: gone now, found as of then
    cli("build", "notes")
    gone = cli_json("history", str(plan))
    assert gone["deleted"] and [v["version"] for v in gone["versions"]] == [1, 2, 3]
    assert _plan_texts() == []
    assert "station clock" in _plan_texts("--as-of", _day(MAR, 10))[0]
    assert Tools(home).call("read_file", {"doc_id": doc_id, "version": 3})["text"] == V3
    _edit(plan, V1, MAR + timedelta(days=20))  # restored: version 4, its numbering continued
    cli("build", "notes")
    back = cli_json("history", str(plan))
    assert [v["version"] for v in back["versions"]] == [1, 2, 3, 4] and not back["deleted"]
    assert _plan_texts() == [V1.strip()]
    # its mtime lies before the deletion: the new version starts when the build read it
    assert back["versions"][3]["valid_from"] >= back["versions"][2]["valid_to"]
    missing = cli("history", str(tmp_path / "nowhere.md"), check=False)
    assert missing.returncode == 2 and missing.stderr.count("\n") == 1 and "no indexed document" in missing.stderr

    # `remove` leaves no version behind: version 2's text is only in the history, and in what the
    # runs recorded (merged here from a test of its own that built three versions again)
    assert _grep_home(home, "red harbour crane")
    cli("remove", "notes")
    assert _grep_home(home, "red harbour crane") == ""


def test_retention_keeps_the_last_versions_and_none_older_than_its_days(home, tmp_path):
    plan = _three_versions(tmp_path, "--history-versions", "2")
    history = cli_json("history", str(plan))
    assert [v["version"] for v in history["versions"]] == [2, 3]  # the current one counts
    assert _plan_texts("--as-of", _day(JAN, 10)) == []  # v1's chunks went with it
    assert "harbour crane" in _plan_texts("--as-of", _day(FEB, 10))[0]

    cli("config", "set", "history.days", "20")  # v2 was superseded 30 days ago
    (report,) = cli_json("build", "notes")
    assert report["run_id"] and report["status"] == "success"
    assert [v["version"] for v in cli_json("history", str(plan))["versions"]] == [3]
    assert _plan_texts("--as-of", _day(FEB, 10)) == []
    bad = cli("config", "set", "history.days", "many", check=False)
    assert bad.returncode == 2 and "0 or more" in bad.stderr


def _grep_home(home: Home, marker: str) -> str:
    """Files under the home whose bytes contain the marker (also UTF-16, as Arrow may store it)."""
    needles = [marker.encode(), marker.encode("utf-16-le")]
    found = [
        str(p)
        for p in home.root.rglob("*")
        if p.is_file() and not p.is_symlink() and any(n in p.read_bytes() for n in needles)
    ]
    return "\n".join(found) + (marker if found else "")


def test_the_documents_materialisation_shows_the_history(home, instance, tmp_path):
    docs = write(tmp_path / "notes", {"plan.md": V1})
    home.add_source("notes", "files", str(docs), known=("files",))
    materialize_source(home, instance, "notes")
    _edit(docs / "plan.md", V2, datetime.now(UTC))
    meta = materialize_source(home, instance, "notes")["documents"]
    assert meta["versions_kept"] == 1 and meta["changed"] == 1
    (shown,) = meta["new_versions"]
    assert shown["uri"].endswith("plan.md") and shown["version"] == 2


def _paragraphs(doc, count, budget) -> list[Span]:
    out, at = [], 0
    for part in doc.text.split("\n\n"):
        out.append(Span(at, at + len(part)))
        at += len(part) + 2
    return out


def _version(number: int, text: str, start: datetime, end: datetime | None = None) -> dict:
    return {
        "doc_id": "d1",
        "source": "s",
        "connector": "files",
        "native_id": "a.md",
        "uri": "/a.md",
        "title": "",
        "text": text,
        "created_at": None,
        "updated_at": None,
        "date": None,
        "authors": [],
        "metadata": "{}",
        "version": number,
        "valid_from": start,
        "valid_to": end,
    }


def test_a_passage_unchanged_across_versions_is_one_row_and_a_returning_one_a_new_row():
    rows = _versioned_rows(
        [
            _version(1, "alpha\n\nbeta", JAN, FEB),
            _version(2, "alpha\n\ngamma", FEB, MAR),
            _version(3, "alpha\n\nbeta", MAR),
        ],
        True,
        _paragraphs,
        len,
        100,
        "key",
    )
    by_text = sorted((r["text"], r["first_version"], r["version"], r["valid_from"], r["valid_to"]) for r in rows)
    assert by_text == [
        ("alpha", 1, 3, JAN, None),  # one row for all three versions, still current
        ("beta", 1, 1, JAN, FEB),
        ("beta", 3, 3, MAR, None),
        ("gamma", 2, 2, FEB, MAR),
    ]
    ids = [r["chunk_id"] for r in rows]
    assert len(set(ids)) == 4  # the returning "beta" is a row of its own
    single = _versioned_rows([_version(1, "alpha\n\nbeta", JAN)], True, _paragraphs, len, 100, "key")
    assert {r["chunk_id"] for r in single} <= set(ids)  # a single version keeps the ids it always had


def test_a_deleted_record_that_comes_back_continues_its_versions():
    """Back after a gap: the passage it had before is a new row, never valid while it was gone."""
    gone_at = FEB + timedelta(days=5)
    rows = _versioned_rows(
        [_version(1, "alpha", JAN, gone_at), _version(2, "alpha", MAR)], True, _paragraphs, len, 100, "key"
    )
    spans = sorted((r["first_version"], r["valid_from"], r["valid_to"]) for r in rows)
    assert spans == [(1, JAN, gone_at), (2, MAR, None)]
    assert len({r["chunk_id"] for r in rows}) == 2
