"""`ragbag ask`: retrieve, build a fenced prompt, generate, cite.

Relevance floor. Hybrid scores are calibrated (``ragbag.search.query``: a score means the same for
every query), so the floor is on the hybrid score itself: a passage enters the context when
its score reaches ``DEFAULT_MIN_SCORE`` (for ``--mode vector``, the same point of the model's
cosine range; ``--mode keyword``: any BM25 match), overridden by ``--min-score`` or
``config.yaml: ask: {min_score: …}``. The floor is low on purpose: the best relevant passage of
a cross-lingual question scores lower than a same-language one (a model that reads German less
well than English), yet still well above an unrelated question's best hit; a model that gets
context it cannot use says so, a refused question cannot be answered at all (the measured
scores: benchmarks/README.md, "Search on personal data"). When no passage passes, ``ask`` says
so and no model is called.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from ragbag.answer import citations, llm, prompts
from ragbag.answer.citations import Block
from ragbag.core.errors import RagbagError
from ragbag.core.home import Home
from ragbag.index.published import home_model
from ragbag.search.request import MAX_QUERY_CHARS, SearchRequest

DEFAULT_MIN_SCORE = 0.1
DEFAULT_K = 6


@dataclass
class Answer:
    question: str
    answer: str
    citations: list[dict[str, Any]]
    model: str
    relevant: bool
    retrieved: list[Block] = field(default_factory=list)
    unresolved: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        """The answer as ``ask --json`` prints it. A PDF citation also says where it is on the
        page: ``page`` and ``boxes`` (PDF points, one box per line, on that page) and ``pages``
        (every page it runs over), read from the file now; when the file is gone or changed,
        ``boxes_unavailable`` says so instead and the answer stands."""
        out: dict[str, Any] = {
            "answer": self.answer,
            "citations": [self._placed(c) for c in self.citations],
            "model": self.model,
            "question": self.question,
            "relevant": self.relevant,
        }
        if self.unresolved:
            out["unresolved_citations"] = self.unresolved
        return out

    def _placed(self, cited: dict[str, Any]) -> dict[str, Any]:
        if not cited.get("page"):
            return cited
        from ragbag.answer import visual

        b = citations.in_blocks(self.retrieved, cited["citation"])
        passage = (b.passage if b else "") or cited["text"]
        return {**cited, **visual.citation_boxes(cited["uri"], passage, cited["page"], cited["source"])}


def settings(home: Home) -> dict[str, Any]:
    raw = home.config().get("ask") or {}
    if not isinstance(raw, dict):
        raise RagbagError(f"{home.config_file}: 'ask' must be a mapping like {{min_score: 0.3, k: 6}}")
    return raw


def floor(home: Home, mode: str, min_score: float | None = None) -> float | None:
    """The relevance floor in the mode's own score: the caller's, else the home's ``ask.min_score``,
    else ``DEFAULT_MIN_SCORE`` (keyword mode: none, BM25 has no scale)."""
    from ragbag.models import embedding

    if min_score is not None:
        return min_score
    configured = settings(home).get("min_score")
    if configured is not None:
        return float(configured)
    if mode == "vector":
        lo, hi = embedding.spec(home_model(home)).cosine_range
        return round(lo + DEFAULT_MIN_SCORE * (hi - lo), 4)
    return DEFAULT_MIN_SCORE if mode == "hybrid" else None


def retrieve(request: SearchRequest | str, home: Home, **options: Any) -> tuple[list[Block], float | None]:
    """Relevant passages as numbered blocks (empty when nothing passes the floor), and the best
    score. ``request``: a SearchRequest, or a question with the request's options (``k`` is
    ``DEFAULT_K`` unless given). Its ``min_score`` is the relevance floor (``floor``), applied
    to the hits here rather than inside the search, so the best score below it is known."""
    from ragbag.search import query

    request = _request(request, options)
    limit = floor(home, request.mode, request.min_score)
    hits = query.results(replace(request, min_score=None), home=home)
    blocks: list[Block] = []
    best: float | None = None
    for h in hits:
        score = float(h["score"])
        best = score if best is None else max(best, score)
        if limit is None or score >= limit:
            blocks.append(citations.block(len(blocks) + 1, h))
    return blocks, best


def nothing_found(best: float | None, limit: float | None) -> str:
    why = (
        f" (best match score {best:.2f}, below the {limit:.2f} floor)" if best is not None and limit is not None else ""
    )
    return (
        "I couldn't find anything relevant to that in your indexed data"
        + why
        + ". Try other words, fewer filters, or `ragbag search` to look around."
    )


def ask(
    request: SearchRequest | str,
    provider: llm.Provider,
    home: Home | None = None,
    history: list[tuple[str, str]] | None = None,
    on_text: Callable[[str], None] | None = None,
    **options: Any,
) -> Answer:
    """Answer one question, ``request.query``, from the passages the rest of ``request`` retrieves
    (or a question with the request's options, as ``retrieve`` takes them), streaming text to
    ``on_text`` as it is generated."""
    home = home or Home()
    request = _request(request, options)
    question = request.query
    limit = floor(home, request.mode, request.min_score)
    request = replace(request, min_score=limit)
    blocks, best = retrieve(request, home)
    if not blocks and history and len(question.split()) <= 5:
        # a short follow-up ("and the key box?") retrieves together with the last question
        joined = f"{history[-1][0]} {question}"[-MAX_QUERY_CHARS:]  # two questions may be longer than one query
        blocks, best = retrieve(replace(request, query=joined), home)
    if not blocks:
        text = nothing_found(best, limit)
        if on_text:
            on_text(text)
        return Answer(question, text, [], provider.label, False)
    prompt = prompts.build(question, blocks, history)
    parts = []
    for chunk in provider.stream(prompt.messages, context=prompt.blocks):
        parts.append(chunk)
        if on_text:
            on_text(chunk)
    text = "".join(parts).strip()
    found, missing = citations.resolve(text, lambda cid: _cited_block(prompt.blocks, cid))
    return Answer(question, text, found, provider.label, True, prompt.blocks, missing)


def _cited_block(blocks: list[Block], cid: str) -> dict[str, Any] | None:
    """A cited id resolved against the prompt's context only: ``ask`` shows no passage the model did not see."""
    b = citations.in_blocks(blocks, cid)
    return b.as_citation() if b else None


def _request(request: SearchRequest | str, options: dict[str, Any]) -> SearchRequest:
    if isinstance(request, SearchRequest):
        if options:
            raise TypeError(f"got a SearchRequest and options {sorted(options)}: put them in the request")
        return request
    if not isinstance(request, str) or not request.strip():
        raise RagbagError("the question is empty")
    return SearchRequest.parse(request, **{"k": DEFAULT_K, **options})
