"""Run builds through Dagster from the CLI, so every build is a run the UI shows.

The CLI and ``dagster dev`` share ``$RAGBAG_HOME/dagster`` as DAGSTER_HOME. Runs execute in
this process; stages report progress to ``ragbag.core.progress``, which this module turns into
progress bars. This is the one engine module that imports Dagster (lazily).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, nullcontext
from typing import Any

from ragbag.assets.pool import ensure_pool, reap_dead_runs
from ragbag.core import leases, progress
from ragbag.core.home import Home, Source

# The run's events still go to the instance (and the UI); only the terminal echo is quieted.
_QUIET = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}


def use_home(home: Home) -> None:
    """Point Dagster and the assets' resource at this home before Dagster is imported."""
    home.ensure()
    os.environ["DAGSTER_HOME"] = str(home.dagster_home)
    os.environ["RAGBAG_HOME"] = str(home.root)


def _instance(home: Home):
    use_home(home)
    import dagster as dg

    return dg.DagsterInstance.get()


def sync_partitions(home: Home, add: Iterable[Source] = (), remove: Iterable[Source] = ()) -> None:
    """Add/remove the dynamic partitions of sources in the shared Dagster instance."""
    add, remove = list(add), list(remove)
    if not add and not remove:
        return
    from ragbag.assets.chain import partitions_for

    instance = _instance(home)
    ensure_pool(instance)
    for src in add:
        pname = partitions_for(src.connector).name
        if not instance.has_dynamic_partition(pname, src.name):
            instance.add_dynamic_partitions(pname, [src.name])
    for src in remove:
        pname = partitions_for(src.connector).name
        if instance.has_dynamic_partition(pname, src.name):
            instance.delete_dynamic_partition(pname, src.name)


def run_builds(home: Home, sources: list[Source], show_progress: bool, force: bool = False) -> list[dict[str, Any]]:
    """Materialise each source's chain as one Dagster run; a failed source never stops the rest.

    A source whose files and settings are as its published index was built from starts no run
    (``ragbag.build.changes``; ``force`` runs it anyway): it is reported to Dagster as an
    unchanged materialisation (``ragbag.assets.unchanged``), and when every source is, the
    definitions are not even loaded. Dead builds are reaped either way.
    """
    from ragbag.build import changes

    instance = _instance(home)
    ensure_pool(instance)
    reap_dead_runs(instance, home)  # a killed build's run and slot, even when nothing else runs
    reports: dict[str, dict[str, Any]] = {}
    todo = []
    for src in sources:
        started = time.time()
        record = None if force else changes.unchanged(home, src)
        if record is None or not _has_partition(instance, src):
            todo.append(src)
            continue
        from ragbag.assets.unchanged import record_unchanged

        record_unchanged(instance, src, record)
        reports[src.name] = _unchanged_report(src, record, time.time() - started)
    if todo:
        for report in _run(home, instance, todo, show_progress):
            reports[report["source"]] = report
    return [reports[src.name] for src in sources]


def _run(home: Home, instance, sources: list[Source], show_progress: bool) -> list[dict[str, Any]]:
    from ragbag.apps.cli.safe_text import Stream
    from ragbag.assets.chain import job_name
    from ragbag.pipelines.definitions import defs

    sync_partitions(home, add=sources)
    reports = []
    with reaping(home), _progress_bars() if show_progress else nullcontext(None) as listener:
        # Dagster echoes the stages' warnings (file names of skipped records) to stderr: shown,
        # never obeyed. Inside the bars, which draw on the stderr they were made with.
        echo = contextlib.redirect_stderr(Stream(sys.stderr))
        with echo, progress.listening(listener) if listener else nullcontext():
            for src in sources:
                started = time.time()
                job = defs.resolve_job_def(job_name(src.connector))
                result = job.execute_in_process(
                    partition_key=src.name,
                    instance=instance,
                    raise_on_error=False,
                    tags={"ragbag/trigger": "cli", "ragbag/source": src.name, "ragbag/pid": leases.identity()},
                    run_config=_QUIET,
                )
                reports.append(_report(src, result, time.time() - started))
    return reports


def _has_partition(instance, src: Source) -> bool:
    from ragbag.assets.chain import partitions_for

    return instance.has_dynamic_partition(partitions_for(src.connector).name, src.name)


def forget_runs(home: Home, source: Source) -> int:
    """Delete the Dagster runs of a removed source with their event logs (materialisation
    previews hold its text) and compute logs, then vacuum Dagster's SQLite files, whose free
    pages would still hold the deleted rows. Returns how many runs went."""
    import sqlite3

    import dagster as dg

    instance = _instance(home)
    ids = {
        r.run_id
        for tags in ({"dagster/partition": source.name}, {"ragbag/source": source.name})
        for r in instance.get_runs(filters=dg.RunsFilter(tags=tags))
    }
    for run_id in ids:
        instance.delete_run(run_id)
    _forget_latest(instance, ids)
    for run_id in ids:
        with contextlib.suppress(NotImplementedError, OSError):  # a manager may keep none
            instance.compute_log_manager.delete_logs(prefix=[run_id])
        shutil.rmtree(home.dagster_home / "storage" / run_id, ignore_errors=True)  # the default's place
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
    from ragbag.assets.dagster_internals import AssetKeyTable

    with storage.index_connection() as conn:
        conn.execute(
            AssetKeyTable.update()
            .where(AssetKeyTable.c.last_run_id.in_(sorted(run_ids)))
            .values(last_materialization=None, last_run_id=None)
        )


@contextmanager
def reaping(home: Home, every: float = 2.0) -> Iterator[None]:
    """Reap dead holders in the background while this process's builds run: a build waiting
    on the pool notices a killed holder within ``every`` seconds instead of waiting forever."""
    import threading

    stop = threading.Event()

    def loop() -> None:
        instance = _instance(home)  # its own connections: SQLite storage is per thread
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


def _unchanged_report(src: Source, record: dict[str, Any], seconds: float) -> dict[str, Any]:
    """The report of a source skipped as unchanged: a build's fields, from its published index."""
    manifest = record["manifest"]
    docs = {"documents": manifest["documents"], "errors": record.get("errors", [])}
    return {
        "source": src.name,
        "connector": src.connector,
        "status": "success",
        "unchanged": True,
        "documents": manifest["documents"],
        "added": 0,
        "changed": 0,
        "deleted": 0,
        "chunks": manifest["chunks"],
        "chunks_embedded": 0,
        "graph": {k: manifest.get("graph", {}).get(k) for k in ("profile", "mode", "recall_at_10", "bytes")},
        "errors": docs["errors"],
        "failure": None,
        "run_id": None,
        "seconds": round(seconds, 2),
        "warnings": _warnings(src, True, docs),
    }


def _report(src: Source, result, seconds: float) -> dict[str, Any]:
    from ragbag.assets.chain import PUBLISH

    meta: dict[str, dict[str, Any]] = {}
    for ev in result.get_asset_materialization_events():
        md = ev.event_specific_data.materialization.metadata
        meta[ev.asset_key.path[-1]] = {k: v.value for k, v in md.items()}
    docs, chunks, emb = meta.get("documents", {}), meta.get("chunks", {}), meta.get("embeddings", {})
    failure = None
    for ev in result.all_events:
        if ev.is_step_failure:
            err = ev.step_failure_data.error
            failure = (err.message or "").strip().splitlines()[-1] if err else "step failed"
            failure = failure.split(": ", 1)[1] if failure.startswith("dagster.") and ": " in failure else failure
            break
    return {
        "source": src.name,
        "connector": src.connector,
        "status": "success" if result.success else "failed",
        "unchanged": bool(meta.get(PUBLISH, {}).get("unchanged", False)),
        "documents": docs.get("documents", 0),
        "added": docs.get("added", 0),
        "changed": docs.get("changed", 0),
        "deleted": docs.get("deleted", 0),
        "chunks": chunks.get("chunks", 0),
        "chunks_embedded": emb.get("chunks_embedded", 0),
        "graph": {k: meta.get("graph", {}).get(k) for k in ("profile", "mode", "recall_at_10", "bytes")},
        "errors": docs.get("errors", []),
        "failure": failure,
        "run_id": result.run_id,
        "seconds": round(seconds, 2),
        "warnings": _warnings(src, result.success, docs),
    }


def _warnings(src: Source, success: bool, docs: dict[str, Any]) -> list[str]:
    """Never silently empty: a source that read nothing and reported nothing says so."""
    if success and not docs.get("documents") and not docs.get("errors"):
        return [
            f"{src.connector} read 0 records and reported no errors under {src.path or 'its default places'}: "
            f"is that the folder or export it reads? (see `ragbag add {src.connector} --help`)"
        ]
    return []


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
