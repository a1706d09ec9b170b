"""The retrieval tools' contract: names, JSON schemas, descriptions and argument validation.

Every tool has a JSON schema (``SPECS``) whose description tells an agent when to use it. The MCP
server lists these schemas, the agent gives them to a model with native tool calling or spells
them out in its JSON action format, and ``validate`` checks arguments against them, so every
caller rejects the same bad input with the same one-line ``ToolError``.
"""

from __future__ import annotations

from typing import Any

from ragbag.core.errors import RagbagError
from ragbag.search.request import filter_schema

MAX_CHARS = 20_000  # budget for one tool result (characters of JSON)
MAX_K = 50
READ_DEFAULT = 4_000


class ToolError(RagbagError):
    """A tool call that cannot be served (bad argument, unknown id): a one-line message."""


_FILTERS = filter_schema()  # declared once, with the CLI's filter options

SPECS: list[dict[str, Any]] = [
    {
        "name": "search",
        "description": (
            "Search the user's indexed data (files, code, mail, chats…) and get the best matching "
            "passages with their citation ids, doc_ids and character spans. Start here for any "
            "question about the user's data; then read_file or grep_file a doc_id for more context "
            "before citing. Hybrid keyword + semantic ranking by default; filters apply before ranking."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "What to look for, in natural language or keywords."},
                "k": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_K,
                    "default": 10,
                    "description": "How many passages.",
                },
                **_FILTERS,
                "mode": {
                    "type": "string",
                    "enum": ["hybrid", "vector", "keyword"],
                    "default": "hybrid",
                    "description": "hybrid (default); keyword for exact names, codes and identifiers; "
                    "vector for paraphrases.",
                },
                "rerank": {
                    "type": "boolean",
                    "default": False,
                    "description": "Re-score the best candidates with second-stage models: better order, "
                    "seconds slower the first time a passage is seen.",
                },
            },
            "required": ["query"],
            "additionalProperties": False,
        },
    },
    {
        "name": "find_files",
        "description": (
            "Find indexed documents by file name, path or title (not by content): use it when the "
            "user names a file, folder or document, then read_file / grep_file the doc_id it returns."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "name": {
                    "type": "string",
                    "description": "Exact file name (case-insensitive), full path/uri, or a glob like '*.md'.",
                },
                "name_contains": {
                    "type": "string",
                    "description": "A substring of the path, uri or title (case-insensitive).",
                },
                "connector": {"type": "string", "description": "Only documents of this connector type."},
                "source": {"type": "string", "description": "Only documents of this source."},
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": 500,
                    "default": 50,
                    "description": "Most documents to list.",
                },
            },
            "additionalProperties": False,
        },
    },
    {
        "name": "read_file",
        "description": (
            "Read an indexed document's text by doc_id (from search or find_files), a window of "
            "max_length characters from offset. Use it to see the context around a search hit "
            "(offset = the hit's start minus a little) or to read a whole document page by page "
            "(next_offset). The result lists the citation ids of the passages it covers."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "doc_id": {"type": "string", "description": "A doc_id returned by search or find_files."},
                "offset": {
                    "type": "integer",
                    "minimum": 0,
                    "default": 0,
                    "description": "Character offset to start at.",
                },
                "max_length": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_CHARS,
                    "default": READ_DEFAULT,
                    "description": "Most characters to return.",
                },
            },
            "required": ["doc_id"],
            "additionalProperties": False,
        },
    },
    {
        "name": "grep_file",
        "description": (
            "Find every match of a regular expression in one indexed document (by doc_id), with "
            "character positions, surrounding context and the citation id of the passage each "
            "match is in. Use it for exact facts inside a long document: numbers, names, dates, "
            "codes. Then read_file at a match's start for more context."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "doc_id": {"type": "string", "description": "A doc_id returned by search or find_files."},
                "pattern": {
                    "type": "string",
                    "description": "A Python regular expression, e.g. 'gate code|door code'.",
                },
                "context_chars": {
                    "type": "integer",
                    "minimum": 0,
                    "maximum": 2000,
                    "default": 80,
                    "description": "Characters of context on each side of a match.",
                },
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": 200,
                    "default": 20,
                    "description": "Most matches to return.",
                },
                "ignore_case": {
                    "type": "boolean",
                    "default": True,
                    "description": "Case-insensitive matching (default true).",
                },
            },
            "required": ["doc_id", "pattern"],
            "additionalProperties": False,
        },
    },
    {
        "name": "list_sources",
        "description": "List the user's registered sources (name, connector, path, documents, chunks, last build). "
        "Use it to learn what data exists before filtering by source or connector.",
        "parameters": {"type": "object", "properties": {}, "additionalProperties": False},
    },
    {
        "name": "source_status",
        "description": "Build state of one source: whether it is indexed, when it was last built, with which "
        "embedding model, its size, and whether its path still exists.",
        "parameters": {
            "type": "object",
            "properties": {"source": {"type": "string", "description": "The source name (see list_sources)."}},
            "required": ["source"],
            "additionalProperties": False,
        },
    },
]
AGENT_TOOLS = ("search", "find_files", "read_file", "grep_file")


def find_spec(name: str) -> dict[str, Any]:
    """The schema of tool ``name`` (a ToolError naming the tools when there is none)."""
    found = next((s for s in SPECS if s["name"] == name), None)
    if found is None:
        raise ToolError(f"unknown tool {name!r}; tools: {', '.join(s['name'] for s in SPECS)}")
    return found


def validate(spec: dict[str, Any], args: dict[str, Any]) -> None:
    """Arguments against a tool's JSON schema; the first problem as a one-line ToolError."""
    import jsonschema

    errors = sorted(jsonschema.Draft202012Validator(spec["parameters"]).iter_errors(args), key=lambda e: e.path)
    if errors:
        e = errors[0]
        where = ".".join(str(p) for p in e.path)
        msg = e.message if len(e.message) < 200 else e.message[:200] + "…"
        raise ToolError(f"{spec['name']}: invalid arguments{' at ' + where if where else ''}: {msg}")
