"""No language model at all: the most relevant sentences of the retrieved passages, quoted with
their citations and labelled as extracted. The default provider, so `ask` works offline.

Sentences are scored by the question's keyword tokens they contain (the same language-aware
tokenizer as BM25: stemming, CJK segmentation), weighted by inverse frequency across the
candidate sentences and by the passage's retrieval rank. A record's own summary line (a mail's
"From: … · Subject: …") and quoted replies are never candidates, and for a question that asks
for an amount, a count, a date or a time a sentence holding a digit gains as much as a question
word would (the answer to "how much extra did I pay?" may be "Nachzahlung: 142,37 EUR"). In
the agent it plays a fixed policy: search the question, then answer from what came back.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from typing import Any

from ragbag.answer.citations import marker
from ragbag.answer.llm import Provider, Reply, ToolCall

LABEL = "Extracted from your documents (no language model; the most relevant sentences, quoted):"
MAX_SENTENCES = 4
MAX_SENTENCE_CHARS = 400
_SPLIT = re.compile(r"(?<=[.!?。！？])\s+|\n\s*\n|\n(?=\s*[-*#>|]|\s*\d+[.)]\s)")
# What a record says about itself rather than what it says: the summary line connectors put first
# (a mail's "From: … · To: … · Date: … · Subject: …", "Attachments: …", an attachment's or a
# chat file's "Attachment NAME of the mail …"). Quoting one answers nothing.
_SELF_DESCRIPTION = re.compile(r"^(?:\w+: [^·\n]*(?: · \w+: [^·\n]*)+|Attachments?: |Attachment \S.* (?:of|sent by) )")
# A question that asks for an amount, a count, a date or a time: the sentence that answers it
# holds a digit, whatever language it is written in.
_ASKS_FOR_NUMBER = re.compile(
    r"\b(?:how (?:much|many|long|old|often|late|early)|when|what (?:time|date|day)|which (?:day|date|seat|number|"
    r"row|platform|gate|room|code)|wie (?:viel|viele|lange|alt)|wann|welche[nrms]? (?:tag|datum|nummer|platz)|"
    r"combien|quand|quelle heure|cu[aá]nt[oa]s?|cu[aá]ndo|quanto|quantos|quando|hoeveel|wanneer)\b"
    r"|多少|几点|几号|什么时候|何時|いつ|いくら|何日|몇|언제",
    re.IGNORECASE,
)


class ExtractiveProvider(Provider):
    name = "extractive"
    supports_tools = True  # a scripted policy, so `react` works offline too
    default_model = "extractive"

    def stream(self, messages, context=None) -> Iterator[str]:
        question = _question(messages)
        passages = [(b.citation, b.text, b.vector_score) for b in context or []]
        yield extract(question, passages)

    def chat_tools(self, messages, tools) -> Reply:
        question = _question(messages, first=True)
        passages: list[tuple[str, str, float | None]] = []
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
                    passages.append((h["citation"], h["text"], h.get("vector_score")))
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


def sentences(text: str) -> list[tuple[int, str]]:
    """(paragraph number, sentence) of a passage; headings and fragments are left out."""
    out = []
    for para_no, para in enumerate(re.split(r"\n\s*\n", text)):
        if para.lstrip().startswith(">"):  # a quoted reply: what someone else wrote earlier
            continue
        for part in _SPLIT.split(para):
            part = part.strip()
            if _SELF_DESCRIPTION.match(part):
                continue
            if part.startswith("#"):  # a markdown heading: a title, not a statement
                part = part.partition("\n")[2].strip()
            s = " ".join(part.split()).lstrip(">*- ").strip()
            if len(s) >= 12 and len(s.split()) >= 3 and re.search(r"\w", s):
                if len(s) > MAX_SENTENCE_CHARS:
                    s = s[:MAX_SENTENCE_CHARS].rsplit(" ", 1)[0] + " …"
                out.append((para_no, s))
    return out


def extract(question: str, passages: list[tuple[str, str, float | None]], n: int = MAX_SENTENCES) -> str:
    """The n best sentences of the passages (citation, text, cosine or None), best first, each
    with its citation. A sentence's score is its keyword overlap with the question (IDF-weighted)
    times its passage's relevance (cosine when known, else 1/rank)."""
    from ragbag.index import bm25

    if not passages:
        return "I could not find anything relevant to that in your indexed data."
    q = set(bm25.tokenize(question))
    cands = []  # (citation, passage rank, position, sentence, tokens)
    weight = {}
    for rank, (cit, text, vs) in enumerate(passages):
        weight[rank] = max(0.05, vs) if vs is not None else 1.0 / (1 + rank)
        for pos, (para, s) in enumerate(sentences(text)):
            cands.append((cit, rank, pos, s, set(bm25.tokenize(s)), para))
    if not cands:
        return "I could not find anything relevant to that in your indexed data."
    para_of = {(c[1], c[2]): c[5] for c in cands}
    df = {t: sum(1 for c in cands if t in c[4]) for t in q}
    idf = {t: math.log(1 + len(cands) / (1 + df[t])) for t in q}
    # a digit in a sentence, for a question that asks for a number, counts as much as a
    # question word of middling rarity
    digit_bonus = (sum(idf.values()) / len(idf) if idf else 1.0) if _ASKS_FOR_NUMBER.search(question) else 0.0
    scored = []
    for cit, rank, pos, s, toks, _ in cands:
        overlap = sum(idf[t] for t in q & toks) + (digit_bonus if re.search(r"\d", s) else 0.0)
        lead = 0.2 / (1 + pos)  # earlier sentences break ties
        scored.append(((overlap + lead) * weight[rank], overlap, rank, pos, cit, s))
    scored.sort(key=lambda x: -x[0])
    top = scored[0][0]
    # sentences sharing the question's words, and not far behind the best; else lead sentences
    best = [x for x in scored if x[1] > 0 and x[0] >= 0.5 * top][:n] or scored[: min(n, 2)]
    if len(best) < 2:  # one hit: the next sentence of its paragraph usually finishes the thought
        _, _, rank, pos, _, _ = best[0]
        best += [
            x for x in scored if x[2] == rank and x[3] == pos + 1 and para_of[(rank, pos + 1)] == para_of[(rank, pos)]
        ]
    seen, lines = set(), []
    for *_, cit, s in best:
        if s not in seen:
            seen.add(s)
            lines.append(f"- {s} {marker(cit)}")
    return LABEL + "\n" + "\n".join(lines)
