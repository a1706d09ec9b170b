"""Definitions loaded by ``workspace.yaml`` and by the CLI: the same code path for both."""

from __future__ import annotations

import dagster as dg

import connectors
from assets.chain import RagbagHome, connector_chain, job_name, partitions_for
from pipelines.schedules import connector_schedule, override_sensor
from pipelines.sensors import change_sensor, sources_sensor


def build_definitions() -> dg.Definitions:
    assets, jobs, schedules = [], [], []
    for name in connectors.NAMES:
        module = connectors.get(name)
        assets.extend(connector_chain(name, module))
        schedules.append(connector_schedule(name, module))
        jobs.append(dg.define_asset_job(
            job_name(name), selection=dg.AssetSelection.groups(name), partitions_def=partitions_for(name),
            description=f"Build one {name} source: read, chunk, embed, index.",
        ))
    automation = dg.AutomationConditionSensorDefinition(
        "ragbag_automation", target=dg.AssetSelection.all(), default_status=dg.DefaultSensorStatus.RUNNING,
    )
    return dg.Definitions(
        assets=assets, jobs=jobs, schedules=schedules,
        sensors=[sources_sensor, change_sensor(jobs), override_sensor(jobs), automation],
        resources={"ragbag": RagbagHome()},
    )


defs = build_definitions()
