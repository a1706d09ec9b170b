"""The personal-data set (``ragbag eval personal``) under each model and fusion, in one run.

    .venv/bin/python benchmarks/personal_bench.py [--out benchmarks/results/personal.json]

Generates the set (``ragbag.personal_eval``) into ``benchmarks/.work/personal``, builds it once
per embedding model (homes ``benchmarks/.work/personal-<model>``; a rerun re-embeds nothing)
and scores every query kind under:
- ``hybrid``: the default (calibrated fusion, exact-term promotion), under ask's relevance floor;
- ``hybrid-old``: the fusion this round replaced — per-query min-max over each list's first 100
  scores, a short or tied list normalised to 0, vector share 0.8, no exact-term promotion —
  under the same floor;
- ``vector`` (floor: the same point of the model's cosine range) and ``keyword`` (no floor) alone.
Prints a markdown table per model (hit@10 / MRR@10 per kind, quiet share for negatives).
"""

from __future__ import annotations

import argparse
import json
from contextlib import contextmanager
from pathlib import Path

from ragbag import ask, eval_homes, exact, personal_eval, query
from ragbag.home import Home

BENCH = Path(__file__).resolve().parent
MODELS = ("multilingual-e5-small", "all-MiniLM-L6-v2")


def old_normalised(lst, floor):
    """The min-max before this round: between the best and the 100th (or last) score, span 0 → 0."""
    hi, lo = lst[0][2], lst[min(len(lst), query.NORM_DEPTH) - 1][2]
    span = (hi - lo) or 1.0
    return {(i, j): max(0.0, (sc - lo) / span) for i, j, sc in lst}


@contextmanager
def old_fusion():
    saved = query._normalised, exact.promote
    query._normalised = old_normalised
    exact.promote = lambda ranked, terms, text_of: list(ranked)
    try:
        yield
    finally:
        query._normalised, exact.promote = saved


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, default=BENCH / "results" / "personal.json")
    p.add_argument("--models", nargs="*", default=list(MODELS))
    args = p.parse_args()
    data = personal_eval.generate(BENCH / ".work" / "personal")
    ds = eval_homes.load(data)
    results = {}
    for model in args.models:
        home = Home(BENCH / ".work" / f"personal-{model}").ensure()
        home.set_config("embedding.model", model)
        built = eval_homes.build(ds, home)
        rel = eval_homes.judgements(ds, home)
        floor = ask.floor(home, "hybrid")
        runs = {
            "hybrid": eval_homes.run(ds, home, rel, "hybrid", floor),
            "vector": eval_homes.run(ds, home, rel, "vector", ask.floor(home, "vector")),
            "keyword": eval_homes.run(ds, home, rel, "keyword", None),
        }
        with old_fusion():
            runs["hybrid-old"] = eval_homes.run(ds, home, rel, "hybrid", floor, fusion="weighted", alpha=0.8)
        results[model] = {"built": built, "runs": runs}
        print(table(model, runs))
    args.out.write_text(json.dumps(results, indent=1, ensure_ascii=False))


def table(model: str, runs: dict) -> str:
    kinds = list(next(iter(runs.values()))["kinds"])
    lines = [f"\n{model}\n", "| kind (queries) | " + " | ".join(runs) + " |",
             "|---|" + "---|" * len(runs)]
    for kind in kinds:
        n = runs["hybrid"]["kinds"][kind]["queries"]
        cells = []
        for r in runs.values():
            row = r["kinds"][kind]
            cells.append(f"quiet {row['quiet']:.2f}" if "quiet" in row else f"{row['hit@10']:.3f} / {row['MRR@10']:.3f}")
        lines.append(f"| {kind} ({n}) | " + " | ".join(cells) + " |")
    lines.append("| ms/query | " + " | ".join(f"{r['ms_per_query']:.0f}" for r in runs.values()) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
