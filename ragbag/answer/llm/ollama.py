"""A local Ollama server (``OLLAMA_HOST``, default http://127.0.0.1:11434): /api/chat, NDJSON
streaming, native tool calling, models from /api/tags."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator

from ragbag.answer.llm import Provider, Reply, ToolCall, check_model, http_json, http_open, parse_arguments
from ragbag.core.errors import RagbagError

DEFAULT_HOST = "http://127.0.0.1:11434"


def host_url(raw: str | None) -> str:
    """OLLAMA_HOST may be ``0.0.0.0``, ``host:port`` or a full URL."""
    raw = (raw or DEFAULT_HOST).strip().rstrip("/")
    if "://" not in raw:
        raw = "http://" + raw
    scheme, rest = raw.split("://", 1)
    hostport = rest.split("/", 1)[0]
    if ":" not in hostport.rsplit("]", 1)[-1]:
        rest = rest.replace(hostport, hostport + ":11434", 1)
    return f"{scheme}://{rest}".replace("://0.0.0.0", "://127.0.0.1")


class OllamaProvider(Provider):
    name = "ollama"
    supports_tools = True
    default_model = "llama3.2"

    def __init__(self, model=None, base_url=None, **options):
        super().__init__(model, host_url(base_url or os.environ.get("OLLAMA_HOST")), **options)
        self.hint = f"is `ollama serve` running at {self.base_url}? (set OLLAMA_HOST)"

    def models(self) -> list[str] | None:
        data = http_json("GET", f"{self.base_url}/api/tags", timeout=15, hint=self.hint)
        return [m.get("name") or m.get("model") for m in data.get("models") or []]

    def check(self) -> None:
        names = self.models() or []
        # "llama3.2" means "llama3.2:latest" to Ollama
        if self.model and (self.model in names or f"{self.model}:latest" in names):
            return
        check_model(
            self.model or "",
            names + [n.removesuffix(":latest") for n in names if n.endswith(":latest")],
            f"ollama ({self.base_url}; `ollama pull {self.model}` to fetch it)",
        )

    def _body(self, messages, **extra):
        opts = {k: self.options[k] for k in ("temperature", "num_ctx") if k in self.options}
        return {"model": self.model, "messages": _wire(messages), **({"options": opts} if opts else {}), **extra}

    def stream(self, messages, context=None) -> Iterator[str]:
        with http_open("POST", f"{self.base_url}/api/chat", self._body(messages, stream=True), hint=self.hint) as resp:
            for line in resp:
                if not line.strip():
                    continue
                data = json.loads(line)
                if data.get("error"):
                    raise RagbagError(f"ollama: {data['error']}")
                text = (data.get("message") or {}).get("content")
                if text:
                    yield text
                if data.get("done"):
                    break

    def chat_tools(self, messages, tools) -> Reply:
        body = self._body(messages, stream=False, tools=[{"type": "function", "function": t} for t in tools])
        data = http_json("POST", f"{self.base_url}/api/chat", body, hint=self.hint)
        msg = data.get("message") or {}
        calls = [
            ToolCall(c["function"]["name"], parse_arguments(c["function"].get("arguments")), f"call_{i}")
            for i, c in enumerate(msg.get("tool_calls") or [])
            if c.get("function")
        ]
        return Reply(msg.get("content") or "", calls)


def _wire(messages):
    out = []
    for m in messages:
        w = {"role": m["role"], "content": m.get("content") or ""}
        if m.get("tool_calls"):
            w["tool_calls"] = [{"function": {"name": c.name, "arguments": c.arguments}} for c in m["tool_calls"]]
        out.append(w)
    return out
