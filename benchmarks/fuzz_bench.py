"""The mutation fuzzer's longer setting (issue 31): more rounds of every mutation kind over every
real-world fixture, several seeds. The suite runs one round with one seed (tests/connectors/test_fuzz.py);
this is the run whose figures docs/reliability.md quotes.

    .venv/bin/python benchmarks/fuzz_bench.py --rounds 10 --seeds 1,2,3
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.fuzzing import fuzz  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--seeds", default="1,2,3")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    totals: dict[str, int] = {}
    failures: list[str] = []
    for seed in (int(s) for s in args.seeds.split(",")):
        with tempfile.TemporaryDirectory(prefix="ragbag-fuzz-") as tmp:
            tally = fuzz(args.rounds, seed, Path(tmp))
        for key in ("mutations", "records_before", "untouched", "kept", "lost", "errors"):
            totals[key] = totals.get(key, 0) + getattr(tally, key)
        failures += tally.failures
    totals["failures"] = len(failures)
    print(json.dumps(totals, indent=1))
    for failure in failures:
        print(failure)
    if args.json:
        args.json.write_text(json.dumps({"totals": totals, "failures": failures}, indent=1))


if __name__ == "__main__":
    main()
