"""A build killed mid-way leaves the previous index searchable; the next build completes it."""

from __future__ import annotations

import os
import signal
import subprocess
import time

import pytest

from conftest import RAGBAG, cli, cli_json, write
from ragbag import query
from ragbag.store import Store

N = 150  # new documents: enough that embedding them outlasts the moment of the kill
WORDS = "amber birch cobalt dune ember fjord garnet harbor indigo juniper kelp lagoon".split()


def _new_doc(i: int) -> str:
    w = [WORDS[(i * 7 + j) % len(WORDS)] for j in range(12)]
    return f"# Field report {i}\n\nZephyrmark{i} survey: " + " ".join(w) + f". Sample {i} was logged at station {i * 3}.\n"


@pytest.mark.slow
def test_killed_build_keeps_previous_index_and_next_build_completes(home, tmp_path):
    docs = write(tmp_path / "docs", {"old.md": "# Old\n\nThe lighthouse keeper logs the tide every dawn.\n"})
    cli("add", "files", "notes", str(docs))
    cli("build")
    write(docs, {f"new/report-{i:03d}.md": _new_doc(i) for i in range(N)})

    proc = subprocess.Popen([RAGBAG, "build", "--json"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    store = Store(home.lance_dir)
    deadline = time.time() + 240
    try:  # wait until the new chunks are stored and embedding is under way, then kill -9
        while time.time() < deadline and proc.poll() is None:
            if store.table("chunks").count_rows("source = 'notes'") > 1:
                time.sleep(1.0)
                break
            time.sleep(0.2)
        assert proc.poll() is None, "build finished before it could be killed"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert store.table("embeddings").count_rows("source = 'notes'") < N + 1  # really cut short

    # The previous build is still what search reads, whole and consistent.
    hits = query.search("who records the tides", home=home, k=3)
    assert list(hits["title"]) == ["Old"]
    assert query.search("Zephyrmark5", home=home, k=3, mode="keyword").empty

    report = cli_json("build", timeout=600)[0]  # the killed run's pool slot must not block it
    assert report["status"] == "success" and report["documents"] == N + 1
    assert report["chunks"] == N + 1
    assert report["chunks_embedded"] <= N  # vectors committed before the kill are reused
    import dagster as dg

    with dg.DagsterInstance.from_config(str(home.dagster_home)) as instance:
        killed = [r for r in instance.get_runs() if r.status == dg.DagsterRunStatus.FAILURE]
        assert len(killed) == 1 and "is gone" in str(instance.all_logs(killed[0].run_id)[-1].message)
    hits = query.search("Zephyrmark123 survey", home=home, k=1, mode="keyword")
    assert hits.iloc[0]["title"] == "Field report 123"
    assert len(query.search("station", home=home, k=1000, mode="keyword")) == N
