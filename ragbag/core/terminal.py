"""The one gate between document-borne text and the terminal.

Titles, passages, file names, URIs and error messages come from files anyone could have written
(a mail attachment, a downloaded page, a name in a zip). A terminal obeys control characters in
what it is sent: ESC starts sequences that retitle the window (OSC 0/2), write the clipboard
(OSC 52), draw links (OSC 8), clear the screen (CSI 2J) or recolour everything after; BEL,
backspace and carriage return rewrite what is already on the screen; C1 controls (U+0080–U+009F)
are the same sequences in one character on terminals that honour them; bidi overrides and
isolates reorder what is shown, so ``invoice\\u202efdp.exe`` reads as ``invoiceexe.pdf``. So every
CLI output path that prints text a document or a path could hold goes through this module, which
shows each such character (``ragbag.core.controls``) as a visible escape (``\\x1b``,
``\\u202e``) instead of sending it.

rich adds a second hazard: a string printed through it is markup, so a path holding ``[/]``
raises and ``notes [old]`` loses ``[old]``. :func:`markup` is :func:`line` escaped for rich;
text passed as ``rich.text.Text`` is never parsed and needs only :func:`line`.

What ragbag does not format itself but lets through to the terminal (whatever a build's run
writes to stderr while it reads files anyone named) is written through a :class:`Stream`.

``--json`` output needs none of this: ``ragbag.core.jsonout`` escapes every such character.
"""

from __future__ import annotations

import io
from typing import TextIO

from rich.markup import escape

from ragbag.core import controls


def _visible(code: int) -> str:
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def _table(keep: str) -> dict[int, str]:
    return {c: _visible(c) for c in controls.codes(keep)}


# Tab is kept everywhere: it only moves the cursor right, and code is written with it.
_LINE = _table("\t")
_BLOCK = _table("\t\n")


def line(value: object) -> str:
    """A one-line field (a title, a path, an error): every control shown, line breaks too, so
    a title cannot print what looks like another hit or another source."""
    return str(value).translate(_LINE)


def block(value: object) -> str:
    """Multi-line text (a passage, an answer): every control shown but the line breaks."""
    return str(value).translate(_BLOCK)


def markup(value: object) -> str:
    """:func:`line` for a place in a rich markup string: its brackets printed as themselves."""
    return escape(line(value))


class Stream(io.TextIOBase):
    """A text stream that writes to ``stream`` through :func:`block`. It says it is no terminal,
    so a logger that colours for terminals (Dagster's) sends plain text through it."""

    def __init__(self, stream: TextIO):
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(block(text))
        return len(text)

    def flush(self) -> None:
        self._stream.flush()

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        """The stream's own descriptor, for code that hands it to a child process."""
        return self._stream.fileno()
