"""Sensors: partitions in step with sources.yaml (building new sources), refreshes of
sources whose files changed, and the reaper of dead pool-slot holders."""

import json

import dagster as dg

from ragbag import connectors
from ragbag.orchestration.chain import job_name, partitions_for
from ragbag.orchestration.pool import reap_dead_runs
from ragbag.orchestration.resources import RagbagHome
from ragbag.pipeline.changes import tree_fingerprint


@dg.sensor(
    name="ragbag_sources",
    minimum_interval_seconds=30,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Adds/removes partitions as sources are registered in sources.yaml; builds new ones.",
)
def sources_sensor(context: dg.SensorEvaluationContext, ragbag: RagbagHome) -> dg.SensorResult:
    registered = ragbag.home().sources()
    requests: list[dg.AddDynamicPartitionsRequest | dg.DeleteDynamicPartitionsRequest] = []
    runs: list[dg.RunRequest] = []
    for connector in connectors.NAMES:
        pdef = partitions_for(connector)
        have = set(context.instance.get_dynamic_partitions(pdef.name))
        want = {n for n, s in registered.items() if s.connector == connector}
        new, gone = sorted(want - have), sorted(have - want)
        if new:
            requests.append(pdef.build_add_request(new))
            runs.extend(dg.RunRequest(partition_key=n, job_name=job_name(connector)) for n in new)
        if gone:
            requests.append(pdef.build_delete_request(gone))
    return dg.SensorResult(run_requests=runs, dynamic_partitions_requests=requests)


def change_sensor(jobs: list) -> dg.SensorDefinition:
    """Refresh a source when the files under its path change (sizes, mtimes, names)."""

    @dg.sensor(
        name="ragbag_file_changes",
        jobs=jobs,
        minimum_interval_seconds=60,
        default_status=dg.DefaultSensorStatus.RUNNING,
        description="Requests a refresh of just the partition whose files changed on disk.",
    )
    def _changes(context: dg.SensorEvaluationContext, ragbag: RagbagHome) -> dg.SensorResult:
        seen = json.loads(context.cursor) if context.cursor else {}
        now, runs = {}, []
        for name, src in sorted(ragbag.home().sources().items()):
            if not src.path:
                continue  # default places: the connector's schedule refreshes it
            fp = tree_fingerprint(src.path)
            if fp is None:
                continue
            now[name] = fp
            if name in seen and seen[name] != fp:
                runs.append(dg.RunRequest(job_name=job_name(src.connector), partition_key=name, run_key=f"{name}@{fp}"))
        return dg.SensorResult(run_requests=runs, cursor=json.dumps(now))

    return _changes


@dg.sensor(
    name="ragbag_reaper",
    minimum_interval_seconds=15,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Frees the LanceDB pool slot of a build step whose process died (a killed build), "
    "so the runs waiting on the pool go on.",
)
def reaper_sensor(context: dg.SensorEvaluationContext, ragbag: RagbagHome) -> dg.SkipReason:
    freed = sorted(set(reap_dead_runs(context.instance, ragbag.home())))
    return dg.SkipReason(f"freed the slots of dead runs {', '.join(freed)}" if freed else "no dead holder")
