"""`dagster dev` from the repo root shows the assets, one partition per source, and the CLI's runs."""

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
from conftest import cli, stop_group, write

from ragbag.assets.chain import STAGES

ROOT = Path(__file__).resolve().parent.parent
DAGSTER = str(Path(sys.executable).parent / "dagster")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _graphql(port: int, q: str) -> dict:
    req = urllib.request.Request(
        f"http://127.0.0.1:{port}/graphql",
        data=json.dumps({"query": q}).encode(),
        headers={"content-type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=30) as resp:
        return json.loads(resp.read())["data"]


@pytest.mark.slow
def test_dagster_dev_shows_assets_partitions_and_cli_runs(home, tmp_path):
    docs = write(tmp_path / "docs", {"a.md": "# Alpha\n\nAlpha notes.\n"})
    cli("add", "files", "notes", str(docs))
    cli("build")
    port = _free_port()
    env = {**os.environ, "RAGBAG_HOME": str(home.root), "DAGSTER_HOME": str(home.dagster_home)}
    proc = subprocess.Popen(
        [DAGSTER, "dev", "-h", "127.0.0.1", "-p", str(port)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.time() + 120
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/server_info", timeout=5)
                break
            except OSError:
                assert time.time() < deadline and proc.poll() is None, "dagster dev did not come up"
                time.sleep(1)
        data = _graphql(
            port,
            """{
          assetNodes { assetKey { path } partitionKeys dependencyKeys { path } }
          runsOrError { ... on Runs { results { jobName status tags { key value } } } }
          repositoriesOrError { ... on RepositoryConnection { nodes { sensors { name sensorState { status } } schedules { name scheduleState { status } } } } }
        }""",
        )
    finally:
        stop_group(proc)

    nodes = {"/".join(n["assetKey"]["path"]): n for n in data["assetNodes"]}
    for stage in STAGES:
        assert nodes[f"files/{stage}"]["partitionKeys"] == ["notes"]
        assert nodes[f"code/{stage}"]["partitionKeys"] == []
    assert nodes["files/bm25"]["dependencyKeys"] == [{"path": ["files", "graph"]}]
    assert nodes["files/graph"]["dependencyKeys"] == [{"path": ["files", "embeddings"]}]
    runs = data["runsOrError"]["results"]
    assert any(
        r["jobName"] == "build_files"
        and r["status"] == "SUCCESS"
        and {"key": "ragbag/trigger", "value": "cli"} in r["tags"]
        for r in runs
    )
    repo = data["repositoriesOrError"]["nodes"][0]
    sensors = {s["name"]: s["sensorState"]["status"] for s in repo["sensors"]}
    assert sensors == {
        "ragbag_sources": "RUNNING",
        "ragbag_automation": "RUNNING",
        "ragbag_source_schedules": "RUNNING",
        "ragbag_file_changes": "RUNNING",
        "ragbag_reaper": "RUNNING",
    }
    schedules = {s["name"]: s["scheduleState"]["status"] for s in repo["schedules"]}
    assert schedules["refresh_files"] == schedules["refresh_code"] == "RUNNING"
