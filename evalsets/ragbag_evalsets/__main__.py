"""``python -m ragbag_evalsets NAME OUT``: write an evaluation set and count its queries per kind."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from ragbag_evalsets import SETS, generate
from ragbag_evalsets.persona import KINDS


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2 or args[0] not in SETS:
        print(f"usage: python -m ragbag_evalsets {{{'|'.join(SETS)}}} OUT", file=sys.stderr)
        return 2
    out = generate(args[0], Path(args[1]))
    queries = [json.loads(line) for line in (out / "queries.jsonl").read_text(encoding="utf-8").splitlines()]
    counts = {k: sum(1 for q in queries if q["kind"] == k) for k in KINDS}
    print(f"wrote {out}: {len(queries)} queries ({', '.join(f'{k} {n}' for k, n in counts.items())})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
