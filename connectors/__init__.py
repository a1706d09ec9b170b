"""Connectors: one module per kind of source. Each reads its files and yields Documents.

A connector module defines:
- ``NAME``: the connector's name as users type it (``ragbag add NAME ...``);
- ``read(path, source, cursor) -> Iterator[Document | ReadError | Seen | Cursor]``: every record
  under ``path`` (``None``: the connector's default places, see ``discover``). A bad record is a
  ``ReadError`` (uri + reason) and reading goes on. ``cursor`` is the state the previous read
  yielded (``None`` the first time): an incremental connector reads only what is new, yields
  ``Seen(native_id)`` for stored records it skipped, and yields a new ``Cursor`` last;
- ``spans(doc, count, max_tokens) -> list[Span]``: how a document of this kind is cut into
  chunks that each fit ``max_tokens`` as measured by ``count``.

Optionally:
- ``discover() -> tuple[list[Path], list[str]]``: the data found in the platform's default
  places, and every place looked at (so "found nothing" can say where it looked);
- an ``options`` keyword on ``read``: the source's ``options`` from ``sources.yaml``, which the
  engine passes. Connectors that walk a folder read :data:`FOLLOW_LINKS_OUTSIDE` there with
  :func:`follows_outside` (see ``connectors._walk``);
- ``SCHEDULE``: a cron string for refreshes under ``dagster dev`` (default hourly), which a
  source can override with ``options: {schedule: "..."}`` in ``sources.yaml``.

Connectors import the engine's records, never Dagster.
"""

from __future__ import annotations

import pkgutil
from importlib import import_module
from types import ModuleType

from ragbag.connectors._walk import FOLLOW_LINKS_OUTSIDE, follows_outside

__all__ = ["FOLLOW_LINKS_OUTSIDE", "NAMES", "UnknownConnector", "follows_outside", "get"]

# Every public module (or package) in this package is a connector: adding one is adding one
# file. Modules the connectors share are private (``_walk``, ``_exports``, ``_chat``, ``_sqlite``).
_FIRST = ("files", "code")
NAMES: tuple[str, ...] = _FIRST + tuple(
    sorted(m.name for m in pkgutil.iter_modules(__path__) if m.name not in _FIRST and not m.name.startswith("_"))
)


class UnknownConnector(ValueError):
    pass


def get(name: str) -> ModuleType:
    if name not in NAMES:
        raise UnknownConnector(f"unknown connector {name!r}; choose one of: {', '.join(NAMES)}")
    return import_module(f"{__name__}.{name}")
