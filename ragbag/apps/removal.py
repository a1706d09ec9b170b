"""Removing a source, also while a build of it runs; and purging what new exclusion rules name.

``ragbag remove`` leaves no byte of the source (docs/reliability.md), so a build of it in flight
must not write one back. The writers' lock gives the order: a build step writes only while it
holds the lock, and looks its source up in the registry after taking it. ``remove`` purges and
unregisters under the same lock, so each step either wrote before (and that is purged) or finds
the source gone and fails having written nothing. What the run itself records (Dagster's events,
whose previews hold text) goes with its runs once it has ended: its next step fails at once, so
``remove`` waits for that, then deletes them, and the build reports the source as removed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ragbag.core import leases
from ragbag.core.home import Home

# How long `remove` waits for a run of the source to end before deleting its runs anyway (a run
# queued on the pool behind other sources' builds ends when it gets there).
RUN_WAIT_S = 600.0


@dataclass
class Removal:
    runs: int  # Dagster runs deleted
    held: list[str] = field(default_factory=list)  # sources whose unfinished build pins old table versions
    still_running: list[str] = field(default_factory=list)  # runs of it that had not ended in RUN_WAIT_S


def remove(home: Home, name: str, waiting: Callable[[str], None] = lambda _: None) -> Removal:
    """Remove the source ``name`` and every byte of it. ``waiting`` hears why it waits (a build
    writing now, a run of the source still ending)."""
    from ragbag.orchestration.chain import sync_partitions
    from ragbag.orchestration.runner import forget_runs, wait_for_runs

    src = home.source(name)
    with leases.exclusive(home.writer_lock, lambda: waiting("a build is writing; waiting for its step to end")):
        held: list[str] = []
        if not home.lance_is_local or home.lance_dir.exists():
            from ragbag.index.store import Store
            from ragbag.pipeline.retention import purge

            held = purge(Store(home.lance_uri), home, src)
        home.remove_source(name)
    still = wait_for_runs(home, src, RUN_WAIT_S, waiting)
    sync_partitions(home, remove=[src])
    return Removal(forget_runs(home, src), held, still)


def purge_excluded(
    home: Home, name: str, keep_runs: list[str], waiting: Callable[[str], None] = lambda _: None
) -> Removal:
    """After a build of ``name`` under new exclusion rules: every byte of what they now keep out
    goes, as ``remove`` does for a whole source (``pipeline.retention.purge_excluded``), and its
    earlier Dagster runs, whose previews may quote it (all but ``keep_runs``: the build just done)."""
    from ragbag.orchestration.runner import forget_runs, wait_for_runs

    src = home.source(name)
    with leases.exclusive(home.writer_lock, lambda: waiting("a build is writing; waiting for its step to end")):
        held: list[str] = []
        if not home.lance_is_local or home.lance_dir.exists():
            from ragbag.index.store import Store
            from ragbag.pipeline.retention import purge_excluded as purge_rows

            held = purge_rows(Store(home.lance_uri), home, src)
    still = wait_for_runs(home, src, RUN_WAIT_S, waiting)
    return Removal(forget_runs(home, src, keep=keep_runs), held, still)
