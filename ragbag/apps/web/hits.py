"""Search through the page: query parameters → one SearchRequest → hits shaped for the browser.

The page describes a search with the same names as the CLI options and the tools' arguments
(``q``, ``mode``, ``source``, ``connector``, ``where``, ``after``, ``before``, ``as_of``), so
``SearchRequest.from_arguments`` builds the request and a bad filter is the same one-line
message the CLI prints. Paging asks for ``(page + 1) × size`` hits and keeps the last page:
search ranks all candidates anyway, so a later page costs what a larger ``k`` costs.

Snippets (``ragbag.text.snippets``, the terminal's too) are returned as segments
``[text, is_match]``, never as HTML: the browser builds
text nodes and ``<mark>`` elements from them, so no document text is ever parsed as markup.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlencode

from ragbag.answer.citations import hit_dict
from ragbag.core.errors import RagbagError
from ragbag.core.home import Home
from ragbag.core.rows import Hit, PageHit
from ragbag.search import people
from ragbag.text.snippets import query_terms, snippet

PAGE_SIZE = 10
MAX_PAGE_SIZE = 50
MAX_HITS = 200  # (page + 1) × size at most: deeper than anyone pages, cheap to rank
SNIPPET_CHARS = 280
FILTER_KEYS = ("source", "connector", "where", "person", "after", "before", "as_of")
# One retrieval at a time (searches, and the retrieval step of ask): the query encoder and the
# snapshot loads are shared by every request of the process.
SEARCH_LOCK = threading.Lock()


def arguments(params: Mapping[str, Sequence[str] | str | None], query_key: str = "q") -> dict[str, Any]:
    """The tool-style arguments of a search from form fields (each a value or a list of values;
    empty means unset): the query, the mode and the filters."""

    def values(key: str) -> list[str]:
        raw = params.get(key)
        items = [raw] if isinstance(raw, str) else list(raw or [])
        return [v.strip() for v in items if isinstance(v, str) and v.strip()]

    def one(key: str) -> str | None:
        got = values(key)
        return got[0] if got else None

    args: dict[str, Any] = {"query": one(query_key) or "", "mode": one("mode") or "hybrid"}
    for key in FILTER_KEYS:
        args[key] = values(key) if key in ("source", "connector") else one(key)
    return {k: v for k, v in args.items() if v not in (None, [])}


def whole_number(text: str | None, name: str) -> int | None:
    """A query parameter as a whole number (None when absent or empty); a one-line error else."""
    if text in (None, ""):
        return None
    try:
        return int(str(text))
    except ValueError:
        raise RagbagError(f"{name} must be a whole number, not {text!r}") from None


def page_numbers(params: Mapping[str, Sequence[str] | str | None]) -> tuple[int, int]:
    """(page, size) from ``page`` (0-based) and ``size``, checked."""

    def number(key: str, default: int) -> int:
        raw = params.get(key)
        value = whole_number(raw if isinstance(raw, str) else (list(raw)[0] if raw else None), key)
        return default if value is None else value

    page, size = number("page", 0), number("size", PAGE_SIZE)
    if page < 0 or not 1 <= size <= MAX_PAGE_SIZE:
        raise RagbagError(f"page must be 0 or more and size between 1 and {MAX_PAGE_SIZE}")
    if (page + 1) * size > MAX_HITS:
        raise RagbagError(f"only the first {MAX_HITS} hits can be paged through: narrow the search with filters")
    return page, size


def search(home: Home, args: dict[str, Any], page: int, size: int) -> dict[str, Any]:
    """One page of hits for ``args`` (``arguments``' output), strict-JSON ready."""
    from ragbag.search.request import SearchRequest

    request = SearchRequest.from_arguments({**args, "k": (page + 1) * size})  # a bad request fails here
    from ragbag.search import query as q

    with SEARCH_LOCK:
        rows = q.results(request, home=home)
    terms = query_terms(request.query)
    hits = [shape(h, rank, terms, request.query) for rank, h in enumerate(rows, 1)][page * size :]
    return {
        "query": request.query,
        "mode": request.mode,
        "page": page,
        "size": size,
        "hits": hits,
        "has_more": len(rows) == (page + 1) * size,
    }


def shape(h: Hit, rank: int, terms: list[str], query: str) -> PageHit:
    """A hit as the page shows it: the tools' hit (where it is from, its score, its pages), a
    snippet of its own chunk as segments, and the link to its passage."""
    text = people.shown(str(h.get("chunk_text") or h.get("text") or ""), h.get("people") or {})
    return PageHit(
        **hit_dict(h, rank),
        snippet=snippet(text, terms, SNIPPET_CHARS),
        href=doc_href(h["citation"], query),
    )


def doc_href(citation: str, query: str = "") -> str:
    """The reading page of a passage, scrolled to it."""
    params = {"cite": citation, **({"q": query} if query else {})}
    return f"/doc?{urlencode(params)}#hit"
