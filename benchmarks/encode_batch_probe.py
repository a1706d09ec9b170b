"""Milliseconds per passage of all-MiniLM-L6-v2 by encoder batch size, on this machine.

    .venv/bin/python benchmarks/encode_batch_probe.py

Why: a compact search re-embeds its 128 best candidates per query, so the per-passage cost is
its latency. Each round draws 256 random msmarco-5k passages (unsorted, as a search's
candidates come) and times ``embedding.encode_passages`` at each batch size, rounds interleaved
so that machine load falls on every size alike; the median over rounds is printed.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np

from ragbag.models import embedding

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "eval" / "msmarco-5k" / "corpus.jsonl"
SIZES = (1, 4, 8, 16, 32, 64, 128)


def main(rounds: int = 3, n: int = 256) -> None:
    docs = [json.loads(line)["text"] for line in open(CORPUS, encoding="utf-8")]
    rng = np.random.default_rng(1)
    embedding.encode_passages(docs[:256], batch_size=32)  # load and warm the model
    times: dict[int, list[float]] = {b: [] for b in SIZES}
    for _ in range(rounds):
        for b in SIZES:
            texts = [docs[i] for i in rng.choice(len(docs), n, replace=False)]
            t0 = time.perf_counter()
            embedding.encode_passages(texts, batch_size=b)
            times[b].append((time.perf_counter() - t0) / n * 1000)
    print("| batch | ms per passage (median) | rounds |")
    print("|---|---|---|")
    for b, ts in times.items():
        print(f"| {b} | {np.median(ts):.1f} | {', '.join(f'{t:.1f}' for t in ts)} |")


if __name__ == "__main__":
    main()
