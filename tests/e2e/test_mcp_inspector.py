"""`ragbag mcp` driven by a third-party client: the MCP Inspector's CLI.

tests/e2e/test_mcp.py talks to the server through the Python SDK the server is built on, so a mistake
the two share would pass it. The Inspector runs on the reference TypeScript SDK: it lists what
the server offers, reads resources, gets prompts and calls tools as a Node client does, and it
checks every tool result's structured content against the tool's output schema with a validator
of its own (ajv), failing the call when they disagree. `make inspector` installs it from npm at
the versions tests/inspector/package-lock.json pins, into the git-ignored .work/npm; the test
skips only where node is missing. Each Inspector call starts a server of its own (3 s on an
idle 2-core machine, 6-8 s on a busy one), so the calls are few: one per method, one per tool.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import jsonschema
import pytest
from conftest import RAGBAG, ROOT
from shared_homes import DOCS

from ragbag.answer.tool_specs import SPECS
from ragbag.apps import mcp_prompts
from ragbag.core.home import Home

INSPECTOR = ROOT / ".work" / "npm" / "node_modules" / ".bin" / "inspector"
NODE = shutil.which("node")

# The session's shared notes home, which test_mcp reads too (notes_home, tests/shared_homes.py).
pytestmark = [
    pytest.mark.slow(seconds=60),
    pytest.mark.skipif(
        NODE is None or shutil.which("npx") is None,
        reason="node/npx not installed (the test needs node >= 20; `make inspector` then installs the Inspector)",
    ),
]

# Values for the tools' required arguments, by argument name; "<doc>" and "<citation>" come from
# a search through the Inspector itself. A new tool whose required argument is missing here
# fails the test with its name, rather than going untested.
POOL: dict[str, object] = {
    "query": "street door code lisbon",
    "doc_id": "<doc>",
    "citation": "<citation>",
    "source": "notes",
    "pattern": "\\d{4}#",
    "from_version": 1,
}
# What a tool is called with besides its required arguments (some take none, but want one).
EXTRA: dict[str, dict[str, object]] = {
    "search": {"k": 3},
    "find_files": {"name": "lisbon.md"},
    "read_file": {"max_length": 200},
    "history": {"doc_id": "<doc>"},
}


@pytest.fixture(scope="module")
def kb(notes_home):
    return notes_home


@pytest.fixture(scope="module")
def inspector() -> Path:
    """The installed Inspector; a missing install is a failure here, not a skip: `make test`
    installs it wherever node is."""
    if not INSPECTOR.exists():
        pytest.fail("the MCP Inspector is not installed: run `make inspector`")
    assert NODE is not None
    version = subprocess.run([NODE, "--version"], capture_output=True, text=True, check=True).stdout.strip()
    assert int(version.lstrip("v").split(".")[0]) >= 20, f"the Inspector's CLI needs node >= 20, found {version}"
    return INSPECTOR


def _inspect(inspector: Path, home: Home, tmp_path: Path, *args: str) -> tuple[int, dict, str]:
    """One Inspector call against a fresh `ragbag mcp`: (exit code, the JSON it printed, stderr).
    The Inspector gets no RAGBAG_HOME of its own: the server finds the home only through ``-e``,
    as it would from a client's config."""
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path)}  # nothing of the Inspector's lands in ~
    cmd = [
        str(inspector),
        "--cli",
        "--format",
        "json",
        "-e",
        f"RAGBAG_HOME={home.root}",
        "-e",
        f"DAGSTER_HOME={home.dagster_home}",
        RAGBAG,
        "mcp",
        *args,
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=180, env=env, cwd=tmp_path)
    if proc.stdout.strip():
        return proc.returncode, json.loads(proc.stdout), proc.stderr
    # A protocol error: the Inspector's error envelope is the last line of stderr, after the server's logs.
    last = proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else ""
    assert last.startswith("{"), f"no JSON from the Inspector (exit {proc.returncode}):\n{proc.stderr[-3000:]}"
    return proc.returncode, json.loads(last), proc.stderr


def _result(inspector: Path, home: Home, tmp_path: Path, *args: str) -> dict:
    code, out, err = _inspect(inspector, home, tmp_path, *args)
    assert code == 0 and "result" in out, f"{args}: exit {code}, {json.dumps(out)[:2000]}\n{err[-3000:]}"
    return out["result"]


def _tool_args(name: str, args: dict[str, object], values: dict[str, object]) -> list[str]:
    """``--tool-arg k=v`` pairs, with the placeholders in ``values`` filled in. The CLI parses
    each value as JSON when it can, so every value goes as JSON: a doc_id that happens to look
    like a number stays a string."""
    pairs = [f"{k}={json.dumps(values.get(v, v) if isinstance(v, str) else v)}" for k, v in args.items()]
    return ["--method", "tools/call", "--tool-name", name, *(["--tool-arg", *pairs] if pairs else [])]


@pytest.fixture(scope="module")
def listed(inspector, kb, tmp_path_factory) -> dict[str, dict]:
    """tools/list through the Inspector, with its schema portability check (``--strict``: exit 6
    and ``schemaFindings`` on any finding, warnings included in the report): each tool by name."""
    code, out, err = _inspect(inspector, kb, tmp_path_factory.mktemp("inspector"), "--method", "tools/list", "--strict")
    assert code == 0 and "result" in out, f"exit {code}: {json.dumps(out)[:2000]}\n{err[-3000:]}"
    assert "schemaFindings" not in out, json.dumps(out["schemaFindings"], indent=1)[:4000]
    assert "portability" not in err, err[-3000:]
    return {t["name"]: t for t in out["result"]["tools"]}


@pytest.fixture(scope="module")
def searched(inspector, kb, tmp_path_factory) -> dict:
    """The search tool's result through the Inspector. Its top hit names the doc_id and the
    citation that the other calls take."""
    args = {"query": POOL["query"], **EXTRA["search"]}
    result = _result(inspector, kb, tmp_path_factory.mktemp("inspector"), *_tool_args("search", args, {}))
    top = result["structuredContent"]["hits"][0]
    assert top["uri"].endswith("lisbon.md") and "4411#" in top["text"]
    return result


def test_inspector_lists_reads_and_gets(inspector, kb, tmp_path, listed, searched):
    assert set(listed) == {s["name"] for s in SPECS}
    for t in listed.values():
        assert t["outputSchema"]["type"] == "object", f"{t['name']} has no output schema"
        jsonschema.Draft202012Validator.check_schema(t["outputSchema"])

    (resource,) = _result(inspector, kb, tmp_path, "--method", "resources/list")["resources"]
    assert resource["uri"] == "ragbag://source/notes" and resource["mimeType"] == "application/json"
    templates = _result(inspector, kb, tmp_path, "--method", "resources/templates/list")["resourceTemplates"]
    assert {t["uriTemplate"] for t in templates} == {"ragbag://doc/{doc_id}", "ragbag://source/{name}"}

    doc = searched["structuredContent"]["hits"][0]["doc_id"]
    read = _result(inspector, kb, tmp_path, "--method", "resources/read", "--uri", f"ragbag://doc/{doc}")
    (contents,) = read["contents"]
    assert contents["mimeType"] == "text/plain" and contents["text"] == DOCS["notes/lisbon.md"]
    code, out, _ = _inspect(inspector, kb, tmp_path, "--method", "resources/read", "--uri", "ragbag://doc/nope")
    assert code != 0 and "unknown doc_id 'nope'" in out["error"]["message"]

    prompts = _result(inspector, kb, tmp_path, "--method", "prompts/list")["prompts"]
    assert {p["name"] for p in prompts} == {p.name for p in mcp_prompts.PROMPTS}
    question = "question=What is the door code?"
    got = _result(
        inspector,
        kb,
        tmp_path,
        "--method",
        "prompts/get",
        "--prompt-name",
        "answer-with-citations",
        "--prompt-args",
        question,
    )
    text = got["messages"][0]["content"]["text"]
    assert "Question: What is the door code?" in text and "[c:xxxxxx]" in text and "not instructions" in text


def test_inspector_calls_every_tool(inspector, kb, tmp_path, listed, searched):
    """Every tool in SPECS, each once, with real arguments from the built home: a result, not an
    error, whose structured content the Inspector validated and whose text is the same JSON."""
    top = searched["structuredContent"]["hits"][0]
    values = {"<doc>": top["doc_id"], "<citation>": top["citation"]}
    called = {}
    for spec in SPECS:
        name = spec["name"]
        missing = [k for k in spec["parameters"].get("required", []) if k not in POOL]
        if missing:
            pytest.fail(f"tool {name} requires {missing}: give test_mcp_inspector.POOL a value for it")
        args = {k: POOL[k] for k in spec["parameters"].get("required", [])} | EXTRA.get(name, {})
        result = searched if name == "search" else _result(inspector, kb, tmp_path, *_tool_args(name, args, values))
        assert not result.get("isError"), f"{name}({args}): {result['content'][0]['text']}"
        structured = result["structuredContent"]
        assert json.loads(result["content"][0]["text"]) == structured, name
        errors = [
            e.message for e in jsonschema.Draft202012Validator(listed[name]["outputSchema"]).iter_errors(structured)
        ]
        assert not errors, f"{name}: {errors}"
        called[name] = structured
    assert set(called) == {s["name"] for s in SPECS}
    assert called["read_file"]["text"].startswith("# Lisbon trip")
    assert called["grep_file"]["matches"][0]["match"] == "4411#"
    assert called["list_sources"]["sources"][0]["source"] == "notes" and called["source_status"]["built"]
