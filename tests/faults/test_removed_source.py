"""A source removed under running servers is dropped at once (issue #38, class 4).

`ragbag mcp` and `ragbag serve` keep what they loaded (snapshots, document metadata and texts) for
the life of the process. Every search re-reads the registry when sources.yaml changed (a stat)
and follows each source's ``current`` (a readlink); what a removed source left in memory is
dropped at the next search. A home with two built sources: both servers and this process search
it (the doomed source found), `ragbag remove` runs in a subprocess, and the searches right after
find nothing of it, with no error for the other source; the process's caches no longer hold it.
"""

from __future__ import annotations

import json
import time
from urllib.parse import quote

import anyio
import pytest
from conftest import cli, stop_group, write
from mcp_client import mcp_session
from test_serve import _start

from ragbag.answer.tool_specs import ToolError
from ragbag.answer.tools import Tools
from ragbag.core.home import Home
from ragbag.search import query, snapshot

QUERY = "tomatoes beside the shed"


@pytest.fixture
def kb(tmp_path):
    """Two built `files` sources: kept and doomed (the one removed)."""
    kept = write(tmp_path / "kept", {"harbour.md": "# Harbour\n\nThe keeper planted tomatoes by the lighthouse.\n"})
    doomed = write(tmp_path / "doomed", {"garden.md": "# Garden\n\nZqxvorpel planted the tomatoes beside the shed.\n"})
    home = Home(tmp_path / "home")
    env = {"RAGBAG_HOME": str(home.root), "DAGSTER_HOME": str(home.dagster_home)}
    cli("add", "files", "kept", str(kept), env=env)
    cli("add", "files", "doomed", str(doomed), env=env)
    cli("build", env=env)
    return home, env


def _sources(hits: list[dict]) -> set[str]:
    return {h["source"] for h in hits}


def test_a_removed_source_is_gone_from_running_servers_at_once(kb, tmp_path):
    home, env = kb
    page = _start(home, tmp_path / "serve.log")
    tools = Tools(home)  # this process, as a notebook or an agent holds it

    def page_search() -> list[dict]:
        status, _, body = page.request("GET", f"/api/search?q={quote(QUERY)}&mode=keyword")
        assert status == 200, body[:300]
        return json.loads(body)["hits"]

    async def session() -> tuple[str, dict[str, float]]:
        async with mcp_session(env, tmp_path / "mcp.log") as s:

            async def mcp_search() -> list[dict]:
                res = await s.call_tool("search", {"query": QUERY, "mode": "keyword", "k": 5})
                assert not res.is_error, res.content[0].text
                return res.structured_content["hits"]

            hits = await mcp_search()
            assert _sources(hits) == {"kept", "doomed"} and _sources(page_search()) == {"kept", "doomed"}
            doc = next(h["doc_id"] for h in hits if h["source"] == "doomed")
            assert "Zqxvorpel" in tools.call("read_file", {"doc_id": doc})["text"]  # its text is cached here
            assert "Zqxvorpel" in (await s.call_tool("read_file", {"doc_id": doc})).structured_content["text"]
            assert _sources(query.results(QUERY, home, mode="keyword")) == {"kept", "doomed"}

            cli("remove", "doomed", env=env)
            t = time.perf_counter()
            assert _sources(await mcp_search()) == {"kept"}
            took = {"mcp_search_s": time.perf_counter() - t}
            t = time.perf_counter()
            assert _sources(page_search()) == {"kept"}
            took["page_search_s"] = time.perf_counter() - t
            gone = await s.call_tool("read_file", {"doc_id": doc})
            assert gone.is_error and "unknown doc_id" in gone.content[0].text
            status, _, _ = page.request("GET", f"/doc?doc_id={doc}")
            assert status == 404
            return doc, took

    try:
        doc, took = anyio.run(session)
    finally:
        stop_group(page.proc)
    print(f"first searches after remove: MCP {took['mcp_search_s']:.3f} s, page {took['page_search_s']:.3f} s")

    # This process: the next search and document call drop everything the removed source left.
    assert _sources(query.results(QUERY, home, mode="keyword")) == {"kept"}
    assert {key[1] for key in snapshot._loaded if key[0] == str(home.root)} == {"kept"}
    with pytest.raises(ToolError, match="unknown doc_id"):
        tools.call("read_file", {"doc_id": doc})
    assert set(tools.documents._loaded) == {"kept"} and len(tools.documents._texts) == 0
