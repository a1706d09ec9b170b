"""Language-model providers behind one tiny interface (simonw/llm style).

A provider is a class with ``stream(messages) -> Iterator[str]`` that yields text chunks, and,
where the backend has native tool calling, ``chat_tools(messages, tools) -> Reply``. Messages
are OpenAI-style dicts (``role`` system/user/assistant/tool, ``content``, plus ``tool_calls`` /
``tool_call_id`` for tool turns); each provider translates them to its own wire format. A
provider is a ``Provider`` subclass registered in the ``ragbag.llm_providers`` entry-point group
(``ragbag.core.plugins``): ragbag's own five there, a plugin package's the same way.

Which provider and model: command-line flags, then ``RAGBAG_LLM`` / ``RAGBAG_MODEL``, then
``config.yaml: llm: {provider, model, base_url}``, then ``extractive`` (no LLM at all), so
``ragbag ask`` works offline out of the box.
"""

from __future__ import annotations

import difflib
import json
import os
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ragbag.core import plugins
from ragbag.core.errors import RagbagError

DEFAULT_PROVIDER = "extractive"
HTTP_TIMEOUT = 300.0


@dataclass
class ToolCall:
    """One tool invocation the model asked for."""

    name: str
    arguments: dict[str, Any]
    id: str = ""


@dataclass
class Reply:
    """A model turn: text, and the tool calls it made (empty when it answered)."""

    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)


class Provider:
    """The interface. Subclasses set ``name`` and implement ``stream``; tool calling is optional."""

    name = "base"
    supports_tools = False  # native tool calling (chat_tools) available
    default_model: str | None = None

    def __init__(self, model: str | None = None, base_url: str | None = None, **options: Any):
        self.model = model or self.default_model
        self.base_url = base_url
        self.options = options

    def stream(self, messages: list[dict[str, Any]], context: list[Any] | None = None) -> Iterator[str]:
        """Yield the reply to ``messages`` as text chunks. ``context`` holds the retrieved blocks
        (already inside the messages) for providers that work on them directly."""
        raise NotImplementedError

    def complete(self, messages: list[dict[str, Any]], context: list[Any] | None = None) -> str:
        return "".join(self.stream(messages, context))

    def chat_tools(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Reply:
        """One turn with native tool calling; ``tools`` are ``{name, description, parameters}``."""
        raise NotImplementedError(f"{self.name} has no native tool calling")

    def models(self) -> list[str] | None:
        """Model names the backend offers, or None when it cannot list them."""
        return None

    def check(self) -> None:
        """Fail early, in one line, on a missing key, unreachable host or unknown model."""
        names = self.models()
        if names is not None and self.model:
            check_model(self.model, names, self.name)

    @property
    def label(self) -> str:
        return f"{self.name}:{self.model}" if self.model and self.model != self.name else self.name


def check_model(model: str, names: list[str], provider: str) -> None:
    """Unknown model → one-line error with "did you mean" suggestions."""
    if model in names:
        return
    close = difflib.get_close_matches(model, names, n=3, cutoff=0.4)
    close += [n for n in names if model.lower() in n.lower() and n not in close][: 3 - len(close)]
    hint = (
        f"; did you mean {', '.join(close)}?"
        if close
        else (f"; available: {', '.join(sorted(names)[:10])}" if names else "; the server lists no models")
    )
    raise RagbagError(f"{provider}: unknown model {model!r}{hint}")


def resolve(
    home=None,
    provider: str | None = None,
    model: str | None = None,
    base_url: str | None = None,
) -> Provider:
    """The provider to use: flags, then environment, then ``config.yaml: llm:``, then extractive."""
    cfg: dict[str, Any] = {}
    if home is not None:
        raw = home.config().get("llm") or {}
        if not isinstance(raw, dict):
            raise RagbagError(f"{home.config_file}: 'llm' must be a mapping like {{provider: ollama, model: llama3.2}}")
        cfg = raw
    name = provider or os.environ.get("RAGBAG_LLM") or cfg.get("provider") or DEFAULT_PROVIDER
    same = name == (cfg.get("provider") or DEFAULT_PROVIDER)  # config's model/url apply to its provider
    model = model or os.environ.get("RAGBAG_MODEL") or (cfg.get("model") if same else None)
    base_url = base_url or (cfg.get("base_url") if same else None)
    options = {k: v for k, v in cfg.items() if k not in ("provider", "model", "base_url")} if same else {}
    return get(name, model=model, base_url=base_url, **options)


def get(name: str, model: str | None = None, base_url: str | None = None, **options: Any) -> Provider:
    known = plugins.registered(plugins.LLM_PROVIDERS)
    if name not in known:
        close = difflib.get_close_matches(name, known, n=1)
        hint = f"did you mean {close[0]}? " if close else ""
        raise RagbagError(f"unknown LLM provider {name!r}; {hint}use one of: {', '.join(known)}")
    provider = plugins.load(plugins.LLM_PROVIDERS, name)
    if not (isinstance(provider, type) and issubclass(provider, Provider)):
        raise RagbagError(f"the LLM provider plugin {name!r} is not a ragbag.answer.llm.Provider")
    return provider(model=model, base_url=base_url, **options)


# -- plain HTTP helpers shared by the HTTP providers --------------------------------------------


def http_json(
    method: str,
    url: str,
    body: Any = None,
    headers: dict[str, str] | None = None,
    timeout: float = HTTP_TIMEOUT,
    hint: str = "",
) -> Any:
    with http_open(method, url, body, headers, timeout, hint) as resp:
        return json.loads(resp.read().decode("utf-8"))


def http_open(
    method: str,
    url: str,
    body: Any = None,
    headers: dict[str, str] | None = None,
    timeout: float = HTTP_TIMEOUT,
    hint: str = "",
):
    """Open a request; network and HTTP failures become one-line RagbagErrors naming the URL."""
    data = json.dumps(body).encode("utf-8") if body is not None else None
    req = urllib.request.Request(
        url,
        data=data,
        method=method,
        headers={"Content-Type": "application/json", "Accept": "application/json", **(headers or {})},
    )
    try:
        return urllib.request.urlopen(req, timeout=timeout)
    except urllib.error.HTTPError as e:
        detail = _error_detail(e)
        extra = f" ({hint})" if hint and e.code in (401, 403) else ""
        raise RagbagError(f"{method} {url} failed: HTTP {e.code}{': ' + detail if detail else ''}{extra}") from None
    except (urllib.error.URLError, TimeoutError, ConnectionError, OSError) as e:
        reason = getattr(e, "reason", e)
        raise RagbagError(f"cannot reach {url}: {reason}{'; ' + hint if hint else ''}") from None


def _error_detail(e: urllib.error.HTTPError) -> str:
    try:
        raw = e.read().decode("utf-8", "replace")
    except Exception:
        return ""
    try:
        data = json.loads(raw)
        err = data.get("error", data) if isinstance(data, dict) else data
        msg = err.get("message") if isinstance(err, dict) else err
        return " ".join(str(msg).split())[:200]
    except ValueError:
        return " ".join(raw.split())[:200]


def sse_events(resp) -> Iterator[tuple[str, str]]:
    """(event, data) pairs of a server-sent-events response, as they arrive."""
    event = ""
    data: list[str] = []
    for raw in resp:
        line = raw.decode("utf-8").rstrip("\r\n")
        if not line:
            if data:
                yield event, "\n".join(data)
            event, data = "", []
        elif line.startswith(":"):
            continue
        elif line.startswith("event:"):
            event = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].lstrip())
    if data:
        yield event, "\n".join(data)


def parse_arguments(raw: Any) -> dict[str, Any]:
    """Tool-call arguments arrive as a JSON string (OpenAI) or an object (Ollama, Anthropic)."""
    if isinstance(raw, dict):
        return raw
    if not raw:
        return {}
    try:
        out = json.loads(raw)
    except ValueError:
        return {"__invalid__": str(raw)}
    return out if isinstance(out, dict) else {"__invalid__": str(raw)}
