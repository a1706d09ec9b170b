"""HTTP providers against tiny local servers speaking their wire formats (no network)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from ragbag.answer import llm
from ragbag.answer.llm import ToolCall
from ragbag.core.errors import RagbagError


class Fake(BaseHTTPRequestHandler):
    """Routes: OpenAI /v1/models + /v1/chat/completions, Ollama /api/tags + /api/chat,
    Anthropic /v1/messages. Requests are recorded on the server."""

    def log_message(self, *a):
        pass

    def _send(self, code, body, ctype="application/json"):
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _stream(self, chunks, ctype):
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.end_headers()
        for c in chunks:
            self.wfile.write(c.encode())
            self.wfile.flush()

    def do_GET(self):
        self.server.requests.append(("GET", self.path, dict(self.headers), None))
        if self.headers.get("Authorization", "Bearer good") != "Bearer good":
            return self._send(401, {"error": {"message": "Incorrect API key provided"}})
        if self.path == "/v1/models":
            return self._send(200, {"object": "list", "data": [{"id": "gpt-4o-mini"}, {"id": "qwen2.5-7b-instruct"}]})
        if self.path == "/api/tags":
            return self._send(200, {"models": [{"name": "llama3.2:latest"}, {"name": "qwen3:8b"}]})
        if self.path.startswith("/v1/models?"):
            return self._send(200, {"data": [{"id": "claude-sonnet-4-5"}, {"id": "claude-haiku-4-5"}]})
        self._send(404, {"error": "not found"})

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.requests.append(("POST", self.path, dict(self.headers), body))
        if self.path == "/v1/chat/completions":
            if body.get("tools"):
                return self._send(
                    200,
                    {
                        "choices": [
                            {
                                "message": {
                                    "role": "assistant",
                                    "content": None,
                                    "tool_calls": [
                                        {
                                            "id": "call_1",
                                            "type": "function",
                                            "function": {
                                                "name": "search",
                                                "arguments": json.dumps({"query": "door code", "k": 3}),
                                            },
                                        }
                                    ],
                                }
                            }
                        ]
                    },
                )
            if body.get("stream"):
                events = [
                    f"data: {json.dumps({'choices': [{'delta': {'content': t}}]})}\n\n"
                    for t in ("The door ", "code is ", "4411# [c:ab33a0].")
                ]
                return self._stream([": keep-alive\n\n", *events, "data: [DONE]\n\n"], "text/event-stream")
            return self._send(200, {"choices": [{"message": {"role": "assistant", "content": "plain reply"}}]})
        if self.path == "/api/chat":
            if body.get("tools"):
                return self._send(
                    200,
                    {
                        "message": {
                            "role": "assistant",
                            "content": "",
                            "tool_calls": [
                                {"function": {"name": "grep_file", "arguments": {"doc_id": "d1", "pattern": "4411"}}}
                            ],
                        },
                        "done": True,
                    },
                )
            lines = [json.dumps({"message": {"content": t}, "done": False}) + "\n" for t in ("Hel", "lo")]
            return self._stream(
                [*lines, json.dumps({"message": {"content": ""}, "done": True}) + "\n"], "application/x-ndjson"
            )
        if self.path == "/v1/messages":
            if body.get("tools"):
                return self._send(
                    200,
                    {
                        "content": [
                            {"type": "text", "text": "Let me look."},
                            {"type": "tool_use", "id": "tu_1", "name": "read_file", "input": {"doc_id": "d1"}},
                        ]
                    },
                )
            ev = [
                ("message_start", {"type": "message_start"}),
                (
                    "content_block_delta",
                    {"type": "content_block_delta", "delta": {"type": "text_delta", "text": "Bon"}},
                ),
                (
                    "content_block_delta",
                    {"type": "content_block_delta", "delta": {"type": "text_delta", "text": "jour"}},
                ),
                ("message_stop", {"type": "message_stop"}),
            ]
            return self._stream([f"event: {e}\ndata: {json.dumps(d)}\n\n" for e, d in ev], "text/event-stream")
        self._send(404, {"error": "not found"})


@pytest.fixture
def server():
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Fake)
    srv.requests = []
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield srv, f"http://127.0.0.1:{srv.server_address[1]}"
    srv.shutdown()
    srv.server_close()


MESSAGES = [{"role": "system", "content": "rules"}, {"role": "user", "content": "door code?"}]


def test_openai_compatible_streams_sse_and_lists_models(server, monkeypatch):
    srv, url = server
    monkeypatch.setenv("OPENAI_API_KEY", "good")
    p = llm.get("openai", model="gpt-4o-mini", base_url=url + "/v1")
    p.check()
    chunks = list(p.stream(MESSAGES))
    assert chunks == ["The door ", "code is ", "4411# [c:ab33a0]."]  # streamed, chunk by chunk
    method, path, headers, body = srv.requests[-1]
    assert path == "/v1/chat/completions" and body["stream"] is True and body["messages"] == MESSAGES
    assert headers["Authorization"] == "Bearer good"

    with pytest.raises(RagbagError, match=r"unknown model 'gpt-4o-mnii'; did you mean gpt-4o-mini"):
        llm.get("openai", model="gpt-4o-mnii", base_url=url + "/v1").check()


def test_openai_compatible_tool_calls_round_trip(server, monkeypatch):
    srv, url = server
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)  # a local server needs no key
    p = llm.get("openai", model="qwen2.5-7b-instruct", base_url=url + "/v1")
    spec = {"name": "search", "description": "d", "parameters": {"type": "object", "properties": {}}}
    reply = p.chat_tools(MESSAGES, [spec])
    assert reply.tool_calls == [ToolCall("search", {"query": "door code", "k": 3}, "call_1")]
    body = srv.requests[-1][3]
    assert body["tools"] == [{"type": "function", "function": spec}] and "Authorization" not in srv.requests[-1][2]
    history = MESSAGES + [
        {"role": "assistant", "content": "", "tool_calls": reply.tool_calls},
        {"role": "tool", "tool_call_id": "call_1", "name": "search", "content": '{"hits": []}'},
    ]
    p.chat_tools(history, [spec])
    wire = srv.requests[-1][3]["messages"]
    assert wire[2]["tool_calls"][0] == {
        "id": "call_1",
        "type": "function",
        "function": {"name": "search", "arguments": json.dumps({"query": "door code", "k": 3})},
    }
    assert wire[3] == {"role": "tool", "content": '{"hits": []}', "tool_call_id": "call_1"}


def test_openai_errors_are_one_line_and_name_the_variable_or_url(server, monkeypatch):
    srv, url = server
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(RagbagError, match="set OPENAI_API_KEY"):
        llm.get("openai")
    monkeypatch.setenv("OPENAI_API_KEY", "bad")
    with pytest.raises(RagbagError, match="HTTP 401: Incorrect API key provided .check OPENAI_API_KEY"):
        llm.get("openai", base_url=url + "/v1").check()
    with pytest.raises(RagbagError, match=r"cannot reach http://127.0.0.1:9/v1/models"):
        llm.get("openai", base_url="http://127.0.0.1:9/v1").check()


def test_ollama_host_models_stream_and_tools(server, monkeypatch):
    srv, url = server
    monkeypatch.setenv("OLLAMA_HOST", url.removeprefix("http://"))
    p = llm.get("ollama", model="llama3.2")
    assert p.base_url == url
    p.check()  # "llama3.2" is "llama3.2:latest"
    with pytest.raises(RagbagError, match="did you mean qwen3:8b"):
        llm.get("ollama", model="qwen3:7b").check()
    assert list(p.stream(MESSAGES)) == ["Hel", "lo"]
    reply = p.chat_tools(MESSAGES, [{"name": "grep_file", "description": "d", "parameters": {"type": "object"}}])
    assert reply.tool_calls[0].name == "grep_file" and reply.tool_calls[0].arguments == {
        "doc_id": "d1",
        "pattern": "4411",
    }
    from ragbag.answer.llm.ollama import host_url

    assert host_url("0.0.0.0") == "http://127.0.0.1:11434" and host_url(None) == "http://127.0.0.1:11434"
    monkeypatch.setenv("OLLAMA_HOST", "127.0.0.1:9")
    with pytest.raises(RagbagError, match="cannot reach http://127.0.0.1:9/api/tags.*OLLAMA_HOST"):
        llm.get("ollama").check()


def test_anthropic_messages_stream_and_tool_use(server, monkeypatch):
    srv, url = server
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(RagbagError, match="set ANTHROPIC_API_KEY"):
        llm.get("anthropic")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    p = llm.get("anthropic", model="claude-sonet-4-5", base_url=url)
    with pytest.raises(RagbagError, match="did you mean claude-sonnet-4-5"):
        p.check()
    assert list(p.stream(MESSAGES)) == ["Bon", "jour"]
    body = srv.requests[-1][3]
    assert body["system"] == "rules" and body["messages"] == [{"role": "user", "content": "door code?"}]
    assert {k.lower(): v for k, v in srv.requests[-1][2].items()}["x-api-key"] == "k"
    reply = p.chat_tools(MESSAGES, [{"name": "read_file", "description": "d", "parameters": {"type": "object"}}])
    assert reply.text == "Let me look." and reply.tool_calls == [ToolCall("read_file", {"doc_id": "d1"}, "tu_1")]
    from ragbag.answer.llm.anthropic import _wire

    wire = _wire(
        MESSAGES
        + [
            {"role": "assistant", "content": "", "tool_calls": reply.tool_calls},
            {"role": "tool", "tool_call_id": "tu_1", "content": "{}"},
        ]
    )
    assert wire[1]["content"][0]["type"] == "tool_use" and wire[2]["content"][0]["tool_use_id"] == "tu_1"


def test_llama_cpp_missing_extra_is_a_one_line_error(tmp_path):
    try:
        import llama_cpp  # noqa: F401

        pytest.skip("llama-cpp-python is installed")
    except ImportError:
        pass
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF")
    with pytest.raises(RagbagError, match="llama-cpp-python is not installed"):
        llm.get("llama-cpp", model=str(gguf)).check()


def test_llama_cpp_generates_with_a_local_gguf(tmp_path):
    pytest.importorskip("llama_cpp")
    import os

    path = os.environ.get("RAGBAG_TEST_GGUF")
    if not path:
        pytest.skip("set RAGBAG_TEST_GGUF to a small .gguf model to run this test")
    p = llm.get("llama-cpp", model=path, max_tokens=16)
    assert "".join(p.stream([{"role": "user", "content": "Say hi."}])).strip()
