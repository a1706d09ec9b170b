"""Refresh schedules per connector, and per-source cron overrides from sources.yaml."""

from __future__ import annotations

from datetime import UTC, datetime

import dagster as dg
from conftest import cli

from ragbag.orchestration.chain import RagbagHome
from ragbag.orchestration.definitions import build_definitions
from ragbag.orchestration.schedules import due

defs = build_definitions()  # every connector's, whatever the home holds
KNOWN = ("files", "code")


def _resources(home):
    return {"ragbag": RagbagHome(root=str(home.root))}


def _partitions(instance, connector, *names):
    instance.add_dynamic_partitions(
        f"{connector}_sources", [n for n in names if not instance.has_dynamic_partition(f"{connector}_sources", n)]
    )


def test_connector_schedule_refreshes_sources_without_override(home, tmp_path, instance):
    home.add_source("a", "files", str(tmp_path), known=KNOWN)
    home.add_source("b", "files", str(tmp_path), known=KNOWN, options={"schedule": "0 7 * * *"})
    home.add_source("c", "code", str(tmp_path), known=KNOWN)
    _partitions(instance, "files", "a", "b")
    schedule = defs.resolve_schedule_def("refresh_files")
    assert schedule.default_status == dg.DefaultScheduleStatus.RUNNING
    when = datetime(2026, 1, 5, 10, 0, tzinfo=UTC)
    ctx = dg.build_schedule_context(
        instance=instance,
        scheduled_execution_time=when,
        resources=_resources(home),
        repository_def=defs.get_repository_def(),
    )
    requests = schedule.evaluate_tick(ctx).run_requests
    assert [r.partition_key for r in requests] == ["a"]
    assert requests[0].run_key == "a@2026-01-05T10:00:00+00:00"


def test_override_sensor_fires_on_the_source_cron(home, tmp_path, instance):
    home.add_source("b", "files", str(tmp_path), known=KNOWN, options={"schedule": "*/10 * * * *"})
    home.add_source("bad", "files", str(tmp_path), known=KNOWN, options={"schedule": "whenever"})
    _partitions(instance, "files", "b", "bad")
    sensor = defs.resolve_sensor_def("ragbag_source_schedules")
    an_hour_ago = str(datetime.now(UTC).timestamp() - 3600)
    ctx = dg.build_sensor_context(
        instance=instance, cursor=an_hour_ago, resources=_resources(home), repository_def=defs.get_repository_def()
    )
    # The daemon evaluates sensors inside a partition-loading context; do the same here.
    from dagster._core.definitions.partitions.context import partition_loading_context

    with partition_loading_context(dynamic_partitions_store=instance):
        result = sensor.evaluate_tick(ctx)
    assert [(r.partition_key, r.job_name) for r in result.run_requests] == [("b", "build_files")]
    assert float(result.cursor) > float(an_hour_ago)


def test_due_finds_the_latest_fire_time_in_the_window():
    t0 = datetime(2026, 1, 1, 6, 59, tzinfo=UTC).timestamp()
    assert due("0 7 * * *", t0, t0 + 120) == datetime(2026, 1, 1, 7, 0, tzinfo=UTC)
    assert due("0 7 * * *", t0 + 120, t0 + 600) is None


def test_cli_add_takes_a_schedule_and_rejects_a_bad_one(home, tmp_path):
    cli("add", "files", "notes", str(tmp_path), "--schedule", "30 6 * * 1")
    assert home.source("notes").options == {"schedule": "30 6 * * 1"}
    proc = cli("add", "files", "other", str(tmp_path), "--schedule", "every day", check=False)
    assert proc.returncode == 2 and "not a valid cron" in proc.stderr


def test_change_sensor_refreshes_only_the_changed_source(home, tmp_path, instance):
    import json
    import os

    from dagster._core.definitions.partitions.context import partition_loading_context

    a = tmp_path / "a"
    b = tmp_path / "b"
    for d in (a, b):
        d.mkdir()
        (d / "x.md").write_text("# x\n")
    home.add_source("a", "files", str(a), known=KNOWN)
    home.add_source("b", "files", str(b), known=KNOWN)
    _partitions(instance, "files", "a", "b")
    sensor = defs.resolve_sensor_def("ragbag_file_changes")

    def tick(cursor):
        ctx = dg.build_sensor_context(
            instance=instance, cursor=cursor, resources=_resources(home), repository_def=defs.get_repository_def()
        )
        with partition_loading_context(dynamic_partitions_store=instance):
            return sensor.evaluate_tick(ctx)

    first = tick(None)
    assert first.run_requests == [] and set(json.loads(first.cursor)) == {"a", "b"}
    assert tick(first.cursor).run_requests == []
    (b / "y.md").write_text("# y\n")
    os.utime(a / "x.md")  # same size; only the mtime moves
    third = tick(first.cursor)
    assert sorted(r.partition_key for r in third.run_requests) == ["a", "b"]
    (b / "y.md").write_text("# y, edited\n")
    assert [r.partition_key for r in tick(third.cursor).run_requests] == ["b"]


def test_sources_sensor_registers_every_new_source_and_builds_those_its_definitions_load(home, tmp_path):
    """A files-only code location (the home had only files sources when it loaded): a new code
    source gets its partition but no run until a reload brings its job; a new files source both."""
    from dagster._core.definitions.partitions.context import partition_loading_context

    home.add_source("sensed-notes", "files", str(tmp_path), known=KNOWN)
    home.add_source("sensed-code", "code", str(tmp_path), known=KNOWN)
    files_only = build_definitions(["files"])
    # The home's own instance, as the daemon's: it has a ref, which resolving a run request for a
    # partition this same tick adds needs.
    with dg.DagsterInstance.from_config(str(home.dagster_home)) as instance:
        ctx = dg.build_sensor_context(
            instance=instance,
            instance_ref=instance.get_ref(),
            resources=_resources(home),
            repository_def=files_only.get_repository_def(),
        )
        with partition_loading_context(dynamic_partitions_store=instance):  # as the daemon evaluates it
            result = files_only.resolve_sensor_def("ragbag_sources").evaluate_tick(ctx)
    added = {r.partitions_def_name: list(r.partition_keys) for r in result.dynamic_partitions_requests}
    assert added["files_sources"] == ["sensed-notes"] and added["code_sources"] == ["sensed-code"]
    assert [(r.partition_key, r.job_name) for r in result.run_requests] == [("sensed-notes", "build_files")]
