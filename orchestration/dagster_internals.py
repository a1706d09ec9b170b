"""The few parts of Dagster's private API ragbag relies on, in one place.

Dagster's public API has no cron iterator, no cron validator, no way to make an executor's
steps honour run interrupts, no way to forget a deleted run's cached latest materialisation,
and no say in the fixed cost of a run on its SQLite storages: a new engine and connection for
each use (``reuse_sqlite_engines``), every migration script read each time a database is opened
(``load_alembic_scripts_once``) and each run's event log made from nothing
(``copy_new_run_logs``); the three are applied when this module is imported. These come from
``dagster._*`` modules, which can change in any release; the version is pinned in
pyproject.toml, and this is the only module that imports them (tests/unit/test_layers.py fails
on any other), so an upgrade has one file to check.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import os
import shutil
import weakref
from typing import Any

import sqlalchemy
from dagster import __version__ as dagster_version
from dagster._core.errors import raise_execution_interrupts
from dagster._core.storage import sql as dagster_sql
from dagster._core.storage.event_log.schema import AssetKeyTable
from dagster._core.storage.event_log.sqlite import sqlite_event_log
from dagster._core.storage.runs.sqlite import sqlite_run_storage
from dagster._core.storage.schedules.sqlite import sqlite_schedule_storage
from dagster._utils import iterate_with_context
from dagster._utils.schedules import cron_string_iterator, is_valid_cron_string
from sqlalchemy.pool import NullPool, QueuePool

__all__ = [
    "AssetKeyTable",
    "close_sqlite_engines",
    "copy_new_run_logs",
    "cron_string_iterator",
    "is_valid_cron_string",
    "iterate_with_context",
    "load_alembic_scripts_once",
    "raise_execution_interrupts",
    "reuse_sqlite_engines",
]

_SQLITE_STORAGES = (sqlite_event_log, sqlite_run_storage, sqlite_schedule_storage)


def reuse_sqlite_engines() -> None:
    """Dagster's SQLite storages make a new SQLAlchemy engine for every connection they open, one
    for each of the hundreds of reads and writes a run makes, and close it after that one use: a
    run made hundreds of engines, compiled the same INSERTs again each time and opened and closed
    the database file for each (benchmarks/README.md, "Fixed costs of a run" and "A refresh's
    fixed cost"). Here an engine is made once per database (and process) and keeps its
    connections for the next use, by any thread: an idle connection holds no lock, so other
    processes and threads share the files as before. Commits in WAL mode, which each storage
    sets, stop syncing to disk each time (``synchronous=NORMAL``): a crash of the machine may
    lose the last events of a run, never make the database unreadable. ``close_sqlite_engines``
    closes them (at exit, and a removal before it vacuums)."""
    for module in _SQLITE_STORAGES:
        module.create_engine = _one_engine_per_database  # type: ignore[attr-defined]
    atexit.register(close_sqlite_engines)  # closed, each database's write-ahead log is folded in


def close_sqlite_engines() -> None:
    """Close every connection this process's engines hold (they open again on their next use), so
    a deleted run's database is gone from the disk, not only from its folder. A forked child
    leaves its parent's alone: a SQLite connection must not be used, closing included, across a
    fork."""
    for engine, pid in list(_open_engines.items()):
        if pid == os.getpid():
            sqlalchemy.Engine.dispose(engine)


def _one_engine_per_database(url: Any, **options: Any) -> sqlalchemy.Engine:
    connect_args = options.get("connect_args") or {}
    if (
        options.get("poolclass") is NullPool
        and set(options) <= {"poolclass", "connect_args"}
        and set(connect_args) <= {"timeout"}
    ):
        return _engine(str(url), connect_args.get("timeout"), os.getpid())
    return sqlalchemy.create_engine(url, **options)  # anything else, as Dagster asked


@functools.lru_cache(maxsize=64)  # a long-lived process (a server, the daemon) sees many runs
def _engine(url: str, timeout: float | None, pid: int) -> sqlalchemy.Engine:
    """``pid``: a forked process makes its own (a connection must not cross a fork)."""
    # A pool of connections any thread may take while no other holds it (each checked out to one
    # user at a time), two kept between uses, as many more as are wanted at once.
    connect_args = {"check_same_thread": False} | ({"timeout": timeout} if timeout is not None else {})
    engine = sqlalchemy.create_engine(url, poolclass=QueuePool, pool_size=2, max_overflow=-1, connect_args=connect_args)
    sqlalchemy.event.listen(engine, "connect", _no_sync_per_commit)
    # Dagster disposes of the engine it made after each use; this one outlives it.
    setattr(engine, "dispose", _kept)  # noqa: B010
    _open_engines[engine] = pid
    return engine


def _kept(close: bool = True) -> None:
    del close


def _no_sync_per_commit(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


_open_engines: weakref.WeakKeyDictionary[sqlalchemy.Engine, int] = weakref.WeakKeyDictionary()  # -> its pid


def load_alembic_scripts_once() -> None:
    """Dagster learns the newest revision of its schema (alembic's "head") by loading every
    migration script of its package each time a storage opens a database (the runs', the
    schedules', the event log's index), and loads them all again to stamp each new run's own
    event log with it: a tenth of a second each (benchmarks/README.md, "A refresh's fixed
    cost"). The scripts are a property of the installed package: here they are loaded once a
    process per scripts' folder, and each database's own revision is still read from it, and
    stamped on it, every time as before."""
    for module in _SQLITE_STORAGES:
        module.check_alembic_revision = _check_alembic_revision  # type: ignore[attr-defined]
        module.stamp_alembic_rev = _stamp_alembic_rev  # type: ignore[attr-defined]


_DAGSTER_INITDB = sqlite_event_log.SqliteEventLogStorage._initdb  # how Dagster makes a run's log


def copy_new_run_logs() -> None:
    """A run's own event log is a new SQLite database: Dagster makes each from nothing, its
    dozen tables and their indexes one statement at a time, then stamps it. Here the first one a
    process makes in a folder is kept beside the runs (not as ``*.db``, which Dagster takes for
    a run's) and each later one starts as a copy of it: the same database, made by Dagster's
    own code, then checked by it as before."""
    made = _DAGSTER_INITDB

    def initdb(self: Any, engine: sqlalchemy.Engine, for_index_shard: bool = False) -> None:
        path = engine.url.database
        if not for_index_shard and path and not os.path.exists(path):
            template = os.path.join(os.path.dirname(path), f".run-log-template-{dagster_version}.sqlite")
            if not os.path.exists(template):
                _make_template(self, made, template)
            with contextlib.suppress(OSError):  # none: Dagster makes this one from nothing
                shutil.copyfile(template, path)
        made(self, engine, for_index_shard)

    sqlite_event_log.SqliteEventLogStorage._initdb = initdb  # type: ignore[method-assign]


def _make_template(storage: Any, made: Any, template: str) -> None:
    """Dagster's own new run log, made at a name of its own and renamed into place whole; on any
    failure (a full disk) nothing is left, and the run's log is made as Dagster makes it."""
    partial = f"{template}.{os.getpid()}"
    engine = sqlalchemy.create_engine(f"sqlite:///{partial}", poolclass=NullPool)
    try:
        made(storage, engine)
        with engine.connect() as conn:  # everything in the file itself, none in a -wal beside it
            conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
        sqlalchemy.Engine.dispose(engine)
        os.replace(partial, template)
    except Exception:  # noqa: BLE001  # Dagster's own making of the run's log says what failed
        sqlalchemy.Engine.dispose(engine)
    for leftover in (partial, f"{partial}-wal", f"{partial}-shm"):
        with contextlib.suppress(OSError):
            os.unlink(leftover)


def _check_alembic_revision(alembic_config: Any, conn: Any) -> tuple[Any, Any]:
    from alembic.runtime.migration import MigrationContext

    with dagster_sql._alembic_lock:
        db_revision = MigrationContext.configure(conn).get_current_revision()
        return db_revision, _scripts(alembic_config).as_revision_number("head")


def _stamp_alembic_rev(alembic_config: Any, conn: Any, rev: str = "head") -> None:
    """What Dagster's ``stamp_alembic_rev`` does through alembic's ``stamp`` command and its
    migration environment (a plain ``configure`` on the connection), without loading the scripts
    again."""
    from alembic.runtime.migration import MigrationContext

    with dagster_sql._alembic_lock:
        context = MigrationContext.configure(conn)
        try:
            with context.begin_transaction():
                context.stamp(_scripts(alembic_config), rev)
        except sqlalchemy.exc.DatabaseError as e:  # another process made the table first: as Dagster
            if "table alembic_version already exists" not in str(e):
                raise


def _scripts(alembic_config: Any) -> Any:
    from alembic.script import ScriptDirectory

    folder = alembic_config.get_main_option("script_location")
    if folder not in _script_folders:  # its revisions load once, on first use, and stay
        _script_folders[folder] = ScriptDirectory.from_config(alembic_config)
    return _script_folders[folder]


_script_folders: dict[str | None, Any] = {}


reuse_sqlite_engines()
load_alembic_scripts_once()
copy_new_run_logs()
