"""No language model at all: the sentences of the retrieved passages that answer the question,
quoted with their citations and labelled as extracted. The default provider, so `ask` works
offline. Which sentences, and in what order, is ``ragbag.answer.sentence_rank``'s choice (what a
sentence means beside the question, the question's words it holds, whether it holds the kind of
fact asked for, its passage's score); split by language (``ragbag.text.sentences``). In the
agent it plays a fixed policy: search the question, then answer from what came back.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from ragbag.answer import sentence_rank
from ragbag.answer.citations import marker
from ragbag.answer.llm import Provider, Reply, ToolCall

LABEL = "Extracted from your documents (no language model; the most relevant sentences, quoted):"
MAX_SENTENCES = 4
# A sentence is quoted after the best one only when it scores within this of it.
CLOSE = 0.1


class ExtractiveProvider(Provider):
    name = "extractive"
    supports_tools = True  # a scripted policy, so `react` works offline too
    default_model = "extractive"

    def stream(self, messages, context=None) -> Iterator[str]:
        question = _question(messages)
        passages = [(b.citation, b.text, b.score) for b in context or []]
        yield extract(question, passages)

    def chat_tools(self, messages, tools) -> Reply:
        question = _question(messages, first=True)
        passages: list[tuple[str, str, float]] = []
        searched = False
        for m in messages:
            if m["role"] != "tool" and not str(m.get("content", "")).startswith("Observation"):
                continue
            searched = True
            try:
                obs = json.loads(m["content"].split("\n", 1)[-1] if m["role"] != "tool" else m["content"])
            except ValueError:
                continue
            from ragbag.answer.ask import DEFAULT_MIN_SCORE  # here: ask imports this package

            floor = float(self.options.get("min_score", DEFAULT_MIN_SCORE))
            for h in obs.get("hits") or []:
                if h.get("score") is None or h["score"] >= floor:  # the same floor as `ask`
                    passages.append((h["citation"], h["text"], float(h.get("score") or 0.0)))
        if not searched and any(t["name"] == "search" for t in tools):
            return Reply("", [ToolCall("search", {"query": question, "k": 8}, "call_0")])
        return Reply(extract(question, passages))


def _question(messages: list[dict[str, Any]], first: bool = False) -> str:
    users = [m for m in messages if m["role"] == "user"]
    if not users:
        return ""
    text = users[0 if first else -1]["content"]
    m = re.search(r"\nQuestion: (.*?)\n\nAnswer using", text, re.S)
    return m.group(1) if m else text


def extract(question: str, passages: list[tuple[str, str, float]], n: int = MAX_SENTENCES) -> str:
    """The best sentences of the passages (citation, text, retrieval score), best first, each with
    its citation: the best one, and up to ``n - 1`` more that score close to it."""
    if not passages:
        return "I could not find anything relevant to that in your indexed data."
    ranked = sentence_rank.rank(question, passages)
    if not ranked:
        return "I could not find anything relevant to that in your indexed data."
    top = ranked[0][0]
    seen: set[str] = set()
    lines: list[str] = []
    for score, c in ranked:
        if len(lines) == n or (lines and score < top - CLOSE):
            break
        if c.text not in seen:
            seen.add(c.text)
            lines.append(f"- {c.text} {marker(c.citation)}")
    return LABEL + "\n" + "\n".join(lines)
