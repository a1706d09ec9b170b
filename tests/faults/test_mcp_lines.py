"""Every MCP request gets an answer (issue #38, class 6).

The SDK's stdio transport dropped each line its validation rejected, so a request holding a lone
surrogate, a 10,000-deep argument, bytes that are not UTF-8 or a line that is not a JSON object
left its client waiting forever. Raw lines are written to `ragbag mcp`'s stdin after a normal
handshake, as a client with a bug (or a hostile one) would send them: each request is answered
with a JSON-RPC error carrying its id when the line shows one (null when not), a notification is
not answered, and the server then serves a normal call. ``jsonrpc_lines.refusal`` is also
checked on its own, line by line.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import time

import pytest
from conftest import RAGBAG

from ragbag.apps.jsonrpc_lines import INVALID_PARAMS, INVALID_REQUEST, PARSE_ERROR, refusal
from ragbag.core.home import Home

DEEP = b"[" * 10_000 + b"]" * 10_000


def _call(ident: str, arguments: bytes) -> bytes:
    """A tools/call of search, its arguments given as raw JSON text."""
    return (
        b'{"jsonrpc": "2.0", "id": ' + ident.encode() + b', "method": "tools/call", '
        b'"params": {"name": "search", "arguments": ' + arguments + b"}}"
    )


# (line, the id its answer carries, the error code); None: no answer at all
LINES: list[tuple[str, bytes, object, int | None]] = [
    ("lone surrogate", _call("11", b'{"query": "gate \\ud800 code"}'), 11, INVALID_PARAMS),
    ("lone low surrogate key", _call('"s"', b'{"\\udc00": 1, "query": "x"}'), "s", INVALID_PARAMS),
    ("10,000-deep argument", _call('"deep"', b'{"query": ' + DEEP + b"}"), "deep", INVALID_PARAMS),
    ("not UTF-8", _call("13", b'{"query": "caf\xe9 cr\xe8me"}'), 13, PARSE_ERROR),
    ("a number", b"42", None, INVALID_REQUEST),
    ("a batch", b'[{"jsonrpc": "2.0", "id": 14, "method": "ping"}]', None, INVALID_REQUEST),
    ("not JSON", b"hello, server", None, PARSE_ERROR),
    ("cut short", _call("15", b'{"query": "x"')[:-2], 15, PARSE_ERROR),
    ("surrogate in the id", b'{"jsonrpc": "2.0", "id": "\\ud800", "method": "ping"}', None, INVALID_REQUEST),
    ("id of a wrong type", b'{"jsonrpc": "2.0", "id": [1], "method": "ping"}', None, INVALID_REQUEST),
    ("a null id", b'{"jsonrpc": "2.0", "id": null, "method": "ping"}', None, INVALID_REQUEST),
    ("no method", b'{"jsonrpc": "2.0", "id": 16}', 16, INVALID_REQUEST),
    ("params a list", b'{"jsonrpc": "2.0", "id": 17, "method": "tools/list", "params": [1]}', 17, INVALID_PARAMS),
    ("deep id member", b'{"jsonrpc": "2.0", "id": 18, "method": "ping", "x": ' + DEEP + b"}", 18, INVALID_REQUEST),
]
UNANSWERED = [
    ("a notification", b'{"jsonrpc": "2.0", "method": "notifications/x", "params": {"a": "\\ud800"}}'),
    ("a deep notification", b'{"jsonrpc": "2.0", "method": "notifications/x", "params": {"a": ' + DEEP + b"}}"),
    ("a notification with an id inside", b'{"jsonrpc": "2.0", "method": "notifications/x", "params": {"id": 5}}'),
    ("a blank line", b"   "),
]


@pytest.mark.parametrize(("name", "line", "ident", "code"), LINES, ids=[c[0] for c in LINES])
def test_each_bad_line_has_its_refusal(name, line, ident, code):
    got = refusal(line)
    assert got is not None and (got.id, got.code) == (ident, code), got
    assert "\n" not in got.message and len(got.message) < 200


@pytest.mark.parametrize(("name", "line"), UNANSWERED, ids=[c[0] for c in UNANSWERED])
def test_notifications_and_blank_lines_get_no_answer(name, line):
    assert refusal(line) is None


def test_a_line_of_any_depth_is_read_in_linear_time():
    t = time.perf_counter()
    got = refusal(_call("1", b'{"query": ' + b"[" * 1_000_000 + b"]" * 1_000_000 + b"}"))
    assert got is not None and got.code == INVALID_PARAMS and "1,000,002 levels" in got.message
    assert time.perf_counter() - t < 5


class Raw:
    """`ragbag mcp` with its stdin and stdout as bytes."""

    def __init__(self, home: Home, log):
        env = {**os.environ, "RAGBAG_HOME": str(home.root), "DAGSTER_HOME": str(home.dagster_home)}
        self.proc = subprocess.Popen(
            [RAGBAG, "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, env=env
        )
        self.pending = b""

    def send(self, line: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()

    def answer(self, timeout: float = 30) -> dict:
        """The next message the server writes (a client waiting forever is a failure here)."""
        assert self.proc.stdout is not None
        deadline = time.monotonic() + timeout
        while b"\n" not in self.pending:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self.proc.stdout], [], [], max(0, left))
            assert ready, f"no answer in {timeout:g} s"
            chunk = os.read(self.proc.stdout.fileno(), 65536)
            assert chunk, f"the server closed stdout (exit {self.proc.poll()})"
            self.pending += chunk
        line, self.pending = self.pending.split(b"\n", 1)
        return json.loads(line)

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def test_every_request_gets_an_answer_and_the_server_serves_on(tmp_path):
    home = Home(tmp_path / "home").ensure()
    with open(tmp_path / "stderr.log", "wb") as log:
        server = Raw(home, log)
        try:
            server.send(
                json.dumps(
                    {
                        "jsonrpc": "2.0",
                        "id": 1,
                        "method": "initialize",
                        "params": {
                            "protocolVersion": "2025-06-18",
                            "capabilities": {},
                            "clientInfo": {"name": "raw", "version": "0"},
                        },
                    }
                ).encode()
            )
            assert server.answer(timeout=120)["result"]["serverInfo"]["name"] == "ragbag"
            server.send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')
            for name, line, ident, code in LINES:
                for _, quiet in UNANSWERED:  # each answer is the next line's: these get none
                    server.send(quiet)
                server.send(line)
                got = server.answer()
                assert got["id"] == ident and got["error"]["code"] == code, (name, got)
            server.send(b'{"jsonrpc": "2.0", "id": 99, "method": "tools/call", "params": {"name": "list_sources"}}')
            got = server.answer()
            assert got["id"] == 99 and got["result"]["structuredContent"] == {"sources": []}, got
        finally:
            server.close()
    assert server.proc.returncode == 0, (tmp_path / "stderr.log").read_text()[-2000:]
