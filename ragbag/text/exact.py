"""Exact evidence in a query: identifiers and quoted phrases, which a hit either contains or not.

People search their own data for a tracking number, an invoice id, an error code or a function
name far more than benchmark sets suggest. Such a term occurs in one or two records; an
embedding model sees a string of digits as noise, and a score fusion of two lists can rank
a semantically close record above the one that holds the id. Containing the id is the strongest
evidence a person can give, so hybrid ranking puts hits that contain the query's exact terms
above those that do not (``promote``), and orders each tier by the fused score.

What counts as exact: a ``"quoted phrase"``, or a token that mixes letters and digits
(``1Z999AA10123456784``, ``RE-2025-08817``, ``E0433``, ``LH454``), a run of five or more digits
(an order or account number; shorter numbers are years and quantities), or a code name with an
underscore, a dot between letters or an inner capital (``parse_invoice``, ``os.path``,
``getUserId``). Matching is case-insensitive on the hit's text, title and URI.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

_QUOTED = re.compile(r"[\"“„«]([^\"”“«»]{2,})[\"”»]")
_TOKEN = re.compile(r"[^\s,;()\[\]{}<>\"'“”„«»]+")
_EDGE = ".:!?-/#"
_CAMEL = re.compile(r"[a-z][A-Z]")
_DOTTED = re.compile(r"[A-Za-z]\.[A-Za-z]")

# A hit holding every exact term of the query is lifted by this (fused scores lie in [0, 1]).
TIER = 1.0


def terms(query: str) -> list[str]:
    """The exact terms of a query, lower-cased, in order, without repeats."""
    found = [m.group(1).strip() for m in _QUOTED.finditer(query)]
    rest = _QUOTED.sub(" ", query)
    for raw in _TOKEN.findall(rest):
        tok = raw.strip(_EDGE)
        if _is_identifier(tok):
            found.append(tok)
    return list(dict.fromkeys(t.lower() for t in found if t))


def _is_identifier(tok: str) -> bool:
    if len(tok) < 3:
        return False
    digits = sum(c.isdigit() for c in tok)
    letters = sum(c.isalpha() for c in tok)
    if digits and letters:
        return True
    if digits >= 5 and not letters:
        return True
    if letters and ("_" in tok.strip("_") or _CAMEL.search(tok) or _DOTTED.search(tok)):
        return True
    return False


def promote(
    ranked: Sequence[tuple[int, int, float]], query_terms: Sequence[str], text_of: Callable[[int, int], str]
) -> list[tuple[int, int, float]]:
    """Hits re-ranked by how many exact terms they contain (more first), then by score: a hit's
    score grows by ``TIER`` times the share of the terms it contains, so one holding them all
    scores above 1 and outranks every hit holding fewer."""
    if not query_terms:
        return list(ranked)
    out = []
    for i, j, score in ranked:
        text = text_of(i, j).lower()
        found = sum(t in text for t in query_terms)
        out.append((i, j, score + TIER * found / len(query_terms)))
    out.sort(key=lambda t: -t[2])
    return out
