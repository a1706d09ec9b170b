"""Any OpenAI-compatible chat-completions server: OpenAI, vLLM, LM Studio, llama.cpp's server…

``base_url`` (flag, ``config.yaml: llm: base_url``, or ``OPENAI_BASE_URL``) defaults to
https://api.openai.com/v1; the key comes from ``OPENAI_API_KEY`` (or the variable named by
``config.yaml: llm: api_key_env``). It is required only for api.openai.com; local servers get it
when it is set. Plain HTTP, streaming over server-sent events.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any

from ragbag.answer.llm import Provider, Reply, ToolCall, http_json, http_open, parse_arguments, sse_events
from ragbag.core.errors import RagbagError

DEFAULT_BASE_URL = "https://api.openai.com/v1"


class OpenAIProvider(Provider):
    name = "openai"
    supports_tools = True
    default_model = "gpt-4o-mini"

    def __init__(self, model=None, base_url=None, api_key_env: str = "OPENAI_API_KEY", **options: Any):
        url = base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL
        super().__init__(model, url, **options)
        self.base_url: str = url.rstrip("/")
        self.key_env = api_key_env
        self.key = os.environ.get(api_key_env, "")
        if not self.key and "api.openai.com" in self.base_url:
            raise RagbagError(f"openai: set {api_key_env} (or point --base-url at an OpenAI-compatible server)")

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.key}"} if self.key else {}

    def _hint(self) -> str:
        return f"check {self.key_env}" if self.key else f"is the server running? set {self.key_env} if it needs a key"

    def models(self) -> list[str] | None:
        data = http_json("GET", f"{self.base_url}/models", headers=self._headers(), timeout=15, hint=self._hint())
        items = data.get("data") if isinstance(data, dict) else None
        return [m["id"] for m in items if isinstance(m, dict) and "id" in m] if isinstance(items, list) else None

    def stream(self, messages, context=None) -> Iterator[str]:
        body = {"model": self.model, "messages": _wire(messages), "stream": True, **self._sampling()}
        with http_open("POST", f"{self.base_url}/chat/completions", body, self._headers(), hint=self._hint()) as resp:
            if "text/event-stream" not in (resp.headers.get("Content-Type") or ""):
                data = json.loads(resp.read().decode("utf-8"))  # a server that ignores stream=True
                yield _message(data).get("content") or ""
                return
            for _, data in sse_events(resp):
                if data.strip() == "[DONE]":
                    break
                chunk = json.loads(data)
                if chunk.get("error"):
                    raise RagbagError(f"openai: {chunk['error'].get('message', chunk['error'])}")
                for choice in chunk.get("choices") or []:
                    text = (choice.get("delta") or {}).get("content")
                    if text:
                        yield text

    def chat_tools(self, messages, tools) -> Reply:
        body = {
            "model": self.model,
            "messages": _wire(messages),
            **self._sampling(),
            "tools": [{"type": "function", "function": t} for t in tools],
        }
        data = http_json("POST", f"{self.base_url}/chat/completions", body, self._headers(), hint=self._hint())
        msg = _message(data)
        calls = [
            ToolCall(c["function"]["name"], parse_arguments(c["function"].get("arguments")), c.get("id", ""))
            for c in msg.get("tool_calls") or []
            if c.get("function")
        ]
        return Reply(msg.get("content") or "", calls)

    def _sampling(self) -> dict[str, Any]:
        return {k: self.options[k] for k in ("temperature", "max_tokens") if k in self.options}


def _message(data: dict) -> dict:
    try:
        return data["choices"][0]["message"]
    except (KeyError, IndexError, TypeError):
        raise RagbagError(f"openai: unexpected response: {json.dumps(data)[:200]}") from None


def _wire(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Our messages are already OpenAI-shaped; tool calls need the function wrapper."""
    out = []
    for m in messages:
        w = {"role": m["role"], "content": m.get("content") or ""}
        if m.get("tool_calls"):
            w["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": json.dumps(c.arguments)},
                }
                for c in m["tool_calls"]
            ]
        if m["role"] == "tool":
            w["tool_call_id"] = m.get("tool_call_id", "")
        out.append(w)
    return out
