"""A query's length is bounded at every entry point (issue #38, class 3).

A 30,000-character query cost 35–70 s of embedding. ``SearchRequest`` refuses one longer than
``MAX_QUERY_CHARS``, and every way in inherits it: the CLI's search, ask and react (exit 2, one
line), notebooks' ``query.search``, the MCP tools over the SDK's stdio client (an error result),
and the search page's search and ask endpoints (400 with a JSON error). A query at the bound
still runs.
"""

from __future__ import annotations

from urllib.parse import quote

import anyio
import pytest
from conftest import cli, stop_group, strict_json, write
from mcp_client import mcp_session
from test_serve import _start

from ragbag.core.errors import RagbagError
from ragbag.core.home import Home
from ragbag.search import query
from ragbag.search.request import MAX_QUERY_CHARS

LONG = ("gate code lisbon " * 1765)[:30_000]
SAYS = f"the query is 30,000 characters long; the most is {MAX_QUERY_CHARS:,}"


@pytest.fixture(scope="module")
def kb(tmp_path_factory):
    """A home with one built `files` source."""
    root = tmp_path_factory.mktemp("bound")
    docs = write(root / "docs", {"lisbon.md": "# Lisbon\n\nThe gate code in Lisbon is 4711.\n"})
    home = Home(root / "home")
    env = {"RAGBAG_HOME": str(home.root), "DAGSTER_HOME": str(home.dagster_home)}
    cli("add", "files", "notes", str(docs), env=env)
    cli("build", env=env)
    return {"home": home, "env": env, "root": root}


def _refused(kb, *args: str) -> str:
    proc = cli(*args, env=kb["env"], check=False)
    assert proc.returncode == 2 and proc.stdout == "", (args[:1], proc.returncode, proc.stdout[-500:])
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ragbag: error: "), proc.stderr[-2000:]
    return lines[0]


@pytest.mark.parametrize("command", ["search", "ask", "react"])
def test_the_cli_refuses_a_long_query_in_one_line(kb, command):
    assert SAYS in _refused(kb, command, LONG)


def test_a_query_at_the_bound_runs(kb):
    at_bound = ("lisbon gate " * 200)[:MAX_QUERY_CHARS]
    proc = cli("search", at_bound, "--mode", "keyword", "--json", env=kb["env"])
    assert strict_json(proc.stdout)[0]["title"] == "Lisbon"
    assert "the most is" in _refused(kb, "search", at_bound + "x", "--mode", "keyword")


def test_notebooks_and_ask_refuse_it(kb):
    from ragbag.answer import ask, llm

    with pytest.raises(RagbagError, match=SAYS):
        query.search(LONG, home=kb["home"])
    with pytest.raises(RagbagError, match=SAYS):
        ask.ask(LONG, llm.resolve(kb["home"], None, None, None), kb["home"])


def test_mcp_returns_a_tool_error(kb, tmp_path):
    async def session() -> None:
        async with mcp_session(kb["env"], tmp_path / "mcp.log") as s:
            refused = await s.call_tool("search", {"query": LONG})
            text = refused.content[0].text
            assert refused.is_error and text.startswith(f"error: {SAYS}") and "\n" not in text, text
            found = await s.call_tool("search", {"query": "gate code lisbon", "k": 1})
            assert not found.is_error and strict_json(found.content[0].text)["hits"][0]["title"] == "Lisbon"

    anyio.run(session)


def test_the_search_page_answers_400_with_a_json_error(kb, tmp_path):
    server = _start(kb["home"], tmp_path / "serve.log")
    try:
        long = LONG[:5_000]  # a longer URL is refused by the HTTP parser itself
        status, headers, body = server.request("GET", "/api/search?q=" + quote(long))
        assert status == 400 and headers["content-type"].startswith("application/json")
        assert strict_json(body)["error"].startswith("the query is 5,000 characters long; the most is")
        status, headers, body = server.post_json("/api/ask", {"question": LONG})
        assert status == 400 and strict_json(body)["error"].startswith(SAYS)
        status, _, body = server.request("GET", "/api/search?q=" + quote("gate code lisbon"))
        assert status == 200 and strict_json(body)["hits"][0]["title"] == "Lisbon"
    finally:
        stop_group(server.proc)
