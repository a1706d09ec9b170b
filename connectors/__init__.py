"""Connectors: one module per kind of source. Each reads its files and yields Documents.

A connector module defines:
- ``NAME``: the connector's name as users type it (``ragbag add NAME ...``);
- ``read(path, source) -> Iterator[Document | ReadError]``: every record under ``path``; a bad
  record is a ``ReadError`` (uri + reason) and reading goes on;
- ``spans(doc, count, max_tokens) -> list[Span]``: how a document of this kind is cut into
  chunks that each fit ``max_tokens`` as measured by ``count``.

Connectors import the engine's records, never Dagster.
"""

from __future__ import annotations

from importlib import import_module
from types import ModuleType

NAMES: tuple[str, ...] = ("files", "code")


class UnknownConnector(ValueError):
    pass


def get(name: str) -> ModuleType:
    if name not in NAMES:
        raise UnknownConnector(f"unknown connector {name!r}; choose one of: {', '.join(NAMES)}")
    return import_module(f"connectors.{name}")
