"""One search request, checked once, and the one declaration of its filters.

The CLI (``search``, ``ask``, ``react``), the MCP/agent ``search`` tool, ``ask`` and notebooks all
describe a search with a :class:`SearchRequest`. Building one normalises what people type (a name
or a list, JSON text or a dict, ``30d`` or an ISO date) and refuses a request that cannot mean
anything with a one-line :class:`RagbagError`, before any model or index loads: no caller
answers "0 hits" to a typo, and no caller has its own checks to drift from the others'.

``FILTERS`` declares the filter options once; the CLI's options and the tools' JSON schema are
generated from it, so the two never disagree about what a filter is called or accepts. Light on
purpose (no numpy, no models): the CLI imports it to build its options.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ragbag.core.errors import RagbagError
from ragbag.search import filters

MODES = ("hybrid", "vector", "keyword")
FUSIONS = ("rrf", "weighted", "calibrated")
# Hybrid ranking is a weighted sum of calibrated scores (see ``ragbag.search.fusion``);
# min-max ("weighted") and reciprocal-rank fusion stay available as options.
DEFAULT_FUSION = "calibrated"
RRF_K = 60
# How many first-stage candidates ``--rerank`` re-scores unless told otherwise; chosen with
# benchmarks/tune_fusion.py --rerank (benchmarks/README.md, "The reranker").
RERANK_DEPTH = 20
MAX_QUERY_CHARS = 2_000
"""The longest query any entry point takes (the CLI, MCP and agent tools, the search page,
``ask``, notebooks), checked here so none can forget it. A query is embedded whole, window by
window: 30,000 characters cost 35–70 s of encoding on two cores, while the MCP server or the
search page holds its one search lock. What people type, or agents write, stays far below (a
long question is a paragraph); a longer text is a document pasted in, and its key words or one
sentence of it find the same passages."""


@dataclass(frozen=True)
class FilterOption:
    """One filter, as every entry point spells it: ``field`` in a SearchRequest, ``argument`` as
    the CLI option (``--source``) and the JSON tool argument (``source``: one name or several,
    the documented spelling), ``help`` for the CLI and ``description`` for agents."""

    field: str
    argument: str
    kind: str  # "names" (repeatable / a name or a list), "where" (a JSON object), "time"
    help: str
    description: str

    @property
    def flag(self) -> str:
        return "--" + self.argument.replace("_", "-")


_OPERATORS = " ".join(filters.OPERATORS)
FILTERS: tuple[FilterOption, ...] = (
    FilterOption(
        "sources",
        "source",
        "names",
        "Only these sources (repeatable).",
        "Only these sources (a name or a list of names, see list_sources).",
    ),
    FilterOption(
        "connectors",
        "connector",
        "names",
        "Only these connectors (repeatable).",
        "Only these connector types, e.g. files, code, mail.",
    ),
    FilterOption(
        "where",
        "where",
        "where",
        'Metadata filter, e.g. \'{"ext": {"==": "md"}}\'.',
        'Metadata filter, ANDed across fields: {"field": {"op": value}} with ops '
        f"{_OPERATORS}; "
        '{"field": value} means ==. Fields: title uri source connector date, version (a '
        "document's version number: that version is searched), and metadata such as path ext "
        "language sender. A JSON object or its JSON text.",
    ),
    FilterOption(
        "person",
        "person",
        "text",
        "Only what this person sent, received, attended or chatted in (a name, resolved through contacts; "
        "or a kinship word: dad).",
        "Only records of this person: mail from/to/cc them, chats with them, events they attend. A name "
        "(or part of one), resolved through the home's contacts to their addresses and numbers; a name "
        "that fits several contacts is an error naming them. A name in Latin letters also finds one "
        "written in another script, and a kinship word (dad, mum, oma) the one person the home calls so.",
    ),
    FilterOption(
        "after",
        "after",
        "time",
        "Only records dated at/after (YYYY-MM-DD or 30d).",
        "Only records dated at/after: YYYY-MM-DD, an ISO time, or an age like 30d, 2w, 6m, 1y.",
    ),
    FilterOption(
        "before",
        "before",
        "time",
        "Only records dated before.",
        "Only records dated before (same formats as after).",
    ),
    FilterOption(
        "as_of",
        "as_of",
        "time",
        "Search the data as it was then: each document's version of that time (YYYY-MM-DD or 30d).",
        "Search the data as it was at that time: each document's version then, including documents "
        "since deleted (same formats as after). Default: the current versions.",
    ),
)

_ONE_OR_MANY = [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]
_SCHEMA = {
    "names": lambda f: {"description": f.description, "anyOf": _ONE_OR_MANY},
    "where": lambda f: {"description": f.description, "anyOf": [{"type": "object"}, {"type": "string"}]},
    "time": lambda f: {"type": "string", "description": f.description},
    "text": lambda f: {"type": "string", "description": f.description},
}


def filter_schema() -> dict[str, dict[str, Any]]:
    """The filters as JSON-schema properties of a tool's arguments, keyed by argument name."""
    return {f.argument: _SCHEMA[f.kind](f) for f in FILTERS}


@dataclass(frozen=True)
class SearchRequest:
    """What to search for and how. Construction validates and normalises every field, so a
    request that exists is one that can be run: ``sources``/``connectors`` become tuples (empty:
    all), ``where`` parsed conditions, ``after``/``before`` aware UTC times. ``dataclasses.replace``
    checks again. ``rerank`` is how many candidates the second stage re-scores (0: off).

    ``as_of`` searches each document as it was at that time (``ragbag.pipeline.history``); a
    ``where`` on ``version`` searches that version; otherwise only current versions are searched.

    ``min_score`` drops hits below a floor on the mode's own score (cosine for vector, BM25 for
    keyword, the fused score for hybrid). ``collapse`` drops near-duplicate chunks (same text
    mailed twice, a file copied). ``context=N`` widens each hit to N neighbouring chunks on each
    side of the same document. ``width`` (the graph search width) and ``recompute`` (exact
    embeddings recomputed per query in a compact source) trade speed for recall; the defaults
    are ``index.params.Params``'. ``alpha`` overrides the vector list's share in fusion."""

    query: str
    k: int = 10
    sources: tuple[str, ...] = ()
    connectors: tuple[str, ...] = ()
    where: tuple[filters.Condition, ...] = ()
    person: str | None = None
    after: datetime | None = None
    before: datetime | None = None
    as_of: datetime | None = None
    mode: str = "hybrid"
    fusion: str = DEFAULT_FUSION
    alpha: float | None = None
    rrf_k: int = RRF_K
    min_score: float | None = None
    context: int = 0
    collapse: bool = True
    width: int | None = None
    recompute: int | None = None
    rerank: int = 0

    @classmethod
    def parse(cls, query: Any, **options: Any) -> SearchRequest:
        """A request from loosely typed values, as notebooks, the CLI and tools have them (a name
        or a list, JSON text, ``"30d"``): the same checks as the constructor, typed for callers."""
        return cls(query, **options)

    @classmethod
    def from_arguments(cls, arguments: dict[str, Any]) -> SearchRequest:
        """A request from the JSON arguments of the MCP/agent ``search`` tool (``rerank`` there
        is on or off: on re-scores ``RERANK_DEPTH`` candidates)."""
        args = fields_of(arguments)
        args["rerank"] = rerank_depth(bool(args.get("rerank")))
        return cls.parse(args.pop("query", None), **args)

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise RagbagError(f"unknown mode {self.mode!r}; use one of: {', '.join(MODES)}")
        if self.fusion not in FUSIONS:
            raise RagbagError(f"unknown fusion {self.fusion!r}; use one of: {', '.join(FUSIONS)}")
        if not isinstance(self.query, str) or not self.query.strip():
            raise RagbagError("the query is empty: say what to look for")
        _check_length(self.query)
        if self.k < 1:
            raise RagbagError(f"k must be at least 1, not {self.k}")
        _check_min_score(self.min_score)
        set_ = object.__setattr__  # frozen: normalise in place, once
        set_(self, "sources", _names(self.sources))
        set_(self, "connectors", _names(self.connectors))
        _check_connectors(self.connectors)
        set_(self, "where", _conditions(self.where))
        set_(self, "person", _person(self.person))
        set_(self, "after", filters.parse_time(self.after))
        set_(self, "before", filters.parse_time(self.before))
        set_(self, "as_of", filters.parse_time(self.as_of))


def fields_of(arguments: dict[str, Any]) -> dict[str, Any]:
    """Filters spelled as CLI options and tool arguments (``source``, ``connector``) renamed to
    the request's fields (``sources``, ``connectors``); everything else as it is. The one place
    the two spellings meet."""
    renamed = {f.argument: f.field for f in FILTERS}
    return {renamed.get(name, name): value for name, value in arguments.items()}


def check_options(question: str | None = None, **options: Any) -> None:
    """The checks of a request before its search: ``ask`` before a provider loads (``-i`` before
    its first question), ``react``, whose agent writes its own queries from the question. Bad
    options, and a question too long to be a query, fail before anything loads (an empty one
    is the caller's to word)."""
    SearchRequest(question if question and question.strip() else "(no query yet)", **options)


def rerank_depth(on: bool, depth: int | None = None) -> int:
    """``SearchRequest.rerank`` from a switch and an optional depth (``--rerank --rerank-depth``)."""
    return (depth or RERANK_DEPTH) if on else 0


def _check_min_score(min_score: float | None) -> None:
    """A score floor must be a number: NaN compares false with every score (nothing passes) and
    an infinite one lets everything or nothing through."""
    if min_score is not None and not math.isfinite(min_score):
        raise RagbagError(f"--min-score {min_score}: give a finite number")


def _check_length(query: str) -> None:
    """At most ``MAX_QUERY_CHARS``, refused in one line that says why."""
    if len(query) > MAX_QUERY_CHARS:
        raise RagbagError(
            f"the query is {len(query):,} characters long; the most is {MAX_QUERY_CHARS:,} (embedding a "
            "longer one takes up to a minute): search for its key words or one sentence of it"
        )


def _check_connectors(names: Iterable[str]) -> None:
    import ragbag.connectors as registry  # only its name list: no connector module is imported

    for name in names:
        if name not in registry.NAMES:
            raise RagbagError(f"unknown connector {name!r}; choose one of: {', '.join(registry.NAMES)}")


def _person(value: Any) -> str | None:
    """A person's name as asked (None: anyone); a bound on its length like a query's."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if not isinstance(value, str):
        raise RagbagError("--person takes a name")
    if len(value) > 200:
        raise RagbagError(f"--person is {len(value):,} characters long: give a name")
    return " ".join(value.split())


def _names(value: str | Iterable[str] | None) -> tuple[str, ...]:
    """A name, several, or none (all) as a tuple."""
    if value is None or value == "":
        return ()
    if isinstance(value, str):
        return (value,)
    return tuple(value)


def _conditions(where: Any) -> tuple[filters.Condition, ...]:
    """JSON text, a dict, or the conditions of a request being copied (``dataclasses.replace``)."""
    if isinstance(where, tuple) and all(isinstance(c, filters.Condition) for c in where):
        return tuple(where)
    return tuple(filters.parse_where(where))
