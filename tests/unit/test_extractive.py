"""The offline answerer's choice of sentences (ragbag.answer.llm.extractive): what a record says
about itself and what someone else wrote earlier are never the answer; a question asking for an
amount or a time prefers a sentence that holds a number, in whatever language it is written."""

from __future__ import annotations

from ragbag.answer.llm.extractive import extract

BILL = (
    "From: Vattenfall Kundenservice <kundenservice@example.de> · To: Jan Hoffmann <jan@example.de> · "
    "Date: 2025-02-21 06:04 UTC · Subject: Ihre Jahresabrechnung Strom 2024\n\n"
    "Sehr geehrter Herr Hoffmann, anbei erhalten Sie Ihre Jahresabrechnung für Strom.\n\n"
    "Nachzahlung: 142,37 EUR fällig zum Monatsende.\n\n"
    "Attachments: rechnung.pdf (application/pdf)\n"
)
REPLY = (
    "From: Sophie <s@example.org> · To: Jan <jan@example.de> · Date: 2025-03-01 10:00 UTC · Subject: Re: party\n\n"
    "Sounds good, I will bring the cake to the party.\n\n"
    "> On Friday Jan wrote:\n> The party for the electricity team starts at eight in the garden.\n"
)


def _quoted(answer: str) -> list[str]:
    return [line[2:] for line in answer.splitlines() if line.startswith("- ")]


def test_a_records_own_summary_lines_are_never_quoted():
    quoted = _quoted(extract("electricity bill from Vattenfall for Jan Hoffmann", [("aaaaaa", BILL, 0.8)]))
    assert quoted and not any(q.startswith(("From:", "Attachments:")) for q in quoted), quoted


def test_quoted_replies_are_not_the_answer():
    quoted = _quoted(extract("when does the party for the electricity team start?", [("bbbbbb", REPLY, 0.8)]))
    assert quoted and not any("starts at eight" in q for q in quoted), quoted


def test_a_question_for_an_amount_prefers_the_sentence_with_the_number():
    quoted = _quoted(extract("how much extra do I have to pay?", [("cccccc", BILL, 0.8)]))
    assert "142,37" in quoted[0], quoted
    # the same text, a question that asks for no number: the greeting's words win as before
    assert "142,37" not in _quoted(extract("Jahresabrechnung Hoffmann", [("cccccc", BILL, 0.8)]))[0]
