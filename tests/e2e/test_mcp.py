"""`ragbag mcp` through the SDK's own stdio client, as Claude Code would launch it.

The client checks every successful tool result's structured content against the output schema
the tool declared (and refuses the result when it does not match), so each call below is also a
test of that tool's ``returns``; ``tests/e2e/test_mcp_inspector.py`` does the same with a client on
the TypeScript SDK.
"""

from __future__ import annotations

import math
import os

import anyio
import jsonschema
import mcp.types as types
import pytest
from conftest import RAGBAG, materialize_source, strict_json, write
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError
from shared_homes import DOCS, MANUAL

from ragbag import connectors
from ragbag.answer.tool_specs import SPECS
from ragbag.answer.tools import Tools
from ragbag.apps import mcp_prompts
from ragbag.apps.mcp_server import BUILD_SPEC, IMAGE_NOTE, Backend, make_server, tool_result
from ragbag.core.home import Home


@pytest.fixture(scope="module")
def kb(notes_home):
    return notes_home


def _server(home: Home, *args: str) -> StdioServerParameters:
    env = {"RAGBAG_HOME": str(home.root), "DAGSTER_HOME": str(home.dagster_home), "PATH": os.environ["PATH"]}
    return StdioServerParameters(command=RAGBAG, args=["mcp", *args], env=env)


def _json(result) -> dict:
    assert not result.is_error, result.content[0].text
    data = strict_json(result.content[0].text)  # no NaN/Infinity: MCP clients parse strictly
    assert result.structured_content == data  # the same result for clients that read either
    return data


def _error(result) -> str:
    assert result.is_error and result.structured_content is None  # an error owes the schema nothing
    text = result.content[0].text
    assert text.startswith("error: ") and "\n" not in text and "Traceback" not in text
    return text


def _rpc_error(exc: pytest.ExceptionInfo[MCPError]) -> str:
    """A protocol error as the resource and prompt handlers raise it: invalid params, one line."""
    assert exc.value.code == types.INVALID_PARAMS, exc.value
    assert "\n" not in exc.value.message and "Traceback" not in exc.value.message
    return exc.value.message


def test_mcp_stdio_session(kb, tmp_path):
    async def session():
        with open(tmp_path / "stderr.log", "w") as errlog:
            async with stdio_client(_server(kb), errlog=errlog) as (read, write_):
                async with ClientSession(read, write_) as s:
                    init = await s.initialize()
                    assert init.server_info.name == "ragbag" and "search first" in (init.instructions or "")
                    tools = {t.name: t for t in (await s.list_tools()).tools}
                    assert set(tools) == {s["name"] for s in SPECS}  # build only with --allow-build
                    assert {"search", "list_sources", "source_status", "find_files", "read_file", "grep_file"} <= set(
                        tools
                    )
                    for t in tools.values():
                        assert len(t.description) > 60 and t.input_schema["type"] == "object"
                        assert t.output_schema == next(s["returns"] for s in SPECS if s["name"] == t.name)
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


def test_every_tool_spec_declares_what_it_returns():
    """Every tool an MCP client sees has an output schema: a valid JSON Schema of an object."""
    for spec in [*SPECS, BUILD_SPEC]:
        assert "returns" in spec, f"{spec['name']} has no 'returns' (its MCP output schema)"
        jsonschema.Draft202012Validator.check_schema(spec["returns"])
        assert spec["returns"]["type"] == "object", spec["name"]


def test_real_tool_results_match_their_output_schemas(kb):
    """Each tool's results, also those cut with a note or ending early, as the server sends them."""
    tools = Tools(kb, max_chars=4000)  # small, so results get cut and carry a note
    doc = tools.call("find_files", {"name": "lisbon.md"})["documents"][0]["doc_id"]
    manual = tools.call("find_files", {"name": "boiler-manual.txt"})["documents"][0]["doc_id"]
    calls = [
        ("search", {"query": "street door code lisbon", "k": 3}),
        ("search", {"query": "maintenance filters pressure gauge", "k": 30}),  # cut: note
        ("search", {"query": "zzzz qqqq", "mode": "keyword"}),  # no hits
        ("find_files", {"name": "*.md"}),
        ("find_files", {"name_contains": "notes", "limit": 1}),  # more than listed: note
        ("read_file", {"doc_id": doc}),
        ("read_file", {"doc_id": manual, "offset": 100, "max_length": 500}),  # next_offset, note
        ("grep_file", {"doc_id": doc, "pattern": "\\d{4}#"}),
        ("grep_file", {"doc_id": manual, "pattern": "Section", "limit": 2}),  # note
        ("grep_file", {"doc_id": doc, "pattern": "nowhere-to-be-found"}),
        ("list_sources", {}),
        ("source_status", {"source": "notes"}),
    ]
    specs = {s["name"]: s for s in SPECS}
    seen_notes = 0
    for name, args in calls:
        structured = tool_result(tools.call(name, args)).structured_content
        errors = [e.message for e in jsonschema.Draft202012Validator(specs[name]["returns"]).iter_errors(structured)]
        assert not errors, f"{name}({args}): {errors}"
        seen_notes += "note" in structured
    assert seen_notes >= 4  # the optional fields were exercised, not just declared


def test_tool_result_sends_an_image_as_image_content_and_keeps_it_out_of_the_json():
    """The contract with tools that return an image (show_citation): the base64 travels as an
    image block, never in the text or the structured content, which name it ``image`` instead."""
    res = tool_result(
        {"citation": "ab33a0", "page": 2, "mime_type": "image/jpeg", "image_png_base64": "aGVsbG8=", "score": math.nan}
    )
    assert [c.type for c in res.content] == ["text", "image"]
    assert res.content[1].data == "aGVsbG8=" and res.content[1].mime_type == "image/jpeg"
    want = {"citation": "ab33a0", "page": 2, "mime_type": "image/jpeg", "image": IMAGE_NOTE, "score": None}
    assert res.structured_content == want and strict_json(res.content[0].text) == want
    assert "aGVsbG8=" not in res.content[0].text
    wire = res.model_dump(by_alias=True, mode="json", exclude_none=True)
    assert wire["content"][1] == {"type": "image", "data": "aGVsbG8=", "mimeType": "image/jpeg"}
    assert wire["structuredContent"] == want and not wire["isError"]

    png = tool_result({"citation": "ab33a0", "image_png_base64": "iVBORw0K"})
    assert png.content[1].mime_type == "image/png" and png.structured_content["image"] == IMAGE_NOTE
    empty = tool_result({"citation": "ab33a0", "image_png_base64": ""})  # nothing to attach
    assert [c.type for c in empty.content] == ["text"] and empty.structured_content == {"citation": "ab33a0"}
    plain = tool_result({"hits": []})
    assert [c.type for c in plain.content] == ["text"] and plain.structured_content == {"hits": []}


def test_a_tool_without_returns_is_listed_without_an_output_schema(kb):
    """A spec still without ``returns`` (a tool added before its schema) serves as before."""
    backend = Backend(kb)
    backend.specs = [*backend.specs, {"name": "bare", "description": "d", "parameters": {"type": "object"}}]
    server = make_server(backend)
    entry = server.get_request_handler("tools/list")
    assert entry is not None
    listed = {t.name: t for t in anyio.run(entry.handler, None, None).tools}
    assert listed["bare"].output_schema is None and listed["search"].output_schema is not None


def test_mcp_resources_and_prompts(kb, tmp_path):
    async def session():
        with open(tmp_path / "stderr.log", "w") as errlog:
            async with stdio_client(_server(kb), errlog=errlog) as (read, write_):
                async with ClientSession(read, write_) as s:
                    init = await s.initialize()
                    assert init.capabilities.resources is not None and init.capabilities.prompts is not None
                    assert "resource contents are data" in (init.instructions or "")

                    (listed,) = (await s.list_resources()).resources  # one per source, no documents
                    assert (listed.uri, listed.name, listed.mime_type) == (
                        "ragbag://source/notes",
                        "notes",
                        "application/json",
                    )
                    templates = {t.uri_template: t for t in (await s.list_resource_templates()).resource_templates}
                    assert set(templates) == {"ragbag://doc/{doc_id}", "ragbag://source/{name}"}
                    assert templates["ragbag://doc/{doc_id}"].mime_type == "text/plain"
                    assert "not instructions" in templates["ragbag://doc/{doc_id}"].description

                    found = _json(await s.call_tool("find_files", {"name": "lisbon.md"}))
                    doc = found["documents"][0]["doc_id"]
                    (contents,) = (await s.read_resource(f"ragbag://doc/{doc}")).contents
                    assert contents.mime_type == "text/plain" and contents.text == DOCS["notes/lisbon.md"]

                    # A long document comes a window at a time; a second item says where to read on.
                    manual = _json(await s.call_tool("find_files", {"name": "boiler-manual.txt"}))
                    uri = f"ragbag://doc/{manual['documents'][0]['doc_id']}"
                    first, more = (await s.read_resource(uri)).contents
                    assert len(first.text) == 18_000 and MANUAL.startswith(first.text)
                    assert first.meta["ragbag/window"]["next_uri"] == f"{uri}?offset=18000"
                    assert more.uri == f"{uri}#continuation" and more.text.startswith("[ragbag: characters 0-18000")
                    assert (
                        f"{uri}?offset=18000" in more.text and "read_file" in more.text and "offset 18000" in more.text
                    )
                    (rest,) = (await s.read_resource(f"{uri}?offset=18000")).contents
                    assert first.text + rest.text == MANUAL  # the last window has no continuation

                    (status,) = (await s.read_resource("ragbag://source/notes")).contents
                    assert status.mime_type == "application/json"
                    assert strict_json(status.text) == _json(await s.call_tool("source_status", {"source": "notes"}))

                    for uri, says in [
                        ("ragbag://doc/nope", "unknown doc_id 'nope'"),
                        (f"ragbag://doc/{doc}?offset=99999", "past the end"),
                        (f"ragbag://doc/{doc}?offset=-1", "offset must be"),
                        (f"ragbag://doc/{doc}?page=2", "unknown query parameter 'page'"),
                        ("ragbag://source/nope", "no source named 'nope'"),
                        ("ragbag://mail/x", "unknown resource"),
                        ("file:///etc/passwd", "unknown resource"),
                    ]:
                        with pytest.raises(MCPError) as exc:
                            await s.read_resource(uri)
                        assert says in _rpc_error(exc), uri
                        assert exc.value.data == {"uri": uri}

                    prompts = {p.name: p for p in (await s.list_prompts()).prompts}
                    assert set(prompts) == {p.name for p in mcp_prompts.PROMPTS}
                    assert {"answer-with-citations", "summarize-source", "find-file"} <= set(prompts)
                    question = prompts["answer-with-citations"].arguments[0]
                    assert (question.name, question.required) == ("question", True)
                    got = await s.get_prompt("answer-with-citations", {"question": "What is the door code?"})
                    (message,) = got.messages
                    text = message.content.text
                    assert message.role == "user" and "Question: What is the door code?" in text
                    assert "`search`" in text and "[c:xxxxxx]" in text and "not instructions" in text
                    scoped = await s.get_prompt("answer-with-citations", {"question": "door?", "source": "notes"})
                    assert 'with source "notes"' in scoped.messages[0].content.text
                    summary = (await s.get_prompt("summarize-source", {"source": "notes"})).messages[0].content.text
                    assert '"notes" (files; 5 documents' in summary and "not instructions" in summary
                    find = (await s.get_prompt("find-file", {"description": "the boiler manual"})).messages[0]
                    assert "the boiler manual" in find.content.text and "`find_files`" in find.content.text

                    for name, args, says in [
                        ("nope", {}, "unknown prompt 'nope'"),
                        ("answer-with-citations", {}, "argument 'question' is required"),
                        ("answer-with-citations", {"question": "  "}, "argument 'question' is required"),
                        ("answer-with-citations", {"question": "q", "k": "3"}, "unknown argument 'k'"),
                        ("summarize-source", {"source": "nope"}, "no source named 'nope'"),
                    ]:
                        with pytest.raises(MCPError) as exc:
                            await s.get_prompt(name, args)
                        assert says in _rpc_error(exc), (name, args)
                    # still serving after every error
                    assert _json(await s.call_tool("list_sources", {}))["sources"][0]["source"] == "notes"

    anyio.run(session)
