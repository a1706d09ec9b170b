"""Where a snippet of a hit's text starts and ends: one rule for the terminal and the search page.

About ``width`` characters around the first match, a third of them before it, cut at word
breaks (never mid-word), so both surfaces show the same words for the same hit.
"""

from __future__ import annotations


def window(flat: str, first: int, width: int) -> tuple[int, int]:
    """(start, end) of the snippet of ``flat`` (whitespace already folded) around offset
    ``first``: moved forward to the next word when the cut would split one (within 40
    characters), and back to the last word break in the second half of the window."""
    start = max(0, first - width // 3)
    if start > 0 and not flat[start - 1].isspace():
        space = flat.find(" ", start)
        start = space + 1 if 0 <= space < start + 40 else start
    end = min(len(flat), start + width)
    if end < len(flat) and not flat[end].isspace():
        space = flat.rfind(" ", start, end)
        end = space if space > start + width // 2 else end
    return start, end
