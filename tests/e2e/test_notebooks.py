"""The shipped notebooks run top to bottom against a freshly built sample index."""

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


def _run_on_sample(home, instance, notebook: str, journal: Path | None = None) -> list[dict]:
    """Build the sample sources into the test home (and, given a folder, a journal whose note is
    edited twice: three versions), execute the notebook, return its outputs (none an error)."""
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
    nb = nbformat.read(ROOT / "notebooks" / notebook, as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(ROOT)}}).execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    return outputs


def test_quickstart_notebook_executes(home, instance, tmp_path):
    outputs = _run_on_sample(home, instance, "quickstart.ipynb", tmp_path / "journal")
    html = "".join(o.get("data", {}).get("text/html", "") for o in outputs)
    assert "Account help" in html and "http_client.py" in html
    # Visual citations: the sample PDF's page as a picture, a markdown passage marked in its section.
    assert any("image/png" in o.get("data", {}) for o in outputs), "no picture of the cited PDF page"
    assert '<mark id="cited">' in html


def test_explore_notebook_executes(home):
    # Built into the home's own Dagster instance ($DAGSTER_HOME), where the lineage cell looks.
    instance = dg.DagsterInstance.from_config(str(home.dagster_home))
    try:
        outputs = _run_on_sample(home, instance, "explore.ipynb")
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
