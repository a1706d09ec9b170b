"""Dagster's SQLite storages open a connection per event a run logs; ragbag makes one SQLAlchemy
engine per database for them (``orchestration.dagster_internals.reuse_sqlite_engines``), so a
build no longer starts a new engine, and compiles its statements again, for each of those
connections. Each connection is still a new one: nothing stays open between uses."""

from __future__ import annotations

import json

import sqlalchemy
import sqlalchemy.pool
from conftest import cli, write

from ragbag.orchestration import dagster_internals


def test_builds_reuse_one_engine_per_database_and_hold_no_connection(home, tmp_path):
    docs = write(tmp_path / "docs", {f"n{i}.md": f"# Note {i}\n\nThe kettle is on shelf {i}.\n" for i in range(3)})
    cli("add", "files", "notes", str(docs))
    cli("build", "--json")  # the instance's databases exist
    dagster_internals._engine.cache_clear()

    engines: dict[int, sqlalchemy.Engine] = {}
    connections: list[str] = []

    def connected(connection: sqlalchemy.Connection) -> None:
        engines[id(connection.engine)] = connection.engine  # kept: an id is not reused meanwhile
        connections.append(str(connection.engine.url))

    sqlalchemy.event.listen(sqlalchemy.Engine, "engine_connect", connected)
    try:
        for i in range(2):  # two builds with work to do: two runs, each logging its events
            (docs / "n0.md").write_text(f"# Note 0\n\nThe kettle moved, edit {i}.\n")
            (report,) = json.loads(cli("build", "--json").stdout)
            assert report["status"] == "success" and report["changed"] == 1
    finally:
        sqlalchemy.event.remove(sqlalchemy.Engine, "engine_connect", connected)

    assert len(connections) > 50  # a connection per event, as Dagster opens them
    databases = [str(engine.url) for engine in engines.values()]
    assert len(databases) == len(set(databases)) == len(set(connections))  # one engine per database
    assert len(databases) <= 3 + 2  # runs, index, schedules and each run's event log
    assert all(isinstance(engine.pool, sqlalchemy.pool.NullPool) for engine in engines.values())  # none held open
