"""The LanceDB writers' pool: one Dagster concurrency pool that every build step writing the
shared tables runs in, its slots, and freeing what dead processes hold.

Dagster hands a pool slot to a step and takes it back when the step ends; a step whose process
is killed never ends, so its slot stays taken. The steps record who holds each slot
(``ragbag.core.leases``), and the reaper (the CLI's builds in the background, the
``ragbag_reaper`` sensor under ``dagster dev``) frees the slots of holders that are gone.
"""

from __future__ import annotations

import dagster as dg

from ragbag.core import leases
from ragbag.core.home import Home

# Every stage writes the LanceDB tables all sources share (documents, chunks, embeddings,
# embedding_cache, publication tags). One pool for all of them; $RAGBAG_HOME/dagster/dagster.yaml
# sets its limit to 1, so two runs of different sources never write at the same time.
POOL = "ragbag_lance"


def ensure_pool(instance, home: Home) -> None:
    """Create the LanceDB writers' pool slots now, from `default_limit`, if none exist yet.

    Dagster allocates a pool's slots lazily, at the first claim; two `ragbag build` processes
    claiming first at the same moment on SQLite storage once both ran a step in the pool (their
    `documents` steps overlapped). Every build, and the code location as it loads, create the
    slots up front, one process at a time (a lock in the home), so concurrent builds find them
    there and never make them twice.
    """
    with leases.exclusive(home.state_dir / "pool.lock"):
        storage = instance.event_log_storage
        if storage.get_concurrency_info(POOL).slot_count == 0:
            storage.initialize_concurrency_limit_to_default(POOL)


def reap_dead_runs(instance, home: Home) -> list[str]:
    """Free what dead processes hold: the pool slots of steps whose process is gone (a killed
    `ragbag build`, a killed run worker), so a build waiting on the pool goes on; and fail the
    CLI runs whose process is gone, which would otherwise show as running forever."""
    reaped = []
    alive_states = [dg.DagsterRunStatus.STARTED, dg.DagsterRunStatus.STARTING, dg.DagsterRunStatus.NOT_STARTED]
    for run in instance.get_runs(filters=dg.RunsFilter(statuses=alive_states, tags={"ragbag/trigger": "cli"})):
        if not leases.held_by(run.tags.get("ragbag/pid", "0")):
            instance.report_run_failed(
                run, f"the `ragbag build` process {run.tags.get('ragbag/pid')} is gone (killed?)"
            )
            instance.event_log_storage.free_concurrency_slots_for_run(run.run_id)
            reaped.append(run.run_id)
    folder = home.lease_dir
    storage = instance.event_log_storage
    for slot in storage.get_concurrency_info(POOL).claimed_slots:
        who = leases.holder(folder, slot.run_id, slot.step_key)
        if who is not None and not leases.held_by(who):
            storage.free_concurrency_slot_for_step(slot.run_id, slot.step_key)
            reaped.append(slot.run_id)
    leases.release_dead(folder)
    return reaped
