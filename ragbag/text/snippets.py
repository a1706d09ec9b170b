"""Snippets of a hit's text and the query words marked in them: one highlighter for the terminal
and the search page, so both show and mark the same words for the same hit.

The words to mark are the query's (two letters or more, not the commonest English ones, an
English ending taken off, CJK runs as two-character pieces); a snippet is about ``width``
characters around the first match, a third of them before it, cut at word breaks (never
mid-word); marks are segments ``[text, is_match]``, which each surface renders its own way.
"""

from __future__ import annotations

import re
from typing import Any

_WORD = re.compile(r"\w+", re.UNICODE)
_ENDINGS = ("ing", "ed", "es", "s", "ly")
_COMMON = frozenset(
    "a an and are as at be by can do does for from how i in is it me my of on or should that the this "
    "to was we were what when where which who why will with would you your".split()
)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")


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


def query_terms(query: str) -> list[str]:
    """What to mark in a snippet: the query's words (two letters or more, not the commonest
    English ones), lower-cased, an English ending taken off (``cleaning`` → ``clean``), longest
    first; a CJK run as its two-character pieces (the keyword index reads CJK in pieces too)."""
    out: set[str] = set()
    for word in _WORD.findall(query.lower()):
        if _CJK.search(word):
            out.update(word[i : i + 2] for i in range(max(1, len(word) - 1)))
        elif len(word) >= 2 and word not in _COMMON:
            out.add(_stem(word))
    return sorted(out, key=lambda t: (-len(t), t))


def _stem(word: str) -> str:
    for ending in _ENDINGS:
        if word.endswith(ending) and len(word) - len(ending) >= 3:
            return word[: -len(ending)]
    return word


def matcher(terms: list[str]) -> re.Pattern[str] | None:
    """A pattern for the terms: a word matches at a word's start and takes the rest of that word
    (``clean`` marks ``Cleaned`` and ``cleaning``); a CJK piece matches anywhere."""
    if not terms:
        return None
    parts = [re.escape(t) if _CJK.search(t) else rf"(?<!\w){re.escape(t)}\w*" for t in terms]
    return re.compile("|".join(parts), re.IGNORECASE)


def segments(text: str, terms: list[str]) -> list[list[Any]]:
    """``text`` as ``[piece, is_match]`` pairs, the terms marked."""
    pattern = matcher(terms)
    if pattern is None:
        return [[text, False]] if text else []
    out: list[list[Any]] = []
    at = 0
    for m in pattern.finditer(text):
        if m.start() > at:
            out.append([text[at : m.start()], False])
        out.append([m.group(0), True])
        at = m.end()
    if at < len(text):
        out.append([text[at:], False])
    return out


def snippet(text: str, terms: list[str], width: int) -> list[list[Any]]:
    """About ``width`` characters of ``text`` around its first match, whitespace folded, cut at
    word breaks and marked with … where cut; the terms marked."""
    flat = " ".join(text.split())
    pattern = matcher(terms)
    first = pattern.search(flat) if pattern else None
    start, end = window(flat, 0 if first is None else first.start(), width)
    piece = ("…" if start > 0 else "") + flat[start:end] + ("…" if end < len(flat) else "")
    return segments(piece, terms)
