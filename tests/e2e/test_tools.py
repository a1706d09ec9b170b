"""The retrieval tools (ragbag.answer.tools) over a home built through Dagster.

They read the session's shared notes home (``notes_home``: tests/shared_homes.py), as test_ask,
test_agent and the MCP tests do.
"""

from __future__ import annotations

import json

import pytest
from conftest import write
from shared_homes import MANUAL

from ragbag.answer import citations
from ragbag.answer.tool_specs import ToolError
from ragbag.answer.tools import Tools
from ragbag.core.errors import RagbagError
from ragbag.core.home import Home


@pytest.fixture(scope="module")
def kb(notes_home) -> Home:
    return notes_home


@pytest.fixture
def tools(kb) -> Tools:
    return Tools(kb)


def _doc(tools: Tools, name: str) -> str:
    (d,) = tools.call("find_files", {"name": name})["documents"]
    return d["doc_id"]


def test_search_hits_carry_citations_ids_and_spans(tools):
    res = tools.call("search", {"query": "door code of the Lisbon apartment", "k": 3})
    top = res["hits"][0]
    assert top["uri"].endswith("lisbon.md") and "4411#" in top["text"]
    for key in ("citation", "doc_id", "start", "end", "vector_score", "source", "title"):
        assert key in top
    read = tools.call(
        "read_file", {"doc_id": top["doc_id"], "offset": top["start"], "max_length": top["end"] - top["start"]}
    )
    assert read["text"].strip() == top["text"].strip()
    assert any(c["citation"] == top["citation"] for c in read["citations"])


def test_search_filters_apply_and_bad_filters_are_one_line_errors(tools):
    res = tools.call("search", {"query": "door code", "k": 10, "where": {"ext": "txt"}})
    assert res["hits"] and all(h["uri"].endswith(".txt") for h in res["hits"])
    res = tools.call("search", {"query": "door code", "where": '{"ext": {"==": "md"}}', "mode": "keyword"})
    assert all(h["uri"].endswith(".md") for h in res["hits"])
    with pytest.raises(RagbagError, match="not valid JSON"):
        tools.call("search", {"query": "x", "where": "{bad"})
    with pytest.raises(RagbagError, match="unknown operator"):
        tools.call("search", {"query": "x", "where": {"ext": {"~": 1}}})
    with pytest.raises(RagbagError, match="no source named"):
        tools.call("search", {"query": "x", "source": "nope"})
    with pytest.raises(ToolError, match="invalid arguments at k"):
        tools.call("search", {"query": "x", "k": "3"})
    with pytest.raises(ToolError, match="Additional properties"):
        tools.call("search", {"query": "x", "path": "/etc/passwd"})
    with pytest.raises(ToolError, match="unknown tool"):
        tools.call("shell", {"cmd": "ls"})


def test_find_files_by_name_substring_glob_and_connector(tools):
    assert [d["uri"].rsplit("/", 1)[-1] for d in tools.call("find_files", {"name": "LISBON.md"})["documents"]] == [
        "lisbon.md"
    ]
    names = {d["uri"].rsplit("/", 1)[-1] for d in tools.call("find_files", {"name": "*.txt"})["documents"]}
    assert names == {"invoice.txt", "boiler-manual.txt"}
    got = tools.call("find_files", {"name_contains": "manual/"})["documents"]
    assert len(got) == 1 and got[0]["title"]
    assert tools.call("find_files", {"name_contains": "lisbon", "connector": "code"})["documents"] == []
    res = tools.call("find_files", {"limit": 2})
    assert len(res["documents"]) == 2 and res["total"] == 5 and "raise limit" in res["note"]


def test_read_file_pages_through_a_document(tools):
    doc = _doc(tools, "boiler-manual.txt")
    pieces, offset = [], 0
    while True:
        r = tools.call("read_file", {"doc_id": doc, "offset": offset, "max_length": 5000})
        pieces.append(r["text"])
        assert r["citations"], "every window names the passages it covers"
        if "next_offset" not in r:
            break
        assert f"offset={r['next_offset']}" in r["note"]
        offset = r["next_offset"]
    assert "".join(pieces) == MANUAL.strip() or "".join(pieces).strip() == MANUAL.strip()
    with pytest.raises(ToolError, match="past the end"):
        tools.call("read_file", {"doc_id": doc, "offset": 10**7})


def test_read_and_grep_reach_only_indexed_documents(tools, tmp_path):
    secret = write(tmp_path, {"secret.txt": "do not read"}) / "secret.txt"
    for bad in (str(secret), "/etc/passwd", "../../etc/passwd", "0" * 32):
        with pytest.raises(ToolError, match="unknown doc_id"):
            tools.call("read_file", {"doc_id": bad})
        with pytest.raises(ToolError, match="unknown doc_id"):
            tools.call("grep_file", {"doc_id": bad, "pattern": "read"})


def test_grep_file_positions_context_citations_and_guards(tools):
    doc = _doc(tools, "boiler-manual.txt")
    text = "".join(
        tools.call("read_file", {"doc_id": doc, "offset": o, "max_length": 5000})["text"]
        for o in range(0, len(MANUAL), 5000)
    )
    res = tools.call("grep_file", {"doc_id": doc, "pattern": r"SN-\d+", "context_chars": 20})
    (m,) = res["matches"]
    assert m["match"] == "SN-48213" and text[m["start"] : m["end"]] == "SN-48213"
    assert text[m["context_start"] : m["context_start"] + len(m["context"])] == m["context"]
    assert citations.lookup(tools.home, m["citation"])["doc_id"] == doc
    res = tools.call("grep_file", {"doc_id": doc, "pattern": "pressure GAUGE", "limit": 5})
    assert len(res["matches"]) == 5 and res["total"] > 5 and "raise limit" in res["note"]
    assert tools.call("grep_file", {"doc_id": doc, "pattern": "pressure GAUGE", "ignore_case": False})["matches"] == []
    with pytest.raises(ToolError, match="bad regular expression"):
        tools.call("grep_file", {"doc_id": doc, "pattern": "(["})
    with pytest.raises(ToolError, match="longer than"):
        tools.call("grep_file", {"doc_id": doc, "pattern": "a" * 2000})
    # catastrophic backtracking is stopped by the timeout, not left to hang
    evil = tools.call("find_files", {"name": "lisbon.md"})["documents"][0]["doc_id"]
    tools.documents._texts.put(f"notes\0{tools.documents._loaded['notes'].key}\0{evil}", "a" * 5000 + "!")
    with pytest.raises(ToolError, match="took longer"):
        tools.call("grep_file", {"doc_id": evil, "pattern": r"(a|aa)+(a|aa)+(a|aa)+(a|aa)+b"})


def test_results_stay_under_the_budget_with_a_note(kb):
    small = Tools(kb, max_chars=2500)
    res = small.call("search", {"query": "maintenance filters pressure", "k": 20})
    assert len(json.dumps(res)) <= 2500 and "cut to stay under" in res["note"]
    r = small.call("read_file", {"doc_id": _doc(small, "boiler-manual.txt"), "max_length": 20000})
    assert len(r["text"]) <= 2500 and r["next_offset"] == r["end"]


def test_list_sources_and_status(tools):
    (s,) = tools.call("list_sources", {})["sources"]
    assert s["source"] == "notes" and s["built"] and s["documents"] == 5
    st = tools.call("source_status", {"source": "notes"})
    assert st["path_exists"] and st["model"] and st["bytes"] > 0
    with pytest.raises(RagbagError, match="no source named"):
        tools.call("source_status", {"source": "nope"})
