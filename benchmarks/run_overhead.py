"""What Dagster's SQLite storages cost a small build: a new SQLAlchemy engine per connection, or
one per database (``orchestration.dagster_internals.reuse_sqlite_engines``, ragbag's default).

Run from the repository root: ``.venv/bin/python benchmarks/run_overhead.py`` (about a minute).
Each round starts a process per mode, alternating (``reuse``, ``fresh``, ...): the process adds
a `files` source of three notes to a new home in /dev/shm (or the temporary folder), builds it
once, then edits one note and builds again ``BUILDS`` times through the CLI's own ``main``,
in-process, and reports the CPU seconds per build and the SQLAlchemy engines its runs made.
Prints one JSON line per process and the medians per mode.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROUNDS = 3
BUILDS = 8

CHILD = r"""
import json, os, sys, tempfile, time
from pathlib import Path
mode, base, builds = sys.argv[1], sys.argv[2], int(sys.argv[3])
home = Path(tempfile.mkdtemp(dir=base))
os.environ["RAGBAG_HOME"] = str(home / "home")
import sqlalchemy
from ragbag.orchestration import dagster_internals
if mode == "fresh":  # Dagster's own: a new engine for every connection
    for module in dagster_internals._SQLITE_STORAGES:
        module.create_engine = sqlalchemy.create_engine
from ragbag.apps.cli.main import main

def cli(*args):
    sys.argv = ["ragbag", *args]
    try:
        main()
    except SystemExit:
        pass

docs = home / "docs"
docs.mkdir()
for i in range(3):
    (docs / f"n{i}.md").write_text(f"# Note {i}\n\nThe kettle is on shelf {i}.\n")
cli("add", "files", "notes", str(docs))
cli("build", "--json")
engines = set()
sqlalchemy.event.listen(sqlalchemy.Engine, "engine_connect", lambda c: engines.add(id(c.engine)))
cpu = time.process_time()
for i in range(builds):
    (docs / "n0.md").write_text(f"# Note 0\n\nThe kettle moved, edit {i}.\n")
    cli("build", "--json")
out = {"mode": mode, "cpu_s_per_build": (time.process_time() - cpu) / builds, "engines": len(engines)}
print("RESULT " + json.dumps(out), file=sys.stderr)
"""


def main() -> None:
    base = "/dev/shm" if Path("/dev/shm").is_dir() else tempfile.gettempdir()
    results: dict[str, list[dict]] = {"reuse": [], "fresh": []}
    for _ in range(ROUNDS):
        for mode in results:
            done = subprocess.run(
                [sys.executable, "-c", CHILD, mode, base, str(BUILDS)], capture_output=True, text=True, check=True
            )
            line = next(x for x in done.stderr.splitlines() if x.startswith("RESULT "))
            result = json.loads(line.removeprefix("RESULT "))
            print(json.dumps(result))
            results[mode].append(result)
    for mode, runs in results.items():
        cpu = statistics.median(r["cpu_s_per_build"] for r in runs)
        engines = statistics.median(r["engines"] for r in runs)
        print(f"{mode}: median {cpu:.3f} CPU-s per build, {engines:.0f} engines over {BUILDS} builds")


if __name__ == "__main__":
    main()
