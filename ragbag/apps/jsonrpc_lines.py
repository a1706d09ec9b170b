"""What answers a line from an MCP client that the SDK cannot read.

The SDK's stdio transport drops every line its validation rejects, so a client whose request holds
a lone surrogate (``"\\ud800"``), nests 10,000 levels deep, is not UTF-8 or is not a JSON object
would wait forever. JSON-RPC 2.0 answers each of them: a parse error (-32700) for what is not
JSON, an invalid request (-32600) for JSON that is not a request, invalid params (-32602) for a
request whose params cannot be taken, with the request's id when the line still shows it and
null when not. Notifications and responses are never answered (JSON-RPC says so), nor is a blank
line, which carries no message.

The line is read without recursion: its top-level members are found by one scan of its strings
and brackets, so a line of any depth costs time linear in its length, and only members no deeper
than a message may be are parsed.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602
# How deep a member of a message may nest: pydantic-core's JSON parser, which the SDK reads
# messages with, refuses more than 200 levels below the message object.
MAX_DEPTH = 200

# A whole JSON string, a bracket or separator, or a quote that opens a string never closed.
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\],:]|"', re.S)
_OPENS = {"}": "{", "]": "["}
_SURROGATE = re.compile("[\ud800-\udfff]")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,59}")


@dataclass(frozen=True)
class Refusal:
    """The JSON-RPC error that answers one line."""

    id: int | str | None
    code: int
    message: str


@dataclass
class _Top:
    """A line's top-level object as found by the scan: each member's raw JSON text and depth."""

    members: dict[str, str]
    depth: dict[str, int]
    whole: bool  # closed, with nothing after it


def refusal(line: bytes) -> Refusal | None:
    """The error that answers ``line``, a line the SDK could not read (or read as a notification
    though it has an id the SDK cannot take); None when JSON-RPC wants no answer (a
    notification, a response, a blank line)."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as e:
        ident = _id(_scan(line.decode("utf-8", "replace")))
        byte = f"0x{line[e.start]:02x} at {e.start}"
        return Refusal(ident, PARSE_ERROR, f"parse error: the line is not UTF-8 (byte {byte})")
    if not text.strip():
        return None
    top = _scan(text)
    if top is None:
        return _not_an_object(text)
    ident = _id(top)
    request = "method" in top.members and "id" in top.members
    for name, depth in top.depth.items():
        if depth > MAX_DEPTH:
            if top.whole and "method" in top.members and "id" not in top.members:
                return None  # a notification, whatever its params: never answered
            code, what = (INVALID_PARAMS, "invalid params") if request and name == "params" else _INVALID
            return Refusal(ident, code, f"{what}: {_shown(name)} nests {depth:,} levels deep; the most is {MAX_DEPTH}")
    try:  # no member nests deeper than MAX_DEPTH: the parser's recursion is bounded
        values = json.loads(text) if top.whole else None
    except ValueError:
        values = None
    if not isinstance(values, dict):
        return Refusal(ident, PARSE_ERROR, "parse error: the line is not one JSON object")
    if request:
        return _bad_request(values, ident)
    if "method" in values or "result" in values or "error" in values:
        return None  # a notification or a response: JSON-RPC answers neither
    return Refusal(ident, INVALID_REQUEST, "invalid request: it has no method")


_INVALID = (INVALID_REQUEST, "invalid request")


def _bad_request(values: dict[str, Any], ident: int | str | None) -> Refusal:
    """What is wrong with a request that parses as JSON."""
    method, params = values["method"], values.get("params")
    if values.get("jsonrpc") != "2.0":
        return Refusal(ident, INVALID_REQUEST, 'invalid request: "jsonrpc" must be "2.0"')
    if ident is None:
        return Refusal(None, INVALID_REQUEST, "invalid request: its id must be a string or an integer")
    if not isinstance(method, str) or _SURROGATE.search(method):
        return Refusal(ident, INVALID_REQUEST, "invalid request: its method must be a string of text")
    if params is not None and not isinstance(params, dict):
        return Refusal(ident, INVALID_PARAMS, "invalid params: params must be an object")
    where = _surrogate_at(params, "params")
    if where is not None:
        path, char = where
        lone = f"\\u{ord(char):04x}"
        return Refusal(ident, INVALID_PARAMS, f"invalid params: {path} holds a lone surrogate ({lone}): not text")
    return Refusal(ident, INVALID_REQUEST, f"invalid request: {method!r} is not a request this server can read")


def _surrogate_at(value: Any, path: str) -> tuple[str, str] | None:
    """(where, the surrogate) of the first string, key or value, holding a lone surrogate. Walked
    with a stack: the value may nest up to ``MAX_DEPTH`` levels."""
    stack = [(value, path)]
    while stack:
        item, where = stack.pop()
        if isinstance(item, str):
            found = _SURROGATE.search(item)
            if found:
                return where, found.group()
        elif isinstance(item, dict):
            for key, v in item.items():
                found = _SURROGATE.search(key)
                if found:
                    return f"a key of {where}", found.group()
                stack.append((v, f"{where}.{_shown(key)}"))
        elif isinstance(item, list):
            stack.extend((v, f"{where}[{n}]") for n, v in enumerate(item))
    return None


def _shown(name: str) -> str:
    """A member name fit for a one-line message: as it is when a plain word, else as JSON (a
    surrogate or a control shown escaped)."""
    return name if _WORD.fullmatch(name) else json.dumps(name[:60])


def _not_an_object(text: str) -> Refusal:
    """A line that does not start an object: a batch, a bare value, or no JSON at all."""
    start = text.lstrip()[:1]
    if start == "[":
        return Refusal(None, INVALID_REQUEST, "invalid request: batches are not part of MCP; send one object a line")
    try:
        json.loads(text)
    except (ValueError, RecursionError):
        return Refusal(None, PARSE_ERROR, "parse error: the line is not JSON")
    return Refusal(None, INVALID_REQUEST, "invalid request: a message is a JSON object")


def _id(top: _Top | None) -> int | str | None:
    """The request id the line shows, when it is one JSON-RPC allows (a string or an integer)."""
    raw = top.members.get("id") if top is not None else None
    if raw is None or top is None or top.depth["id"]:
        return None
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    if isinstance(value, bool) or not isinstance(value, int | str):
        return None
    return None if isinstance(value, str) and _SURROGATE.search(value) else value


def _scan(text: str) -> _Top | None:
    """The top-level members of a line that starts an object (None when it does not), found
    without parsing their values; a line cut short or malformed yields the members before the
    break, with ``whole`` False."""
    body = text.strip()
    if not body.startswith("{"):
        return None
    top = _Top({}, {}, False)
    stack: list[str] = []
    key: str | None = None
    start = deepest = 0
    expect_key = True
    for m in _TOKEN.finditer(body):
        tok = m.group()
        if tok == '"':
            return top  # a string never closed
        if len(stack) == 1 and tok.startswith('"') and expect_key:
            try:
                key = json.loads(tok)
            except ValueError:
                return top
            expect_key = False
        elif len(stack) == 1 and tok == ":" and key is not None:
            start, deepest = m.end(), 0
        elif tok in ("{", "["):
            stack.append(tok)
            deepest = max(deepest, len(stack) - 1)
        elif tok in ("}", "]"):
            if not stack or stack[-1] != _OPENS[tok]:
                return top
            if len(stack) == 1 and key is not None:
                top.members[key], top.depth[key] = body[start : m.start()].strip(), deepest
            stack.pop()
            if not stack:
                top.whole = not body[m.end() :].strip()
                return top
        elif tok == "," and len(stack) == 1 and key is not None:
            top.members[key], top.depth[key] = body[start : m.start()].strip(), deepest
            key, expect_key = None, True
    return top
