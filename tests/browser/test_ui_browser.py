"""The Dagster UI in a real (headless Chromium) browser, over a home with two built sources: the
suite's one `dagster dev`.

`dagster dev` runs on loopback against a temp RAGBAG_HOME holding sample/docs (files) and
sample/code (code), both built through the CLI. The test checks over GraphQL that assets, the
chain's order, the CLI's runs, partitions, checks, pools, freshness, schedules and sensors are
there (and running), launches a backfill of the files connector the way the UI's "Materialize
all" does and waits for the daemon to finish it, then opens the asset graph and a partitioned asset's page in Chromium and saves
screenshots. Chromium comes from Debian (`make browser`); Playwright only drives it.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from conftest import CHROMIUM, ROOT, cli, launch_chromium, listening_addresses, stop_group

from ragbag.pipeline.stages import STAGES

DG = str(Path(sys.executable).parent / "dg")  # as `make ui` starts it
# Started in a new session with default SIGINT/SIGTERM: a parent that was itself started with `&`
# leaves SIGINT ignored, and `dagster dev` would then outlive the test.
_RESTORE_SIGNALS = (
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
    "signal.signal(signal.SIGTERM, signal.SIG_DFL); os.execv(sys.argv[1], sys.argv[1:])"
)

pytestmark = pytest.mark.slow(seconds=150)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _graphql(port: int, q: str, variables: dict | None = None) -> dict:
    req = urllib.request.Request(
        f"http://127.0.0.1:{port}/graphql",
        data=json.dumps({"query": q, "variables": variables or {}}).encode(),
        headers={"content-type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=60) as resp:
        body = json.loads(resp.read())
    assert not body.get("errors"), body["errors"]
    return body["data"]


@pytest.fixture
def chromium_path() -> str:
    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(f"{CHROMIUM} is missing: run `make browser` (apt-get install -y chromium; pip install playwright)")
    try:
        import playwright  # noqa: F401
    except ImportError:
        pytest.fail("the playwright package is missing: run `make browser`")
    return CHROMIUM


def test_dagster_ui_in_a_browser_shows_sources_checks_and_automation(home, tmp_path, chromium_path):
    cli("add", "files", "sample-docs", str(ROOT / "sample" / "docs"))
    cli("add", "code", "sample-code", str(ROOT / "sample" / "code"))
    reports = json.loads(cli("build", "--json", timeout=900).stdout)
    assert [r["status"] for r in reports] == ["success", "success"], reports
    shots = tmp_path / "screenshots"
    shots.mkdir()

    port = _free_port()
    env = {
        **os.environ,
        "RAGBAG_HOME": str(home.root),
        "DAGSTER_HOME": str(home.dagster_home),
        "VIRTUAL_ENV": str(Path(sys.executable).parent.parent),
    }
    log = open(tmp_path / "dagster-dev.log", "wb")
    proc = subprocess.Popen(
        [sys.executable, "-c", _RESTORE_SIGNALS, DG, "dev", "--no-check-yaml", "-h", "127.0.0.1", "-p", str(port)],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        deadline = time.time() + 180
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/server_info", timeout=5)
                break
            except OSError:
                assert proc.poll() is None, (tmp_path / "dagster-dev.log").read_text()[-3000:]
                assert time.time() < deadline, "dagster dev did not come up in 180 s"
                time.sleep(1)
        # Privacy: the webserver listens on loopback only (127.0.0.1 is 0100007F in /proc).
        assert listening_addresses(port) == {"0100007F"}

        # The backfill first: the daemon takes it up on its next tick (every 30 s), while the
        # GraphQL checks and the browser look at the UI.
        backfill_id = _launch_files_backfill(port)
        _check_graphql(port)
        _browse(port, shots)
        _backfill_ran_as_one_run(port, backfill_id)
    finally:
        stop_group(proc, grace=45)
        log.close()
    assert proc.poll() is not None
    said = (tmp_path / "dagster-dev.log").read_text(errors="replace")
    assert "Warning" not in said and "superseded" not in said, said[-3000:]  # e.g. `dagster dev`'s SupersessionWarning

    for name in ("asset-graph.png", "files-group.png", "files-bm25-partitions.png"):
        png = shots / name
        assert png.exists() and png.stat().st_size > 20_000, f"{name}: missing or blank"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def _check_graphql(port: int) -> None:
    data = _graphql(
        port,
        """{
      assetNodes {
        assetKey { path } partitionKeys groupName pools dependencyKeys { path }
        backfillPolicy { policyType }
        internalFreshnessPolicy { __typename ... on TimeWindowFreshnessPolicy { failWindowSeconds warnWindowSeconds } }
        assetChecksOrError { ... on AssetChecks { checks { name blocking } } }
        assetPartitionStatuses { ... on DefaultPartitionStatuses { materializedPartitions } }
      }
      runsOrError { ... on Runs { results { jobName status tags { key value } } } }
      shouldShowNux
      repositoriesOrError { ... on RepositoryConnection { nodes {
        sensors { name sensorState { status } }
        schedules { name cronSchedule scheduleState { status } }
      } } }
    }""",
    )
    nodes = {"/".join(n["assetKey"]["path"]): n for n in data["assetNodes"]}
    # The home's connectors only: a group for each connector with a source, none for the others.
    assert {n["groupName"] for n in data["assetNodes"]} == {"files", "code"}
    assert data["shouldShowNux"] is False  # no first-visit "join the community" dialog
    expected_checks = {
        "documents": {"no_empty_documents"},
        "chunks": {"unique_chunk_ids", "no_orphan_chunks"},
        "embeddings": {"embeddings_match_chunks"},
        "graph": {"graph_matches_chunks", "graph_recall"},
        "bm25": {"index_matches_chunks"},
    }
    for connector, source in (("files", "sample-docs"), ("code", "sample-code")):
        for stage, names in expected_checks.items():
            n = nodes[f"{connector}/{stage}"]
            assert n["groupName"] == connector and n["partitionKeys"] == [source]
            assert n["assetPartitionStatuses"]["materializedPartitions"] == [source]
            assert n["pools"] == ["ragbag_lance"]
            assert n["backfillPolicy"]["policyType"] == "SINGLE_RUN"
            checks = n["assetChecksOrError"]["checks"]
            assert {c["name"] for c in checks} == names and all(c["blocking"] for c in checks)
        # The chain, in order: bm25 (the publish step) after the graph, the graph after the vectors.
        assert nodes[f"{connector}/bm25"]["dependencyKeys"] == [{"path": [connector, "graph"]}]
        assert nodes[f"{connector}/graph"]["dependencyKeys"] == [{"path": [connector, "embeddings"]}]
        fresh = nodes[f"{connector}/bm25"]["internalFreshnessPolicy"]
        assert fresh["__typename"] == "TimeWindowFreshnessPolicy"
        assert fresh["failWindowSeconds"] == 2 * 3600 + 1800  # hourly refresh: two missed + grace
    # The CLI's builds are runs of the shared instance, tagged as the CLI's.
    runs = data["runsOrError"]["results"]
    for job in ("build_files", "build_code"):
        assert any(
            r["jobName"] == job and r["status"] == "SUCCESS" and {"key": "ragbag/trigger", "value": "cli"} in r["tags"]
            for r in runs
        ), runs
    repo = data["repositoriesOrError"]["nodes"][0]
    sensors = {s["name"]: s["sensorState"]["status"] for s in repo["sensors"]}
    assert sensors == {
        "ragbag_sources": "RUNNING",
        "ragbag_automation": "RUNNING",
        "ragbag_source_schedules": "RUNNING",
        "ragbag_file_changes": "RUNNING",
        "ragbag_reaper": "RUNNING",
    }
    schedules = {s["name"]: (s["cronSchedule"], s["scheduleState"]["status"]) for s in repo["schedules"]}
    assert schedules["refresh_files"] == ("0 * * * *", "RUNNING")
    assert schedules["refresh_code"] == ("0 * * * *", "RUNNING")


def _launch_files_backfill(port: int) -> str:
    """What the UI's "Materialize all partitions" of the files group launches: one asset backfill."""
    launched = _graphql(
        port,
        """mutation($p: LaunchBackfillParams!) { launchPartitionBackfill(backfillParams: $p) {
        __typename ... on LaunchBackfillSuccess { backfillId } ... on PythonError { message } } }""",
        {"p": {"assetSelection": [{"path": ["files", s]} for s in STAGES], "allPartitions": True}},
    )["launchPartitionBackfill"]
    assert launched["__typename"] == "LaunchBackfillSuccess", launched
    return launched["backfillId"]


def _backfill_ran_as_one_run(port: int, backfill_id: str) -> None:
    """The daemon turns the backfill into one run over the connector's sources (the single-run
    policy), and it succeeds. (The backfill's own status turns COMPLETED on the daemon's next
    tick, 30 s later: Dagster's bookkeeping, not waited for.)"""
    deadline = time.time() + 420
    while True:
        b = _graphql(
            port,
            """query($id: String!) { partitionBackfillOrError(backfillId: $id) {
            ... on PartitionBackfill { status numPartitions runs(limit: 10) { status tags { key value } } } } }""",
            {"id": backfill_id},
        )["partitionBackfillOrError"]
        ended = [r for r in b["runs"] if r["status"] in ("SUCCESS", "FAILURE", "CANCELED")]
        if ended or b["status"] in ("FAILED", "CANCELED", "COMPLETED_FAILED"):
            break
        assert time.time() < deadline, f"backfill still {b['status']} after 420 s: {b}"
        time.sleep(2)
    assert b["status"] not in ("FAILED", "CANCELED", "COMPLETED_FAILED"), b
    assert len(b["runs"]) == 1 and b["runs"][0]["status"] == "SUCCESS", b


def _browse(port: int, shots: Path) -> None:
    from playwright.sync_api import sync_playwright

    base = f"http://127.0.0.1:{port}"
    with sync_playwright() as p:
        browser = launch_chromium(p)
        try:
            page = browser.new_page(viewport={"width": 1600, "height": 1000})
            page.set_default_timeout(90_000)

            page.goto(f"{base}/asset-groups")  # the global asset lineage graph
            for label in ("files", "code"):
                page.get_by_text(label, exact=True).first.wait_for()
            page.wait_for_timeout(2000)
            assert page.get_by_role("button", name="Skip").count() == 0  # the community dialog's
            page.screenshot(path=str(shots / "asset-graph.png"))

            page.goto(f"{base}/locations/pipelines.definitions/asset-groups/files")
            page.get_by_text("bm25", exact=True).first.wait_for()
            page.wait_for_timeout(2000)
            page.screenshot(path=str(shots / "files-group.png"))
            text = page.inner_text("body")
            for stage in STAGES:
                assert stage in text, f"{stage} not on the files group graph"

            page.goto(f"{base}/assets/files/bm25?view=partitions")
            page.get_by_text("sample-docs").first.wait_for()
            page.get_by_text("sample-docs", exact=True).first.click()  # the partition's detail
            page.wait_for_timeout(2000)
            page.screenshot(path=str(shots / "files-bm25-partitions.png"), full_page=True)
            text = page.inner_text("body")
            assert "bm25" in text and "sample-docs" in text
        finally:
            browser.close()
