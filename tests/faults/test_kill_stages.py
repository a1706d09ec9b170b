"""`kill -9` at every stage of a fresh build and of a refresh: what search reads stays whole (the
previous index, or a clean "nothing indexed yet"), and the next build completes."""

from __future__ import annotations

import os
import signal
import subprocess
import time

import pytest
from conftest import RAGBAG, cli, strict_json, write
from figures import record

from ragbag.pipeline.stages import STAGES
from ragbag.search import query, snapshot

N = 150  # files: each stage of a build runs long enough to be caught in the act
WORDS = "amber birch cobalt dune ember fjord garnet harbor indigo juniper kelp lagoon".split()


def _doc(i: int, tag: str) -> str:
    return f"# Report {i}\n\n{tag}{i} survey: " + " ".join(WORDS[(i * 7 + j) % 12] for j in range(30)) + ".\n"


def _kill_in(home, stage: str) -> str | None:
    """Start `ragbag build` and kill -9 it while ``stage`` runs; the stage it was killed in, or
    None when the build finished first."""
    proc = subprocess.Popen([RAGBAG, "build", "--json"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 240
        while time.time() < deadline and proc.poll() is None:
            held = [p.name for p in home.lease_dir.glob("*.lease")] if home.lease_dir.exists() else []
            if any(f"__{stage}." in name for name in held):
                os.kill(proc.pid, signal.SIGKILL)
                proc.wait(30)
                return stage
            time.sleep(0.005)
        return None
    finally:
        if proc.poll() is None:
            proc.kill()


def _search(*args: str) -> subprocess.CompletedProcess:
    return cli("search", *args, "--json", check=False)


def _titles(home, text: str) -> list[str]:
    """Keyword hits, read in this process as a fresh reader would (the CLI path is checked once)."""
    snapshot.forget()
    return list(query.search(text, home=home, k=1, mode="keyword")["title"])


@pytest.mark.slow(seconds=120)
def test_kill_at_every_stage_of_a_fresh_build_and_of_a_refresh(home, tmp_path):
    docs = write(tmp_path / "docs", {f"r{i:03d}.md": _doc(i, "Oldmark") for i in range(N)})
    cli("add", "files", "notes", str(docs))

    killed = []
    for stage in STAGES:  # fresh: nothing was ever published
        if _kill_in(home, stage) is None:
            break  # a kill earlier left less to do: this build completed
        killed.append(("fresh", stage))
        if stage == "documents":  # never published yet: the CLI says so in one line
            out = _search("Oldmark5")
            assert out.returncode == 2 and out.stderr.count("\n") == 1 and "nothing is indexed" in out.stderr
    report = strict_json(cli("build", "--json", timeout=600).stdout)[0]
    assert report["status"] == "success" and report["documents"] == N
    assert strict_json(_search("Oldmark5", "--mode", "keyword", "-k", "1").stdout)[0]["title"] == "Report 5"
    assert report["chunks_embedded"] < N  # vectors committed before the kill at embeddings are reused

    write(docs, {f"r{i:03d}.md": _doc(i, "Newmark") for i in range(0, N, 2)})  # a refresh: half change
    for stage in STAGES:
        if _kill_in(home, stage) is None:
            break
        killed.append(("refresh", stage))
        assert _titles(home, "Oldmark4") == ["Report 4"]  # the previous index, whole
        assert _titles(home, "Newmark4") == []
    report = strict_json(cli("build", "--json", timeout=600).stdout)[0]
    assert report["status"] == "success" and report["documents"] == N
    assert report["chunks_embedded"] <= N // 2  # only what changed, never more
    assert _titles(home, "Newmark4") == ["Report 4"] and _titles(home, "Oldmark4") == []
    assert not list(home.lease_dir.glob("*.lease"))
    import dagster as dg

    with dg.DagsterInstance.from_config(str(home.dagster_home)) as instance:  # each kill: a failed run
        failed = [r for r in instance.get_runs() if r.status == dg.DagsterRunStatus.FAILURE]
        assert len(failed) == len(killed)
        assert all("is gone" in str(instance.all_logs(r.run_id)[-1].message) for r in failed)

    assert {s for kind, s in killed if kind == "fresh"} >= {"documents", "chunks", "embeddings"}
    assert {s for kind, s in killed if kind == "refresh"} >= {"documents", "chunks", "embeddings"}
    record("kills", {"stage_kills": len(killed), "stages_killed": sorted({f"{k}:{s}" for k, s in killed})})
