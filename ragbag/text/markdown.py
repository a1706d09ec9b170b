"""A markdown document's title, found in one pass over its lines.

The first level-1 heading is the title: an ATX ``# Title`` line, or a setext title (a line
underlined with ``===``), never a ``#`` line inside a fenced code block (a shell comment). The
scan is line by line, with no regular expression that could backtrack: a title line of a
million spaces costs what its length costs (a pattern like ``#[ \\t]+(.+?)[ \\t#]*$`` took time
quadratic in such a line, and matching a fence to its close, quadratic in the fences).
"""

from __future__ import annotations

_FENCES = ("```", "~~~")


def markdown_title(text: str) -> str:
    """The first level-1 heading outside fenced code, or "" when there is none."""
    fence = ""
    previous = ""
    for line in _lines(text):
        stripped = line.strip()
        if fence:
            if line.startswith(fence):
                fence = ""
            previous = ""
            continue
        opener = next((f for f in _FENCES if line.startswith(f)), "")
        if opener:
            fence, previous = opener, ""
            continue
        if line.startswith("#") and len(line) > 1 and line[1] in " \t":
            title = line[1:].strip().rstrip("#").strip()
            if title:
                return title
        if previous and stripped and set(stripped) == {"="} and line[:1] == "=":
            return previous
        previous = line.strip() if line[:1].strip() else ""
    return ""


def _lines(text: str):
    """The lines of ``text`` one at a time (a list of them costs ~60 bytes a line)."""
    start = 0
    while start <= len(text):
        end = text.find("\n", start)
        end = len(text) if end == -1 else end
        yield text[start:end]
        start = end + 1
