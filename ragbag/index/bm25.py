"""Keyword search: language-aware tokens and a BM25 index (bm25s's layout) per source partition.

Chinese has no spaces, so whitespace tokenising finds nothing (LEANN's failure on CJK); Han
runs go through jieba, kana/hangul runs become character bigrams, everything else is lowercased
Unicode words with English stemming and stop words removed. jieba is only loaded when a text
actually contains Han characters.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from ragbag.core.errors import RagbagError

TOKENIZER_VERSION = "ragbag-bm25-v2"
# The bm25s release whose layout and arithmetic ``index`` follows (its loader reads it back).
_BM25S_RELEASE = "0.3.16"
# Each text's tokens, kept beside the index for the next version to reuse (``write``).
TOKENS = "tokens.arrow"
# bm25s methods whose whole score is in the saved matrix (``index`` builds lucene, its default).
_SCORED_AT_BUILD = ("lucene", "robertson", "atire")

_HAN = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_KANA_HANGUL = r"\u3040-\u30ff\uac00-\ud7af"
# Words exclude CJK so "175公里" splits into "175" and a Han run (a plain \w+ would glue them).
_RUNS = re.compile(rf"([{_HAN}]+)|([{_KANA_HANGUL}]+)|([^\W_{_HAN}{_KANA_HANGUL}]+)", re.UNICODE)
_CJK = re.compile(rf"[{_HAN}{_KANA_HANGUL}]")


def has_cjk(text: str) -> bool:
    """Whether a text holds Chinese, Japanese or Korean script: English-only models cannot read it."""
    return _CJK.search(text) is not None


_STOP = frozenset(
    "a an and are as at be but by for from has have he her his i if in into is it its me my no "
    "not of on or our she so such than that the their them then there these they this to was we "
    "were what when where which who will with you your".split()
)


@lru_cache(maxsize=1)
def _jieba():
    import jieba

    jieba.setLogLevel(logging.WARNING)
    jieba.initialize()
    return jieba


@lru_cache(maxsize=1)
def _stemmer():
    import Stemmer

    return Stemmer.Stemmer("english")


def tokenize(text: str) -> list[str]:
    """Tokens for indexing and querying alike (one function, so both sides always agree)."""
    out: list[str] = []
    words: list[str] = []
    for han, other_cjk, word in _RUNS.findall(text.lower()):
        if han:
            out.extend(t for t in _jieba().lcut_for_search(han) if t.strip())
        elif other_cjk:
            out.extend(other_cjk[i : i + 2] for i in range(max(1, len(other_cjk) - 1)))
        elif word not in _STOP:
            words.append(word)
    if words:
        out.extend(_stemmer().stemWords(words))
    return out


# bm25s's parameters, which the saved params say and its own loader reads back.
K1, B = 1.5, 0.75
_PARAMS = {
    "k1": K1,
    "b": B,
    "delta": 0.5,
    "method": "lucene",
    "idf_method": "lucene",
    "dtype": "float32",
    "int_dtype": "int32",
}


def index(tokens: list[list[str]]) -> tuple[dict[str, int], np.ndarray, np.ndarray, np.ndarray]:
    """The vocabulary and the score matrix of tokenized texts, in bm25s's layout and arithmetic
    (Lucene's BM25; CSC by token, each token's rows in order; float64 scores rounded to float32
    as bm25s rounds them), so its own loader reads them as it reads its own files: a test holds
    the scores to bm25s's, bit for bit. Built here, not by bm25s, because importing bm25s imports
    scipy, which a refresh of one record paid for at every publish. Tokens are numbered in the
    order the texts first use them (bm25s numbers them in a set's order, which changes with the
    process's hash seed): the same texts make the same files."""
    vocab: dict[str, int] = {}
    rows: list[int] = []
    ids: list[int] = []
    freqs: list[int] = []
    for row, text in enumerate(tokens):
        for token, count in Counter(text).items():
            ids.append(vocab.setdefault(token, len(vocab)))
            rows.append(row)
            freqs.append(count)
    n_docs = len(tokens)
    token_ids = np.array(ids, dtype=np.int32)
    doc_rows = np.array(rows, dtype=np.int32)
    lengths = np.array([len(t) for t in tokens])
    in_docs = np.bincount(token_ids, minlength=len(vocab))
    idf = np.array([math.log(1 + (n_docs - df + 0.5) / (df + 0.5)) for df in in_docs.tolist()], dtype=np.float32)
    tf = np.array(freqs, dtype=np.float32).astype(np.float64)
    norm = K1 * ((1 - B) + B * lengths[doc_rows] / (lengths.mean() if n_docs else 1.0))
    scores = (idf[token_ids] * (tf / (norm + tf))).astype(np.float32)
    order = np.argsort(token_ids, kind="stable")  # by token, then by row (they were added in row order)
    indptr = np.zeros(len(vocab) + 1, dtype=np.int64)
    np.cumsum(in_docs, out=indptr[1:])
    vocab.setdefault("", len(vocab))  # bm25s's "empty token", never a column; its loader expects it
    return vocab, scores[order], doc_rows[order], indptr


def write(texts: list[str], directory: Path, previous: Path | None = None) -> None:
    """Build the BM25 index of ``texts`` and save it in ``directory`` with the tokens of each
    text, so that the next version (given this one as ``previous``) tokenizes only the texts it
    adds: a refresh of a large source, or one whose texts hold Chinese (jieba's dictionary takes
    seconds to load), then costs what changed."""
    import pyarrow as pa
    import pyarrow.feather as feather

    known = _saved_tokens(previous) if previous is not None else {}
    keys = [_text_key(t) for t in texts]
    tokens = [known[k] if k in known else tokenize(t) for k, t in zip(keys, texts)]
    vocab, data, indices, indptr = index(tokens)
    directory.mkdir(parents=True, exist_ok=True)
    for name, array in (("data", data), ("indices", indices), ("indptr", indptr)):
        np.save(directory / f"{name}.csc.index.npy", array, allow_pickle=False)
    (directory / "vocab.index.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
    params = {**_PARAMS, "num_docs": len(texts), "version": _BM25S_RELEASE, "backend": "numpy"}
    (directory / "params.index.json").write_text(json.dumps(params, indent=4))
    table = pa.table({"key": keys, "tokens": pa.array(tokens, pa.list_(pa.string()))})
    feather.write_feather(table, directory / TOKENS, compression="uncompressed")
    (directory / "tokenizer.json").write_text(json.dumps({"tokenizer": TOKENIZER_VERSION}))


def _text_key(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def _saved_tokens(directory: Path) -> dict[str, list[str]]:
    """The tokens a previous version saved, by text; none when it kept none, was made by
    another tokenizer, or cannot be read (then every text is tokenized, as on a first build)."""
    import pyarrow.feather as feather

    try:
        meta = json.loads((directory / "tokenizer.json").read_text())
        if meta.get("tokenizer") != TOKENIZER_VERSION or not (directory / TOKENS).exists():
            return {}
        t = feather.read_table(directory / TOKENS)
        return dict(zip(t.column("key").to_pylist(), t.column("tokens").to_pylist()))
    except (OSError, ValueError, KeyError):
        return {}


@dataclass
class Keywords:
    """A saved bm25s index as search reads it: the vocabulary and the precomputed per-token
    score columns, read with numpy alone, because importing bm25s (and the scipy and tqdm it
    pulls in) was a large part of a cold search. ``scores`` sums the columns as bm25s's
    ``get_scores`` does."""

    vocab_dict: dict[str, int]
    scores: dict[str, Any]  # data, indices, indptr (CSC by token), num_docs: bm25s's own layout
    dtype: str


def load(directory: Path) -> Keywords:
    meta = json.loads((directory / "tokenizer.json").read_text())
    if meta.get("tokenizer") != TOKENIZER_VERSION:
        raise RagbagError(
            f"{directory.parent.parent.name}: keyword index built with tokenizer {meta.get('tokenizer')}, "
            f"this ragbag uses {TOKENIZER_VERSION}: rebuild it with `ragbag build {directory.parent.parent.name}`"
        )
    params = json.loads((directory / "params.index.json").read_text())
    if params.get("method") not in _SCORED_AT_BUILD:  # bm25l / bm25+ add a score where a token is absent
        raise RagbagError(f"{directory}: BM25 method {params.get('method')!r} is not one ragbag builds")
    arrays = {name: np.load(directory / f"{name}.csc.index.npy") for name in ("data", "indices", "indptr")}
    return Keywords(
        json.loads((directory / "vocab.index.json").read_text(encoding="utf-8")),
        {**arrays, "num_docs": params["num_docs"]},
        params.get("dtype", "float32"),
    )


def scores(index: Keywords, query_tokens: list[str], n_docs: int) -> np.ndarray:
    """BM25 score of every indexed row for the query (zeros when no term is known): each known
    token's column added in, in float32 and in query order, as bm25s adds them."""
    ids = [index.vocab_dict[t] for t in query_tokens if t in index.vocab_dict]
    s = index.scores
    data, indices, indptr = s["data"], s["indices"], s["indptr"]
    out = np.zeros(s["num_docs"] if ids else n_docs, index.dtype if ids else np.float32)
    for t in ids:
        np.add.at(out, indices[indptr[t] : indptr[t + 1]], data[indptr[t] : indptr[t + 1]])
    return out.astype(np.float32, copy=False)[:n_docs]


def holders(index: Keywords, token: str) -> np.ndarray:
    """The rows that hold ``token`` (none when the index never saw it): its column's rows."""
    tid = index.vocab_dict.get(token)
    s = index.scores
    return s["indices"][s["indptr"][tid] : s["indptr"][tid + 1]] if tid is not None else np.zeros(0, np.int64)


def ceiling(index: Keywords, query_tokens: list[str]) -> float:
    """The most any row of this index could score for the query: each token's best score in any
    row, summed; a token the index has never seen counts as its rarest word. Dividing by it
    turns BM25 into the share of the query's evidence a row holds (0..1), comparable across
    queries and sources, where raw BM25 is neither."""
    vocab = index.vocab_dict
    s = index.scores
    data, indptr = s["data"], s["indptr"]
    rarest = float(data.max()) if len(data) else 1.0
    total = 0.0
    for t in query_tokens:
        tid = vocab.get(t)
        if tid is None or indptr[tid] == indptr[tid + 1]:
            total += rarest
        else:
            total += float(data[indptr[tid] : indptr[tid + 1]].max())
    return total
