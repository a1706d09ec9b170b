"""A local GGUF model through llama-cpp-python (an optional extra: ``pip install llama-cpp-python``).

``--model`` is the path of the .gguf file. The model is loaded once per process. No native tool
calling here: the agent uses its validated JSON action format instead.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ragbag.answer.llm import Provider
from ragbag.core.errors import RagbagError

_loaded: dict[tuple[str, int], Any] = {}


class LlamaCppProvider(Provider):
    name = "llama-cpp"

    def __init__(self, model=None, base_url=None, **options: Any):
        super().__init__(model, base_url, **options)
        if not self.model:
            raise RagbagError("llama-cpp: --model must be the path of a .gguf file")
        path = Path(self.model).expanduser()
        if not path.is_file():
            raise RagbagError(f"llama-cpp: model file not found: {path}")
        self.path = str(path.resolve())
        self.n_ctx = int(options.get("n_ctx", 8192))

    def _llama(self):
        key = (self.path, self.n_ctx)
        if key not in _loaded:
            try:
                from llama_cpp import Llama
            except ImportError:
                raise RagbagError(
                    "llama-cpp: llama-cpp-python is not installed: pip install llama-cpp-python"
                ) from None
            _loaded[key] = Llama(model_path=self.path, n_ctx=self.n_ctx, verbose=False)
        return _loaded[key]

    def check(self) -> None:
        self._llama()

    def stream(self, messages, context=None) -> Iterator[str]:
        wire = [
            {"role": "user" if m["role"] == "tool" else m["role"], "content": m.get("content") or ""} for m in messages
        ]
        opts = {k: self.options[k] for k in ("temperature", "max_tokens") if k in self.options}
        for chunk in self._llama().create_chat_completion(messages=wire, stream=True, **opts):
            text = (chunk["choices"][0].get("delta") or {}).get("content")
            if text:
                yield text
