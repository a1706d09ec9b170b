"""Processes opening a new home's Dagster instance at the same moment (two first `ragbag build`s,
a build and `dagster dev`) leave an instance that opens: the first open creates the SQLite
storages, and two processes creating them at once each stamp the schema's version, after which
every open fails ("more than one head present"). Without the home's lock around the first open,
four processes at once broke the instance in 3 of 5 tries."""

from __future__ import annotations

import multiprocessing

import dagster as dg

from ragbag.core.home import Home

OPENERS = 4


def _open(root: str, barrier) -> None:
    from ragbag.orchestration.instance import dagster_instance

    barrier.wait()
    dagster_instance(Home(root)).dispose()


def test_processes_opening_a_new_homes_instance_at_once_leave_it_openable(tmp_path):
    root = tmp_path / "home"
    spawn = multiprocessing.get_context("spawn")  # a new interpreter each, as `ragbag build` is
    barrier = spawn.Barrier(OPENERS)
    procs = [spawn.Process(target=_open, args=(str(root), barrier)) for _ in range(OPENERS)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=300)
    assert [p.exitcode for p in procs] == [0] * OPENERS
    with dg.DagsterInstance.from_config(str(Home(root).dagster_home)) as instance:
        assert instance.get_runs() == []
