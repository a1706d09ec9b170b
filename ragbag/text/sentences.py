"""Sentences of a passage, in its own language: what the extractive answerer quotes.

A full stop does not end a sentence after "13." in "13. Dezember", "Nr.", "z. B.", "St." or
"Mr.", and a Chinese or Japanese sentence ends at 。！？ with no space after it. Those rules
differ per language, so the splitting is sentencex's (Wikimedia's segmenter: abbreviation lists
and rules for ~300 languages, MIT), told the paragraph's language by CLD2
(``ragbag.text.languages``, as search tells it; a language outside those a personal home mostly
holds, or none told, is split by English rules). It replaced py3langid here: the same 271 answers
on the judged ask set, without the half second py3langid took to load its model.

What the two cannot know is the layout of what ragbag reads: a chat transcript is one message a
line, each starting with its time; a mail or a note lists "Key: value" lines and bullet points
without full stops; prose is hard-wrapped at about 72 characters. So a line break ends a
sentence unless the line before it is long and ends mid-sentence (a wrapped line), and each
piece is then split by sentencex.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ragbag.text import scripts
from ragbag.text.languages import identify

# The languages a paragraph may be taken for: those of the homes ragbag is built for (and what
# the evaluation personas write); another language, or none told, is split by English rules.
LANGUAGES = ("en", "de", "fr", "es", "pt", "it", "nl", "pl", "sv", "da", "no", "fi", "tr", "ru", "zh", "ja", "ko")
# Month names and their short forms (English, German, French, Spanish, Portuguese): "17." before
# one is a day, not a sentence's end.
MONTHS = (
    r"jan(?:uary|uar|vier)?|feb(?:ruary|ruar)?|f[ée]vrier|mar(?:ch|s)?|m[äa]rz|apr(?:il)?|avril|may|mai|"
    r"june?|juni|juin|july?|juli|juillet|aug(?:ust)?|ao[uû]t|sep(?:t(?:ember)?)?|septembre|oct(?:ober)?|"
    r"okt(?:ober)?|octobre|nov(?:ember)?|novembre|dec(?:ember)?|dez(?:ember)?|d[ée]cembre|enero|febrero|"
    r"marzo|abril|mayo|junio|julio|agosto|septiembre|octubre|noviembre|diciembre|janeiro|fevereiro|"
    r"mar[cç]o|maio|junho|julho|setembro|outubro|novembro|dezembro"
)
# A line at least this long that does not end a sentence was wrapped, not ended.
WRAPPED_LINE = 55
_CJK = scripts.CJK
_DAY_END = re.compile(r"(?:^|\s)\d{1,2}\.\s*$")
_MONTH_START = re.compile(rf"(?:{MONTHS})\b", re.IGNORECASE)
_CJK_END = re.compile(r"(?<=[。！？])")
_KANA, _HANGUL = scripts.KANA, scripts.HANGUL
_ENDS_SENTENCE = re.compile(r"[.!?:;。！？…)\]\"'”»]\s*$")
# A line that starts a record of its own: a chat message's time, a list item, a table row, a
# heading, a quoted line.
_STARTS_ITEM = re.compile(r"^\s*(?:\d{4}-\d{2}-\d{2}[ T]\d{1,2}:\d{2}|\[\d|[-*•#>|]|\d+[.)]\s)")


# A record's summary of itself, not a sentence of it: the mail connector's first line
# ("From: … · To: … · Date: … · Subject: …"), a chat's or page's alike.
SUMMARY_LINE = r"\w+: [^·\n]*(?: · \w+: [^·\n]*)+"


@dataclass(frozen=True)
class Sentence:
    paragraph: int  # which paragraph of the passage (blank-line separated) it is in
    text: str


def split(text: str) -> list[Sentence]:
    """The sentences of ``text``, in order, whitespace collapsed, none empty."""
    out: list[Sentence] = []
    for para_no, para in enumerate(re.split(r"\n\s*\n", text)):
        if not para.strip():
            continue
        lang = language(para)
        for piece in _pieces(para):
            for s in _segment(lang, piece):
                s = " ".join(s.split())
                if s:
                    out.append(Sentence(para_no, s))
    return out


def _pieces(para: str) -> list[str]:
    """A paragraph's lines joined where one was wrapped, split where one ended."""
    pieces: list[str] = []
    for line in para.splitlines():
        if not line.strip():
            continue
        if (
            pieces
            and len(pieces[-1].rsplit("\n", 1)[-1]) >= WRAPPED_LINE
            and not _ENDS_SENTENCE.search(pieces[-1])
            and not _STARTS_ITEM.match(line)
        ):
            pieces[-1] += "\n" + line.strip()
        else:
            pieces.append(line.strip())
    return pieces


def _segment(lang: str, text: str) -> list[str]:
    """sentencex's sentences of one piece, a fragment it cut off ("2.", "-B.", "AB3519" after
    "Ch.-B.") joined to the sentence it belongs to."""
    import sentencex

    out: list[str] = []  # as sentencex gives them, the spaces after each kept: joined, they are the text
    # A CJK full stop ends a sentence even before a digit, where sentencex reads a decimal point.
    for s in (part for segment in sentencex.segment(lang, text) for part in _CJK_END.split(segment)):
        if not s.strip():
            continue
        if out and (_fragment(s) or _fragment(out[-1]) or _day_before_month(out[-1], s)):
            out[-1] += s
        else:
            out.append(s)
    return out


def _day_before_month(before: str, after: str) -> bool:
    """Whether sentencex ended a German sentence at a date: "…am Samstag, 17." then "Mai, ab 12 Uhr…"."""
    return bool(_DAY_END.search(before) and _MONTH_START.match(after))


def _fragment(s: str) -> bool:
    """Too short to be a sentence of its own (a CJK sentence has no spaces: any is one)."""
    return not _CJK.search(s) and (len(s.split()) < 2 or len(s.strip()) < 8)


def language(text: str) -> str:
    """The language of a paragraph, one of ``LANGUAGES``: by script for CJK, else CLD2's ("en" when
    it tells none of them)."""
    sample = text[:2000]
    cjk = len(_CJK.findall(sample))
    if cjk and cjk * 4 >= len(sample.replace(" ", "")):
        return "ja" if _KANA.search(sample) else "ko" if _HANGUL.search(sample) else "zh"
    told = identify(sample)
    return told if told in LANGUAGES else "en"
