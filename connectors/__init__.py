"""Connectors: each reads one kind of source into Documents. Built-in or from another package,
a connector is found one way: the ``ragbag.connectors`` entry-point group (``ragbag.core.plugins``;
ragbag's own are declared in its ``pyproject.toml`` like anyone's; ``docs/plugins.md`` has a
complete 30-line one).

A connector (a module, or any object with these attributes; :class:`Connector`) defines:
- ``NAME``: the connector's name as users type it (``ragbag add NAME ...``), its entry point's;
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
  source can override with ``options: {schedule: "..."}`` in ``sources.yaml``;
- ``OPTIONS``: the source options of its own it reads (name → one line of help), which
  ``ragbag add NAME … --option KEY=VALUE`` sets (any other key is refused there).

Connectors import the engine's records, never Dagster.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol, cast

from ragbag.connectors._walk import FOLLOW_LINKS_OUTSIDE, follows_outside
from ragbag.core import plugins
from ragbag.core.errors import RagbagError
from ragbag.core.records import Cursor, Document, ReadError, Seen, Span

__all__ = ["FOLLOW_LINKS_OUTSIDE", "NAMES", "Connector", "UnknownConnector", "follows_outside", "get"]


class Connector(Protocol):
    """What the engine calls on a connector; a module with these names satisfies it."""

    NAME: str

    def read(
        self, path: Path | None, source: str, cursor: Any, /, *, options: dict[str, Any] | None = ...
    ) -> Iterator[Document | ReadError | Seen | Cursor]: ...

    def spans(self, doc: Document, count: Any, max_tokens: int, /) -> list[Span]: ...


# The folder readers first (what `ragbag add` suggests), then the rest by name.
_FIRST = ("files", "code")
NAMES: tuple[str, ...] = tuple(n for n in _FIRST if n in plugins.registered(plugins.CONNECTORS)) + tuple(
    sorted(n for n in plugins.registered(plugins.CONNECTORS) if n not in _FIRST)
)


class UnknownConnector(RagbagError, ValueError):
    """A name no installed package registers, or an object that is not a connector."""


def get(name: str) -> Connector:
    """The connector registered as ``name``, checked to have what the engine calls."""
    if name not in NAMES:
        raise UnknownConnector(f"unknown connector {name!r}; choose one of: {', '.join(NAMES)}")
    found = plugins.load(plugins.CONNECTORS, name)
    lacking = [a for a in ("read", "spans") if not callable(getattr(found, a, None))]
    if lacking or getattr(found, "NAME", None) != name:
        why = f"lacks {', '.join(lacking)}" if lacking else f"its NAME is {getattr(found, 'NAME', None)!r}"
        raise UnknownConnector(f"the connector registered as {name!r} is not one: {why}")
    return cast(Connector, found)
