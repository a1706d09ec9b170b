"""The rich consoles the commands print through: plain text when the stream is not a terminal."""

from __future__ import annotations

import sys

from rich.console import Console


def console(stderr: bool = False) -> Console:
    stream = sys.stderr if stderr else sys.stdout
    return Console(stderr=stderr, highlight=False, width=None if stream.isatty() else 160)
