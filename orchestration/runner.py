"""Run builds through Dagster from the CLI, the MCP server and the search page, so every build
is a run the UI shows.

The CLI and ``dagster dev`` share ``$RAGBAG_HOME/dagster`` (``instance``). Runs execute in this
process; stages report progress to ``ragbag.core.progress``, which this module turns into
progress bars. Also what else touches runs: a source's partitions, waiting for its runs to end
and deleting them when it is removed.
"""

from __future__ import annotations

import contextlib
import io
import shutil
import sys
import time
import uuid
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager, nullcontext
from typing import Any

from ragbag.core import leases, progress
from ragbag.core.errors import StorageFault
from ragbag.core.home import Home, Source
from ragbag.core.storage_faults import explain
from ragbag.orchestration import build_report
from ragbag.orchestration.chain import sync_partitions
from ragbag.orchestration.instance import dagster_instance
from ragbag.orchestration.pool import ensure_pool, reap_dead_runs

# The run's events still go to the instance (and the UI); the terminal shows the build's report
# (``ragbag.orchestration.build_report``: every failure's cause, every skipped record), not Dagster's echo of
# them, which for a failed step is its stack.
_QUIET = {"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}}
# Runs this process gave up on when the disk failed: Dagster could not record their end, so
# they hold the writers' pool as runs of a live process, which no reaper frees. A server
# (`ragbag mcp`, `ragbag serve`) lives on to build again: its next build settles them first.
_abandoned: set[str] = set()
# A `dagster dev` run's process is known by its steps' leases, and between one step's end and
# the next one's start it holds none: this long without one, it is taken for dead.
BETWEEN_STEPS_S = 5.0


class BuildsStopped(StorageFault):
    """The disk stopped a build: full or read-only, the sources after the one it failed would
    fail the same way, so they are not started. ``reports`` are those of every source asked for
    (the message is the fault's one line)."""

    def __init__(self, fault: StorageFault, reports: list[dict[str, Any]]):
        super().__init__(fault.kind, str(fault))
        self.reports = reports


def run_builds(
    home: Home, sources: list[Source], show_progress: bool, force: bool = False, allow_empty: bool = False
) -> list[dict[str, Any]]:
    """Materialise each source's chain as one Dagster run; a failed source never stops the rest,
    unless the disk did it (:class:`BuildsStopped`).

    A source whose files and settings are as its published index was built from starts no run
    (``ragbag.pipeline.changes``; ``force`` runs it anyway): it is reported to Dagster as an
    unchanged materialisation (``ragbag.orchestration.unchanged``), and when every source is, the
    definitions are not even loaded. Dead builds are reaped either way. ``allow_empty`` lets a
    source whose records all vanished be emptied (``ragbag.pipeline.ingest``); its runs say so in
    their tags.
    """
    from ragbag.pipeline import changes

    _terminable_children()
    instance = dagster_instance(home)
    ensure_pool(instance, home)
    reap_dead_runs(instance, home)  # a killed build's run and slot, even when nothing else runs
    _settle(instance)
    reports: dict[str, dict[str, Any]] = {}
    todo = []
    for src in sources:
        started = time.time()
        record = None if force else changes.unchanged(home, src)
        if record is None or not _has_partition(instance, src):
            todo.append(src)
            continue
        from ragbag.orchestration.unchanged import record_unchanged

        record_unchanged(instance, src, record)
        reports[src.name] = build_report.unchanged(src, record, time.time() - started)
    fault = _run(home, instance, todo, show_progress, allow_empty, reports) if todo else None
    if fault is not None:
        for src in todo:
            reports.setdefault(src.name, build_report.failed(src, f"not started: {fault}", 0))
        raise BuildsStopped(fault, [reports[src.name] for src in sources])
    return [reports[src.name] for src in sources]


def _run(
    home: Home,
    instance,
    sources: list[Source],
    show_progress: bool,
    allow_empty: bool,
    reports: dict[str, dict[str, Any]],
) -> StorageFault | None:
    """Run each source's build into ``reports``; the storage fault that stopped them, if one did."""
    from ragbag.core.terminal import Stream
    from ragbag.pipeline.stages import ALLOW_EMPTY_TAG

    sync_partitions(home, add=sources, instance=instance)
    tags = {"ragbag/trigger": "cli", "ragbag/pid": leases.identity()} | (
        {ALLOW_EMPTY_TAG: "true"} if allow_empty else {}
    )
    with reaping(home), _progress_bars() if show_progress else nullcontext(None) as listener:
        with progress.listening(listener) if listener else nullcontext():
            for src in sources:
                # Whatever the run writes to stderr (Dagster echoes only what is critical):
                # shown after it, never obeyed; not when the disk failed, whose one line says
                # it all (Dagster's own complaint that it could not store an event is that same
                # fault). Inside the bars, which draw on the stderr they were made with.
                echoed = io.StringIO()
                with contextlib.redirect_stderr(echoed):
                    reports[src.name], fault = _build(home, instance, src, tags)
                if fault is not None:
                    return fault
                if echoed.getvalue():
                    Stream(sys.stderr).write(echoed.getvalue())
    return None


def _build(home: Home, instance, src: Source, tags: dict[str, str]) -> tuple[dict[str, Any], StorageFault | None]:
    """One source's run and its report, also when ``ragbag remove`` took the source meanwhile or
    the disk failed under it (then that fault too)."""
    from ragbag.orchestration.chain import job_name
    from ragbag.orchestration.definitions import definitions_for

    started = time.time()
    if _removed(home, src):  # by `ragbag remove` while the sources before it built
        return build_report.failed(src, build_report.REMOVED, 0), None
    run_id = str(uuid.uuid4())  # known even when Dagster cannot record the run
    try:
        result = (
            definitions_for(src.connector)
            .resolve_job_def(job_name(src.connector))
            .execute_in_process(
                run_id=run_id,
                partition_key=src.name,
                instance=instance,
                raise_on_error=False,
                tags={**tags, "ragbag/source": src.name},
                run_config=_QUIET,
            )
        )
    except Exception as e:  # Dagster could not record the run: its storage failed
        if _removed(home, src):
            return build_report.failed(src, build_report.REMOVED, time.time() - started), None
        fault = explain(e, home, "build")
        if fault is None:
            raise
        _abandon(instance, run_id)
        return build_report.failed(src, str(fault), time.time() - started), fault
    if _removed(home, src):  # its steps stopped at the registry; `remove` deletes its run
        return build_report.failed(src, build_report.REMOVED, time.time() - started), None
    report, fault = build_report.from_run(home, src, result, time.time() - started)
    if fault is not None:
        _abandon(instance, run_id)  # its end is in the result, perhaps not on the disk
    return report, fault


def _abandon(instance, run_id: str) -> None:
    """Note the run as given up, and settle it if the disk lets it now."""
    _abandoned.add(run_id)
    _settle(instance)


def _settle(instance) -> None:
    """Fail the runs this process gave up on and free their pool slots, as the reaper does for
    a dead process's; those the disk still refuses are tried again at the next build."""
    for run_id in sorted(_abandoned):
        with contextlib.suppress(Exception):  # still full or read-only: next time
            run = instance.get_run_by_id(run_id)
            if run is not None and not run.is_finished:
                instance.report_run_failed(run, "the disk failed under it (full or read-only); see the build's report")
            instance.event_log_storage.free_concurrency_slots_for_run(run_id)
            _abandoned.discard(run_id)


def _removed(home: Home, src: Source) -> bool:
    """Whether ``ragbag remove`` removed the source since the build was asked for. A build of it
    writes nothing after that (its steps look for it under the writers' lock), and its run is
    deleted when it ends: all there is left to do is to say so."""
    return src.name not in home.sources()


def _has_partition(instance, src: Source) -> bool:
    from ragbag.orchestration.chain import partitions_for

    return instance.has_dynamic_partition(partitions_for(src.connector).name, src.name)


def forget_runs(home: Home, source: Source, keep: Collection[str] = ()) -> int:
    """Delete the Dagster runs of a removed source (but those in ``keep``) with their event logs
    (materialisation previews hold its text) and compute logs, then vacuum Dagster's SQLite
    files, whose free pages would still hold the deleted rows. Returns how many runs went."""
    import sqlite3

    import dagster as dg

    instance = dagster_instance(home)
    ids = {
        r.run_id
        for tags in ({"dagster/partition": source.name}, {"ragbag/source": source.name})
        for r in instance.get_runs(filters=dg.RunsFilter(tags=tags))
    } - set(keep)
    for run_id in ids:
        instance.delete_run(run_id)
    _forget_latest(instance, ids)
    for run_id in ids:
        with contextlib.suppress(NotImplementedError, OSError):  # a manager may keep none
            instance.compute_log_manager.delete_logs(prefix=[run_id])
        shutil.rmtree(home.dagster_home / "storage" / run_id, ignore_errors=True)  # the default's place
    from ragbag.orchestration.dagster_internals import close_sqlite_engines

    close_sqlite_engines()  # a deleted run's database, still open here, would keep its bytes
    for db in home.dagster_home.rglob("*.db"):
        try:
            with contextlib.closing(sqlite3.connect(db)) as conn:
                conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                conn.execute("VACUUM")
        except sqlite3.Error:
            continue  # in use by a live dagster process: its next vacuum (or ours) gets it
    return len(ids)


def _forget_latest(instance, run_ids: set[str]) -> None:
    """Drop the copy of each asset's latest materialisation that Dagster caches beside its
    event log when that run is gone (deleting a run leaves it); Dagster then reads the latest
    one from the event log, as for an asset with no cached record."""
    storage = instance.event_log_storage
    if not run_ids or not hasattr(storage, "index_connection"):
        return
    from ragbag.orchestration.dagster_internals import AssetKeyTable

    with storage.index_connection() as conn:
        conn.execute(
            AssetKeyTable.update()
            .where(AssetKeyTable.c.last_run_id.in_(sorted(run_ids)))
            .values(last_materialization=None, last_run_id=None)
        )


def wait_for_runs(home: Home, src: Source, wait_s: float, waiting: Callable[[str], None]) -> list[str]:
    """Wait until no run of the source is under way; the ids of those still under way after
    ``wait_s``. A run counts while its process lives: a CLI run's (its ``ragbag/pid``), or,
    for a run `dagster dev` started, a process holding one of its steps' leases, allowing for the
    moment between two steps when none does; a run whose process died never ends by itself."""
    import dagster as dg

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
        if not runs or (not live and now - last_live > BETWEEN_STEPS_S) or now - started > wait_s:
            return live
        if not said:
            waiting(f"a build of {src.name} is under way; waiting for it to stop")
            said = True
        time.sleep(0.2)


def _running(home: Home, run) -> bool:
    who = run.tags.get("ragbag/pid")
    return leases.held_by(who) if who else leases.run_held(home.lease_dir, run.run_id)


def _terminable_children() -> None:
    """Let the processes a run starts be ended with SIGTERM, as Dagster ends them. An ignored
    signal is inherited across exec: started by a parent that ignores SIGTERM (pytest-xdist's
    workers do, some supervisors too), every ``tail -F`` Dagster starts to mirror a step's output
    ignored its ``terminate()``, outlived the run and held the caller's stdout open for good
    (a caller waiting for end of file hung). Only the main thread may change it; a server's
    later builds (threads) find it done by its first."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGTERM) is signal.SIG_IGN:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
    # Dagster maps SIGTERM to SIGINT's handler when a run starts: an ignored SIGINT (the same
    # parents ignore it) would make SIGTERM ignored again.
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@contextmanager
def reaping(home: Home, every: float = 2.0) -> Iterator[None]:
    """Reap dead holders in the background while this process's builds run: a build waiting
    on the pool notices a killed holder within ``every`` seconds instead of waiting forever."""
    import threading

    stop = threading.Event()

    def loop() -> None:
        instance = dagster_instance(home)  # its own connections: SQLite storage is per thread
        while not stop.wait(every):
            with contextlib.suppress(Exception):  # a locked database this round: the next one
                reap_dead_runs(instance, home)

    thread = threading.Thread(target=loop, name="ragbag-reaper", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(every + 5)


@contextmanager
def _progress_bars() -> Iterator[progress.Listener]:
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    bars = Progress(
        TextColumn("{task.description:<28}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=Console(stderr=True, file=sys.stderr),  # the terminal, not a later redirect
        transient=False,
    )
    tasks: dict[tuple[str, str], Any] = {}

    def listener(stage: str, source: str, done: int, total: int | None) -> None:
        key = (source, stage)
        if key not in tasks:
            tasks[key] = bars.add_task(f"{source}: {stage}", total=total)
        bars.update(tasks[key], completed=done, total=total)

    with bars:
        yield listener
