"""The search path stays light (issue #20): a cold `ragbag search`, and the MCP tools' first
search, read a source's published copy of its rows and never import LanceDB, torch, Dagster, pandas or bm25s (nor the scipy it pulls in)."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime

from conftest import build_in_process, cli, write

from ragbag_evalsets.formats.mail import Mail, mbox

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
    "pypinyin",  # a Chinese name's spellings: made at publish (``people_names.spell``)
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
    import gc
    from ragbag.apps.cli.main import main
    full = []
    gc.callbacks.append(lambda phase, info: full.append(1) if phase == "stop" and info["generation"] == 2 else None)
    sys.argv = ["ragbag", "search", "gate code", "--json", "-k", "1"]
    try:
        main()
    except SystemExit as e:
        out["exit"] = e.code
    out["search"] = loaded()
    out["full_collections"] = len(full)
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
    sent = datetime(2025, 5, 2, 9, 0, tzinfo=UTC)  # a Chinese name: spelled at publish, not at search
    letters = [
        Mail(
            sent,
            ("陈静", "chen.jing@example.cn"),
            [("Jan", "jan@example.org")],
            "Kettle",
            "The kettle is on the shelf.",
        )
    ]
    cli("add", "mail", "mail", str(write(tmp_path / "mail", {"inbox.mbox": mbox(letters)})))
    build_in_process(home, "mail")
    cold = _probe("cli")
    assert cold["exit"] in (0, None) and cold["search"] == [], cold
    # The objects a command's imports make are not walked again and again as they settle
    # (ragbag.core.collector): a cold search collects no generation in full.
    assert cold["full_collections"] == 0, cold
    tools = _probe("tools")
    assert tools["hits"][0].endswith("lisbon.md") and tools["search"] == [], tools
    assert tools["find_files"][0].endswith("lisbon.md")  # the document tools do read the tables


def test_the_spellings_written_at_publish_are_those_made_at_search(home, tmp_path):
    """``people_names.spell`` writes what ``name_spellings.spellings`` makes for each counted name
    that has any, and a refresh takes the version before's as they are."""
    from ragbag.index import published
    from ragbag.pipeline import people_names
    from ragbag.text import name_spellings

    counts = {"陈静": 2, "이민지": 1, "Zoë Müller": 1, "Tom Becker": 3, "坂本彩": 1}
    spelled = people_names.spell(counts, None, "mail")
    assert spelled == {
        n: [sorted(s) for s in name_spellings.spellings(n)] for n in counts if name_spellings.spellings(n)
    }
    assert "陈静" in spelled and "Tom Becker" not in spelled  # a Latin name is its own spelling
    version = tmp_path / "v1"
    version.mkdir()
    rules = name_spellings.SPELLINGS_VERSION
    published.write_spellings(version, {**spelled, "陈静": [["kept", "as", "written"]]}, rules)
    again = people_names.spell({**counts, "王芳": 1}, version, "mail")
    assert again["陈静"] == [["kept", "as", "written"]] and again["王芳"] == [
        sorted(s) for s in name_spellings.spellings("王芳")
    ]
    # Spelled by other rules: not read, by a refresh nor by search; every name spelled anew.
    published.write_spellings(version, {"陈静": [["older", "rules"]]}, rules - 1)
    assert published.read_spellings(version, "mail", rules) is None
    assert people_names.spell(counts, version, "mail") == spelled
