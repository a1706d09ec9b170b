"""The personal-data set (``ragbag eval personal``) under each model and fusion, in one run.

    .venv/bin/python benchmarks/personal_bench.py [--out benchmarks/results/personal.json]

Generates the set (``ragbag_evalsets.personal``) into ``benchmarks/.work/personal``, builds it once
per embedding model (homes ``benchmarks/.work/personal-<model>``; a rerun re-embeds nothing)
and scores every query kind under:
- ``hybrid``: the default (calibrated fusion, exact-term promotion); negatives judged at ask's
  relevance floor (search has no default floor);
- ``hybrid-old``: the fusion this round replaced — per-query min-max over each list's first 100
  scores, a short or tied list normalised to 0, vector share 0.8, no exact-term promotion;
- ``vector`` (floor: the same point of the model's cosine range) and ``keyword`` (no floor) alone.
Prints a markdown table per model (hit@10 / MRR@10 per kind, quiet share for negatives), and
for the default hybrid what a floor would cost: per floor, the share of each kind's queries
whose relevant hit in the top 10 still reaches it, and the share of negatives it silences.
"""

from __future__ import annotations

import argparse
import json
from contextlib import contextmanager
from pathlib import Path

import ragbag_evalsets
from ragbag.answer import ask
from ragbag.apps.eval import homes as eval_homes
from ragbag.core.home import Home
from ragbag.search import fusion
from ragbag.text import exact

BENCH = Path(__file__).resolve().parent
MODELS = ("multilingual-e5-small", "all-MiniLM-L6-v2")


def old_normalised(lst, floor):
    """The min-max before this round: between the best and the 100th (or last) score, span 0 → 0."""
    hi, lo = lst[0][2], lst[min(len(lst), fusion.NORM_DEPTH) - 1][2]
    span = (hi - lo) or 1.0
    return {(i, j): max(0.0, (sc - lo) / span) for i, j, sc in lst}


@contextmanager
def old_fusion():
    saved = fusion.normalised, exact.promote
    fusion.normalised = old_normalised
    exact.promote = lambda ranked, terms, text_of: list(ranked)
    try:
        yield
    finally:
        fusion.normalised, exact.promote = saved


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, default=BENCH / "results" / "personal.json")
    p.add_argument("--models", nargs="*", default=list(MODELS))
    args = p.parse_args()
    data = ragbag_evalsets.generate("personal", BENCH / ".work" / "personal")
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
        results[model] = {"built": built, "runs": runs, "floors": floors(runs["hybrid"]["scores"])}
        print(table(model, runs))
        print(floor_table(results[model]["floors"]))
    args.out.write_text(json.dumps(results, indent=1, ensure_ascii=False))


FLOORS = (0.05, 0.1, 0.2, 0.3, 0.4, 0.5)


def floors(scores: dict) -> dict:
    """Per floor: share of each positive kind kept (its relevant hit reaches the floor) and of
    negatives silenced (no hit reaches it)."""
    out = {}
    for f in FLOORS:
        kinds: dict[str, list[bool]] = {}
        for s in scores.values():
            if s["kind"] == "negative":
                kinds.setdefault("negative", []).append(s["top"] is None or s["top"] < f)
            else:
                kinds.setdefault(s["kind"], []).append(s["relevant"] is not None and s["relevant"] >= f)
        out[f] = {k: round(sum(v) / len(v), 3) for k, v in sorted(kinds.items())}
    return out


def floor_table(by_floor: dict) -> str:
    kinds = list(next(iter(by_floor.values())))
    lines = [
        "\n| floor | " + " | ".join(k if k != "negative" else "negatives quiet" for k in kinds) + " |",
        "|---|" + "---|" * len(kinds),
    ]
    lines += [f"| {f} | " + " | ".join(f"{row[k]:.2f}" for k in kinds) + " |" for f, row in by_floor.items()]
    return "\n".join(lines)


def table(model: str, runs: dict) -> str:
    kinds = list(next(iter(runs.values()))["kinds"])
    lines = [f"\n{model}\n", "| kind (queries) | " + " | ".join(runs) + " |", "|---|" + "---|" * len(runs)]
    for kind in kinds:
        n = runs["hybrid"]["kinds"][kind]["queries"]
        cells = []
        for r in runs.values():
            row = r["kinds"][kind]
            cells.append(
                f"quiet {row['quiet']:.2f}" if "quiet" in row else f"{row['hit@10']:.3f} / {row['MRR@10']:.3f}"
            )
        lines.append(f"| {kind} ({n}) | " + " | ".join(cells) + " |")
    lines.append("| ms/query | " + " | ".join(f"{r['ms_per_query']:.0f}" for r in runs.values()) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
