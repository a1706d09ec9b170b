"""`ragbag remove S` while S builds: the build ends with a report line saying so, no traceback,
and writes nothing of S after the removal, which leaves no byte of it."""

from __future__ import annotations

import subprocess
import time

import pytest
from conftest import RAGBAG, cli, strict_json, write
from decoded import holding, in_bytes
from figures import record

MARKER = "Vexmorqual"  # in the removed source's text only
N = 150  # documents: embedding them (~10 s on one thread) outlasts starting `remove` (in this process)


@pytest.mark.slow(seconds=40)
def test_remove_during_the_build_leaves_no_byte_and_the_build_says_so(home, tmp_path):
    kept = write(tmp_path / "kept", {"a.md": "# Harbour\n\nThe lighthouse keeper logs the tide every dawn.\n"})
    words = "amber birch cobalt dune ember fjord garnet harbor indigo juniper kelp lagoon".split()
    doomed = write(
        tmp_path / "doomed",
        {
            f"r{i:03d}.md": f"# Report {i}\n\n{MARKER} {i}: " + " ".join(words[(i + j) % 12] for j in range(40))
            for i in range(N)
        },
    )
    cli("add", "files", "kept", str(kept))
    cli("build", "kept")
    cli("add", "files", "doomed", str(doomed))

    build = subprocess.Popen([RAGBAG, "build", "doomed"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.time() + 120
        while time.time() < deadline and not list(home.lease_dir.glob("*embeddings*.lease")):
            assert build.poll() is None, "the build ended before it embedded"
            time.sleep(0.05)
        assert list(home.lease_dir.glob("*embeddings*.lease")), "the build never reached its embeddings"
        assert holding(home.root, MARKER)  # its documents are stored: the checks below can fail
        removed = cli("remove", "doomed")  # waits for the step writing now, then purges
        out, err = build.communicate(timeout=300)
    finally:
        if build.poll() is None:
            build.kill()
            build.wait()

    assert "removed source doomed" in removed.stdout
    assert build.returncode == 1, out + err  # a source asked for was not built
    assert "Traceback" not in out + err and "Stack Trace" not in out + err, out + err
    assert "doomed: removed during the build (`ragbag remove`); nothing published" in out, out
    # Nothing the build wrote before or after the removal survives: as bytes, or in the tables decoded.
    assert in_bytes(home.root, MARKER) == [] and holding(home.root, MARKER) == []
    assert "doomed" not in cli("list", "--json").stdout and "doomed" not in home.sources_file.read_text()
    hits = strict_json(cli("search", "who records the tides", "-k", "1", "--json").stdout)
    assert hits[0]["source"] == "kept"
    record("remove_during_build", {"removed_mid_embedding": 1, "files_holding_marker_after": 0})


def test_remove_does_not_wait_for_a_dead_dagster_dev_run(home, tmp_path):
    """A run `dagster dev` started whose process died stays `STARTED` in Dagster's records (only
    CLI runs are failed by the reaper): `remove` waits for a run only while a process holds one
    of its steps' leases, so this one is deleted after a moment, not after RUN_WAIT_S."""
    import dagster as dg

    from ragbag.core import leases
    from ragbag.orchestration.runner import BETWEEN_STEPS_S

    folder = write(tmp_path / "doomed", {"a.md": f"# Note\n\n{MARKER} keeps the lighthouse.\n"})
    cli("add", "files", "doomed", str(folder))
    cli("build", "doomed")
    gone = subprocess.Popen(["true"])
    gone.wait()
    with dg.DagsterInstance.from_config(str(home.dagster_home)) as instance:
        run = instance.add_run(
            dg.DagsterRun(
                job_name="build_files", status=dg.DagsterRunStatus.STARTED, tags={"dagster/partition": "doomed"}
            )
        )
    leases.lease_path(home.lease_dir, run.run_id, "files__embeddings").write_text(leases.identity(gone.pid))

    started = time.time()
    cli("remove", "doomed")
    assert time.time() - started < BETWEEN_STEPS_S + 30
    with dg.DagsterInstance.from_config(str(home.dagster_home)) as instance:
        assert instance.get_run_by_id(run.run_id) is None
    assert holding(home.root, MARKER) == []
