"""A person's home, not one folder: nine sources of every connector, at two sizes (issue 20).

    make bench-home                     # both sizes, LEANN beside (small ≈ 20 min, large ≈ 2.5 h on two cores)
    .venv/bin/python benchmarks/home_bench.py --size small [--leann-python P] [--bare-sample N]

Data, generated, the same bytes every run, under ``benchmarks/.work/home-<size>``:

- the personal-data set (``ragbag_evalsets.personal``, 579 chunks): mail (mbox + Maildir),
  Chrome and Firefox history, three calendars, iMessage ``chat.db``, WeChat, ChatGPT and Claude
  exports, a git repository and a notes folder, one source each;
- plus what grows in a real home: more messages in one ``bulk.mbox`` of the mail source and more
  notes, made of real passages from ``../shared/eval`` (MS MARCO and DBpedia, two per message or
  note, so no two are alike): 320 + 310 for ``small`` (≈ 1,200 chunks), 10,000 + 8,800 for
  ``large`` (≈ 20,000 chunks).

Phases, in one run, each metered (wall, CPU, and the share of the machine other processes used
meanwhile; ``_meter.py``):

1. full build: ``ragbag build --json`` on a fresh home (a process, as a user runs it);
2. bare encode: the home's model alone over the ``index_text`` of every chunk, in chunk order
   (``bare_encode.py``, its own process, import and load included). ``--bare-sample N`` encodes
   a seeded sample of N texts and scales its encode time to all of them (large size: the whole
   set would take most of an hour on two cores); the build itself encodes on torch
   (``ragbag.models.e5_torch``), so the ratio includes what that engine gains;
3. no-change rebuild: ``ragbag build --json`` again (every source must report no run);
4. one-new-record refresh: one message appended to the mail source's largest mbox, ``ragbag
   build mail --json``, twice in a row, the second reported; compared with the mail source's
   own run in the full build;
5. cold CLI search: ``ragbag search Q -k 10 --json`` for 3 queries, median; plus the search
   path's imports by module (``-X importtime``), which must hold none of ``HEAVY``;
6. warm search: ``query.search`` in this process, hybrid, 10 queries × 3 passes after a warm-up,
   each query embedded anew (the per-process memo cleared);
7. MCP first search: ``ragbag mcp`` started by the MCP Python SDK over stdio; seconds from
   spawning it to the first ``search`` result, and the second search;
8. LEANN 0.3.8 (``--leann-python``, its own venv, ``leann_side.py``) on the part of the home it
   can read, the notes and code folders (it has no reader for mbox, SQLite, .ics or the chat
   exports): build, its no-change rebuild, warm and cold search.

Writes ``benchmarks/results/home-<size>.json`` and prints the README's table rows. A run that
stopped leaves ``.work/home-<size>-partial.json`` and its home; ``--resume`` measures the phases
it did not reach on that home (without regenerating the data), and the result says when.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from _meter import meter, percentiles
from build_bench import forget_query_vectors
from memory_bench import passages, write_mbox

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks"
WORK = BENCH / ".work"
EXE = Path(sys.executable).with_name("ragbag")
# Messages and notes added to the personal set's mail and notes sources, per size.
BULK = {"small": (320, 310), "large": (10_000, 8_800)}
HEAVY = ("lancedb", "lance", "torch", "dagster", "sentence_transformers", "pandas", "bm25s", "scipy")


# -- data ------------------------------------------------------------------------------------


def generate(size: str) -> tuple[Path, list[dict], list[str]]:
    """The set's folder, its sources (home.json) and the texts of its first positive queries."""
    import ragbag_evalsets

    out = WORK / f"home-{size}" / "set"
    ragbag_evalsets.generate("personal", out)
    mails, notes_n = BULK[size]
    write_mbox(out / "data" / "mail" / "bulk.mbox", mails)
    texts, notes = passages(), out / "data" / "notes" / "bulk"
    notes.mkdir(parents=True, exist_ok=True)
    for i in range(notes_n):
        a, b = texts[(i * 31 + 5) % len(texts)], texts[(i * 613 + 101) % len(texts)]
        (notes / f"note-{i:05d}.md").write_text(f"# Note {i}\n\n{a}\n\n{b}\n", encoding="utf-8")
    return described(out)


def described(out: Path) -> tuple[Path, list[dict], list[str]]:
    sources = json.loads((out / "home.json").read_text())["sources"]
    queries = [json.loads(line) for line in (out / "queries.jsonl").read_text().splitlines() if line.strip()]
    positives = [q["text"] for q in queries if q["kind"] not in ("negative", "filtered")][:10]
    return out, sources, positives


def append_message(mbox: Path, n: int) -> None:
    """One new message at the end of ``mbox``, as a mail client appends it."""
    with open(mbox, "a", encoding="utf-8") as f:
        f.write(
            f"From new{n}@example.org Mon Dec 01 09:30:00 2026\n"
            f"From: New Sender <new{n}@example.org>\nTo: Jan Hoffmann <jan@example.org>\n"
            f"Subject: Parcel 00340434{n:06d} is on its way\nDate: Mon, 01 Dec 2026 09:30:00 +0000\n"
            f"Message-ID: <new-{n}@example.org>\nContent-Type: text/plain; charset=utf-8\n\n"
            f"Your parcel 00340434{n:06d} left the depot in Leipzig and arrives on Wednesday.\n\n"
        )


# -- ragbag ----------------------------------------------------------------------------------


def ragbag(home: Path, *args: str, env: dict | None = None) -> tuple[dict, str]:
    full = {**os.environ, "RAGBAG_HOME": str(home), **(env or {})}
    with meter() as m:
        done = subprocess.run([str(EXE), *args], env=full, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"ragbag {' '.join(args[:2])} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return m, done.stdout


def build(home: Path, *names: str) -> dict:
    m, stdout = ragbag(home, "build", *names, "--json")
    reports = json.loads(stdout)
    failed = [r["source"] for r in reports if r["status"] != "success"]
    if failed:
        raise RuntimeError(f"build failed for {failed}")
    return {**m, "reports": reports}


def chunk_texts(home: Path) -> list[str]:
    from ragbag.index.store import Store

    store = Store(home / "lance")
    return store.table("chunks").search().select(["index_text"]).limit(None).to_arrow().column(0).to_pylist()


def bare_encode(texts: list[str], model: str, sample: int | None, engine: Path | None = None) -> dict:
    chosen = texts if not sample or sample >= len(texts) else random.Random(20).sample(texts, sample)
    path = WORK / "home-texts.json"
    path.write_text(json.dumps(chosen))
    extra = ["--engine", str(engine)] if engine else []
    with meter() as m:
        done = subprocess.run(
            [sys.executable, str(BENCH / "bare_encode.py"), str(path), "--model", model, *extra],
            capture_output=True,
            text=True,
            check=True,
        )
    out = {**json.loads(done.stdout.strip().splitlines()[-1]), **m}
    scale = len(texts) / len(chosen)
    out["sampled"] = len(chosen) < len(texts)
    out["all_texts"] = len(texts)
    out["estimate_s"] = round(out["import_s"] + out["load_s"] + out["encode_s"] * scale, 2)
    return out


def cold_search(home: Path, queries: list[str]) -> dict:
    runs = [ragbag(home, "search", q, "-k", "10", "--json")[0] for q in queries[:3]]
    walls = [r["wall_s"] for r in runs]
    env = {**os.environ, "RAGBAG_HOME": str(home)}
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "ragbag.apps.cli.main", "search", queries[0], "--json"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    tops: dict[str, float] = {}
    for line in done.stderr.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[1].strip().isdigit():
            name = parts[2].rstrip()
            if not name.startswith("  ") and name.strip():  # top-level imports: cumulative time
                top = name.strip().split(".")[0]
                tops[top] = tops.get(top, 0.0) + int(parts[1]) / 1e6
    heavy = sorted(t for t in tops if t in HEAVY)
    biggest = dict(sorted(((k, round(v, 3)) for k, v in tops.items()), key=lambda kv: -kv[1])[:8])
    return {
        "runs": runs,
        "median_s": round(statistics.median(walls), 2),
        "others_busy": max(r["others_busy"] or 0 for r in runs),
        "imports_s": biggest,
        "heavy": heavy,
    }


def warm_search(home: Path, queries: list[str]) -> dict:
    from ragbag.models import embedding
    from ragbag.search import query

    for q in queries:
        query.search(q, k=10, home=str(home))
    times = []
    with meter() as m:
        for _ in range(3):
            for q in queries:
                forget_query_vectors(embedding)
                t0 = time.perf_counter()
                query.search(q, k=10, home=str(home))
                times.append(time.perf_counter() - t0)
    return {**percentiles(times), "others_busy": m["others_busy"]}


def mcp_first_search(home: Path, q: str) -> dict:
    import anyio
    from mcp import ClientSession, StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=str(EXE), args=["mcp"], env={"RAGBAG_HOME": str(home), "PATH": os.environ["PATH"]}
    )

    async def go() -> dict:
        t0 = time.perf_counter()
        async with stdio_client(params) as (r, w), ClientSession(r, w) as session:
            await session.initialize()
            t1 = time.perf_counter()
            first = await session.call_tool("search", {"query": q, "k": 10})
            t2 = time.perf_counter()
            await session.call_tool("search", {"query": q + " again", "k": 10})
            t3 = time.perf_counter()
        assert not first.is_error, first
        return {
            "initialize_s": round(t1 - t0, 2),
            "first_search_s": round(t2 - t0, 2),
            "second_ms": round((t3 - t2) * 1000),
        }

    with meter() as m:
        out = anyio.run(go)
    return {**out, "others_busy": m["others_busy"]}


# -- LEANN -----------------------------------------------------------------------------------


def leann(python: Path, data: Path, size: str, queries: list[str]) -> dict:
    docs = WORK / f"home-{size}" / "leann-docs"
    shutil.rmtree(docs, ignore_errors=True)
    for name in ("notes", "code"):
        shutil.copytree(data / name, docs / name, symlinks=True)
    qpath, out = WORK / "home-leann-queries.json", WORK / f"home-{size}-leann.json"
    qpath.write_text(json.dumps([{"id": str(i), "text": q} for i, q in enumerate(queries)]))
    with open(WORK / f"home-{size}-leann.log", "w") as log:
        subprocess.run(
            [
                str(python),
                str(BENCH / "leann_side.py"),
                "--docs",
                str(docs),
                "--work",
                str(WORK / f"home-{size}-leann"),
                "--queries",
                str(qpath),
                "--out",
                str(out),
                "--cold",
                "3",
                "--sample",
                "5",
                "--passes",
                "1",
                "--modes",
                "hybrid",
                "--build-arg=--no-recompute",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            check=True,
        )
    return json.loads(out.read_text())


# -- one size --------------------------------------------------------------------------------


def run(size: str, leann_python: Path | None, bare_sample: int | None, resume: bool = False) -> dict:
    from ragbag.core.home import Home
    from ragbag.index.published import home_model

    home = WORK / f"home-{size}" / "home"
    partial = WORK / f"home-{size}-partial.json"  # what a run that fails later still leaves
    if resume:  # the phases a stopped run of this size did not reach, on the home it left
        out = json.loads(partial.read_text())
        if "full" not in out or not home.is_dir():
            raise SystemExit(f"--resume: no full build of the {size} home to resume ({partial})")
        out["resumed"] = datetime.now(UTC).isoformat(timespec="seconds")
        data_root, sources, queries = described(WORK / f"home-{size}" / "set")
        h = Home(home)
    else:
        data_root, sources, queries = generate(size)
        shutil.rmtree(home, ignore_errors=True)
        h = Home(home).ensure()
        names = tuple(s["connector"] for s in sources)
        for s in sources:
            h.add_source(s["name"], s["connector"], str((data_root / s["path"]).resolve()), known=names)
        out = {"size": size, "sources": len(sources), "when": datetime.now(UTC).isoformat(timespec="seconds")}
        out["full"] = build(home)
        partial.write_text(json.dumps(out, indent=1))
    texts = chunk_texts(home)
    out["chunks"], out["distinct_texts"] = len(texts), len(set(texts))
    if "bare" not in out:
        out["bare"] = bare_encode(texts, home_model(h), bare_sample)
        partial.write_text(json.dumps(out, indent=1))
    if "rebuild" not in out:
        out["rebuild"] = build(home)
        assert all(r["run_id"] is None for r in out["rebuild"]["reports"]), "a no-change rebuild started a run"
        partial.write_text(json.dumps(out, indent=1))
    if "refresh" not in out:
        mail = next(s for s in sources if s["connector"] == "mail")
        mbox = sorted((data_root / mail["path"]).rglob("*.mbox"), key=lambda p: p.stat().st_size)[-1]
        # Two refreshes in a row, one new message each; the second is the one reported. On a
        # fresh home they cost the same; on a resumed one the first also writes what this
        # ragbag keeps for the next publish and its predecessor did not (BM25's saved tokens).
        for n, key in ((1, "refresh_first"), (2, "refresh")):
            append_message(mbox, n)
            out[key] = build(home, mail["name"])
            (refreshed,) = out[key]["reports"]
            assert refreshed["added"] == 1 and refreshed["chunks_embedded"] == 1, refreshed
        out["refresh"]["mbox_messages"] = sum(1 for line in open(mbox, "rb") if line.startswith(b"Message-ID:"))
        out["refresh"]["full_run_s"] = next(r["seconds"] for r in out["full"]["reports"] if r["source"] == mail["name"])
        partial.write_text(json.dumps(out, indent=1))
    phases = {
        "cold_search": lambda: cold_search(home, queries),
        "warm_search": lambda: warm_search(home, queries),
        "mcp": lambda: mcp_first_search(home, queries[0]),
    }
    if leann_python:
        phases["leann"] = lambda: leann(leann_python, data_root / "data", size, queries)
    for key, measure in phases.items():
        if key not in out:
            out[key] = measure()
            partial.write_text(json.dumps(out, indent=1))
    return out


def rows(r: dict) -> list[str]:
    """The README table's rows for one size."""
    full, bare, rebuild, refresh = r["full"], r["bare"], r["rebuild"], r["refresh"]
    bare_s = bare["estimate_s"]
    bare_note = f" (sample of {bare['texts']}, scaled)" if bare["sampled"] else ""
    share = refresh["reports"][0]["seconds"] / refresh["full_run_s"]
    lines = [
        f"| full build, wall | {full['wall_s']:.1f} s | {full['others_busy']:.0%} |",
        f"| bare encode of the same {r['chunks']:,} texts, incl. import + load{bare_note} | {bare_s:.1f} s "
        f"| {bare['others_busy']:.0%} |",
        f"| build ÷ bare encode | {full['wall_s'] / bare_s:.2f} | |",
    ]
    lines += [
        f"| no-change rebuild of all {r['sources']} sources | {rebuild['wall_s']:.2f} s "
        f"({rebuild['wall_s'] / full['wall_s']:.1%} of the build) | {rebuild['others_busy']:.0%} |",
        f"| one new mail in a {refresh['mbox_messages']:,}-message mbox: run / process | "
        f"{refresh['reports'][0]['seconds']:.1f} s / {refresh['wall_s']:.1f} s ({share:.1%} of that source's "
        f"{refresh['full_run_s']:.1f} s run) | {refresh['others_busy']:.0%} |",
        f"| cold `ragbag search` (median of 3) | {r['cold_search']['median_s']:.2f} s | "
        f"{r['cold_search']['others_busy']:.0%} |",
        f"| warm search, hybrid, p50 / p95 | {r['warm_search']['p50_ms']:.0f} / {r['warm_search']['p95_ms']:.0f} ms "
        f"| {r['warm_search']['others_busy']:.0%} |",
        f"| MCP: spawn → first search result / second search | {r['mcp']['first_search_s']:.2f} s / "
        f"{r['mcp']['second_ms']} ms | {r['mcp']['others_busy']:.0%} |",
    ]
    if "leann" in r:
        le = r["leann"]
        lines += [
            f"| LEANN: build of notes + code ({le['chunks']:,} chunks) / no-change rebuild | "
            f"{le['build']['wall_s']:.1f} s / {le['rebuild']['wall_s']:.1f} s | {le['build']['others_busy']:.0%} |",
            f"| LEANN: cold `leann search` (median) / warm hybrid p50 | {le['cold_cli']['median_s']:.2f} s / "
            f"{le['warm']['hybrid']['p50_ms']:.0f} ms | |",
        ]
    return lines


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", choices=("small", "large", "both"), default="both")
    ap.add_argument("--leann-python", type=Path)
    ap.add_argument("--bare-sample", type=int, help="encode this many texts and scale (default: all; large: 2000)")
    ap.add_argument(
        "--resume", action="store_true", help="finish a stopped run: its partial results and home, the phases it lacks"
    )
    args = ap.parse_args()
    # Bytecode for every module, as an install leaves it (a PYTHONDONTWRITEBYTECODE environment
    # would otherwise have each measured process compile what changed since the last caching).
    for folder in ("ragbag", "connectors", "orchestration"):
        compileall.compile_dir(ROOT / folder, quiet=1)
    sizes = ("small", "large") if args.size == "both" else (args.size,)
    for size in sizes:
        sample = args.bare_sample or (2000 if size == "large" else None)
        result = run(size, args.leann_python, sample, args.resume)
        path = BENCH / "results" / f"home-{size}.json"
        path.write_text(json.dumps(result, indent=1) + "\n")
        print(f"\n{size}: {result['chunks']:,} chunks ({result['distinct_texts']:,} distinct texts), {path}")
        print("\n".join(rows(result)))


if __name__ == "__main__":
    main()
