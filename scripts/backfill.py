"""Rebuild every source of one connector as one Dagster backfill run (after a chunker or model change).

    RAGBAG_HOME=~/.ragbag .venv/bin/python scripts/backfill.py files   # or: make backfill CONNECTOR=files

Runs ``dagster asset materialize --select group:<connector> --partition-range <first>...<last>``
against ``$RAGBAG_HOME/dagster`` (the instance the CLI and ``dagster dev`` share), so the run shows
in the UI. Dynamic partitions are ordered by registration, so first...last is every source.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: backfill.py CONNECTOR", file=sys.stderr)
        return 2
    connector = argv[0]
    sys.path.insert(0, str(ROOT))
    from ragbag import connectors
    from ragbag.core.home import Home
    from ragbag.orchestration.chain import sync_partitions
    from ragbag.orchestration.instance import dagster_instance

    if connector not in connectors.NAMES:
        print(f"backfill: unknown connector {connector!r}; one of {', '.join(connectors.NAMES)}", file=sys.stderr)
        return 2
    home = Home()
    sources = [s for s in home.sources().values() if s.connector == connector]
    if not sources:
        print(f"backfill: no {connector} sources registered in {home.sources_file}", file=sys.stderr)
        return 2
    sync_partitions(home, add=sources)  # use_home() also points DAGSTER_HOME at the home
    keys = dagster_instance(home).get_dynamic_partitions(f"{connector}_sources")
    cmd = [
        str(Path(sys.executable).parent / "dagster"),
        "asset",
        "materialize",
        "-m",
        "ragbag.orchestration.definitions",
        "--select",
        f"group:{connector}",
        "--partition-range",
        f"{keys[0]}...{keys[-1]}",
    ]
    print("+", " ".join(cmd), file=sys.stderr)
    return subprocess.call(cmd, cwd=ROOT, env=os.environ)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
