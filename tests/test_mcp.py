"""`ragbag mcp` through the SDK's own stdio client, as Claude Code would launch it."""

from __future__ import annotations

import os

import anyio
import pytest
from conftest import RAGBAG, materialize_source, strict_json, write
from mcp import ClientSession, StdioServerParameters, stdio_client
from test_tools import built_home

from ragbag import connectors
from ragbag.core.home import Home

# One worker builds this module's home once (`make test` runs `--dist loadgroup`).
pytestmark = pytest.mark.xdist_group("test_mcp")


@pytest.fixture(scope="module")
def kb(tmp_path_factory, instance):
    return built_home(tmp_path_factory, instance)


def _server(home: Home, *args: str) -> StdioServerParameters:
    env = {"RAGBAG_HOME": str(home.root), "DAGSTER_HOME": str(home.dagster_home), "PATH": os.environ["PATH"]}
    return StdioServerParameters(command=RAGBAG, args=["mcp", *args], env=env)


def _json(result) -> dict:
    assert not result.is_error, result.content[0].text
    return strict_json(result.content[0].text)  # no NaN/Infinity: MCP clients parse strictly


def _error(result) -> str:
    assert result.is_error
    text = result.content[0].text
    assert text.startswith("error: ") and "\n" not in text and "Traceback" not in text
    return text


def test_mcp_stdio_session(kb, tmp_path):
    async def session():
        with open(tmp_path / "stderr.log", "w") as errlog:
            async with stdio_client(_server(kb), errlog=errlog) as (read, write_):
                async with ClientSession(read, write_) as s:
                    init = await s.initialize()
                    assert init.server_info.name == "ragbag" and "search first" in (init.instructions or "")
                    tools = {t.name: t for t in (await s.list_tools()).tools}
                    assert set(tools) == {
                        "search",
                        "list_sources",
                        "source_status",
                        "find_files",
                        "read_file",
                        "grep_file",
                    }
                    for t in tools.values():
                        assert len(t.description) > 60 and t.input_schema["type"] == "object"
                    props = tools["search"].input_schema["properties"]
                    assert {"query", "k", "source", "connector", "where", "after", "before", "mode"} <= set(props)
                    assert all(p.get("description") for p in props.values())

                    hits = _json(await s.call_tool("search", {"query": "street door code lisbon", "k": 3}))["hits"]
                    assert hits[0]["uri"].endswith("lisbon.md")
                    doc = hits[0]["doc_id"]
                    read = _json(await s.call_tool("read_file", {"doc_id": doc, "max_length": 60}))
                    assert read["offset"] == 0 and read["next_offset"] == 60 and "offset=60" in read["note"]
                    grep = _json(await s.call_tool("grep_file", {"doc_id": doc, "pattern": "\\d{4}#"}))
                    assert grep["matches"][0]["match"] == "4411#" and grep["matches"][0]["start"] > 0
                    found = _json(await s.call_tool("find_files", {"name": "*.txt"}))
                    assert found["total"] == 2
                    assert _json(await s.call_tool("list_sources", {}))["sources"][0]["source"] == "notes"
                    assert _json(await s.call_tool("source_status", {"source": "notes"}))["built"]

                    assert "unknown doc_id" in _error(await s.call_tool("read_file", {"doc_id": "nope"}))
                    assert "unknown doc_id" in _error(
                        await s.call_tool("grep_file", {"doc_id": "/etc/passwd", "pattern": "root"})
                    )
                    assert "not valid JSON" in _error(await s.call_tool("search", {"query": "x", "where": "{bad"}))
                    assert "unknown operator" in _error(
                        await s.call_tool("search", {"query": "x", "where": {"a": {"~": 1}}})
                    )
                    assert "bad regular expression" in _error(
                        await s.call_tool("grep_file", {"doc_id": doc, "pattern": "(["})
                    )
                    assert "invalid arguments" in _error(await s.call_tool("search", {"query": "x", "k": 0}))
                    assert "as a date" in _error(await s.call_tool("search", {"query": "x", "after": "yesterday-ish"}))
                    assert "unknown tool" in _error(await s.call_tool("build", {"source": "notes"}))
                    # still alive and serving after every error
                    again = _json(await s.call_tool("search", {"query": "tomatoes pots", "k": 1}))
                    assert again["hits"][0]["uri"].endswith("garden.md")

    anyio.run(session)
    log = (tmp_path / "stderr.log").read_text()
    assert "ragbag-mcp INFO serving" in log and "search" in log  # logs go to stderr


def test_mcp_truncates_large_results_with_a_note(kb):
    async def session():
        async with stdio_client(_server(kb, "--max-chars", "3000")) as (read, write_):
            async with ClientSession(read, write_) as s:
                await s.initialize()
                res = await s.call_tool("search", {"query": "maintenance filters pressure gauge", "k": 30})
                assert len(res.content[0].text) <= 3000
                assert "cut to stay under 3000" in _json(res)["note"]

    anyio.run(session)


@pytest.mark.slow
def test_mcp_build_tool_refreshes_a_source_in_the_running_server(tmp_path, instance):
    docs = write(tmp_path / "d", {"a.md": "# Alpha\n\nThe alpha launch is on Tuesday.\n"})
    home = Home(tmp_path / "home").ensure()
    home.add_source("mini", "files", str(docs), known=connectors.NAMES)
    materialize_source(home, instance, "mini")

    async def session():
        async with stdio_client(_server(home, "--allow-build")) as (read, write_):
            async with ClientSession(read, write_) as s:
                await s.initialize()
                assert "build" in {t.name for t in (await s.list_tools()).tools}
                write(docs, {"b.md": "# Beta\n\nThe beta review needs the blue folder.\n"})
                report = _json(await s.call_tool("build", {"source": "mini"}))
                assert report["status"] == "success" and report["added"] == 1
                hits = _json(await s.call_tool("search", {"query": "blue folder beta review", "k": 1}))["hits"]
                assert hits[0]["uri"].endswith("b.md")  # the warm server sees the new build
                assert "no source named" in _error(await s.call_tool("build", {"source": "nope"}))

    anyio.run(session)
