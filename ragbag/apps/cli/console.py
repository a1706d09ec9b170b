"""The rich consoles the commands print through: plain text when the stream is not a terminal."""

from __future__ import annotations

import os
import sys

from rich.console import Console


def console(stderr: bool = False) -> Console:
    """A console as wide as the terminal; piped, as wide as ``COLUMNS`` says (rich reads it), else
    160 columns rather than rich's 80, so a table piped to a file or a pager keeps paths whole."""
    stream = sys.stderr if stderr else sys.stdout
    sized = stream.isatty() or os.environ.get("COLUMNS", "").isdigit()
    return Console(stderr=stderr, highlight=False, width=None if sized else 160)
