"""Warm MCP `search` round-trips (ragbag vs LEANN's leann_mcp) and `ask --llm extractive` latency.

    .venv/bin/python benchmarks/mcp_bench.py [--home benchmarks/.work/mcp-home] [--calls 100]

The ragbag home must hold a built msmarco-5k source (see benchmarks/README.md). Each server is
launched once through the official MCP stdio client; after one warm-up call, `search` is called
with MS MARCO queries (the 43 distinct queries, cycled) and the client-side round-trip time is
recorded. ragbag keeps its model and index in the server process; leann_mcp forks `leann search`
for every call, so it gets fewer calls (--leann-calls). `ask` is timed end to end as a user runs
it: a fresh `ragbag ask … --llm extractive --json` process per question.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "benchmarks" / ".work"
QUERIES = Path("/work/shared/eval/msmarco-5k/queries.jsonl")


def queries() -> list[str]:
    return [json.loads(line)["text"] for line in QUERIES.read_text().splitlines() if line.strip()]


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


async def _round_trips(params: StdioServerParameters, tool: str, make_args, qs: list[str], calls: int):
    times, distinct = [], []
    async with stdio_client(params, errlog=open(os.devnull, "w")) as (read, write):
        async with ClientSession(read, write) as s:
            t = time.perf_counter()
            await s.initialize()
            init_ms = (time.perf_counter() - t) * 1000
            t = time.perf_counter()
            first = await s.call_tool(tool, make_args("warm up the index"))
            first_ms = (time.perf_counter() - t) * 1000
            if first.is_error:
                raise RuntimeError(first.content[0].text)
            for i in range(calls):
                q = qs[i % len(qs)]
                t = time.perf_counter()
                res = await s.call_tool(tool, make_args(q))
                ms = (time.perf_counter() - t) * 1000
                if res.is_error:
                    raise RuntimeError(res.content[0].text)
                times.append(ms)
                if i < len(qs):
                    distinct.append(ms)
    return {
        "calls": calls,
        "init_ms": init_ms,
        "first_call_ms": first_ms,
        "p50_ms": statistics.median(times),
        "p95_ms": pct(times, 95),
        "p50_distinct_ms": statistics.median(distinct),
        "mean_ms": statistics.mean(times),
    }


def ragbag_mcp(home: Path, calls: int, k: int) -> dict:
    params = StdioServerParameters(
        command=str(ROOT / ".venv/bin/ragbag"), args=["mcp"], env={"RAGBAG_HOME": str(home), "PATH": os.environ["PATH"]}
    )
    return anyio.run(_round_trips, params, "search", lambda q: {"query": q, "k": k}, queries(), calls)


def leann_mcp(calls: int, k: int) -> dict | str:
    venv, proj, lhome = WORK / "leann-venv", WORK / "leann" / "proj", WORK / "leann" / "home"
    exe = venv / "bin" / "leann_mcp"
    if not exe.exists():
        return f"no LEANN venv at {venv}"
    if not (proj / ".leann" / "indexes" / "msmarco" / "documents.leann.meta.json").exists():
        return f"no built LEANN msmarco index under {proj}"
    params = StdioServerParameters(
        command=str(exe),
        args=[],
        cwd=str(proj),
        env={
            "HOME": str(lhome),
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "PATH": f"{venv / 'bin'}:{os.environ['PATH']}",
        },
    )
    return anyio.run(
        _round_trips,
        params,
        "leann_search",
        lambda q: {"index_name": "msmarco", "query": q, "top_k": k},
        queries(),
        calls,
    )


def ask_latency(home: Path, n: int) -> dict:
    times = []
    env = {**os.environ, "RAGBAG_HOME": str(home), "RAGBAG_LLM": ""}
    for q in queries()[:n]:
        t = time.perf_counter()
        proc = subprocess.run(
            [str(ROOT / ".venv/bin/ragbag"), "ask", q, "--llm", "extractive", "--json"],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
        )
        times.append((time.perf_counter() - t) * 1000)
        if proc.returncode != 0:
            raise RuntimeError(proc.stderr)
    return {"runs": n, "p50_ms": statistics.median(times), "min_ms": min(times), "max_ms": max(times)}


def main() -> None:
    ap = argparse.ArgumentParser()
    default_home = WORK / "mcp-home"
    ap.add_argument("--home", type=Path, default=default_home)
    ap.add_argument("--calls", type=int, default=100)
    ap.add_argument("--leann-calls", type=int, default=10)
    ap.add_argument("--ask-runs", type=int, default=5)
    ap.add_argument("-k", type=int, default=10)
    args = ap.parse_args()
    out = {"ragbag_mcp_search": ragbag_mcp(args.home, args.calls, args.k)}
    print(json.dumps(out, indent=1), file=sys.stderr)
    try:
        out["leann_mcp_search"] = leann_mcp(args.leann_calls, args.k)
    except Exception as e:
        out["leann_mcp_search"] = f"failed: {type(e).__name__}: {str(e)[:300]}"
    out["ask_extractive"] = ask_latency(args.home, args.ask_runs)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
