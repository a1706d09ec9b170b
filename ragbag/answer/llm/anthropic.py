"""Anthropic's Messages API over plain HTTP (``ANTHROPIC_API_KEY``; ``ANTHROPIC_BASE_URL`` or
``base_url`` to point elsewhere): SSE streaming, native tool use, models from /v1/models."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any

from ragbag.answer.llm import Provider, Reply, ToolCall, http_json, http_open, sse_events
from ragbag.core.errors import RagbagError

DEFAULT_BASE_URL = "https://api.anthropic.com"
VERSION = "2023-06-01"


class AnthropicProvider(Provider):
    name = "anthropic"
    supports_tools = True
    default_model = "claude-sonnet-4-5"

    def __init__(self, model=None, base_url=None, **options: Any):
        super().__init__(
            model, (base_url or os.environ.get("ANTHROPIC_BASE_URL") or DEFAULT_BASE_URL).rstrip("/"), **options
        )
        self.key = os.environ.get("ANTHROPIC_API_KEY", "")
        if not self.key:
            raise RagbagError("anthropic: set ANTHROPIC_API_KEY")
        self.max_tokens = int(options.get("max_tokens", 2048))

    def _headers(self) -> dict[str, str]:
        return {"x-api-key": self.key, "anthropic-version": VERSION}

    def models(self) -> list[str] | None:
        data = http_json(
            "GET",
            f"{self.base_url}/v1/models?limit=1000",
            headers=self._headers(),
            timeout=15,
            hint="check ANTHROPIC_API_KEY",
        )
        return [m["id"] for m in data.get("data") or [] if "id" in m]

    def _body(self, messages, **extra) -> dict[str, Any]:
        system = "\n\n".join(m["content"] for m in messages if m["role"] == "system")
        body = {"model": self.model, "max_tokens": self.max_tokens, "messages": _wire(messages), **extra}
        if system:
            body["system"] = system
        if "temperature" in self.options:
            body["temperature"] = self.options["temperature"]
        return body

    def stream(self, messages, context=None) -> Iterator[str]:
        url = f"{self.base_url}/v1/messages"
        with http_open(
            "POST", url, self._body(messages, stream=True), self._headers(), hint="check ANTHROPIC_API_KEY"
        ) as resp:
            for event, data in sse_events(resp):
                payload = json.loads(data)
                if event == "error" or payload.get("type") == "error":
                    raise RagbagError(f"anthropic: {payload.get('error', {}).get('message', payload)}")
                if payload.get("type") == "content_block_delta":
                    text = (payload.get("delta") or {}).get("text")
                    if text:
                        yield text
                elif payload.get("type") == "message_stop":
                    break

    def chat_tools(self, messages, tools) -> Reply:
        body = self._body(
            messages,
            tools=[
                {"name": t["name"], "description": t["description"], "input_schema": t["parameters"]} for t in tools
            ],
        )
        data = http_json("POST", f"{self.base_url}/v1/messages", body, self._headers(), hint="check ANTHROPIC_API_KEY")
        text, calls = [], []
        for block in data.get("content") or []:
            if block.get("type") == "text":
                text.append(block.get("text", ""))
            elif block.get("type") == "tool_use":
                calls.append(ToolCall(block["name"], block.get("input") or {}, block.get("id", "")))
        return Reply("".join(text), calls)


def _wire(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """System text goes to ``system``; tool results become user turns of tool_result blocks."""
    out: list[dict[str, Any]] = []
    for m in messages:
        if m["role"] == "system":
            continue
        if m["role"] == "tool":
            block = {"type": "tool_result", "tool_use_id": m.get("tool_call_id", ""), "content": m.get("content") or ""}
            if out and out[-1]["role"] == "user" and isinstance(out[-1]["content"], list):
                out[-1]["content"].append(block)
            else:
                out.append({"role": "user", "content": [block]})
        elif m.get("tool_calls"):
            blocks: list[dict[str, Any]] = [{"type": "text", "text": m["content"]}] if m.get("content") else []
            blocks += [{"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments} for c in m["tool_calls"]]
            out.append({"role": "assistant", "content": blocks})
        else:
            out.append({"role": m["role"], "content": m.get("content") or ""})
    return out
