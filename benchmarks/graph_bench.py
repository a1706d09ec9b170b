"""Graph-prune benchmark: compact vs fast vs exact flat search vs LEANN 0.3.8, one run, side by side.

    .venv/bin/python benchmarks/graph_bench.py [--corpus msmarco enron interpolated-100k synthetic-100k]
        [--leann-python benchmarks/.work/leann-venv/bin/python] [--queries 20]

Corpora
- ``msmarco``: ``../shared/eval/msmarco-5k`` passages (text only, as build_bench writes them) and
  its 43 judged queries. LEANN runs on the same passage files (``leann_side.py``).
- ``enron``: the chunks and stored vectors of the Enron build that ``mail_bench.py`` leaves in
  ``benchmarks/.work/mail-home`` (47k chunks, ragbag's own chunking); queries are the subjects
  of 40 random messages (what a user types into mail search). LEANN is built from the same
  stored vectors and chunk texts (``leann_vectors_side.py``) and searches with recompute.
- ``interpolated-100k``: 100,000 vectors generated from the Enron mailbox's distinct vectors,
  each a point between one of them and one of its 10 nearest neighbours (λ ~ U(0, ½) of the way,
  renormalised), with that text: a mailbox three times the size on the same topics, new mail
  lying where the old mail's neighbourhoods are.
- ``synthetic-100k``: 100,000 vectors = Enron chunk vectors plus isotropic N(0, 0.02²) noise,
  renormalised, with the source chunk's text. The noise is 13 % of each vector's energy spread
  evenly over all 384 directions, which codes cannot compress (``code_probe.py``): the stress
  case for codes.

Embedding 100k real chunks would take over an hour on this machine (and the shared data holds no
100k distinct chunks), and a generated vector has no text that embeds to it. So compact recall
on both generated sets ranks by the generated vectors (a lookup); on ``interpolated-100k`` the
timed queries also embed each recomputed node's text through the real model (and discard it),
so its latency is what a real corpus of that size would pay, and LEANN runs on it from the same
vectors and texts (its latency and bytes; its recall is not comparable, its recompute embeds the
texts). On ``synthetic-100k`` compact latency is the traversal's.

Per corpus and method: index bytes next to the raw text bytes (UTF-8 of the chunk texts), build
seconds (graph only: every method starts from the same vectors; LEANN's build includes its own
embedding, so the embedding time of the same passages is shown beside it), recall@3 and
recall@10 against exact search with the same vectors, and warm query latency p50/p95 over
``--queries`` queries, swept over the search width (``ef``) and, for compact, the recompute
budget. Compact recomputes through the real model (sentence-transformers, a fresh cache per
query, so no query profits from the one before); its recall is over all queries, with the
stored exact vectors standing in for the model's. Recall is tie-aware (ann-benchmarks): a
result counts when its exact score reaches the k-th best, so a copy of a true neighbour (mail
repeats itself) is a hit. The compact graph has one node per distinct text and is sized to
``--budget`` of the raw text with the recall check's floor, as a build makes it
(``compact.build.build_within``). Writes ``--results`` (``benchmarks/results/graph.json``).

Long because four corpora and two tools are prepared, built and searched in one run, so that
the ratios are measured side by side.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
WORK = ROOT / "benchmarks" / ".work"
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _meter import meter, percentiles  # noqa: E402

from ragbag.core.cache import RowCache  # noqa: E402
from ragbag.index.compact.build import build_within  # noqa: E402
from ragbag.index.compact.graph import attach_rows  # noqa: E402
from ragbag.index.compact.pack import pack_compact  # noqa: E402
from ragbag.index.compact.search import search_compact  # noqa: E402
from ragbag.index.hnsw import build_fast, search_fast  # noqa: E402
from ragbag.index.nodes import first_rows, row_nodes  # noqa: E402
from ragbag.index.params import Params  # noqa: E402
from ragbag.models import embedding  # noqa: E402

MODEL = embedding.DEFAULT_MODEL
EVAL = ROOT.parent / "shared" / "eval"


def main() -> None:
    args = parse_args()
    out_path = ROOT / args.results
    results = json.loads(out_path.read_text()) if out_path.exists() else {}
    if args.tables:
        for name in args.corpus:
            print(table(name, results[name]) + "\n")
        return
    for name in args.corpus:
        print(f"== {name}", flush=True)
        corpus = LOADERS[name](args)
        with meter() as m:  # how busy the machine was: a crowded two-core box slows every row
            res = bench_corpus(name, corpus, args)
            results[name] = res  # kept if the LEANN side fails
            out_path.write_text(json.dumps(results, indent=1))
            if name == "msmarco" and args.leann_python:
                res["leann"] = leann_msmarco(corpus, args)
            elif name in ("enron", "interpolated-100k") and args.leann_python:
                res["leann"] = leann_from_vectors(name, corpus, args)
        res["machine_busy"] = m["machine_busy"]
        results[name] = res
        out_path.write_text(json.dumps(results, indent=1))
        print(table(name, res), flush=True)


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "--corpus",
        nargs="+",
        default=["msmarco", "enron", "interpolated-100k", "synthetic-100k"],
        choices=sorted(LOADERS),
    )
    p.add_argument(
        "--leann-python", default="", help="python of a venv with leann==0.3.8 (msmarco, enron, interpolated-100k)"
    )
    p.add_argument("--queries", type=int, default=20, help="queries timed per setting")
    p.add_argument("--tables", action="store_true", help="print the tables of the saved results; run nothing")
    p.add_argument("--leann-queries", type=int, default=8, help="LEANN re-embeds per query: ~30 s each here")
    p.add_argument(
        "--budget",
        type=float,
        default=Params().budget,
        help="compact size plan as a share of the raw text (graph.budget); 0 = largest layout",
    )
    p.add_argument("--results", default="benchmarks/results/graph.json", help="where results are kept")
    return p.parse_args()


# ---------------------------------------------------------------- corpora


def load_msmarco(args) -> dict:
    docs = [json.loads(line) for line in open(EVAL / "msmarco-5k" / "corpus.jsonl", encoding="utf-8")]
    qrels = {line.split("\t")[0] for line in open(EVAL / "msmarco-5k" / "qrels" / "test.tsv")}
    queries = [json.loads(line) for line in open(EVAL / "msmarco-5k" / "queries.jsonl", encoding="utf-8")]
    queries = [{"id": q["_id"], "text": q["text"]} for q in queries if q["_id"] in qrels]
    texts = [d["text"] for d in docs]
    cache = WORK / "graph-msmarco-vectors.npy"
    t0 = time.perf_counter()
    if cache.exists():
        vectors, embed_s = np.load(cache), json.loads(cache.with_suffix(".json").read_text())["embed_s"]
    else:
        vectors = encode_sorted(texts)
        embed_s = round(time.perf_counter() - t0, 1)
        WORK.mkdir(parents=True, exist_ok=True)
        np.save(cache, vectors)
        cache.with_suffix(".json").write_text(json.dumps({"embed_s": embed_s}))
    return {
        "ids": [d["_id"] for d in docs],
        "texts": texts,
        "keys": texts,
        "vectors": vectors,
        "queries": queries,
        "embed_s": embed_s,
        "real_model": True,
    }


def load_enron(args) -> dict:
    from ragbag.core.home import Home
    from ragbag.index.store import Store

    home = Home(WORK / "mail-home")
    if not (home.lance_dir / "chunks.lance").exists():
        raise SystemExit("no Enron build: run benchmarks/mail_bench.py first")
    store = Store(home.lance_dir)
    chunks = store.rows("chunks", "enron", ["chunk_id", "index_text", "text", "title"]).to_pydict()
    emb = store.rows("embeddings", "enron", ["chunk_id", "vector"])
    pos = {c: i for i, c in enumerate(emb.column("chunk_id").to_pylist())}
    flat = np.asarray(emb.column("vector").combine_chunks().flatten().to_numpy(zero_copy_only=False), np.float32)
    matrix = flat.reshape(len(pos), -1)
    order = [pos[c] for c in chunks["chunk_id"]]
    rng = np.random.default_rng(0)
    titles = sorted({t for t in chunks["title"] if t and len(t) > 12})
    picks = rng.choice(len(titles), size=min(40, len(titles)), replace=False)
    queries = [{"id": str(i), "text": titles[i]} for i in sorted(picks)]
    bench = json.loads((WORK / "mail_bench.json").read_text()) if (WORK / "mail_bench.json").exists() else {}
    embed_s = (bench.get("build") or {}).get("stages", {}).get("embeddings")
    return {
        "ids": chunks["chunk_id"],
        "texts": chunks["index_text"],
        "keys": chunks["index_text"],
        "vectors": matrix[order],
        "queries": queries,
        "embed_s": embed_s,
        "real_model": True,
        "home": home,
    }


def load_synthetic(args) -> dict:
    base = load_enron(args)
    rng = np.random.default_rng(1)
    n = 100_000
    src = rng.integers(0, len(base["vectors"]), n)
    x = base["vectors"][src] + 0.02 * rng.normal(size=(n, base["vectors"].shape[1])).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return {
        "ids": [str(i) for i in range(n)],
        "texts": [base["texts"][i] for i in src],
        "keys": [str(i) for i in range(n)],
        "vectors": x,  # the noise makes every vector distinct
        "queries": base["queries"],
        "embed_s": None,
        "real_model": False,
    }


def load_interpolated(args) -> dict:
    base = load_enron(args)
    reps = first_rows(row_nodes(base["keys"]))  # one vector per distinct text
    v = base["vectors"][reps]
    near = np.empty((len(v), 10), np.int64)
    for s in range(0, len(v), 2048):
        sims = v[s : s + 2048] @ v.T
        sims[np.arange(len(sims)), np.arange(s, s + len(sims))] = -np.inf  # not itself
        near[s : s + 2048] = np.argpartition(-sims, 10, axis=1)[:, :10]
    rng = np.random.default_rng(1)
    n = 100_000
    src = rng.integers(0, len(v), n)
    other = near[src, rng.integers(0, 10, n)]
    lam = rng.uniform(0, 0.5, n).astype(np.float32)[:, None]
    x = (1 - lam) * v[src] + lam * v[other]
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return {
        "ids": [str(i) for i in range(n)],
        "texts": [base["texts"][reps[i]] for i in src],
        "keys": [str(i) for i in range(n)],
        "vectors": x.astype(np.float32),
        "queries": base["queries"],
        "embed_s": None,
        "real_model": False,
        "pay_model": True,
    }


LOADERS = {
    "msmarco": load_msmarco,
    "enron": load_enron,
    "synthetic-100k": load_synthetic,
    "interpolated-100k": load_interpolated,
}


def encode_sorted(texts: list[str]) -> np.ndarray:
    count = embedding.token_counter(MODEL)
    order = sorted(range(len(texts)), key=lambda i: -count(texts[i]))
    out = np.zeros((len(texts), embedding.spec(MODEL).dim), np.float32)
    for s in range(0, len(order), 128):
        batch = order[s : s + 128]
        out[batch] = embedding.encode_passages([texts[i] for i in batch], MODEL)
    return out


# ---------------------------------------------------------------- measuring


def bench_corpus(name: str, c: dict, args) -> dict:
    x = c["vectors"]
    raw = sum(len(t.encode("utf-8")) for t in c["texts"])
    queries = [embedding.encode_query(q["text"], MODEL) for q in c["queries"]]
    timed = queries[: args.queries]
    truth = [x @ q for q in queries]  # exact scores: recall is tie-aware (below)
    res: dict = {
        "chunks": len(x),
        "raw_text_bytes": raw,
        "queries": len(queries),
        "timed_queries": len(timed),
        "embed_s": c["embed_s"],
        "real_model": c["real_model"],
    }

    def score(search, qs=queries, truths=truth) -> dict:
        r3 = r10 = 0.0
        times = []
        for q, s in zip(qs, truths):
            t0 = time.perf_counter()
            ids = np.asarray(search(q), np.int64)
            times.append(time.perf_counter() - t0)
            r3 += tie_recall(ids, s, 3)
            r10 += tie_recall(ids, s, 10)
        return {"recall@3": round(r3 / len(qs), 3), "recall@10": round(r10 / len(qs), 3), **percentiles(times)}

    def exact(q):  # what query.py does for a source searched exactly
        s = x @ q
        top = np.argpartition(-s, 10)[:10]
        return top[np.argsort(-s[top])]

    res["exact"] = {"bytes": int(x.nbytes), "build_s": 0.0, "runs": [score(exact, timed, truth)]}
    print(f"  exact {res['exact']['runs'][0]}", flush=True)

    t0 = time.perf_counter()
    fast = build_fast(x, [str(i) for i in range(len(x))])  # every vector distinct
    build = time.perf_counter() - t0
    with tempfile.TemporaryDirectory() as tmp:
        import faiss

        faiss.write_index(fast, f"{tmp}/i")
        fast_bytes = os.path.getsize(f"{tmp}/i")
    runs = []
    for ef in (16, 32, 64, 128, 512):
        r = score(lambda q: search_fast(fast, q, 10, ef)[0])  # noqa: F821 (`del fast` follows the loop)
        runs.append({"ef": ef, **r})
        print(f"  fast {runs[-1]}", flush=True)
    res["fast"] = {"bytes": fast_bytes, "build_s": round(build, 2), "runs": runs}
    del fast

    t0 = time.perf_counter()
    keys = c["keys"]  # one node per distinct embedded text, as graph_stage.build_graph does
    reps = first_rows(row_nodes(keys))
    # Sized to the text as a build sizes it (graph.budget, default 5 %), recall check included.
    g, recall, nq = build_within(x[reps], raw, Params(budget=args.budget), queries=200)
    build = time.perf_counter() - t0
    blob = pack_compact(g)
    attach_rows(g, keys)
    res["compact"] = {
        "bytes": len(blob),
        "build_s": round(build, 2),
        "bits": g.bits,
        "nodes": g.n,
        "pq_m": int(g.codes.shape[1]),
        "degree": int(g.meta["degree"]),
        "budget": args.budget,
        "rotated": g.rotation is not None,
        "edges": int(len(g.neighbors)),
        "hubs": int(len(g.hubs)),
        "self_recall@10": recall,
        "runs": [],
    }
    encoded = [0]

    def recompute_of(q_ids):
        if not c["real_model"] and not c.get("pay_model"):
            return x[q_ids]
        encoded[0] += len(q_ids)
        vectors = embedding.encode_passages([c["texts"][i] for i in q_ids], MODEL, embedding.RECOMPUTE_BATCH)
        # A generated vector has no text that embeds to it: its text is embedded for the time
        # a real corpus spends, and the generated vector is what the search ranks by.
        return vectors if c["real_model"] else x[q_ids]

    d = Params()
    settings = [(ef, d.recompute) for ef in (64, 128, 256, 512, 1024)] + [(d.ef_search, r) for r in (32, 64, 256)]
    for ef, budget in settings:
        # Recall over every query with the exact stored vector standing in for the model's
        # (deterministic: the same vector); latency over the timed queries through the model,
        # a fresh cache per query so no query is helped by vectors an earlier one recomputed.
        looked_up = score(lambda q: search_compact(g, q, 10, lambda ids: x[ids], ef=ef, recompute=budget)[0])
        encoded[0] = 0

        def run(q):
            cache = RowCache()

            def vectors_of(ids):
                return cache.get_many([str(i) for i in ids], lambda todo: recompute_of(ids[todo]))

            return search_compact(g, q, 10, vectors_of, ef=ef, recompute=budget)[0]

        r = score(run, timed, truth[: len(timed)])
        res["compact"]["runs"].append(
            {
                "ef": ef,
                "recompute": budget,
                **r,
                "recall@3": looked_up["recall@3"],
                "recall@10": looked_up["recall@10"],
                "recall@10_timed": r["recall@10"],
                "traversal_p50_ms": looked_up["p50_ms"],
                "recomputed_per_query": round(encoded[0] / len(timed), 1),
            }
        )
        print(f"  compact {res['compact']['runs'][-1]}", flush=True)
    if c.get("home"):
        res["end_to_end"] = end_to_end(c, timed)
    if name.endswith("-100k"):
        res["keyword_side"] = keyword_side(c, args)
    if c["real_model"] or c.get("pay_model"):
        sample = list(range(0, len(x), max(1, len(x) // 256)))[:256]
        t0 = time.perf_counter()
        for s in range(0, len(sample), 64):
            embedding.encode_passages([c["texts"][i] for i in sample[s : s + 64]], MODEL, embedding.RECOMPUTE_BATCH)
        res["model_ms_per_passage"] = round((time.perf_counter() - t0) / len(sample) * 1000, 2)
    return res


def end_to_end(c: dict, timed) -> dict:
    """``ragbag.search.query.search`` on the built home, warm: hybrid (BM25 + the graph) and vector."""
    from ragbag.search import query

    out = {}
    texts = [q["text"] for q in c["queries"][: len(timed)]]
    for mode in ("hybrid", "vector"):
        query.search(texts[-1], k=10, mode=mode, home=c["home"])  # load the snapshot
        times = []
        for t in texts:
            t0 = time.perf_counter()
            query.search(t, k=10, mode=mode, home=c["home"])
            times.append(time.perf_counter() - t0)
        out[mode] = percentiles(times)
    print(f"  end to end {out}", flush=True)
    return out


def keyword_side(c: dict, args) -> dict:
    """BM25 over the 100k texts, the other half of a hybrid query at that size: written as a
    publish writes it, read as search reads it."""
    import tempfile

    from ragbag.index import bm25

    folder = Path(tempfile.mkdtemp(prefix="bm25-", dir=WORK))
    t0 = time.perf_counter()
    bm25.write(c["texts"], folder)
    built = time.perf_counter() - t0
    index = bm25.load(folder)  # in memory: the files can go
    shutil.rmtree(folder)
    times = []
    for q in c["queries"][: args.queries]:
        t0 = time.perf_counter()
        scores = bm25.scores(index, bm25.tokenize(q["text"]), len(c["texts"]))
        np.argpartition(-scores, 100)[:100]
        times.append(time.perf_counter() - t0)
    out = {"build_s": round(built, 1), **percentiles(times)}
    print(f"  keyword side {out}", flush=True)
    return out


def leann_msmarco(c: dict, args) -> dict:
    """LEANN 0.3.8 (hnsw backend, its compact + recompute defaults) on the same passages."""
    docs = WORK / "msmarco-files"
    docs.mkdir(parents=True, exist_ok=True)
    if len(list(docs.glob("*.txt"))) != len(c["ids"]):
        for i, t in zip(c["ids"], c["texts"]):
            (docs / f"{i}.txt").write_text(t, encoding="utf-8")
    queries = c["queries"][: args.leann_queries]
    qfile = WORK / "graph-leann-queries.json"
    qfile.write_text(json.dumps(queries))
    out = WORK / "graph-leann.json"
    subprocess.run(
        [
            args.leann_python,
            str(ROOT / "benchmarks" / "leann_side.py"),
            "--docs",
            str(docs),
            "--work",
            str(WORK / "leann-graph"),
            "--queries",
            str(qfile),
            "--out",
            str(out),
            "--cold",
            "0",
            "--sample",
            str(len(queries)),
            "--modes",
            "vector",
        ],
        check=True,
    )
    side = json.loads(out.read_text())
    pos = {d: i for i, d in enumerate(c["ids"])}
    ranked = {}
    for q in queries:
        got: list[int] = []
        for stem, _ in side["warm"]["vector"]["ranked"][q["id"]]:
            if stem in pos and pos[stem] not in got:
                got.append(pos[stem])
        ranked[q["id"]] = got
    return {**leann_row(c, queries, ranked, side, side["warm"]["vector"]), "bytes_total": side["bytes"]["apparent"]}


def leann_row(c: dict, queries: list[dict], ranked: dict[str, list[int]], side: dict, warm: dict) -> dict:
    """LEANN's line of a table: tie-aware recall of its ranked rows, its warm latency, and the
    vector index proper — the graph file and its id map; not its passages (the text), its FTS5
    keyword index (ragbag's BM25 is counted apart too) or its file-sync state. On a generated
    set LEANN's recompute embeds the texts, not the generated vectors, so no recall is given."""
    r3 = r10 = 0.0
    for q in queries:
        s = c["vectors"] @ embedding.encode_query(q["text"], MODEL)
        got = np.array(ranked[q["id"]], np.int64)
        r3 += tie_recall(got, s, 3)
        r10 += tie_recall(got, s, 10)
    index_bytes = sum(v for k, v in side["files"].items() if k.endswith(".index") or k.endswith(".ids.txt"))
    comparable = c["real_model"]
    return {
        "build_s": side["build"]["wall_s"],
        "files": side["files"],
        "index_bytes": index_bytes,
        "runs": [
            {
                "recall@3": round(r3 / len(queries), 3) if comparable else None,
                "recall@10": round(r10 / len(queries), 3) if comparable else None,
                "p50_ms": warm["p50_ms"],
                "p95_ms": warm["p95_ms"],
            }
        ],
        "queries": len(queries),
        "version": side.get("leann_version"),
    }


def leann_from_vectors(name: str, c: dict, args) -> dict:
    """LEANN 0.3.8 over the stored vectors and chunk texts (``leann_vectors_side.py``): its
    own build would spend ~40 minutes re-embedding the 47k chunks into the same vectors."""
    inputs = WORK / f"graph-leann-{name}.npz"
    # Texts as one UTF-8 buffer and end offsets: a fixed-width string array of 100k mails, each
    # padded to the longest, came to 7 GB.
    encoded = [t.encode("utf-8") for t in c["texts"]]
    np.savez(
        inputs,
        vectors=c["vectors"],
        text_bytes=np.frombuffer(b"".join(encoded), np.uint8),
        text_ends=np.cumsum([len(e) for e in encoded], dtype=np.int64),
    )
    qfile = WORK / f"graph-leann-{name}-queries.json"
    qfile.write_text(json.dumps(c["queries"][: args.leann_queries]))
    out = WORK / f"graph-leann-{name}.json"
    subprocess.run(
        [
            args.leann_python,
            str(ROOT / "benchmarks" / "leann_vectors_side.py"),
            "--inputs",
            str(inputs),
            "--work",
            str(WORK / f"leann-graph-{name}"),
            "--queries",
            str(qfile),
            "--sample",
            str(args.leann_queries),
            "--out",
            str(out),
        ],
        check=True,
    )
    side = json.loads(out.read_text())
    queries = c["queries"][: args.leann_queries]
    return {**leann_row(c, queries, side["warm"]["ranked"], side, side["warm"]), "built_from": "stored vectors"}


def tie_recall(ids: np.ndarray, scores: np.ndarray, k: int) -> float:
    """Share of the first k results whose exact score reaches the k-th best exact score: the
    ann-benchmarks convention, under which a returned copy of a true neighbour (same text,
    same vector) is a hit, not a miss."""
    kth = np.partition(scores, len(scores) - k)[len(scores) - k]
    got = ids[:k]
    return float((scores[got] >= kth - 1e-6).sum()) / k


def table(name: str, r: dict) -> str:
    raw = r["raw_text_bytes"]
    c = r.get("compact") or {}
    layout = (
        f"; compact layout {c.get('pq_m')}×{c.get('bits')}-bit{' OPQ' if c.get('rotated') else ''}, "
        f"degree {c.get('degree')}, own-chunk recall@10 {c.get('self_recall@10')}"
        if c
        else ""
    )
    lines = [
        f"### {name}: {r['chunks']:,} chunks, raw text {raw / 2**20:.2f} MiB{layout}",
        "| method | setting | index bytes | % of raw | build s | recall@3 | recall@10 | p50 ms | p95 ms | walk p50 ms |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for method in ("exact", "fast", "compact", "leann"):
        m = r.get(method)
        if not m:
            continue
        size = m.get("index_bytes", m.get("bytes", 0))
        for run in m["runs"]:
            setting = ", ".join(f"{k} {run[k]}" for k in ("ef", "recompute") if k in run)
            r3, r10 = (run[k] if run[k] is not None else "n/a" for k in ("recall@3", "recall@10"))
            lines.append(
                f"| {method} | {setting} | {size:,} | {100 * size / raw:.1f} % | {m['build_s']} | "
                f"{r3} | {r10} | {run['p50_ms']:,} | {run['p95_ms']:,} | "
                f"{run.get('traversal_p50_ms', '')} |"
            )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
