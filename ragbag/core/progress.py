"""Stage progress, reported to whoever listens (the CLI's progress bars) and ignored otherwise.

Stages run inside Dagster runs; when the CLI runs them in-process it installs a listener here,
and under ``dagster dev`` nothing listens, so stages never depend on a terminal.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

# listener(stage, source, done, total); total may be None while unknown.
Listener = Callable[[str, str, int, "int | None"], None]
_listeners: list[Listener] = []


def report(stage: str, source: str, done: int, total: int | None = None) -> None:
    for listener in list(_listeners):
        listener(stage, source, done, total)


@contextmanager
def listening(listener: Listener) -> Iterator[None]:
    _listeners.append(listener)
    try:
        yield
    finally:
        _listeners.remove(listener)
