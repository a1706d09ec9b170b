"""The few parts of Dagster's private API ragbag relies on, in one place.

Dagster's public API has no cron iterator, no cron validator, no way to make an executor's
steps honour run interrupts, no way to forget a deleted run's cached latest materialisation,
and no way to keep its SQLite storages from making a new engine per connection
(``reuse_sqlite_engines``, applied when this module is imported). These come from
``dagster._*`` modules, which can change in any release; the version is pinned in
pyproject.toml, and this is the only module that imports them (tests/unit/test_layers.py fails
on any other), so an upgrade has one file to check.
"""

from __future__ import annotations

import functools
from typing import Any

import sqlalchemy
from dagster._core.errors import raise_execution_interrupts
from dagster._core.storage.event_log.schema import AssetKeyTable
from dagster._core.storage.event_log.sqlite import sqlite_event_log
from dagster._core.storage.runs.sqlite import sqlite_run_storage
from dagster._core.storage.schedules.sqlite import sqlite_schedule_storage
from dagster._utils import iterate_with_context
from dagster._utils.schedules import cron_string_iterator, is_valid_cron_string
from sqlalchemy.pool import NullPool

__all__ = [
    "AssetKeyTable",
    "cron_string_iterator",
    "is_valid_cron_string",
    "iterate_with_context",
    "raise_execution_interrupts",
    "reuse_sqlite_engines",
]

_SQLITE_STORAGES = (sqlite_event_log, sqlite_run_storage, sqlite_schedule_storage)


def reuse_sqlite_engines() -> None:
    """Dagster's SQLite storages make a new SQLAlchemy engine for every connection they open, one
    for each event a run logs, and a new engine starts with its dialect uninitialised and its
    statement cache empty: a run made hundreds of engines and compiled the same INSERTs again
    each time (benchmarks/README.md, "Fixed costs of a run"). Here an engine is made once per
    database and options, and each connection is still a new one (``NullPool``), as before:
    nothing is held open between uses, so processes and threads share the files as they did."""
    for module in _SQLITE_STORAGES:
        module.create_engine = _one_engine_per_database  # type: ignore[attr-defined]


def _one_engine_per_database(url: Any, **options: Any) -> sqlalchemy.Engine:
    connect_args = options.get("connect_args") or {}
    if (
        options.get("poolclass") is NullPool
        and set(options) <= {"poolclass", "connect_args"}
        and set(connect_args) <= {"timeout"}
    ):
        return _engine(str(url), connect_args.get("timeout"))
    return sqlalchemy.create_engine(url, **options)  # anything else, as Dagster asked


@functools.lru_cache(maxsize=64)  # a long-lived process (a server, the daemon) sees many runs
def _engine(url: str, timeout: float | None) -> sqlalchemy.Engine:
    connect_args = {"timeout": timeout} if timeout is not None else {}
    return sqlalchemy.create_engine(url, poolclass=NullPool, connect_args=connect_args)


reuse_sqlite_engines()
