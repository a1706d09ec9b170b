"""The shipped notebooks run top to bottom on any home: the sample index (where the test adds
its assertions about that data as a last cell), another built home and an empty one (where they
say what to do). The notebooks themselves assert nothing about a particular home."""

from __future__ import annotations

import os
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import dagster as dg
import nbformat
from conftest import ROOT, materialize_source
from nbclient import NotebookClient

PLAN = [
    "# Plan\n\nThe meeting point is the old lighthouse at dawn.\n",
    "# Plan\n\nThe meeting point is the red harbour crane at noon.\n",
    "# Plan\n\nThe meeting point is the train station clock at midnight.\n",
]


def _build_sample(home, instance, journal: Path | None = None) -> None:
    """The sample sources built into the test home (and, given a folder, a journal whose note is
    edited twice: three versions)."""
    home.add_source("sample-docs", "files", str(ROOT / "sample" / "docs"), known=("files", "code"))
    home.add_source("sample-code", "code", str(ROOT / "sample" / "code"), known=("files", "code"))
    materialize_source(home, instance, "sample-docs")
    materialize_source(home, instance, "sample-code")
    if journal is not None:
        journal.mkdir()
        home.add_source("journal", "files", str(journal), known=("files", "code"))
        for days_ago, text in zip((60, 30, 1), PLAN):
            when = (datetime.now(UTC) - timedelta(days=days_ago)).timestamp()
            (journal / "plan.md").write_text(text)
            os.utime(journal / "plan.md", (when, when))
            materialize_source(home, instance, "journal")


def _execute(notebook: str, checks: str = "") -> list[dict]:
    """Execute the notebook on the home ``RAGBAG_HOME`` names, with ``checks`` (the test's
    assertions about that home) run as a last cell; its outputs, none an error."""
    nb = nbformat.read(ROOT / "notebooks" / notebook, as_version=4)
    if checks:
        nb.cells.append(nbformat.v4.new_code_cell(checks))
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(ROOT)}}).execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    errors = [o for o in outputs if o.get("output_type") == "error"]
    assert not errors, errors[0].get("evalue")
    return outputs


def _text(outputs: list[dict]) -> str:
    return "".join(o.get("text", "") for o in outputs if o.get("output_type") == "stream")


QUICKSTART_ON_SAMPLE = """
assert not hits.empty and hits.iloc[0]["title"] == "Account help"
assert set(code_hits["connector"]) == {"code"}
assert all(u.endswith(".md") for u in md_only["uri"])
assert view.kind == "pdf" and view.pages and all(p.boxes for p in view.pages) and view.image is not None
assert note.kind == "text" and '<mark id="cited">' in note.html()
assert [v["version"] for v in history["versions"]] == [1, 2, 3] and history["versions"][-1]["current"]
assert then.iloc[0]["version"] == 1 and "lighthouse" in then.iloc[0]["text"]
"""

EXPLORE_ON_SAMPLE = """
assert len(docs) and docs["doc_id"].is_unique
assert per_month.to_numpy().sum() == docs["when"].notna().sum()
assert not hits.empty and (chunks["ordinal"].diff().dropna() == 1).all() and len(chunks) >= 1
assert all(u.rsplit(".", 1)[-1] in ("md", "txt") for u in filtered["uri"])
# Lineage: a run for every stage, integer LanceDB versions; search reads what bm25's run published.
assert lineage["run_id"].notna().all() and (lineage["run_id"].str.len() == 36).all()
assert all(isinstance(v, int) for v in lineage["table_version"])
assert all(
    isinstance(v, int)
    for v in lineage.loc[[f"{source.connector}/{s}" for s in ("documents", "chunks", "embeddings")], "published version"]
)
assert lineage.loc[f"{source.connector}/bm25", "table_version"] == manifest["versions"]["chunks"]
assert len(chunk_lineage) == len(chunks) and chunk_lineage["chunk_id"].is_unique
"""


def test_quickstart_notebook_executes(home, instance, tmp_path):
    _build_sample(home, instance, tmp_path / "journal")
    outputs = _execute("quickstart.ipynb", QUICKSTART_ON_SAMPLE)
    html = "".join(o.get("data", {}).get("text/html", "") for o in outputs)
    assert "Account help" in html and "http_client.py" in html
    # Visual citations: the sample PDF's page as a picture, a markdown passage marked in its section.
    assert any("image/png" in o.get("data", {}) for o in outputs), "no picture of the cited PDF page"
    assert '<mark id="cited">' in html


def test_explore_notebook_executes(home):
    # Built into the home's own Dagster instance ($DAGSTER_HOME), where the lineage cell looks.
    instance = dg.DagsterInstance.from_config(str(home.dagster_home))
    try:
        _build_sample(home, instance)
        outputs = _execute("explore.ipynb", EXPLORE_ON_SAMPLE)
        chunk_runs = {
            r.event_log_entry.run_id
            for r in instance.fetch_materializations(dg.AssetKey(["files", "chunks"]), limit=10).records
        }
    finally:
        instance.dispose()
    assert any("image/png" in o.get("data", {}) for o in outputs), "no plot of documents per month"
    html = "".join(o.get("data", {}).get("text/html", "") for o in outputs)
    # Sample data: extensions and languages as the facets, the filtered search, the chunk view.
    assert "extension" in html and "language" in html and ">python<" in html and ">md<" in html
    assert "Account help" in html
    # Lineage of the top hit's document: the run that chunked it and the LanceDB versions.
    text = "".join(o.get("text", "") for o in outputs if o.get("output_type") == "stream")
    assert len(chunk_runs) == 1 and (run_id := chunk_runs.pop()) in html and f"chunked by run {run_id}" in text
    assert "table_version" in html and "published version" in html and "chunk_id" in html
    assert re.search(r"search reads LanceDB chunks version \d+ ", text), text


def test_both_notebooks_on_an_empty_home_say_what_to_do(home):
    for notebook in ("quickstart.ipynb", "explore.ipynb"):
        text = _text(_execute(notebook, "assert hits.empty"))
        assert "Nothing is indexed in this home yet" in text and "make demo" in text, notebook


def test_both_notebooks_on_another_home(notes_home, monkeypatch, tmp_path):
    """The shared notes home (no PDF, no code, no earlier versions, built outside any instance the
    lineage cell could read): every cell runs, and says what it has nothing to show for. The
    lineage cell gets an empty instance of the test's own (telemetry off), so the shared home
    stays as built."""
    from ragbag.orchestration.instance import ensure_dagster_yaml

    (tmp_path / "dagster").mkdir(mode=0o700)
    ensure_dagster_yaml(tmp_path / "dagster" / "dagster.yaml")
    monkeypatch.setenv("RAGBAG_HOME", str(notes_home.root))
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dagster"))
    quick = _text(_execute("quickstart.ipynb", "assert not hits.empty and view is None and history is None"))
    assert "No PDF indexed in this home" in quick and "No document has an earlier version yet" in quick
    explore = _execute("explore.ipynb", "assert len(docs) and not hits.empty and len(chunks) >= 1 and earlier.empty")
    assert "chunk(s) in notes" in _text(explore)
