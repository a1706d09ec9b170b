"""Removing a source, also while a build of it runs.

``ragbag remove`` leaves no byte of the source (docs/reliability.md), so a build of it in flight
must not write one back. The writers' lock gives the order: a build step writes only while it
holds the lock, and looks its source up in the registry after taking it. ``remove`` purges and
unregisters under the same lock, so each step either wrote before (and that is purged) or finds
the source gone and fails having written nothing. What the run itself records (Dagster's events,
whose previews hold text) goes with its runs once it has ended: its next step fails at once, so
``remove`` waits for that, then deletes them, and the build reports the source as removed.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from ragbag.core import leases
from ragbag.core.home import Home, Source

# How long `remove` waits for a run of the source to end before deleting its runs anyway (a run
# queued on the pool behind other sources' builds ends when it gets there).
RUN_WAIT_S = 600.0
# A `dagster dev` run's process is known by its steps' leases, and between one step's end and
# the next one's start it holds none: this long without one, it is taken for dead.
BETWEEN_STEPS_S = 5.0


@dataclass
class Removal:
    runs: int  # Dagster runs deleted
    held: list[str] = field(default_factory=list)  # sources whose unfinished build pins old table versions
    still_running: list[str] = field(default_factory=list)  # runs of it that had not ended in RUN_WAIT_S


def remove(home: Home, name: str, waiting: Callable[[str], None] = lambda _: None) -> Removal:
    """Remove the source ``name`` and every byte of it. ``waiting`` hears why it waits (a build
    writing now, a run of the source still ending)."""
    from ragbag.apps.runner import forget_runs, sync_partitions

    src = home.source(name)
    with leases.exclusive(home.writer_lock, lambda: waiting("a build is writing; waiting for its step to end")):
        held: list[str] = []
        if not home.lance_is_local or home.lance_dir.exists():
            from ragbag.build.retention import purge
            from ragbag.index.store import Store

            held = purge(Store(home.lance_uri), home, src)
        home.remove_source(name)
    still = _wait_for_runs(home, src, waiting)
    sync_partitions(home, remove=[src])
    return Removal(forget_runs(home, src), held, still)


def _wait_for_runs(home: Home, src: Source, waiting: Callable[[str], None]) -> list[str]:
    """Wait until no run of the source is under way; the ids of those still under way after
    ``RUN_WAIT_S``. A run counts while its process lives: a CLI run's (its ``ragbag/pid``), or,
    for a run `dagster dev` started, a process holding one of its steps' leases, allowing for the
    moment between two steps when none does; a run whose process died never ends by itself."""
    import dagster as dg

    from ragbag.apps.runner import dagster_instance
    from ragbag.assets.pool import reap_dead_runs

    instance = dagster_instance(home)
    statuses = [
        dg.DagsterRunStatus.NOT_STARTED,
        dg.DagsterRunStatus.STARTING,
        dg.DagsterRunStatus.STARTED,
        dg.DagsterRunStatus.CANCELING,
    ]
    started = last_live = time.monotonic()
    said = False
    while True:
        reap_dead_runs(instance, home)  # a dead CLI build's run is failed: no longer under way
        runs = {
            r.run_id: r
            for tags in ({"dagster/partition": src.name}, {"ragbag/source": src.name})
            for r in instance.get_runs(filters=dg.RunsFilter(tags=tags, statuses=statuses))
        }
        live = sorted(i for i, r in runs.items() if _running(home, r))
        now = time.monotonic()
        if live:
            last_live = now
        if not runs or (not live and now - last_live > BETWEEN_STEPS_S) or now - started > RUN_WAIT_S:
            return live
        if not said:
            waiting(f"a build of {src.name} is under way; waiting for it to stop")
            said = True
        time.sleep(0.2)


def _running(home: Home, run) -> bool:
    who = run.tags.get("ragbag/pid")
    return leases.held_by(who) if who else leases.run_held(home.lease_dir, run.run_id)
