"""How a file or record that yields no text is reported: :class:`Unreadable` carries the one-line
reason that becomes its ``ReadError``, and the helpers here write such reasons."""

from __future__ import annotations


class Unreadable(Exception):
    """A file that cannot be turned into text; the message is the one-line reason reported."""


def one_line(exc: BaseException | str) -> str:
    """An exception (or a message) as one line of at most 200 characters, for a ReadError: a
    build report lists one reason per line, and a parser's multi-line trace would break it."""
    return " ".join(str(exc).split())[:200] or type(exc).__name__


def human_size(n: int) -> str:
    """'50 MB' for the limits in messages, exact bytes when the limit is not a round size."""
    for unit, scale in (("MB", 2**20), ("KB", 2**10)):
        if n >= scale and n % scale == 0:
            return f"{n // scale} {unit}"
    return f"{n} bytes"
