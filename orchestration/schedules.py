"""Refresh schedules: each connector's cron, and per-source overrides from sources.yaml.

A connector declares ``SCHEDULE`` (cron, default hourly); every source of that connector is
refreshed on it unless its ``options.schedule`` in ``sources.yaml`` says otherwise. Overrides are
read at every tick by a sensor, so editing ``sources.yaml`` needs no code-location reload.
"""

from datetime import UTC, datetime
from types import ModuleType

import dagster as dg

from ragbag.orchestration.chain import job_name
from ragbag.orchestration.dagster_internals import cron_string_iterator, is_valid_cron_string
from ragbag.orchestration.resources import RagbagHome
from ragbag.orchestration.unchanged import needing_runs

DEFAULT_CRON = "0 * * * *"


def valid_cron(cron: str) -> bool:
    """Whether Dagster's schedules accept ``cron``: the one judge of a refresh cron, for the CLI
    (``ragbag add --schedule``) and the schedule sensor alike."""
    return is_valid_cron_string(cron)


def cron_for(module: ModuleType) -> str:
    return getattr(module, "SCHEDULE", DEFAULT_CRON)


def connector_schedule(connector: str, module: ModuleType) -> dg.ScheduleDefinition:
    @dg.schedule(
        name=f"refresh_{connector}",
        cron_schedule=cron_for(module),
        job_name=job_name(connector),
        default_status=dg.DefaultScheduleStatus.RUNNING,
        execution_timezone="UTC",
        description=f"Refresh every {connector} source without its own schedule.",
    )
    def _refresh(context: dg.ScheduleEvaluationContext, ragbag: RagbagHome):
        names = sorted(
            n for n, s in ragbag.home().sources().items() if s.connector == connector and not s.options.get("schedule")
        )
        if not names:
            return dg.SkipReason(f"no {connector} sources on the default schedule")
        names = needing_runs(context.instance, ragbag.home(), names)
        if not names:
            return dg.SkipReason(f"every {connector} source is unchanged since its last build (recorded, no run)")
        tick = context.scheduled_execution_time.isoformat()
        return [dg.RunRequest(partition_key=n, run_key=f"{n}@{tick}") for n in names]

    return _refresh


def override_sensor(jobs: list) -> dg.SensorDefinition:
    loaded = {job.name for job in jobs}

    @dg.sensor(
        name="ragbag_source_schedules",
        jobs=jobs,
        minimum_interval_seconds=60,
        default_status=dg.DefaultSensorStatus.RUNNING,
        description="Refreshes sources that set options.schedule (cron) in sources.yaml.",
    )
    def _overrides(context: dg.SensorEvaluationContext, ragbag: RagbagHome):
        now = datetime.now(UTC).timestamp()
        since = float(context.cursor) if context.cursor else now
        runs = []
        for name, src in sorted(ragbag.home().sources().items()):
            cron = src.options.get("schedule")
            if not cron or job_name(src.connector) not in loaded:  # a connector loaded after a reload
                continue
            if not valid_cron(cron):
                context.log.warning(f"source {name!r}: invalid schedule {cron!r}, ignored")
                continue
            fire = due(cron, since, now)
            if fire is not None and needing_runs(context.instance, ragbag.home(), [name]):
                runs.append(
                    dg.RunRequest(
                        job_name=job_name(src.connector),
                        partition_key=name,
                        run_key=f"{name}@{fire.isoformat()}",
                    )
                )
        return dg.SensorResult(run_requests=runs, cursor=str(now))

    return _overrides


def due(cron: str, since: float, now: float) -> datetime | None:
    """The latest fire time of ``cron`` in (since, now], if any."""
    latest = None
    for fire in cron_string_iterator(since, cron, "UTC"):
        if fire.timestamp() > now:
            break
        if fire.timestamp() > since:
            latest = fire
    return latest
