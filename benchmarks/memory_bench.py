"""Peak memory of each build stage on a 200,000-message mailbox (issue 20's memory target).

    .venv/bin/python benchmarks/memory_bench.py [--messages 200000] [--sample 2000]
        [--out benchmarks/results/memory.json]

Generates one Gmail-style ``.mbox`` of ``--messages`` distinct messages (bodies are real
passages from ``../shared/eval``: MS MARCO and DBpedia abstracts, two per message, plus the
message's own number, so no two bodies are the same) under ``benchmarks/.work/memory``, registers
it as a mail source in a fresh home, and runs the read stage and then the chunk stage, each in a
process of its own, recording that process's peak RSS (``wait4``'s ``ru_maxrss``) and wall time.
Embedding 200,000 chunks takes hours on two cores, so the embed stage is measured on a sample:
a second source, the first ``--sample`` messages of the same mailbox. Each stage runs exactly as
a build runs it (``ragbag.pipeline.ingest`` / ``chunk`` / ``embed``), outside Dagster, whose own
memory does not grow with the source.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

BENCH = Path(__file__).resolve().parent
EVAL = BENCH.parent.parent / "shared" / "eval"


def passages() -> list[str]:
    texts = []
    for name in ("msmarco-5k", "dbpedia-5k"):
        with open(EVAL / name / "corpus.jsonl", encoding="utf-8") as f:
            texts += [json.loads(line)["text"].strip() for line in f if line.strip()]
    return [t for t in texts if t]


def write_mbox(path: Path, n: int) -> int:
    """``n`` messages, each with two passages and its number; returns the bytes written."""
    texts = passages()
    start = datetime(2020, 1, 1, 9, 0, tzinfo=UTC)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for i in range(n):
            when = start + timedelta(minutes=7 * i)
            a, b = texts[i % len(texts)], texts[(i * 7919 + 13) % len(texts)]
            subject = " ".join(a.split()[:8])
            body = f"{a}\n\n{b}\n\nMessage {i} of the benchmark mailbox.\n".replace("\nFrom ", "\n>From ")
            f.write(
                f"From sender{i % 997}@example.org {when.strftime('%a %b %d %H:%M:%S %Y')}\n"
                f"From: Sender {i % 997} <sender{i % 997}@example.org>\n"
                "To: Jan Hoffmann <jan@example.org>\n"
                f"Subject: {subject}\n"
                f"Date: {when.strftime('%a, %d %b %Y %H:%M:%S +0000')}\n"
                f"Message-ID: <bench-{i}@example.org>\n"
                "MIME-Version: 1.0\n"
                "Content-Type: text/plain; charset=utf-8\n"
                "Content-Transfer-Encoding: 8bit\n\n"
                f"{body}\n"
            )
    return path.stat().st_size


def stage(home_root: str, name: str, what: str) -> dict:
    """One stage, in this process (the child): what a build step runs."""
    from ragbag import connectors
    from ragbag.core.home import Home
    from ragbag.index.published import home_model
    from ragbag.index.store import Store
    from ragbag.pipeline import chunk, embed, ingest

    home = Home(home_root)
    src, store, model = home.source(name), Store(home.lance_uri), home_model(home)
    module = connectors.get("mail")
    if what == "documents":
        report = ingest.ingest(store, home, src, module.read)
    elif what == "chunks":
        report = chunk.chunk(store, src, module.spans, model)
    else:
        report = embed.embed(store, src, model)
    return {k: v for k, v in report.items() if isinstance(v, (int, float, str)) and k != "preview"} | {
        "errors": len(report.get("errors", []))
    }


def measured(home: Path, name: str, what: str) -> dict:
    """Run one stage in a child process; its peak RSS and wall time."""
    cmd = [sys.executable, __file__, "--stage", what, "--home", str(home), "--source", name]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    out = proc.stdout.read() if proc.stdout else ""
    if status != 0:
        raise SystemExit(f"{what} of {name} failed (status {status})")
    return {
        "stage": what,
        "source": name,
        "wall_s": round(wall, 1),
        "peak_rss_mib": round(usage.ru_maxrss / 1024, 1),  # Linux: kibibytes
        "report": json.loads(out.strip().splitlines()[-1]),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--messages", type=int, default=200_000)
    ap.add_argument("--sample", type=int, default=2_000)
    ap.add_argument("--out", type=Path, default=BENCH / "results" / "memory.json")
    ap.add_argument("--stage")
    ap.add_argument("--home")
    ap.add_argument("--source")
    args = ap.parse_args()
    if args.stage:
        print(json.dumps(stage(args.home, args.source, args.stage)))
        return

    from ragbag.core.home import Home

    work = BENCH / ".work" / "memory"
    big, small = work / "mail" / "big" / "all.mbox", work / "mail" / "sample" / "sample.mbox"
    size = write_mbox(big, args.messages)
    write_mbox(small, args.sample)
    home_root = work / "home"
    subprocess.run(["rm", "-rf", str(home_root)], check=True)
    home = Home(home_root).ensure()
    home.add_source("big", "mail", str(big.parent), known=("mail",))
    home.add_source("sample", "mail", str(small.parent), known=("mail",))
    results = [
        measured(home_root, "big", "documents"),
        measured(home_root, "big", "chunks"),
        measured(home_root, "sample", "documents"),
        measured(home_root, "sample", "chunks"),
        measured(home_root, "sample", "embeddings"),
    ]
    summary = {
        "messages": args.messages,
        "mbox_bytes": size,
        "sample_messages": args.sample,
        "stages": results,
        "measured_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(summary, indent=2) + "\n")
    for r in results:
        print(f"{r['source']:>6} {r['stage']:<10} peak RSS {r['peak_rss_mib']:>8.1f} MiB  wall {r['wall_s']:>7.1f} s")


if __name__ == "__main__":
    main()
