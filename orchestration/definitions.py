"""Definitions loaded by ``workspace.yaml`` and by the CLI: the same code path for both."""

from __future__ import annotations

import dagster as dg

from ragbag import connectors
from ragbag.orchestration.chain import RagbagHome, connector_chain, freshness_for, job_name
from ragbag.orchestration.schedules import connector_schedule, cron_for, override_sensor
from ragbag.orchestration.sensors import change_sensor, reaper_sensor, sources_sensor


def build_definitions() -> dg.Definitions:
    assets, jobs, schedules = [], [], []
    for name in connectors.NAMES:
        module = connectors.get(name)
        # bm25's freshness follows the connector's refresh cron (per-source overrides aside).
        assets.extend(connector_chain(name, module, freshness=freshness_for(cron_for(module))))
        schedules.append(connector_schedule(name, module))
        jobs.append(
            dg.define_asset_job(
                job_name(name),
                selection=dg.AssetSelection.groups(name),  # partitioned by source, as its assets
                description=f"Build one {name} source: read, chunk, embed, index.",
            )
        )
    automation = dg.AutomationConditionSensorDefinition(
        "ragbag_automation",
        target=dg.AssetSelection.all(),
        default_status=dg.DefaultSensorStatus.RUNNING,
    )
    return dg.Definitions(
        assets=assets,
        jobs=jobs,
        schedules=schedules,
        sensors=[sources_sensor, change_sensor(jobs), override_sensor(jobs), reaper_sensor, automation],
        resources={"ragbag": RagbagHome()},
    )


defs = build_definitions()
