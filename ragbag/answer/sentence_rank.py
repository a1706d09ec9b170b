"""Which sentence of the retrieved passages answers the question: the extractive answerer's ranking.

A sentence scores by what it means beside the question and four signals more (``WEIGHTS``,
chosen on the tuning persona's questions of the judged ask set, ``benchmarks/ask_bench.py``;
the held-out persona's figures are in ``benchmarks/README.md``):

- **meaning**: the cosine between the question (as a query) and the sentence (as a passage) under
  multilingual-e5-small, so an English question can find the German sentence that answers it;
- **words**: the question's keyword tokens it holds (the BM25 tokenizer), weighted by their rarity
  among the candidates;
- **kind**: whether it holds the kind of fact asked for (an amount, a date, a time, a code, a
  count: ``answer_types``);
- **passage**: its passage's retrieval score, over the best passage's;
- **title** (a penalty) and **new**: a heading that only repeats the question's topic answers
  nothing, while an answer brings words the question does not have.

Some sentences are never answers, whatever they score: what a record says about itself (a mail's
"From: … · Subject: …" line, a page's "visited 3 times"), mail headers, greetings and sign-offs,
"On … wrote:" lines, quoted replies and a calendar entry's list of occurrences.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ragbag.answer import answer_types
from ragbag.text import sentences as splitter

MAX_SENTENCE_CHARS = 400
# Weights of the signals (meaning's is 1), chosen on the tuning persona's questions.
WEIGHTS = {"passage": 0.4, "words": 0.3, "kind": 0.2, "title": -0.05, "new": 0.05}

# What a record says about itself rather than what it says (connectors put it first): a mail's
# "From: … · To: … · Subject: …", "Attachments: …", an attachment's "Attachment NAME of the mail".
_SELF_DESCRIPTION = re.compile(rf"^(?:{splitter.SUMMARY_LINE}|Attachments?: |Attachment \S.* (?:of|sent by) )")
# Said of a record, not in it, and cut out before splitting: a browser page's visits, a calendar
# entry's list of occurrences.
_ABOUT = re.compile(
    r"\S+: visited \d+ times? in [^\n]*"
    r"|\s(?:First )?[Oo]ccurrences: .*?(?=\s(?:Where|Calendar|Organizer|Attendees):|$)",
    re.S,
)
# A mail header line; a date line is one when it ends in a time zone (a body's "Datum: 18.04.2024,
# 09:40 Uhr" is the appointment, and may be the answer).
_HEADER = re.compile(
    r"^(?:From|To|Cc|Bcc|Subject|Von|An|Betreff|De|À|Objet|Para|Asunto):\s"
    r"|^(?:Date|Sent|Datum|Gesendet|Envoyé|Enviado|Fecha):\s.*(?:[+-]\d{4}|UTC|GMT|\bCES?T)\)?$",
    re.IGNORECASE,
)
_SIGN_OFF = re.compile(
    r"^(?:mit freundlichen gr[üu](?:ß|ss)en|freundliche gr[üu](?:ß|ss)e|viele gr[üu](?:ß|ss)e|beste gr[üu](?:ß|ss)e|"
    r"liebe gr[üu](?:ß|ss)e|lg|best regards|kind regards|warm regards|regards|cheers|thanks|thank you|best|"
    r"cordialement|bien à vous|bonne journée|bises|amicalement|saludos|un saludo|un beso|un abrazo|atentamente|"
    r"abraços|atenciosamente|met vriendelijke groet|groeten|sehr geehrte[rn]? [^,]*|dear [^,]*|hallo [^,]*|"
    r"hi [^,]*|hello [^,]*|bonjour [^,]*|hola [^,]*|liebe[rs]? [^,]*)[,!.]?(?:\s+\S+){0,5}$",
    re.IGNORECASE,
)
_WROTE = re.compile(r"^(?:On .* wrote|Am .* schrieb .*|Le .* a écrit|El .* escribió)\s?:?$", re.IGNORECASE)

Similarity = Callable[[str, list[str]], np.ndarray]


@dataclass(frozen=True)
class Candidate:
    citation: str
    relevance: float  # its passage's retrieval score over the best passage's (1 for the best)
    text: str


def candidates(passages: Sequence[tuple[str, str, float]]) -> list[Candidate]:
    """The sentences of (citation, text, retrieval score) passages that could be an answer, in order."""
    out: list[Candidate] = []
    top = max((score for *_, score in passages), default=0.0)
    for citation, text, score in passages:
        out.extend(Candidate(citation, score / top if top > 0 else 1.0, s) for s in _sentences(text))
    return out


def _sentences(text: str) -> list[str]:
    kept = []
    text = _ABOUT.sub("", text)
    quoted = {no for no, para in enumerate(re.split(r"\n\s*\n", text)) if para.lstrip().startswith(">")}
    for sentence in splitter.split(text):
        if sentence.paragraph in quoted:  # a quoted reply: what someone else wrote earlier
            continue
        s = sentence.text.lstrip(">*-•# ").strip()
        if not _answerable(s):
            continue
        if len(s) > MAX_SENTENCE_CHARS:
            s = s[:MAX_SENTENCE_CHARS].rsplit(" ", 1)[0] + " …"
        kept.append(s)
    return kept


def _answerable(s: str) -> bool:
    if _SELF_DESCRIPTION.search(s) or _HEADER.match(s) or _SIGN_OFF.match(s) or _WROTE.match(s):
        return False
    from ragbag.index import bm25

    return len(s) >= 6 and bool(re.search(r"\w", s)) and (bm25.has_cjk(s) or len(s.split()) >= 2)


def rank(
    question: str,
    passages: Sequence[tuple[str, str, float]],
    similarity: Similarity | None = None,
    weights: dict[str, float] | None = None,
) -> list[tuple[float, Candidate]]:
    """Every candidate sentence with its score, best first."""
    cands = candidates(passages)
    if not cands:
        return []
    meaning = (similarity or e5_similarity)(question, [c.text for c in cands])
    w = weights or WEIGHTS
    scored = [
        (float(m) + sum(w[k] * v for k, v in sig.items()), c)
        for c, m, sig in zip(cands, meaning, signals(question, cands))
    ]
    scored.sort(key=lambda x: -x[0])
    return scored


def signals(question: str, cands: list[Candidate]) -> list[dict[str, float]]:
    """Each candidate's signals besides its meaning, as ``WEIGHTS`` names them."""
    from ragbag.index import bm25

    q = set(bm25.tokenize(question))
    tokens = [set(bm25.tokenize(c.text)) for c in cands]
    idf = {t: math.log(1 + len(cands) / (1 + sum(t in toks for toks in tokens))) for t in q}
    total = sum(idf.values()) or 1.0
    kinds = answer_types.asked(question)
    out = []
    for c, toks in zip(cands, tokens):
        kind = len(answer_types.held(c.text, kinds)) / len(kinds) if kinds else 0.0
        out.append(
            {
                "words": sum(idf[t] for t in q & toks) / total,
                "kind": kind,
                "passage": c.relevance,
                "title": float(not kind and _title_like(c.text)),
                "new": len(toks - q) / len(toks) if toks else 0.0,
            }
        )
    return out


def _title_like(s: str) -> bool:
    """A heading or a title rather than a statement: a few words, no sentence end, no digit."""
    return len(s.split()) <= 5 and not re.search(r"[.!?。！？:]\s*$|\d", s)


def e5_similarity(question: str, texts: list[str]) -> np.ndarray:
    """Cosine of the question (a query) and each text (a passage) under multilingual-e5-small,
    whatever model the home searches with: the one model here that reads every language of it."""
    from ragbag.models import embedding

    model = embedding.E5_SMALL_SPEC.name
    q = embedding.encode_query(question, model)
    return embedding.encode_passages(texts, model) @ q
