"""`ragbag ask`: retrieve, build a fenced prompt, generate, cite.

Relevance floor. Hybrid scores are fused and normalised per query (the best hit of an
unrelated query scores as high as the best hit of a good one), so the floor uses the cosine
similarity of the query and passage embeddings (``vector_score``). Measured on the sample data
(all-MiniLM-L6-v2): the best hit of ten answerable questions scored 0.36-0.67, of ten unrelated
ones 0.03-0.27. Default floor 0.30 (``--min-score`` or ``config.yaml: ask: {min_score: …}``).
A passage enters the context when its cosine is at least the floor, or at least half of it and
BM25 matched it too; with ``--mode keyword`` (no embeddings) any BM25 match counts.
When no passage passes, ``ask`` says so and no model is called.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable

from ragbag import llm, prompts
from ragbag.errors import RagbagError
from ragbag.home import Home

DEFAULT_MIN_SCORE = 0.30
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
        out = {"answer": self.answer, "citations": self.citations, "model": self.model,
               "question": self.question, "relevant": self.relevant}
        if self.unresolved:
            out["unresolved_citations"] = self.unresolved
        return out


def settings(home: Home) -> dict[str, Any]:
    raw = home.config().get("ask") or {}
    if not isinstance(raw, dict):
        raise RagbagError(f"{home.config_file}: 'ask' must be a mapping like {{min_score: 0.3, k: 6}}")
    return raw


def retrieve(
    question: str, home: Home, k: int = DEFAULT_K, min_score: float | None = None,
    mode: str = "hybrid", **filters: Any,
) -> tuple[list[prompts.Block], float | None]:
    """Relevant passages as numbered blocks (empty when nothing passes the floor), and the best cosine."""
    from ragbag import query
    from ragbag.tools import _iso

    floor = settings(home).get("min_score", DEFAULT_MIN_SCORE) if min_score is None else min_score
    hits = query.search(question, k=k, mode=mode, home=home, **filters)
    blocks, best = [], None
    for h in hits.to_dict("records"):
        vs = h.get("vector_score")
        vs = None if vs is None or vs != vs else float(vs)
        kw = h.get("keyword_score")
        kw = kw is not None and kw == kw
        if vs is not None:
            best = vs if best is None else max(best, vs)
        ok = kw if mode == "keyword" else (vs is not None and (vs >= floor or (kw and vs >= floor / 2)))
        if ok:
            blocks.append(prompts.Block(
                len(blocks) + 1, h["citation"], h["source"], h["connector"], h["title"] or "", h["uri"] or "",
                _iso(h.get("date")), h["doc_id"], h["text"], float(h["score"]), vs))
    if mode != "keyword" and (best is None or best < floor):
        return [], best
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
        b = by_id.get(cid) or next((x for x in blocks if x.citation.startswith(cid) or cid.startswith(x.citation)), None)
        (found.append(b.as_citation()) if b else missing.append(cid))
    return found, missing


def nothing_found(best: float | None, floor: float) -> str:
    why = f" (best match similarity {best:.2f}, below the {floor:.2f} floor)" if best is not None else ""
    return ("I couldn't find anything relevant to that in your indexed data" + why +
            ". Try other words, fewer filters, or `ragbag search` to look around.")


def ask(
    question: str, provider: llm.Provider, home: Home | None = None, k: int = DEFAULT_K,
    min_score: float | None = None, history: list[tuple[str, str]] | None = None,
    on_text: Callable[[str], None] | None = None, mode: str = "hybrid", **filters: Any,
) -> Answer:
    """Answer one question (streaming text to ``on_text`` as it is generated)."""
    home = home or Home()
    if not question.strip():
        raise RagbagError("the question is empty")
    floor = settings(home).get("min_score", DEFAULT_MIN_SCORE) if min_score is None else min_score
    blocks, best = retrieve(question, home, k=k, min_score=floor, mode=mode, **filters)
    if not blocks and history and len(question.split()) <= 5:
        # a short follow-up ("and the key box?") retrieves together with the last question
        blocks, best = retrieve(f"{history[-1][0]} {question}", home, k=k, min_score=floor, mode=mode, **filters)
    if not blocks:
        text = nothing_found(best, floor)
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
