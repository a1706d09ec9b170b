"""The search path stays light (issue #20): a cold `ragbag search`, and the MCP tools' first
search, read a source's published copy of its rows and never import LanceDB, torch, Dagster, pandas or bm25s (nor the scipy it pulls in)."""

from __future__ import annotations

import json
import subprocess
import sys

from conftest import build_in_process, cli, write

HEAVY = (
    "lancedb",
    "lance",
    "torch",
    "dagster",
    "sentence_transformers",
    "pypdfium2",
    "PIL",
    "pandas",
    "bm25s",
    "scipy",
    "janome",  # a Japanese name's readings: only for a question no cheaper spelling explains
)

NOTES = {
    "lisbon.md": "# Lisbon\n\nThe gate code in Lisbon is 4711.\n",
    "bread.md": "# Sourdough\n\nFeed the starter twice a day, and bake at 250 degrees.\n",
}

PROBE = """
import json, sys
from ragbag.core.home import Home
heavy = {heavy!r}
loaded = lambda: sorted({{m.split('.')[0] for m in sys.modules}} & set(heavy))
out = {{}}
if sys.argv[1] == "cli":
    from ragbag.apps.cli.main import main
    sys.argv = ["ragbag", "search", "gate code", "--json", "-k", "1"]
    try:
        main()
    except SystemExit as e:
        out["exit"] = e.code
    out["search"] = loaded()
else:
    from ragbag.answer.tools import Tools
    tools = Tools(Home())
    out["hits"] = [h["uri"] for h in tools.search("gate code", k=1)["hits"]]
    out["search"] = loaded()
    out["find_files"] = [f["uri"] for f in tools.find_files(name_contains="lisbon")["documents"]]
print(json.dumps(out), file=sys.stderr)
"""


def _probe(kind: str) -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE.format(heavy=HEAVY), kind], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stderr.strip().splitlines()[-1])


def test_a_cold_search_imports_no_lancedb_torch_or_dagster(home, tmp_path):
    cli("add", "files", "notes", str(write(tmp_path / "notes", NOTES)))
    build_in_process(home, "notes")
    cold = _probe("cli")
    assert cold["exit"] in (0, None) and cold["search"] == [], cold
    tools = _probe("tools")
    assert tools["hits"][0].endswith("lisbon.md") and tools["search"] == [], tools
    assert tools["find_files"][0].endswith("lisbon.md")  # the document tools do read the tables
