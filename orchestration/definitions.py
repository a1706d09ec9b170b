"""The code location's definitions: what `dagster dev` (``workspace.yaml``), the Dagster CLI
(``-m ragbag.orchestration.definitions``) and ragbag's runner load, from one function.

``defs`` (built when Dagster loads the code location, not at import) is the home's
($RAGBAG_HOME): a group, job and schedule for each connector the home has a source of and for no
other (a local user's UI shows their data, not a group for every connector ragbag knows), and
each source registered as its connector's partition as it loads, so a source `ragbag add` wrote
into ``sources.yaml`` is a partition for the UI and for `dagster asset materialize --partition
NAME` without `add` opening Dagster's storage. A source of a new connector added while `dagster
dev` runs gets its partition from the sources sensor, and its group when the code location is
reloaded (the sensor's log says so). The runner builds one connector's definitions for each run
(``definitions_for``), whatever the home holds.

The runs the daemon, the UI and `dagster asset materialize` launch execute their steps in the
run's own process (``IN_PROCESS_FIRST``), as ``ragbag build`` does: a source's stages run one
after another and pass nothing in memory, so Dagster's default of a process per step only starts
a new interpreter, importing Dagster, LanceDB and the model, for each stage of every refresh. A
run's config may still ask for one process per step (``execution: config: multiprocess:``).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable

import dagster as dg

from ragbag import connectors
from ragbag.core.home import Home
from ragbag.orchestration.chain import RagbagHome, connector_chain, freshness_for, job_name, sync_partitions
from ragbag.orchestration.schedules import connector_schedule, cron_for, override_sensor
from ragbag.orchestration.sensors import change_sensor, reaper_sensor, sources_sensor

# Dagster's default executor (the same two modes, the same config) with in-process as its default.
IN_PROCESS_FIRST = dg.multi_or_in_process_executor.configured(
    lambda config: config,
    config_schema=dg.Field(dg.multi_or_in_process_executor.config_schema.config_type, default_value={"in_process": {}}),
    name="in_process_first",
)


def build_definitions(
    names: Iterable[str] | None = None, executor: dg.ExecutorDefinition = IN_PROCESS_FIRST
) -> dg.Definitions:
    """The assets, jobs, schedules and sensors of the connectors ``names`` (every one when None),
    their runs executed by ``executor``."""
    wanted = set(connectors.NAMES if names is None else names)
    assets, jobs, schedules = [], [], []
    for name in (n for n in connectors.NAMES if n in wanted):
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
        sensors=[sources_sensor(jobs), change_sensor(jobs), override_sensor(jobs), reaper_sensor, automation],
        resources={"ragbag": RagbagHome()},
        executor=executor,
    )


@functools.cache
def definitions_for(connector: str) -> dg.Definitions:
    """One connector's definitions, for the runner's runs of its sources."""
    return build_definitions([connector])


def home_definitions(home: Home, executor: dg.ExecutorDefinition = IN_PROCESS_FIRST) -> dg.Definitions:
    """The definitions of the connectors ``home`` has sources of, its sources registered as
    partitions in the instance of ``$DAGSTER_HOME`` (without one, `dagster dev` runs on a
    throwaway instance, where the sources sensor registers them)."""
    sources = list(home.sources().values())
    if sources and os.environ.get("DAGSTER_HOME"):
        sync_partitions(home, add=sources, instance=dg.DagsterInstance.get())
    return build_definitions({src.connector for src in sources}, executor)


@dg.definitions
def defs() -> dg.Definitions:
    """The home's code location, built when Dagster loads it, not when the module is imported:
    importing this module reads no home and opens no Dagster storage."""
    return home_definitions(Home())
