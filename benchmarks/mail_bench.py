"""Mail connector benchmark on the CMU Enron sample (11,238 messages, five mailboxes).

    .venv/bin/python benchmarks/mail_bench.py [--mailbox buy-r]

Data: ``../shared/eval/enron-maildir.tar.gz`` (override with --tar), extracted once into
``benchmarks/.work/enron/`` (gitignored); a fresh ``RAGBAG_HOME=benchmarks/.work/mail-home``.

1. Parse throughput: ``connectors.mail.read()`` over the whole tree in this process, no cursor;
   messages/s, and the ReadErrors grouped by reason.
2. Full build through the CLI (all five mailboxes, or one with ``--mailbox``: the whole set is
   ~47k chunks, about half an hour of embedding on two free cores): ``ragbag add mail enron DIR`` then ``ragbag build --json`` as a
   subprocess; wall time, and the Dagster run's per-step seconds (``documents`` = read + normalise
   + store, ``chunks``, ``embeddings``, ``index``). Reading's share = documents step / wall.
3. Incremental: 10 new message files (copies of existing ones with new Message-IDs and text)
   in a new folder, ``ragbag build --json`` again; chunks embedded and wall time.

Writes ``benchmarks/.work/mail_bench.json`` and prints a markdown table.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORK = ROOT / "benchmarks" / ".work"
sys.path.insert(0, str(ROOT))


def extract(tar: Path, dest: Path) -> Path:
    maildir = dest / "maildir"
    if not maildir.is_dir():
        dest.mkdir(parents=True, exist_ok=True)
        with tarfile.open(tar) as tf:
            tf.extractall(dest, filter="data")
    for leftover in maildir.rglob("bench-new"):  # left by an interrupted run
        shutil.rmtree(leftover, ignore_errors=True)
    return maildir


def parse_throughput(maildir: Path) -> dict:
    from ragbag.connectors import mail
    from ragbag.core.records import Document, ReadError

    started = time.perf_counter()
    docs, errors = 0, collections.Counter()
    for item in mail.read(maildir, "enron", None):
        if isinstance(item, Document):
            docs += 1
        elif isinstance(item, ReadError):
            errors[re.sub(r"\d+", "N", item.error)] += 1
    seconds = time.perf_counter() - started
    return {
        "messages": docs,
        "seconds": round(seconds, 2),
        "messages_per_s": round(docs / seconds, 1),
        "read_errors": sum(errors.values()),
        "error_reasons": dict(errors),
    }


def ragbag(*args: str, env: dict) -> tuple[float, str]:
    started = time.perf_counter()
    proc = subprocess.run([str(Path(sys.executable).parent / "ragbag"), *args], env=env, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"ragbag {' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}")
    return wall, proc.stdout


def step_times(home: Path, run_id: str, wall: float) -> dict:
    import dagster as dg

    instance = dg.DagsterInstance.from_config(str(home / "dagster"))
    steps = {
        s.step_key.split("__")[-1].split(".")[-1]: round(s.end_time - s.start_time, 2)
        for s in instance.get_run_step_stats(run_id)
        if s.start_time and s.end_time
    }
    record = instance.get_run_record_by_id(run_id)
    run_s = record.end_time - record.start_time if record and record.end_time else sum(steps.values())
    return {"steps_s": steps, "run_s": round(run_s, 2), "startup_s": round(wall - run_s, 2)}


def build(home: Path, env: dict) -> dict:
    wall, out = ragbag("build", "--json", env=env)
    (rep,) = json.loads(out)
    return {
        "wall_s": round(wall, 2),
        "documents": rep["documents"],
        "added": rep["added"],
        "changed": rep["changed"],
        "deleted": rep["deleted"],
        "chunks": rep["chunks"],
        "chunks_embedded": rep["chunks_embedded"],
        "errors": len(rep["errors"]),
        **step_times(home, rep["run_id"], wall),
    }


def add_new_messages(root: Path, n: int = 10) -> Path:
    """n new files: existing messages with a fresh Message-ID and a line of new text."""
    sources = sorted(root.rglob("*."))[:n]
    target = root / "bench-new" / "inbox"
    target.mkdir(parents=True)
    for i, src in enumerate(sources, 1):
        data = src.read_bytes()
        data = re.sub(rb"(?im)^Message-ID: <[^>]*>", b"Message-ID: <bench-new-%d@example.com>" % i, data, count=1)
        data += b"\nBenchmark addition %d: the new pipeline tariff filing is due on Friday.\n" % i
        (target / f"{i}.").write_bytes(data)
    return target.parent


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mailbox", help="build only this user's folder (e.g. buy-r), not all five")
    ap.add_argument("--tar", type=Path, default=ROOT.parent / "shared" / "eval" / "enron-maildir.tar.gz")
    args = ap.parse_args()
    maildir = extract(args.tar, WORK / "enron")
    build_root = maildir / args.mailbox if args.mailbox else maildir
    results: dict = {"data": str(maildir), "build_root": str(build_root)}

    results["parse"] = parse_throughput(maildir)
    print("parse:", json.dumps(results["parse"]), flush=True)

    home = WORK / "mail-home"
    shutil.rmtree(home, ignore_errors=True)
    env = {**os.environ, "RAGBAG_HOME": str(home), "DAGSTER_HOME": str(home / "dagster")}
    ragbag("add", "mail", "enron", str(build_root), env=env)
    results["full_build"] = build(home, env)
    print("full build:", json.dumps(results["full_build"]), flush=True)

    added = add_new_messages(build_root)
    results["add_10"] = build(home, env)
    print("add 10:", json.dumps(results["add_10"]), flush=True)
    shutil.rmtree(added, ignore_errors=True)

    out = WORK / "mail_bench.json"
    out.write_text(json.dumps(results, indent=1))
    p, f, a = results["parse"], results["full_build"], results["add_10"]
    docs_s = f["steps_s"].get("documents", 0.0)
    emb_s = f["steps_s"].get("embeddings", 0.0)
    print("\n| measure | value |\n|---|---|")
    print(f"| parse: messages / s (read() alone) | {p['messages']} in {p['seconds']} s = {p['messages_per_s']}/s |")
    print(f"| parse: ReadErrors | {p['read_errors']} {p['error_reasons'] or ''} |")
    print(
        f"| full build wall (CLI, {build_root.name}) | {f['wall_s']} s; {f['documents']} docs, {f['chunks']} chunks |"
    )
    print(f"| stage seconds | {f['steps_s']}; startup {f['startup_s']} s |")
    print(f"| reading+normalising (documents step) share of wall | {docs_s / f['wall_s']:.1%} |")
    print(f"| embedding step share of wall | {emb_s / f['wall_s']:.1%} |")
    print(
        f"| +10 messages rebuild | {a['wall_s']} s; added {a['added']}, chunks embedded {a['chunks_embedded']}; "
        f"documents step {a['steps_s'].get('documents')} s |"
    )
    print(f"\nwrote {out}")


if __name__ == "__main__":
    main()
