"""`ragbag ask`: retrieve, build a fenced prompt, generate, cite.

Relevance floor. Hybrid scores are calibrated (``ragbag.search.query``: a score means the same for
every query), so the floor is on the hybrid score itself: a passage enters the context when
its score reaches ``DEFAULT_MIN_SCORE`` (for ``--mode vector``, the same point of the model's
cosine range; ``--mode keyword``: any BM25 match), overridden by ``--min-score`` or
``config.yaml: ask: {min_score: …}``. The floor is low on purpose: on the personal-data set
the best relevant passage of a cross-lingual question often scores 0.1-0.3 (a model that reads
German less well than English), and an unrelated question's best hit under 0.05; a model that
gets context it cannot use says so, a refused question cannot be answered at all
(benchmarks/README.md, "Search on personal data"). When no passage passes, ``ask`` says so
and no model is called.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ragbag.answer import llm, prompts
from ragbag.core.errors import RagbagError
from ragbag.core.home import Home

DEFAULT_MIN_SCORE = 0.1
DEFAULT_K = 6
_CITE = re.compile(r"c:([0-9a-f]{6,})")
_BRACKETS = re.compile(r"\[([^\[\]]*c:[0-9a-f]{6,}[^\[\]]*)\]")


@dataclass
class Answer:
    question: str
    answer: str
    citations: list[dict[str, Any]]
    model: str
    relevant: bool
    retrieved: list[prompts.Block] = field(default_factory=list)
    unresolved: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        out = {
            "answer": self.answer,
            "citations": self.citations,
            "model": self.model,
            "question": self.question,
            "relevant": self.relevant,
        }
        if self.unresolved:
            out["unresolved_citations"] = self.unresolved
        return out


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
        lo, hi = embedding.spec(home.model).cosine_range
        return round(lo + DEFAULT_MIN_SCORE * (hi - lo), 4)
    return DEFAULT_MIN_SCORE if mode == "hybrid" else None


def retrieve(
    question: str,
    home: Home,
    k: int = DEFAULT_K,
    min_score: float | None = None,
    mode: str = "hybrid",
    **filters: Any,
) -> tuple[list[prompts.Block], float | None]:
    """Relevant passages as numbered blocks (empty when nothing passes the floor), and the best score."""
    from ragbag.answer.tools import _iso
    from ragbag.search import query

    limit = floor(home, mode, min_score)
    hits = query.search(question, k=k, mode=mode, home=home, **filters)
    blocks, best = [], None
    for h in hits.to_dict("records"):
        score = float(h["score"])
        best = score if best is None else max(best, score)
        if limit is None or score >= limit:
            vs = h.get("vector_score")
            blocks.append(
                prompts.Block(
                    len(blocks) + 1,
                    h["citation"],
                    h["source"],
                    h["connector"],
                    h["title"] or "",
                    h["uri"] or "",
                    _iso(h.get("date")),
                    h["doc_id"],
                    h["text"],
                    score,
                    None if vs is None or vs != vs else float(vs),
                )
            )
    return blocks, best


def cited(answer: str) -> list[str]:
    """Citation ids in order of first appearance: [c:ab12cd], [c:ab12cd, c:ef34ab], [c:ab12cd][c:…]."""
    out: list[str] = []
    for group in _BRACKETS.findall(answer):
        for cid in _CITE.findall(group):
            if cid not in out:
                out.append(cid)
    return out


def resolve_citations(answer: str, blocks: list[prompts.Block]) -> tuple[list[dict[str, Any]], list[str]]:
    by_id = {b.citation: b for b in blocks}
    found, missing = [], []
    for cid in cited(answer):
        b = by_id.get(cid) or next(
            (x for x in blocks if x.citation.startswith(cid) or cid.startswith(x.citation)), None
        )
        (found.append(b.as_citation()) if b else missing.append(cid))
    return found, missing


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
    question: str,
    provider: llm.Provider,
    home: Home | None = None,
    k: int = DEFAULT_K,
    min_score: float | None = None,
    history: list[tuple[str, str]] | None = None,
    on_text: Callable[[str], None] | None = None,
    mode: str = "hybrid",
    **filters: Any,
) -> Answer:
    """Answer one question (streaming text to ``on_text`` as it is generated)."""
    home = home or Home()
    if not question.strip():
        raise RagbagError("the question is empty")
    limit = floor(home, mode, min_score)
    blocks, best = retrieve(question, home, k=k, min_score=limit, mode=mode, **filters)
    if not blocks and history and len(question.split()) <= 5:
        # a short follow-up ("and the key box?") retrieves together with the last question
        blocks, best = retrieve(f"{history[-1][0]} {question}", home, k=k, min_score=limit, mode=mode, **filters)
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
    found, missing = resolve_citations(text, prompt.blocks)
    return Answer(question, text, found, provider.label, True, prompt.blocks, missing)
