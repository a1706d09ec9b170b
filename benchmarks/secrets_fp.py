"""False positives of the secret screen (ragbag.text.secrets) on the evaluation personas, which hold
no secret on purpose: every record each connector reads from persona A and persona B, with its
title, text and metadata screened as a build screens them. Each finding is printed with the text
it matched (made-up data), and the counts go to benchmarks/results/secrets_fp.json.

    .venv/bin/python benchmarks/secrets_fp.py
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

from ragbag import connectors
from ragbag.core.records import Document
from ragbag.text import secrets
from ragbag_evalsets import generate

WORK = Path(__file__).parent / ".work" / "secrets-fp"
RESULTS = Path(__file__).parent / "results" / "secrets_fp.json"


def _strings(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list | tuple):
        return [s for v in value for s in _strings(v)]
    return []


def main() -> int:
    report = {}
    for name in ("personal", "persona-b"):
        root = generate(name, WORK / name)
        home = json.loads((root / "home.json").read_text())
        records, chars, kinds = 0, 0, Counter()
        examples: list[str] = []
        for src in home["sources"]:
            reader = connectors.get(src["connector"]).read
            for item in reader(root / src["path"], src["name"], None, options={}):
                if not isinstance(item, Document):
                    continue
                records += 1
                for value in [item.title, item.text, *item.authors, *_strings(item.metadata)]:
                    chars += len(value)
                    for f in secrets.find(value):
                        kinds[f.kind] += 1
                        examples.append(f"{src['name']}: {f.kind}: {value[max(0, f.start - 30) : f.end + 10]!r}")
        report[name] = {"records": records, "characters": chars, "findings": sum(kinds.values()), "kinds": dict(kinds)}
        print(f"{name}: {records} records, {chars:,} characters, {sum(kinds.values())} findings {dict(kinds)}")
        for line in examples:
            print("   ", line)
    RESULTS.write_text(json.dumps(report, indent=2, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
