"""Foundation benchmark: ragbag's build and search on MS MARCO 5k, side by side with LEANN 0.3.8.

    make bench        # or: .venv/bin/python benchmarks/build_bench.py [--skip-leann]

Data: ``../shared/eval/msmarco-5k`` (BEIR layout; override with --eval), read in place. Each
passage is written as ``benchmarks/.work/msmarco-files/<_id>.txt`` (text only; the titles of this
set are empty) and indexed by a fresh ``RAGBAG_HOME=benchmarks/.work/home``.

What is measured, in this order, in one run:

1. Full build: ``ragbag add files msmarco DIR`` then ``ragbag build --json`` as a subprocess; wall
   time is what a user waits (imports, Dagster, every stage). chunks/s = chunks / wall. Per-stage
   seconds come from the Dagster run's step stats; ``startup_s`` is wall less the Dagster run.
2. Bare encode (benchmarks/bare_encode.py, its own process): ``SentenceTransformer.encode(texts,
   batch_size=128, normalize_embeddings=True)`` over exactly the ``index_text`` of the chunks the
   build embedded (read back from LanceDB), import + model load timed apart from encoding.
   Overhead = build wall / (import + load + encode) - 1; also build wall / encode - 1.
3. No-change rebuild: ``ragbag build --json`` again; chunks_embedded must be 0; ratio to 1.
4. Warm latency, in this process: ``ragbag.search.query.search(q, k=10, mode=m, home=...)`` for the 43
   queries that have judgments, one warm-up pass then 3 timed passes per mode. The per-process
   memo of query vectors is cleared before every call, so each call embeds its query as a new
   query would; ``hybrid_repeat`` is the same with the memo left on.
   nDCG@10 per mode with ir-measures (doc id = file stem of the hit's uri).
5. Cold CLI: ``ragbag search QUERY -k 10 --json`` as a subprocess for 5 queries; median and max.
6. Bytes: ``ragbag list --json`` bytes of the source, and everything under RAGBAG_HOME.
7. LEANN (benchmarks/leann_side.py in benchmarks/.work/leann-venv): the same files and queries;
   its warm vector/hybrid search (tens of seconds per query: it re-embeds what the graph walk
   visits) is timed and scored on the first --leann-sample queries, keyword on all.

Writes benchmarks/results/foundation.json and prints a markdown table.

Long because one run measures both tools phase by phase on the same data (build, refresh,
search, memory) for one table of ratios: split, each phase would rebuild the state the one before
left.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from _meter import folder_bytes, meter, percentiles, wait_for_quiet

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks"
WORK = BENCH / ".work"
SOURCE = "msmarco"
MODES = ("hybrid", "vector", "keyword")
PASSES = 3
COLD_QUERIES = 5
TARGETS = {"overhead": 0.20, "rebuild_ratio": 0.05, "hybrid_p50_ms": 50.0, "cold_cli_s": 4.0}


# -- data ------------------------------------------------------------------------------------


def load_eval(eval_dir: Path) -> dict:
    """Corpus, the queries that have judgments (in file order), and qrels."""
    corpus = [json.loads(line) for line in open(eval_dir / "corpus.jsonl", encoding="utf-8")]
    qrels: dict[str, dict[str, int]] = {}
    for line in open(eval_dir / "qrels" / "test.tsv", encoding="utf-8"):
        qid, did, rel = line.split("\t")
        qrels.setdefault(qid, {})[did] = int(rel)
    queries = [json.loads(line) for line in open(eval_dir / "queries.jsonl", encoding="utf-8")]
    queries = [{"id": q["_id"], "text": q["text"]} for q in queries if q["_id"] in qrels]
    return {"corpus": corpus, "queries": queries, "qrels": qrels}


def write_passages(corpus: list[dict], folder: Path) -> Path:
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    for doc in corpus:
        (folder / f"{doc['_id']}.txt").write_text(doc["text"], encoding="utf-8")
    return folder


# -- running ragbag --------------------------------------------------------------------------


def ragbag(home: Path, *args: str) -> tuple[dict, str]:
    """Run the ``ragbag`` CLI of this venv with RAGBAG_HOME=home; (meter, stdout)."""
    exe = Path(sys.executable).with_name("ragbag")
    env = {**os.environ, "RAGBAG_HOME": str(home)}
    with meter() as m:
        done = subprocess.run([str(exe), *args], env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"ragbag {args[0]} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return m, done.stdout


def timed_build(home: Path) -> dict:
    m, stdout = ragbag(home, "build", "--json")
    (report,) = json.loads(stdout)
    if report["status"] != "success":
        raise RuntimeError(f"build failed: {report.get('failure')}")
    return {**m, "report": report, "stages": dagster_timing(home, report["run_id"], m["wall_s"])}


def dagster_timing(home: Path, run_id: str, wall: float) -> dict:
    """Seconds per asset step of the run, the run itself, and the start-up around it."""
    import dagster as dg

    instance = dg.DagsterInstance.from_config(str(home / "dagster"))
    steps = {
        s.step_key.split("__")[-1]: round(s.end_time - s.start_time, 2)
        for s in instance.get_run_step_stats(run_id)
        if s.start_time and s.end_time
    }
    record = instance.get_run_record_by_id(run_id)
    run_s = record.end_time - record.start_time if record and record.end_time else sum(steps.values())
    return {"steps_s": steps, "run_s": round(run_s, 2), "startup_s": round(wall - run_s, 2)}


def indexed_texts(home: Path) -> list[str]:
    """The index_text of every chunk the build embedded, as stored in LanceDB."""
    import lancedb

    table = lancedb.connect(str(home / "lance")).open_table("chunks")
    rows = table.search().where(f"source = '{SOURCE}'").select(["index_text"]).limit(None).to_arrow()
    return rows.column("index_text").to_pylist()


def bare_encode(texts: list[str]) -> dict:
    path = WORK / "texts.json"
    path.write_text(json.dumps(texts))
    with meter() as m:
        done = subprocess.run(
            [sys.executable, str(BENCH / "bare_encode.py"), str(path)], capture_output=True, text=True, check=True
        )
    return {**json.loads(done.stdout.strip().splitlines()[-1]), **m}


# -- search ----------------------------------------------------------------------------------


def warm_latency(home: Path, queries: list[dict]) -> dict:
    from ragbag.models import embedding
    from ragbag.search import query

    def timed(q: str, mode: str, fresh: bool):
        if fresh:
            forget_query_vectors(embedding)
        t0 = time.perf_counter()
        hits = query.search(q, k=10, mode=mode, home=str(home))
        return time.perf_counter() - t0, hits

    out = {}
    for name, mode, fresh in [(m, m, True) for m in MODES] + [("hybrid_repeat", "hybrid", False)]:
        for q in queries:  # warm-up pass
            timed(q["text"], mode, fresh)
        times, ranked = [], {}
        with meter() as m:
            for _ in range(PASSES):
                for q in queries:
                    seconds, hits = timed(q["text"], mode, fresh)
                    times.append(seconds)
                    ranked[q["id"]] = [[Path(u).stem, float(s)] for u, s in zip(hits["uri"], hits["score"])]
        out[name] = {**percentiles(times), "others_busy": m["others_busy"], "ranked": ranked}
    return out


def forget_query_vectors(embedding) -> None:
    """Empty ragbag's per-process memos of query vectors (their names have changed over time)."""
    cache = getattr(embedding, "_QUERY_CACHE", None)
    if cache is not None:
        cache.clear()
    elif hasattr(embedding, "_encode_query_cached"):
        embedding._encode_query_cached.cache_clear()
    else:
        raise RuntimeError("ragbag.models.embedding has no known query-vector memo to clear; update the bench")
    try:  # the aligned encoder's memo too (stop 59 on)
        from ragbag.models import aligned
    except ImportError:
        return
    aligned._QUERIES.clear()


def cold_cli(home: Path, queries: list[str]) -> dict:
    runs = []
    for q in queries:
        m, stdout = ragbag(home, "search", q, "-k", "10", "--json")
        assert json.loads(stdout), f"no hits for {q!r}"
        runs.append(m)
    walls = [r["wall_s"] for r in runs]
    return {"runs": runs, "median_s": round(statistics.median(walls), 2), "max_s": round(max(walls), 2)}


def ndcg10(qrels: dict, ranked: dict) -> float | None:
    """Mean nDCG@10 over the judged queries (a doc's best-scoring chunk stands for it)."""
    try:
        import ir_measures
        from ir_measures import ScoredDoc, nDCG
    except ImportError:
        return None
    run = []
    for qid, hits in ranked.items():
        best: dict[str, float] = {}
        for n, (doc, _) in enumerate(hits):
            best.setdefault(doc, float(len(hits) - n))  # rank order, whatever the score scale
        run.extend(ScoredDoc(qid, d, s) for d, s in best.items())
    judged = [ir_measures.Qrel(q, d, r) for q, docs in qrels.items() if q in ranked for d, r in docs.items()]
    return round(ir_measures.calc_aggregate([nDCG @ 10], judged, run)[nDCG @ 10], 4)


def scored(qrels: dict, warm: dict, only: set[str] | None = None) -> dict:
    """nDCG@10 per mode, over all ranked queries or only some."""
    return {
        m: ndcg10(qrels, {q: r for q, r in warm[m]["ranked"].items() if only is None or q in only})
        for m in MODES
        if m in warm
    }


# -- sizes and LEANN -------------------------------------------------------------------------


def ragbag_bytes(home: Path) -> dict:
    _, stdout = ragbag(home, "list", "--json")
    (row,) = [r for r in json.loads(stdout) if r["source"] == SOURCE]
    parts = {d.name: folder_bytes(d)["apparent"] for d in sorted(home.iterdir()) if d.is_dir()}
    return {"list_bytes": row["bytes"], "home": folder_bytes(home), "home_parts": parts}


def run_leann(python: Path, files: Path, queries: list[dict], passes: int, sample: int) -> dict:
    qpath, out = WORK / "queries.json", WORK / "leann-result.json"
    qpath.write_text(json.dumps(queries))
    out.unlink(missing_ok=True)
    log = WORK / "leann-side.log"
    with open(log, "w") as f:
        subprocess.run(
            [
                str(python),
                str(BENCH / "leann_side.py"),
                "--docs",
                str(files),
                "--work",
                str(WORK / "leann-bench"),
                "--queries",
                str(qpath),
                "--out",
                str(out),
                "--cold",
                str(COLD_QUERIES),
                "--passes",
                str(passes),
                "--sample",
                str(sample),
            ],
            stdout=f,
            stderr=subprocess.STDOUT,
            check=True,
        )
    return json.loads(out.read_text())


# -- report ----------------------------------------------------------------------------------


def summarise(ev: dict, rb: dict, leann: dict | None, leann_sample: int) -> dict:
    full, bare, rebuild = rb["full"], rb["bare"], rb["rebuild"]
    chunks = full["report"]["chunks"]
    bare_total = bare["import_s"] + bare["load_s"] + bare["encode_s"]
    sample = {q["id"] for q in ev["queries"][:leann_sample]}
    r = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "command": "make bench  (.venv/bin/python benchmarks/build_bench.py)",
        "machine": {
            "cores": os.cpu_count(),
            "python": platform.python_version(),
            "platform": platform.platform(),
            "nice": os.nice(0),
        },
        "quiet": rb["quiet"],
        "data": {"passages": len(ev["corpus"]), "queries": len(ev["queries"]), "leann_sample": leann_sample},
        "targets": TARGETS,
        "ragbag": {
            "build": full,
            "chunks": chunks,
            "chunks_per_s": round(chunks / full["wall_s"], 1),
            "bare_encode": {
                **bare,
                "total_s": round(bare_total, 2),
                "chunks_per_s": round(bare["texts"] / bare["encode_s"], 1),
            },
            "overhead": round(full["wall_s"] / bare_total - 1, 3),
            "overhead_excl_load": round(full["wall_s"] / bare["encode_s"] - 1, 3),
            "overhead_cpu": round(full["cpu_s"] / bare["cpu_s"] - 1, 3),
            "rebuild": rebuild,
            "rebuild_ratio": round(rebuild["wall_s"] / full["wall_s"], 4),
            "warm": rb["warm"],
            "ndcg10": scored(ev["qrels"], rb["warm"]),
            "ndcg10_leann_sample": scored(ev["qrels"], rb["warm"], sample),
            "cold_cli": rb["cold"],
            "bytes": rb["sizes"],
        },
    }
    if leann:
        leann["chunks_per_s"] = round(leann["chunks"] / leann["build"]["wall_s"], 1)
        leann["overhead"] = round(leann["build"]["wall_s"] / bare_total - 1, 3)
        leann["rebuild_ratio"] = round(leann["rebuild"]["wall_s"] / leann["build"]["wall_s"], 4)
        leann["ndcg10"] = scored(ev["qrels"], leann["warm"])  # vector/hybrid: the sample only
    for side in (r["ragbag"], leann or {}):
        for w in side.get("warm", {}).values():
            w.pop("ranked", None)
    r["leann"] = leann
    return r


def mib(n: int) -> str:
    return f"{n / 2**20:.1f} MiB"


def table(r: dict) -> str:
    """Rows = metric; columns = ragbag | LEANN | target | met?"""
    g, lv, t = r["ragbag"], r["leann"] or {}, r["targets"]
    b, full, reb = g["bare_encode"], g["build"], g["rebuild"]

    def met(ok: bool) -> str:
        return "yes" if ok else "**no**"

    n_sample = r["data"]["leann_sample"]

    def lat(side: dict, mode: str) -> str:
        w = side.get("warm", {}).get(mode)
        if not w:
            return "—"
        cell = f"{w['p50_ms']:.1f} / {w['p95_ms']:.1f}"
        return cell if side is g else f"{cell} (n={w['n']})"

    def ln(fmt: str, *keys: str) -> str:
        """A LEANN value, or a dash when LEANN was skipped."""
        if not lv:
            return "—"
        vals = []
        for k in keys:
            cur = lv
            for part in k.split("."):
                cur = cur[part]
            vals.append(cur)
        return fmt.format(*vals)

    steps = full["stages"]["steps_s"]
    rows = [
        ("chunks indexed", g["chunks"], ln("{}", "chunks"), "", ""),
        ("full build, wall (s)", f"{full['wall_s']:.1f}", ln("{:.1f}", "build.wall_s"), "", ""),
        (
            "  of which: start-up / read / chunk / embed / index (s)",
            f"{full['stages']['startup_s']:.1f} / "
            + " / ".join(f"{steps.get(k, 0):.1f}" for k in ("documents", "chunks", "embeddings", "bm25")),
            "",
            "",
            "",
        ),
        ("chunks/s (chunks / build wall)", g["chunks_per_s"], ln("{}", "chunks_per_s"), "", ""),
        (
            "bare encode: import+load / encode (s)",
            f"{b['import_s'] + b['load_s']:.1f} / {b['encode_s']:.1f} ({b['chunks_per_s']} chunks/s)",
            "",
            "",
            "",
        ),
        (
            "overhead vs bare encode, incl. import+load",
            f"{g['overhead']:+.1%}",
            ln("{:+.1%}", "overhead"),
            f"≤ {t['overhead']:.0%}",
            met(g["overhead"] <= t["overhead"]),
        ),
        ("overhead vs bare encode, encode only", f"{g['overhead_excl_load']:+.1%}", "", "", ""),
        (
            "CPU-seconds: build / bare encode (overhead)",
            f"{full['cpu_s']:.0f} / {b['cpu_s']:.0f} ({g['overhead_cpu']:+.1%})",
            ln("{:.0f}", "build.cpu_s"),
            "",
            "",
        ),
        (
            "no-change rebuild, wall (s)",
            f"{reb['wall_s']:.1f} ({reb['report']['chunks_embedded']} embedded)",
            ln("{:.1f}", "rebuild.wall_s"),
            "",
            "",
        ),
        (
            "no-change rebuild / full build",
            f"{g['rebuild_ratio']:.1%}",
            ln("{:.1%}", "rebuild_ratio"),
            f"≤ {t['rebuild_ratio']:.0%}",
            met(g["rebuild_ratio"] <= t["rebuild_ratio"]),
        ),
        (
            "warm hybrid p50 / p95 (ms)",
            lat(g, "hybrid"),
            lat(lv, "hybrid"),
            f"p50 ≤ {t['hybrid_p50_ms']:.0f}",
            met(g["warm"]["hybrid"]["p50_ms"] <= t["hybrid_p50_ms"]),
        ),
        ("warm vector p50 / p95 (ms)", lat(g, "vector"), lat(lv, "vector"), "", ""),
        ("warm keyword p50 / p95 (ms)", lat(g, "keyword"), lat(lv, "keyword"), "", ""),
        ("warm hybrid, repeated query p50 / p95 (ms)", lat(g, "hybrid_repeat"), "", "", ""),
        (
            "cold CLI search, median / max of 5 (s)",
            f"{g['cold_cli']['median_s']:.2f} / {g['cold_cli']['max_s']:.2f}",
            ln("{:.2f} / {:.2f}", "cold_cli.median_s", "cold_cli.max_s"),
            f"≤ {t['cold_cli_s']:.0f}",
            met(g["cold_cli"]["max_s"] <= t["cold_cli_s"]),
        ),
        (
            f"nDCG@10 hybrid / vector / keyword, all {r['data']['queries']} queries",
            " / ".join(f"{g['ndcg10'][m]}" for m in MODES),
            ln("— / — / {}", "ndcg10.keyword"),
            "",
            "",
        ),
        (
            f"nDCG@10 hybrid / vector, first {n_sample} queries (LEANN's timed sample)",
            " / ".join(f"{g['ndcg10_leann_sample'][m]}" for m in MODES[:2]),
            ln("{} / {}", "ndcg10.hybrid", "ndcg10.vector"),
            "",
            "",
        ),
        (
            "index bytes (`ragbag list`; LEANN: index folder)",
            mib(g["bytes"]["list_bytes"]),
            mib(lv["bytes"]["apparent"]) if lv else "—",
            "",
            "",
        ),
        (
            "all on disk (`du` of RAGBAG_HOME; LEANN: index folder)",
            mib(g["bytes"]["home"]["allocated"]),
            mib(lv["bytes"]["allocated"]) if lv else "—",
            "",
            "",
        ),
        (
            "other processes' share of the CPU during full build / bare encode",
            f"{full['others_busy']:.0%} / {b['others_busy']:.0%}",
            ln("{:.0%}", "build.others_busy"),
            "",
            "",
        ),
    ]
    lines = ["| metric | ragbag | LEANN 0.3.8 | target | met? |", "|---|---|---|---|---|"]
    lines += [f"| {' | '.join(str(c) for c in row)} |" for row in rows]
    return "\n".join(lines)


# -- main ------------------------------------------------------------------------------------


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--eval", type=Path, default=ROOT.parent / "shared" / "eval" / "msmarco-5k")
    p.add_argument("--leann-python", type=Path, default=WORK / "leann-venv" / "bin" / "python")
    p.add_argument("--skip-leann", action="store_true")
    p.add_argument(
        "--leann-passes",
        type=int,
        default=1,
        help="timed passes of LEANN's warm search (tens of seconds per vector query)",
    )
    p.add_argument(
        "--leann-sample",
        type=int,
        default=10,
        help="queries LEANN's warm vector and hybrid search are timed and scored on",
    )
    p.add_argument(
        "--reuse-ragbag",
        action="store_true",
        help="take the ragbag half from benchmarks/.work/ragbag-part.json (LEANN work only)",
    )
    p.add_argument(
        "--reuse-leann",
        action="store_true",
        help="take LEANN's half from benchmarks/.work/leann-result.json (ragbag work only)",
    )
    p.add_argument("--out", type=Path, default=BENCH / "results" / "foundation.json")
    p.add_argument(
        "--quiet-wait",
        type=float,
        default=300,
        help="before each heavy phase, wait up to this many seconds for other work to stop",
    )
    args = p.parse_args()
    quiet: dict[str, dict] = {}

    def step(msg: str, heavy: str | None = None) -> None:
        print(f"[{datetime.now():%H:%M:%S}] {msg}", file=sys.stderr, flush=True)
        if heavy and args.quiet_wait > 0:
            quiet[heavy] = wait_for_quiet(args.quiet_wait)

    ev = load_eval(args.eval)
    files = write_passages(ev["corpus"], WORK / "msmarco-files")
    part = WORK / "ragbag-part.json"
    if args.reuse_ragbag:
        rb = json.loads(part.read_text())
    else:
        rb = ragbag_half(ev, files, step, quiet)
        part.write_text(json.dumps(rb, default=str))
    leann = None
    if args.reuse_leann:
        leann = json.loads((WORK / "leann-result.json").read_text())
    elif not args.skip_leann:
        step("LEANN side (log: benchmarks/.work/leann-side.log)", heavy="leann")
        leann = run_leann(args.leann_python, files, ev["queries"], args.leann_passes, args.leann_sample)
        leann["quiet"] = quiet.get("leann")
    result = summarise(ev, rb, leann, args.leann_sample)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1, default=str) + "\n")
    step(f"wrote {args.out}")
    print(table(result))


def ragbag_half(ev: dict, files: Path, step, quiet: dict) -> dict:
    """Steps 1-6: everything measured on ragbag, as one dict (saved before LEANN runs)."""
    home = WORK / "home"
    shutil.rmtree(home, ignore_errors=True)
    # The bare-encode baseline and LEANN run all-MiniLM-L6-v2, so ragbag does too (its default is
    # now multilingual-e5-small; the comparison is of the pipeline, not of two models).
    ragbag(home, "config", "set", "embedding.model", "all-MiniLM-L6-v2")
    ragbag(home, "add", "files", SOURCE, str(files))
    step("full build", heavy="build")
    full = timed_build(home)
    step(f"full build {full['wall_s']} s; bare encode", heavy="bare_encode")
    bare = bare_encode(indexed_texts(home))
    step(f"bare encode {bare['wall_s']} s; no-change rebuild")
    rebuild = timed_build(home)
    assert rebuild["report"]["chunks_embedded"] == 0, rebuild["report"]
    step("warm latency", heavy="warm")
    warm = warm_latency(home, ev["queries"])
    step("cold CLI")
    cold = cold_cli(home, [q["text"] for q in ev["queries"][:COLD_QUERIES]])
    return {
        "full": full,
        "bare": bare,
        "rebuild": rebuild,
        "warm": warm,
        "cold": cold,
        "sizes": ragbag_bytes(home),
        "quiet": dict(quiet),
    }


if __name__ == "__main__":
    main()
