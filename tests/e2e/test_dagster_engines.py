"""Dagster's SQLite storages open a connection for each of the hundreds of reads and writes a run
makes; ragbag makes one SQLAlchemy engine per database for them, keeping a connection per thread
(``orchestration.dagster_internals.reuse_sqlite_engines``), so a build no longer starts a new
engine, compiles its statements again and opens the file again for each. Dagster reads its
migration scripts once a process (``load_alembic_scripts_once``)."""

from __future__ import annotations

import json

import sqlalchemy
import sqlalchemy.pool
from conftest import cli, write

from ragbag.orchestration import dagster_internals


def test_builds_reuse_one_engine_and_connection_per_database(home, tmp_path):
    docs = write(tmp_path / "docs", {f"n{i}.md": f"# Note {i}\n\nThe kettle is on shelf {i}.\n" for i in range(3)})
    cli("add", "files", "notes", str(docs))
    cli("build", "--json")  # the instance's databases exist
    dagster_internals._engine.cache_clear()

    engines: dict[int, sqlalchemy.Engine] = {}
    connections: list[str] = []
    opened: list[str] = []

    def connected(connection: sqlalchemy.Connection) -> None:
        engines[id(connection.engine)] = connection.engine  # kept: an id is not reused meanwhile
        connections.append(str(connection.engine.url))

    def opened_file(dbapi_connection, record) -> None:
        opened.append(str(record))

    sqlalchemy.event.listen(sqlalchemy.Engine, "engine_connect", connected)
    sqlalchemy.event.listen(sqlalchemy.pool.Pool, "connect", opened_file)
    try:
        for i in range(2):  # two builds with work to do: two runs, each logging its events
            (docs / "n0.md").write_text(f"# Note 0\n\nThe kettle moved, edit {i}.\n")
            (report,) = json.loads(cli("build", "--json").stdout)
            assert report["status"] == "success" and report["changed"] == 1
    finally:
        sqlalchemy.event.remove(sqlalchemy.Engine, "engine_connect", connected)
        sqlalchemy.event.remove(sqlalchemy.pool.Pool, "connect", opened_file)

    assert len(connections) > 50  # a connection per event, as Dagster opens them
    databases = [str(engine.url) for engine in engines.values()]
    assert len(databases) == len(set(databases)) == len(set(connections))  # one engine per database
    assert len(databases) <= 3 + 2  # runs, index, schedules and each run's event log
    # A file opened for a few uses at once per database (this thread's and the reaper's), not per use.
    assert len(opened) <= 3 * len(databases) < len(connections) // 10
    for engine in engines.values():
        with engine.connect() as conn:  # commits are not synced one by one (WAL keeps them safe)
            assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == 1
            assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"


def test_a_process_reads_dagsters_migration_scripts_once(home, tmp_path, monkeypatch):
    """Every database Dagster opens asks for the newest revision of its schema, which alembic
    learns by loading each migration script: once a process now, not once a database."""
    from alembic.script import ScriptDirectory

    docs = write(tmp_path / "docs", {"n.md": "# Note\n\nThe kettle is on the shelf.\n"})
    cli("add", "files", "notes", str(docs))
    loads = []
    real = ScriptDirectory._load_revisions
    monkeypatch.setattr(ScriptDirectory, "_load_revisions", lambda self: loads.append(1) or real(self))
    monkeypatch.setattr(dagster_internals, "_script_folders", {})
    for i in range(2):  # two runs: each opens a new database of its own
        (docs / "n.md").write_text(f"# Note\n\nThe kettle moved, edit {i}.\n")
        (report,) = json.loads(cli("build", "--json").stdout)
        assert report["status"] == "success"
    assert len(loads) == 1


def test_removing_a_source_leaves_none_of_its_runs_open_or_readable(home, tmp_path):
    """The engines keep their connections; the removal that deletes a source's runs closes them
    before it vacuums, and no byte of the source's text stays in the run's database."""
    docs = write(tmp_path / "docs", {"n.md": "# Note\n\nThe gate code is 4711-SECRET-GATE.\n"})
    cli("add", "files", "notes", str(docs))
    (report,) = json.loads(cli("build", "--json").stdout)
    run_db = next(p for p in home.dagster_home.rglob(f"{report['run_id']}.db"))
    assert _open_here(run_db)  # held by this process's engine
    assert any(b"4711-SECRET-GATE" in p.read_bytes() for p in run_db.parent.glob(run_db.name + "*"))
    cli("remove", "notes")
    assert not _open_here(run_db)
    assert not any(b"4711-SECRET-GATE" in p.read_bytes() for p in run_db.parent.glob(run_db.name + "*"))


def _open_here(path) -> bool:
    import os

    fd_dir = "/proc/self/fd"
    links = []
    for fd in os.listdir(fd_dir):
        try:
            links.append(os.readlink(f"{fd_dir}/{fd}"))
        except OSError:
            continue
    return any(link.split(" (deleted)")[0] == str(path) for link in links)


def test_a_runs_event_log_starts_as_the_database_dagster_makes(home, tmp_path):
    """Each run's own event log starts as a copy of the first one a process made in the folder
    (Dagster's own making of it): the same tables, indexes, stamp and journal mode as one Dagster
    makes from nothing, owner-only, and never taken for a run's log (not ``*.db``)."""
    import sqlite3

    from dagster._core.storage.event_log.sqlite.sqlite_event_log import SqliteEventLogStorage

    docs = write(tmp_path / "docs", {"n.md": "# Note\n\nThe kettle is on the shelf.\n"})
    cli("add", "files", "notes", str(docs))
    runs = []
    for i in range(2):
        (docs / "n.md").write_text(f"# Note\n\nThe kettle moved, edit {i}.\n")
        (report,) = json.loads(cli("build", "--json").stdout)
        runs.append(report["run_id"])
    folder = next(home.dagster_home.rglob(f"{runs[-1]}.db")).parent
    (template,) = folder.glob(".run-log-template-*.sqlite")
    assert oct(template.stat().st_mode & 0o777) == "0o600"
    fresh = tmp_path / "fresh.db"  # one made from nothing, by Dagster's own code
    engine = sqlalchemy.create_engine(f"sqlite:///{fresh}", poolclass=sqlalchemy.pool.NullPool)
    dagster_internals._DAGSTER_INITDB(None, engine)
    assert SqliteEventLogStorage._initdb is not dagster_internals._DAGSTER_INITDB  # ragbag's copies
    engine.dispose()

    def shape(path) -> tuple:
        with sqlite3.connect(path) as conn:
            return (
                conn.execute("select type, name, sql from sqlite_master order by name").fetchall(),
                conn.execute("select version_num from alembic_version").fetchall(),
                conn.execute("PRAGMA journal_mode").fetchone(),
            )

    for run_id in runs:
        with sqlite3.connect(folder / f"{run_id}.db") as conn:
            assert conn.execute("select count(*) from event_logs").fetchone()[0] > 20
    assert shape(template) == shape(fresh)
    assert shape(folder / f"{runs[-1]}.db")[0] == shape(fresh)[0]
