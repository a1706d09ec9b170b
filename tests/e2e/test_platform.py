"""Running ragbag as a data platform: privacy of the Dagster home, the LanceDB pool, freshness,
backfills over a connector's sources, two sources built at once, the multiprocess executor
(Postgres storage and the Dask executor: tests/e2e/test_scale_out.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import dagster as dg
import pytest
import yaml
from conftest import ROOT, TWO_SOURCES_QUERIES, assert_searchable, cli, platform_env, two_sources, write

from ragbag.pipeline.stages import STAGES, TABLE

BIN = Path(sys.executable).parent


# -- privacy and instance config ----------------------------------------------------------------


def test_dagster_yaml_disables_telemetry_and_limits_the_lance_pool(home):
    path = home.dagster_home / "dagster.yaml"
    config = yaml.safe_load(path.read_text())
    assert config["telemetry"]["enabled"] is False
    assert config["nux"]["enabled"] is False  # no "join the community" dialog on the UI's first visit
    assert config["concurrency"]["pools"]["default_limit"] == 1
    assert config["compute_logs"]["class"] == "NoOpComputeLogManager"  # ragbag's steps print nothing
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    instance = dg.DagsterInstance.from_config(str(home.dagster_home))
    try:
        assert instance.telemetry_enabled is False
        assert instance.nux_enabled is False
        assert instance.get_concurrency_config().pool_config.default_pool_limit == 1
        assert type(instance.compute_log_manager).__name__ == "NoOpComputeLogManager"
    finally:
        instance.dispose()


def test_the_code_location_shows_the_homes_connectors_and_registers_its_sources(home, tmp_path):
    """`ragbag add` writes sources.yaml and never opens Dagster (no partition yet); loading the
    code location, as `dagster dev` or the Dagster CLI do, gives a group and job for each
    connector with a source and none for the others, and registers every source as a partition."""
    cli("add", "files", "notes", str(write(tmp_path / "notes", {"a.md": "# A\n\nAlpha.\n"})))
    cli("add", "code", "snippets", str(write(tmp_path / "code", {"a.py": "def alpha():\n    return 1\n"})))
    with dg.DagsterInstance.from_config(str(home.dagster_home)) as instance:
        assert instance.get_dynamic_partitions("files_sources") == []
    code = (
        "import json\n"
        "from ragbag.orchestration.definitions import defs\n"
        "repo = defs().get_repository_def()\n"
        "print(json.dumps({'groups': sorted({k.path[0] for k in repo.asset_graph.get_all_asset_keys()}),"
        " 'jobs': sorted(j.name for j in repo.get_all_jobs() if not j.name.startswith('__')),"
        " 'schedules': sorted(s.name for s in repo.schedule_defs)}))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=platform_env(home), cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr[-3000:]
    shown = json.loads(out.stdout.strip().splitlines()[-1])
    assert shown == {
        "groups": ["code", "files"],
        "jobs": ["build_code", "build_files"],
        "schedules": ["refresh_code", "refresh_files"],
    }
    with dg.DagsterInstance.from_config(str(home.dagster_home)) as instance:
        assert instance.get_dynamic_partitions("files_sources") == ["notes"]
        assert instance.get_dynamic_partitions("code_sources") == ["snippets"]


def test_make_ui_binds_loopback_only():
    out = subprocess.run(["make", "-n", "ui"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    line = next(ln for ln in out.stdout.splitlines() if "dg dev" in ln)
    assert "-h 127.0.0.1" in line and "0.0.0.0" not in line


# -- definitions --------------------------------------------------------------------------------


def test_every_stage_is_in_the_lance_pool_with_a_single_run_backfill_policy_and_bm25_has_freshness():
    from ragbag import connectors
    from ragbag.orchestration.chain import POOL
    from ragbag.orchestration.definitions import build_definitions
    from ragbag.orchestration.schedules import cron_for

    defs = build_definitions()

    for name in connectors.NAMES:
        for stage in STAGES:
            a = defs.resolve_assets_def(dg.AssetKey([name, stage]))
            assert a.backfill_policy == dg.BackfillPolicy.single_run()
            assert a.op.pool == POOL
            policy = a.specs_by_key[a.key].freshness_policy
            if stage != "bm25":
                assert policy is None
        policy = (
            defs.resolve_assets_def(dg.AssetKey([name, "bm25"]))
            .specs_by_key[dg.AssetKey([name, "bm25"])]
            .freshness_policy
        )
        assert isinstance(policy, dg.FreshnessPolicy)
    mail = defs.resolve_assets_def(dg.AssetKey(["mail", "bm25"])).specs_by_key[dg.AssetKey(["mail", "bm25"])]
    assert cron_for(connectors.get("mail")) == "*/30 * * * *"
    # Warn after one missed half-hourly refresh (plus grace for the run), fail after two.
    assert mail.freshness_policy.warn_window.to_timedelta() == timedelta(minutes=45)
    assert mail.freshness_policy.fail_window.to_timedelta() == timedelta(minutes=75)
    daily = defs.resolve_assets_def(dg.AssetKey(["chatgpt", "bm25"])).specs_by_key[dg.AssetKey(["chatgpt", "bm25"])]
    assert daily.freshness_policy.fail_window.to_timedelta() == timedelta(days=2, hours=1)


def _tool(home, tool: str, *args: str) -> str:
    """A Dagster command-line tool of the venv, run on this test's home from the checkout: its
    output (stdout and stderr), once it exited 0."""
    proc = subprocess.run(
        [str(BIN / tool), *args], cwd=ROOT, env=platform_env(home), capture_output=True, text=True, timeout=300
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-6000:]
    return out


def test_dagster_validates_the_definitions_as_the_workspace_loads_them(home):
    """`dagster definitions validate` on the workspace `dagster dev` loads (its code location name
    included): what Dagster's own tooling checks before a deploy."""
    out = _tool(home, "dagster", "definitions", "validate", "-w", str(ROOT / "workspace.yaml"))
    assert "Validation successful for code location pipelines.definitions" in out


# -- backfills ----------------------------------------------------------------------------------


@pytest.mark.slow(seconds=60)
def test_backfill_rebuilds_a_connectors_sources_in_one_run_from_the_cli(home, tmp_path):
    """`dagster asset materialize --select group:files --partition-range a...b`: one run, every
    source rebuilt in the run's own process, per-partition materialisations and passing checks
    recorded in the home."""
    two_sources(tmp_path)
    proc = subprocess.run(
        [
            str(BIN / "dagster"),
            "asset",
            "materialize",
            "-m",
            "ragbag.orchestration.definitions",
            "--select",
            "group:files",
            "--partition-range",
            "a...b",
        ],
        cwd=ROOT,
        env=platform_env(home),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    instance = dg.DagsterInstance.from_config(str(home.dagster_home))
    try:
        runs = instance.get_runs()
        assert len(runs) == 1 and runs[0].status == dg.DagsterRunStatus.SUCCESS
        assert runs[0].tags["dagster/asset_partition_range_start"] == "a"
        assert runs[0].tags["dagster/asset_partition_range_end"] == "b"
        starts = [
            e.dagster_event.pid
            for e in instance.all_logs(runs[0].run_id)
            if e.dagster_event and e.dagster_event.event_type_value == "STEP_START"
        ]
        assert len(starts) == len(STAGES) and len(set(starts)) == 1  # every step in the run's process
        for stage in STAGES:
            assert instance.get_materialized_partitions(dg.AssetKey(["files", stage])) == {"a", "b"}
        checks = [
            e
            for e in instance.all_logs(runs[0].run_id)
            if e.dagster_event and e.dagster_event.event_type_value == "ASSET_CHECK_EVALUATION"
        ]
        assert len(checks) == sum(len(stage.checks) for stage in TABLE) == 7 and all(
            e.dagster_event.event_specific_data.passed for e in checks
        )
    finally:
        instance.dispose()
    assert_searchable(home, TWO_SOURCES_QUERIES)


@pytest.mark.slow
def test_two_sources_of_one_connector_build_at_once_into_one_home(home, tmp_path):
    """Two `ragbag build` processes, different sources, same LanceDB tables: both complete and are
    searchable, and the pool never let two steps write at the same time."""
    two_sources(tmp_path)  # `ragbag add` opens no Dagster storage: the two builds make the pool's slot
    procs = {
        name: subprocess.Popen(
            [str(BIN / "ragbag"), "build", name, "--json"],
            env=platform_env(home),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("a", "b")
    }
    reports = {}
    for name, p in procs.items():
        out, err = p.communicate(timeout=600)
        assert p.returncode == 0, err[-3000:]
        reports[name] = json.loads(out)[0]
    for r in reports.values():
        assert r["status"] == "success", r
        assert r["documents"] == 2 and r["chunks"] >= 2 and r["chunks_embedded"] == r["chunks"], r
    assert_searchable(home, TWO_SOURCES_QUERIES)

    instance = dg.DagsterInstance.from_config(str(home.dagster_home))
    try:
        # Made once, by whichever build came first (ensure_pool's lock): one writer's slot, not two.
        assert instance.event_log_storage.get_concurrency_info("ragbag_lance").slot_count == 1
        # Each step writes only while it holds the writers' lock: the span its materialisation
        # records (``writers_lock``, taken inside the lock) never overlaps another run's.
        # Dagster's STEP_START/STEP_SUCCESS spans may: its SQLite slot claim can race.
        spans = []
        for run in instance.get_runs():
            for e in instance.all_logs(run.run_id, of_type=dg.DagsterEventType.ASSET_MATERIALIZATION):
                lock = e.dagster_event.event_specific_data.materialization.metadata["writers_lock"].value
                spans.append((lock["from"], lock["to"], run.run_id, e.step_key))
        assert len(spans) == 2 * len(STAGES)
        spans.sort()
        for (_s1, e1, r1, k1), (s2, _e2, r2, k2) in zip(spans, spans[1:]):
            assert e1 <= s2, f"{k1} ({r1[:8]}) overlapped {k2} ({r2[:8]}) writing the shared tables"
        info = instance.event_log_storage.get_concurrency_info("ragbag_lance")
        assert info.slot_count == 1 and not info.claimed_slots
    finally:
        instance.dispose()


# -- beyond one machine --------------------------------------------------------------------------


@pytest.mark.slow
def test_a_source_builds_with_the_multiprocess_executor(home, tmp_path):
    """Each step in its own process (what the k8s/celery/docker executors do, one step per pod or
    worker): the assets share no in-process state between stages."""
    two_sources(tmp_path)
    config = tmp_path / "run.yaml"
    config.write_text(yaml.safe_dump({"execution": {"config": {"multiprocess": {"max_concurrent": 2}}}}))
    proc = subprocess.run(
        [
            str(BIN / "dagster"),
            "job",
            "execute",
            "-m",
            "ragbag.orchestration.definitions",
            "-j",
            "build_files",
            "--tags",
            json.dumps({"dagster/partition": "a"}),
            "-c",
            str(config),
        ],
        cwd=ROOT,
        env=platform_env(home),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    instance = dg.DagsterInstance.from_config(str(home.dagster_home))
    try:
        (run,) = instance.get_runs()
        assert run.status == dg.DagsterRunStatus.SUCCESS
        pids = {
            e.step_key: e.dagster_event.pid
            for e in instance.all_logs(run.run_id)
            if e.dagster_event and e.dagster_event.event_type_value == "STEP_START"
        }
        assert len(pids) == len(set(pids.values())) == len(STAGES), pids  # one process per step
    finally:
        instance.dispose()
    assert_searchable(home, {"a": TWO_SOURCES_QUERIES["a"]})


def test_dg_checks_the_definitions_of_the_project(home):
    """`dg check defs`, the dg CLI's check of a project (``[tool.dg]`` in pyproject.toml): the
    code location loads under its name. The YAML half of the check is for component folders,
    which ragbag has none of (its assets come from the stage table), so it is skipped."""
    assert "All definitions loaded successfully." in _tool(home, "dg", "check", "defs", "--no-check-yaml")
