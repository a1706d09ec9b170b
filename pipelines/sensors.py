"""Keep each connector's partitions in step with sources.yaml, and build new sources."""


import dagster as dg

import connectors
from assets.chain import job_name, partitions_for
from assets.resources import RagbagHome


@dg.sensor(
    name="ragbag_sources",
    minimum_interval_seconds=30,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Adds/removes partitions as sources are registered in sources.yaml; builds new ones.",
)
def sources_sensor(context: dg.SensorEvaluationContext, ragbag: RagbagHome) -> dg.SensorResult:
    registered = ragbag.home().sources()
    requests, runs = [], []
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
