"""What a refresh of one record costs, stage by stage, on the small home of ``home_bench.py``.

Run from the repository root after ``home_bench.py --size small`` has built its home
(``.work/home-small``): ``.venv/bin/python benchmarks/refresh_cost.py [--trials 5]``. Each trial
copies that home (the built one is never changed), appends one message to its mail source's
largest mbox and runs ``ragbag build mail --json`` as a user does, twice in a row (as
``home_bench.py`` does; the second is reported): the run's seconds from the build report, the
process's wall time and the share of the machine other processes used (``_meter.py``), and the
run's own timeline from its Dagster event log: the time before the first step, each step from
its start to its output (the stage's work and its asset checks), and Dagster's share (the run
less its steps' work). Prints the medians and writes ``results/refresh_cost.json``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
import statistics
import sys
from datetime import datetime
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from home_bench import WORK, append_message, build  # noqa: E402

STEPS = ("documents", "chunks", "embeddings", "graph", "bm25")


def timeline(home: Path, run_id: str) -> dict[str, float]:
    """Seconds of each step (start to its first output) and of the run around them."""
    db = next((home / "dagster").rglob(f"{run_id}.db"))
    with sqlite3.connect(db) as conn:
        rows = conn.execute("select dagster_event_type, step_key, timestamp from event_logs order by id").fetchall()
    at = [(kind, step, datetime.fromisoformat(ts).timestamp()) for kind, step, ts in rows]
    out = {"events": len(at), "span_s": round(at[-1][2] - at[0][2], 3)}
    for name in STEPS:
        start = next(t for kind, step, t in at if kind == "STEP_START" and step.endswith(f"__{name}"))
        end = next(t for kind, step, t in at if kind == "STEP_OUTPUT" and step.endswith(f"__{name}"))
        out[name] = round(end - start, 3)
    out["first_step_at_s"] = round(next(t for kind, _, t in at if kind == "STEP_START") - at[0][2], 3)
    return out


def trial(source_home: Path, n: int) -> dict:
    root = WORK / "refresh-trial"
    shutil.rmtree(root, ignore_errors=True)
    shutil.copytree(source_home, root, symlinks=True)
    sources = root / "home" / "sources.yaml"
    sources.write_text(sources.read_text().replace(str(source_home), str(root)))
    mbox = sorted((root / "set" / "data" / "mail").rglob("*.mbox"), key=lambda p: p.stat().st_size)[-1]
    for k in (1, 2):
        append_message(mbox, 900_000 + 10 * n + k)
        measured = build(root / "home", "mail")
    (report,) = measured["reports"]
    assert report["added"] == 1 and report["chunks_embedded"] == 1, report
    steps = timeline(root / "home", report["run_id"])
    return {
        "run_s": report["seconds"],
        "wall_s": measured["wall_s"],
        "others_busy": measured["others_busy"],
        **steps,
        "dagster_s": round(report["seconds"] - sum(steps[s] for s in STEPS), 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--home", type=Path, default=WORK / "home-small")
    args = parser.parse_args()
    if not (args.home / "home" / "sources.yaml").exists():
        raise SystemExit(f"{args.home}: no built home; run benchmarks/home_bench.py --size small first")
    trials = [trial(args.home, n) for n in range(args.trials)]
    keys = ["run_s", "wall_s", "first_step_at_s", *STEPS, "dagster_s", "others_busy"]
    medians = {k: round(statistics.median(t[k] for t in trials), 3) for k in keys}
    full = json.loads((BENCH / "results" / "home-small.json").read_text())
    mail_run = next(r["seconds"] for r in full["full"]["reports"] if r["source"] == "mail")
    out = {"trials": trials, "median": medians, "mail_run_in_full_build_s": mail_run}
    (BENCH / "results" / "refresh_cost.json").write_text(json.dumps(out, indent=1))
    for k in keys:
        print(f"{k:>16}: {medians[k]}")
    print(f"one-record refresh = {medians['run_s'] / mail_run:.1%} of the mail source's run in the full build")
    shutil.rmtree(WORK / "refresh-trial", ignore_errors=True)


if __name__ == "__main__":
    main()
