"""LEANN 0.3.8 over vectors ragbag already computed: its graph benchmark on a large corpus.

Runs inside the LEANN venv (see leann_side.py):

    benchmarks/.work/leann-venv/bin/python benchmarks/leann_vectors_side.py --inputs IN.npz \
        --work DIR --queries QUERIES.json --sample 3 --out OUT.json

``leann build`` would re-embed every passage (about 40 minutes for the 47k Enron chunks on two
cores) to arrive at the vectors ragbag's build already stored — same model, same texts. So the
index is built with ``LeannBuilder.build_index_from_arrays`` from those vectors and the chunk
texts, with the settings ``leann build`` uses by default (hnsw backend, graph degree 32,
build complexity 64, compact graph, recompute on, the local all-MiniLM-L6-v2 path). Search is
LEANN's own, unchanged: ``LeannSearcher.search(q, top_k=10)`` with its defaults (complexity
64, recompute on), so each query re-embeds the passages its walk visits through LEANN's
embedding server. Reports the index files' bytes, the build wall time, and per query the
wall time and the ranked row numbers.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
from _meter import meter, percentiles
from leann_side import configure_env, model_path, stop_daemons, version


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "--inputs",
        type=Path,
        required=True,
        help="npz with vectors (n, d) and the texts as text_bytes (UTF-8) and text_ends (n,)",
    )
    p.add_argument("--work", type=Path, required=True)
    p.add_argument("--queries", type=Path, required=True, help='JSON list of {"id", "text"}')
    p.add_argument("--sample", type=int, default=3, help="queries timed (each re-embeds ~1k passages)")
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args()
    work = args.work.resolve()
    configure_env(work)
    from leann import LeannBuilder, LeannSearcher

    data = np.load(args.inputs, allow_pickle=False)
    vectors, blob, ends = data["vectors"].astype(np.float32), data["text_bytes"].tobytes(), data["text_ends"]
    texts = [blob[a:b].decode("utf-8") for a, b in zip(np.concatenate([[0], ends[:-1]]), ends)]
    index_dir = work / "index"
    index_dir.mkdir(parents=True, exist_ok=True)
    path = index_dir / "documents.leann"
    builder = LeannBuilder(
        "hnsw",
        embedding_model=model_path(),
        embedding_mode="sentence-transformers",
        graph_degree=32,
        complexity=64,
        is_compact=True,
        is_recompute=True,
    )
    for t in texts:
        builder.add_text(t)
    with meter() as build:
        builder.build_index_from_arrays(str(path), [str(i) for i in range(len(texts))], vectors)
    files = {f.name: f.stat().st_size for f in sorted(index_dir.iterdir()) if f.is_file()}
    queries = json.loads(args.queries.read_text())[: args.sample]
    searcher = LeannSearcher(str(path))
    try:
        searcher.search(queries[-1]["text"], top_k=10)  # warm: embedding server up, model loaded
        times, ranked = [], {}
        with meter() as m:
            for q in queries:
                t0 = time.perf_counter()
                hits = searcher.search(q["text"], top_k=10)
                times.append(time.perf_counter() - t0)
                ranked[q["id"]] = [int(h.id) for h in hits]
    finally:
        searcher.cleanup()
        stop_daemons(work)  # its embedding server runs as a daemon; do not leave it behind
    out = {
        "leann_version": version("leann"),
        "build": build,
        "files": files,
        "warm": {**percentiles(times), "machine_busy": m["machine_busy"], "ranked": ranked},
    }
    args.out.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
