"""How closely PQ codes of a given size code a corpus: plain, after the OPQ rotation a build
trains (``compact.pq.train_rotation``), and after a random rotation (no matrix to store).

    .venv/bin/python benchmarks/code_probe.py --corpus enron synthetic-100k [--codes 32 24 16]

Per corpus and code size: the mean squared error |x − decoded x|² of the unit vectors, and
recall@10 when the R best by code score (plus the residual bound a search uses,
``compact.search.recompute_order``) are recomputed exactly, R = 32, 64, 128, for the corpus's queries and
for 200 of its own vectors. No graph: this isolates the codes from the walk. The corpora are
graph_bench's (8-bit codes, as a build uses from 20,000 nodes; msmarco with 2-bit codes).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import graph_bench  # noqa: E402

from ragbag.index.compact.graph import Compact  # noqa: E402
from ragbag.index.compact.pq import decode_pq, residuals, train_pq, train_rotation  # noqa: E402
from ragbag.index.compact.search import BOUND_Z  # noqa: E402
from ragbag.index.nodes import first_rows, row_nodes  # noqa: E402
from ragbag.models import embedding  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--corpus", nargs="+", default=["enron", "synthetic-100k"], choices=sorted(graph_bench.LOADERS))
    p.add_argument("--codes", nargs="+", type=int, default=[32, 24, 16], help="code bytes (8-bit sub-quantisers)")
    args = p.parse_args()
    for name in args.corpus:
        c = graph_bench.LOADERS[name](args)
        reps = first_rows(row_nodes(c["keys"]))
        x = np.ascontiguousarray(c["vectors"][reps], dtype=np.float32)
        queries = {
            "queries": np.array([embedding.encode_query(q["text"], graph_bench.MODEL) for q in c["queries"]]),
            "own": x[np.random.default_rng(0).choice(len(x), 200, replace=False)],
        }
        bits = 8 if len(x) >= 20_000 else 2
        t0 = time.perf_counter()
        shipped = train_rotation(x)
        print(f"== {name}: {len(x):,} vectors; rotation trained in {time.perf_counter() - t0:.0f} s", flush=True)
        rng = np.random.default_rng(0)
        random, _ = np.linalg.qr(rng.normal(size=(x.shape[1], x.shape[1])))
        for size in args.codes:
            m = size * 8 // bits
            for label, rotation in (("plain", None), ("OPQ", shipped), ("random", random.astype(np.float32))):
                print(f"  {size:>2} bytes {label:6s} " + probe(x, queries, m, bits, rotation), flush=True)


def probe(x: np.ndarray, queries: dict[str, np.ndarray], m: int, bits: int, rotation) -> str:
    centroids, codes = train_pq(x if rotation is None else x @ rotation.T, m, bits)
    g = Compact(
        np.zeros(len(x) + 1, np.int32),
        np.zeros(0, np.int32),
        np.zeros(0, np.int32),
        codes,
        centroids,
        bits,
        rotation=rotation,
    )
    decoded = decode_pq(g, np.arange(len(x)))
    g.residual = residuals(g, np.arange(len(x)), x)
    bound = BOUND_Z * g.residual / np.sqrt(x.shape[1])
    out = [f"mse {np.mean(np.sum((x - decoded) ** 2, axis=1)):.3f}"]
    for label, qs in queries.items():
        exact, approx = qs @ x.T, qs @ decoded.T + bound
        for budget in (32, 64, 128):
            hits = 0.0
            for s, a in zip(exact, approx):
                head = np.argpartition(-a, budget)[:budget]
                hits += graph_bench.tie_recall(head[np.argsort(-s[head])][:10], s, 10)
            out.append(f"{label}@{budget} {hits / len(qs):.3f}")
    return "  ".join(out)


if __name__ == "__main__":
    main()
