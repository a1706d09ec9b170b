"""Write tests/durations.json, each test module's measured seconds, from a run's JUnit XML.

    .venv/bin/python -m pytest -n 2 --dist loadfile --junitxml=/tmp/run.xml   # or make test with
    PYTEST_ADDOPTS=--junitxml=/tmp/run.xml
    .venv/bin/python scripts/test_durations.py /tmp/run.xml

``tests/conftest.py`` hands modules to the xdist workers heaviest first by these figures (the
longest-first rule, which keeps both workers busy to the end only when the weights are close to
the truth); a module the file does not know yet weighs its tests' ``slow(seconds=…)`` marks.
"""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "tests" / "durations.json"


def module_seconds(junit: Path) -> dict[str, float]:
    seconds: Counter[str] = Counter()
    for case in ET.parse(junit).getroot().iter("testcase"):
        # classname is the module's dotted path (tests.e2e.test_cli), a class's name after it
        parts = case.get("classname", "").split(".")
        while parts and not parts[-1].startswith("test_"):
            parts.pop()
        if parts:
            seconds["/".join(parts) + ".py"] += float(case.get("time") or 0)
    return {module: round(s, 1) for module, s in sorted(seconds.items())}


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    OUT.write_text(json.dumps(module_seconds(Path(argv[0])), indent=1) + "\n")
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
