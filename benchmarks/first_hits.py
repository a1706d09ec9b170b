"""Time to the first keyword hit and the first vector hit of a first build of a large mbox.

    .venv/bin/python benchmarks/first_hits.py [--messages 200000] [--limit-s 7200]

Data: the CMU Enron sample (``../shared/eval/enron-maildir.tar.gz``, extracted by
``mail_bench.py``'s helper into ``benchmarks/.work/enron/``), its 11,238 messages written round
and round into one mbox of ``--messages`` messages, each with its own Message-ID and a first
body line ``Ticket T<n> for this thread.`` (so every message is a text of its own: nothing is
embedded once for many). A fresh ``RAGBAG_HOME``, ``ragbag add mail big MBOX``, then ``ragbag
build big`` started as a subprocess; every ``--poll-s`` seconds, while it runs, a cold ``ragbag
search`` in keyword mode for the ticket of the last message (``T<n>``: found only once every
message is read, chunked and published) and one in vector mode, and ``ragbag status --json``'s
``embedding``. Recorded: seconds from the start of the build to the first keyword hit, to the
first vector hit, the embedding progress and ETA status reported then, and how busy the rest of
the machine was (``others_busy``). The build is stopped once both hits came (or at
``--limit-s``): what is measured is how soon search starts, not the build. ``--to-the-end``
lets the build finish and records ``ragbag status``'s ETA at every poll beside the seconds the
build in fact still took.

Writes ``benchmarks/results/first_hits.json`` (``first_hits_to_the_end_<messages>.json``).
"""

from __future__ import annotations

import argparse
import json
import mailbox
import os
import shutil
import signal
import subprocess
import sys
import time
from email import message_from_bytes, policy
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _meter import meter  # noqa: E402
from mail_bench import extract  # noqa: E402

WORK = ROOT / "benchmarks" / ".work"
BIN = Path(sys.executable).parent


def make_mbox(maildir: Path, target: Path, n: int) -> Path:
    """``n`` messages from the Enron sample, round and round, each unique (see the docstring)."""
    if target.exists() and target.with_suffix(".count").exists() and target.with_suffix(".count").read_text() == str(n):
        return target
    sources = sorted(p for p in maildir.rglob("*") if p.is_file() and not p.name.startswith("."))
    # Written whole under another name, then renamed: a run stopped while writing leaves no
    # half mbox for the next to take (or to append to), and no lock, as mailbox's would.
    partial = target.with_name(target.name + ".partial")
    partial.unlink(missing_ok=True)
    target.with_suffix(".count").unlink(missing_ok=True)
    box = mailbox.mbox(str(partial), create=True)
    try:
        for i in range(n):
            msg = message_from_bytes(sources[i % len(sources)].read_bytes(), policy=policy.compat32)
            del msg["Message-ID"]
            msg["Message-ID"] = f"<bench-{i}@first-hits.example>"
            if not msg.is_multipart():
                msg.set_payload(f"Ticket T{i} for this thread.\n\n" + str(msg.get_payload()))
            box.add(msg)
    finally:
        box.close()
    os.replace(partial, target)
    target.with_suffix(".count").write_text(str(n))
    return target


def _search(env: dict, query: str, mode: str) -> int:
    out = subprocess.run(
        [str(BIN / "ragbag"), "search", query, "--mode", mode, "-k", "3", "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if out.returncode != 0:
        return 0
    data = json.loads(out.stdout)
    return len(data if isinstance(data, list) else data.get("results", []))


def _progress(env: dict) -> dict | None:
    out = subprocess.run([str(BIN / "ragbag"), "status", "big", "--json"], env=env, capture_output=True, text=True)
    return json.loads(out.stdout).get("embedding") if out.returncode == 0 else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=200_000)
    parser.add_argument("--tar", type=Path, default=ROOT.parent / "shared" / "eval" / "enron-maildir.tar.gz")
    parser.add_argument("--poll-s", type=float, default=10.0)
    parser.add_argument("--limit-s", type=float, default=7200.0)
    parser.add_argument(
        "--to-the-end",
        action="store_true",
        help="build on past both hits, recording the status' ETA at each poll against the time left in fact",
    )
    args = parser.parse_args()

    maildir = extract(args.tar, WORK / "enron")
    mbox = make_mbox(maildir, WORK / f"first-hits-{args.messages}.mbox", args.messages)
    home = WORK / "first-hits-home"
    shutil.rmtree(home, ignore_errors=True)
    env = {**os.environ, "RAGBAG_HOME": str(home), "DAGSTER_HOME": str(home / "dagster")}
    subprocess.run([str(BIN / "ragbag"), "add", "mail", "big", str(mbox)], env=env, check=True, capture_output=True)

    last = f"T{args.messages - 1}"
    result: dict = {"messages": args.messages, "mbox_bytes": mbox.stat().st_size}
    with meter() as load:
        started = time.monotonic()
        build = subprocess.Popen(
            [str(BIN / "ragbag"), "build", "big", "--json"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            while time.monotonic() - started < args.limit_s and build.poll() is None:
                time.sleep(args.poll_s)
                at = round(time.monotonic() - started, 1)
                if "first_keyword_hit_s" not in result and _search(env, last, "keyword"):
                    result["first_keyword_hit_s"] = at
                    result["status_at_keyword_hit"] = _progress(env)
                if "first_vector_hit_s" not in result and _search(env, "energy trading contract", "vector"):
                    result["first_vector_hit_s"] = at
                    result["status_at_vector_hit"] = _progress(env)
                if args.to_the_end:
                    result.setdefault("polls", []).append({"at_s": at, **(_progress(env) or {})})
                elif "first_keyword_hit_s" in result and "first_vector_hit_s" in result:
                    break
        finally:
            if build.poll() is None:  # a kill -9 leaves the last slice readable (tests/faults)
                os.killpg(build.pid, signal.SIGKILL)
            build.wait()
    result["load"] = load  # others_busy: the share of the cores neither the build nor the probes used
    result["poll_s"] = args.poll_s
    name = "first_hits.json"
    if args.to_the_end:  # each ETA against the seconds the build in fact still took
        end = result["build_s"] = load["wall_s"]
        for poll in result.get("polls", []):
            if poll.get("eta_seconds") is not None:
                poll["left_in_fact_s"] = round(end - poll["at_s"], 1)
        name = f"first_hits_to_the_end_{args.messages}.json"
    out = ROOT / "benchmarks" / "results" / name
    out.write_text(json.dumps(result, indent=1))
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
