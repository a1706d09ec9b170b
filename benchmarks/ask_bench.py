"""Offline `ask` on the judged ask set: how often the answer's first sentence holds the fact.

    .venv/bin/python benchmarks/ask_bench.py [--personas a b] [--out benchmarks/results/ask.json]

The set is ``ragbag_evalsets/personas/ask.json`` (questions over the two evaluation personas,
each answered by one fact written in the persona's data; never tuned on). Each persona's home is
generated into ``benchmarks/.work/ask-<persona>`` and built once with the default model (a rerun
embeds nothing). Every question goes through ``ragbag.answer.ask.ask`` with the extractive
provider (no LLM), as ``ragbag ask`` runs it. Scores:

- ``answer@1``: the answer's first sentence contains one of the item's facts (compared
  case-folded, whitespace removed);
- ``answer@any``: any sentence of the answer does;
- ``cited``: the share of answer sentences that carry a citation chip;
- ``not found``: the share answered "not found in your data".

Prints a table per persona and kind, and writes every answer to ``--out``.
"""

from __future__ import annotations

import argparse
import json
import re
import time
from collections import defaultdict
from pathlib import Path

import ragbag_evalsets
from ragbag.answer import ask, llm
from ragbag.apps.eval import homes as eval_homes
from ragbag.core.home import Home

BENCH = Path(__file__).resolve().parent
SET = Path(ragbag_evalsets.__file__).resolve().parent / "personas" / "ask.json"
NAMES = {"a": "personal", "b": "persona-b"}
_CHIP = re.compile(r"\[c:[0-9a-f]{6,}\]")
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+|\n+")


def _norm(text: str) -> str:
    return "".join(text.casefold().split())


def holds(text: str, facts: list[str]) -> bool:
    """Whether ``text`` contains one of the facts, case and spaces ignored (chips left out)."""
    return any(_norm(f) in _norm(_CHIP.sub("", text)) for f in facts)


def built_home(persona: str) -> tuple[Home, dict]:
    """The persona's home, generated and built once with the default model (a rerun embeds nothing)."""
    data = ragbag_evalsets.generate(NAMES[persona], BENCH / ".work" / f"ask-{persona}-set")
    home = Home(BENCH / ".work" / f"ask-{persona}").ensure()
    return home, eval_homes.build(eval_homes.load(data), home)


def sentences(answer: str) -> list[str]:
    """The answer's sentences as shown, chips kept (they follow the sentence they cite). The
    extractive answer is a line saying so, then one quoted sentence per "- " item; an LLM's
    answer is prose, split at sentence ends."""
    items = [line[2:].strip() for line in answer.splitlines() if line.startswith("- ")]
    return items or [s.strip() for s in _SENTENCE_END.split(answer) if s.strip()]


def judge(answer: str, facts: list[str]) -> dict[str, bool | float]:
    said = sentences(answer)
    hold = [holds(s, facts) for s in said]
    return {
        "at1": bool(hold and hold[0]),
        "any": any(hold),
        "cited": (sum(bool(_CHIP.search(s)) for s in said) / len(said)) if said else 0.0,
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--personas", nargs="*", default=["a", "b"])
    p.add_argument("--out", type=Path, default=BENCH / "results" / "ask.json")
    args = p.parse_args()
    items = json.loads(SET.read_text(encoding="utf-8"))["items"]
    provider = llm.get("extractive")
    out: dict[str, list[dict]] = {}
    for persona in args.personas:
        home, built = built_home(persona)
        print(f"persona {persona}: {built}")
        rows = []
        for item in (i for i in items if i["persona"] == persona):
            started = time.perf_counter()
            answer = ask.ask(item["question"], provider, home=home)
            verdict = judge(answer.answer, item["facts"])
            rows.append(
                {
                    **item,
                    "answer": answer.answer,
                    "relevant": answer.relevant,
                    "seconds": round(time.perf_counter() - started, 2),
                    **verdict,
                }
            )
        out[persona] = rows
        print(table(persona, rows))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=1, ensure_ascii=False))


def table(persona: str, rows: list[dict]) -> str:
    by_kind: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        by_kind[r["kind"]].append(r)
    lines = [
        f"\npersona {persona}\n",
        "| kind | questions | answer@1 | answer@any | cited | not found |",
        "|---|---|---|---|---|---|",
    ]
    for kind, rs in sorted(by_kind.items()) + [("all", rows)]:
        n = len(rs)
        lines.append(
            f"| {kind} | {n} | {sum(r['at1'] for r in rs) / n:.2f} | {sum(r['any'] for r in rs) / n:.2f} "
            f"| {sum(r['cited'] for r in rs) / n:.2f} | {sum(not r['relevant'] for r in rs) / n:.2f} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
