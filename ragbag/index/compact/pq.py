"""The compact graph's codes: product quantisation (faiss), optionally after an OPQ rotation.

A node's approximate vector is its code decoded; the residual |x - decoded x| says how far a
code score may be off, which the search uses to choose what to recompute.
"""

from __future__ import annotations

import numpy as np

from ragbag.core.errors import RagbagError
from ragbag.index.compact.graph import Compact

# OPQ's rotation is trained once per build, with this many sub-spaces, and serves every code
# size of the ladder: nearly as close as a rotation trained for each code size, at one training
# instead of one per size (benchmarks/README.md, "The rotation (OPQ)").
OPQ_M = 24
OPQ_ITERATIONS = 20


def train_pq(vectors: np.ndarray, m: int, bits: int) -> tuple[np.ndarray, np.ndarray]:
    """Product quantisation: centroids (m, 2**bits, d/m) and one code per sub-vector (pass
    ``vectors @ rotation.T`` for codes after a rotation)."""
    import faiss

    n, d = vectors.shape
    if d % m:
        raise RagbagError(f"pq_m={m} must divide the embedding dimension {d}")
    pq = faiss.ProductQuantizer(d, m, bits)
    pq.verbose = False
    pq.cp.min_points_per_centroid = 1  # a small source trains on what it has, without a warning
    x = np.ascontiguousarray(vectors, dtype=np.float32)
    pq.train(x)
    centroids = faiss.vector_to_array(pq.centroids).reshape(m, 2**bits, d // m)
    return centroids, encode_pq(centroids, x)


def encode_pq(centroids: np.ndarray, vectors: np.ndarray) -> np.ndarray:
    """The nearest centroid per sub-vector (L2), one byte each."""
    m, ksub, dsub = centroids.shape
    codes = np.empty((len(vectors), m), np.uint8)
    for s in range(m):
        sub = vectors[:, s * dsub : (s + 1) * dsub]
        dist = (sub**2).sum(1)[:, None] - 2 * sub @ centroids[s].T + (centroids[s] ** 2).sum(1)[None, :]
        codes[:, s] = np.argmin(dist, axis=1)
    return codes


def train_rotation(vectors: np.ndarray) -> np.ndarray:
    """An OPQ rotation (faiss), rounded to float16 as it is stored so that codes trained after
    it match the file."""
    import faiss

    d = vectors.shape[1]
    m = OPQ_M if d % OPQ_M == 0 else max(k for k in range(1, 33) if d % k == 0)
    opq = faiss.OPQMatrix(d, m)
    opq.niter = OPQ_ITERATIONS
    opq.verbose = False
    opq.train(np.ascontiguousarray(vectors, dtype=np.float32))
    a = faiss.vector_to_array(opq.A).reshape(d, d)
    return a.astype(np.float16).astype(np.float32)


def rotate(g: Compact, vectors: np.ndarray) -> np.ndarray:
    """Vectors in the space the codes live in."""
    return vectors if g.rotation is None else vectors @ g.rotation.T


def decode_pq(g: Compact, ids: np.ndarray) -> np.ndarray:
    """Approximate vectors of some nodes, from their codes (back in the embedding's space)."""
    m = g.codes.shape[1]
    out = np.concatenate([g.centroids[s][g.codes[ids, s]] for s in range(m)], axis=1)
    return out if g.rotation is None else out @ g.rotation


def residuals(g: Compact, ids: np.ndarray, vectors: np.ndarray) -> np.ndarray:
    """|vector - decoded code| of some nodes, from their exact vectors."""
    if not len(ids):
        return np.zeros(0, np.float32)
    return np.linalg.norm(vectors - decode_pq(g, ids), axis=1).astype(np.float32)
