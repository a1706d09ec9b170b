"""Sensors: partitions in step with sources.yaml (building new sources), refreshes of
sources whose files changed, and the reaper of dead pool-slot holders."""

import json

import dagster as dg

from ragbag import connectors
from ragbag.orchestration.chain import job_name, partitions_for
from ragbag.orchestration.pool import reap_dead_runs
from ragbag.orchestration.resources import RagbagHome
from ragbag.pipeline.changes import tree_fingerprint


def sources_sensor(jobs: list) -> dg.SensorDefinition:
    """Partitions in step with sources.yaml, and a first build for each new source. A source of a
    connector these definitions leave out (added while `dagster dev` runs) gets its partition and
    waits for the code location's reload, which brings its connector's group and job."""
    loaded = {job.name for job in jobs}

    @dg.sensor(
        name="ragbag_sources",
        jobs=jobs or None,  # the jobs its first builds run; none in a home without sources
        minimum_interval_seconds=30,
        default_status=dg.DefaultSensorStatus.RUNNING,
        description="Adds/removes partitions as sources are registered in sources.yaml; builds new ones.",
    )
    def _sources(context: dg.SensorEvaluationContext, ragbag: RagbagHome) -> dg.SensorResult:
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
                if job_name(connector) in loaded:
                    runs.extend(dg.RunRequest(partition_key=n, job_name=job_name(connector)) for n in new)
            if gone:
                requests.append(pdef.build_delete_request(gone))
            if want and job_name(connector) not in loaded:
                context.log.warning(
                    f"{connector} sources ({', '.join(sorted(want))}) were added after this code location loaded: "
                    "reload it (Deployment → Reload) to see and build them"
                )
        return dg.SensorResult(run_requests=runs, dynamic_partitions_requests=requests)

    return _sources


def change_sensor(jobs: list) -> dg.SensorDefinition:
    """Refresh a source when the files under its path change (sizes, mtimes, names)."""
    loaded = {job.name for job in jobs}

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
            if not src.path or job_name(src.connector) not in loaded:
                continue  # default places (the connector's schedule refreshes it), or not loaded yet
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
