"""Tool schemas every client can map: one ``type`` in each schema node.

A nullable field written ``{"type": ["string", "null"]}`` is legal JSON Schema, but a client that
maps tool schemas onto a single-``type`` dialect (the OpenAPI subset of Gemini's function
declarations, for one) rejects the tool or drops the constraint, and the MCP Inspector's
``--strict`` check reports each such node. The tool specs are written in the short form and
rewritten once, here: a type union becomes ``anyOf`` branches of one type each, the constraints
on the branches they apply to, the description on the field.
"""

from __future__ import annotations

from typing import Any

# What describes a field rather than constrains its value: stays on the field, outside the branches.
_ANNOTATIONS = frozenset({"description", "title", "default", "examples"})
_SCHEMA_MAPS = ("properties", "patternProperties", "$defs")  # name -> schema
_SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SCHEMAS = ("items", "additionalProperties", "not", "contains")  # a schema (or a boolean)


def portable(schema: Any) -> Any:
    """``schema`` with every type union split into single-type ``anyOf`` branches."""
    if not isinstance(schema, dict):
        return schema
    node: dict[str, Any] = {}
    for key, value in schema.items():
        if key in _SCHEMA_MAPS and isinstance(value, dict):
            node[key] = {name: portable(sub) for name, sub in value.items()}
        elif key in _SCHEMA_LISTS and isinstance(value, list):
            node[key] = [portable(sub) for sub in value]
        elif key in _SCHEMAS:
            node[key] = portable(value)
        else:
            node[key] = value
    types = node.get("type")
    if not isinstance(types, list):
        return node
    if len(types) == 1:
        return {**node, "type": types[0]}
    rest = {k: v for k, v in node.items() if k != "type" and k not in _ANNOTATIONS}
    head = {k: v for k, v in node.items() if k in _ANNOTATIONS}
    return {**head, "anyOf": [{"type": "null"} if t == "null" else {"type": t, **rest} for t in types]}
