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


def test_greetings_sign_offs_and_mail_headers_are_never_quoted():
    mail = (
        "Sehr geehrter Herr Hoffmann,\n\n"
        "Es ergibt sich eine Nachzahlung von 118,45 €, bitte überweisen Sie den Betrag bis zum 31.07.2025.\n\n"
        "Mit freundlichen Grüßen\nIngrid Baumann\n\n"
        "From: Ingrid Baumann <ib@example.de>\nDate: Tue, 14 Oct 2025 10:00:00 +0200\n"
        "Subject: Betriebskostenabrechnung Ingrid Baumann\n"
    )
    quoted = _quoted(extract("how much do I have to pay Ingrid Baumann?", [("dddddd", mail, 0.5)]))
    assert quoted == [
        "Es ergibt sich eine Nachzahlung von 118,45 €, bitte überweisen Sie den Betrag bis zum 31.07.2025. [c:dddddd]"
    ]


def test_a_pages_visits_and_a_calendar_entrys_occurrences_are_not_the_answer():
    page = "Hangzhou - Wikipedia\nhttps://en.wikipedia.org/wiki/Hangzhou\nen.wikipedia.org: visited 2 times in Chrome."
    course = (
        "Spanischkurs B2 When: Tue 2024-09-03 18:30–20:00 Repeats: weekly on Tuesday Occurrences: Tue 2024-09-03 "
        "18:30, Tue 2024-09-10 18:30 37 occurrences in all Where: Instituto Cervantes Calendar: Privat"
    )
    quoted = " ".join(_quoted(extract("when is my Spanish course?", [("eeeeee", page, 0.3), ("ffffff", course, 0.3)])))
    assert "visited" not in quoted and "2024-09-10" not in quoted and "Instituto Cervantes" in quoted


def test_an_english_question_finds_the_german_sentence_that_answers_it():
    """What the sentence means, not the words it shares: the answer shares no word with the
    question. (Quoted among the sentences, not always first: the sentence that names the
    barbecue's place scores as close; benchmarks/README.md has the measured share.)"""
    mail = (
        "Hallo Jan,\n\nwir grillen am Samstag bei Tom im Garten. Tom hat Kohle und Grill. "
        "Ich bringe Halloumi und den Couscous-Salat mit. Bis dann!"
    )
    quoted = _quoted(extract("what am I bringing to the barbecue?", [("gggggg", mail, 0.4)]))
    assert any("Halloumi" in q for q in quoted) and not any("Hallo Jan" in q for q in quoted), quoted


def test_every_quoted_sentence_carries_its_citation_and_a_close_second_may_follow():
    a = "Der Techniker kommt am Dienstag, 14.10.2025, zwischen 8 und 12 Uhr."
    b = "Heizungswartung When: Tue 2025-10-14 08:00–12:00 Where: Zuhause"
    answer = extract(
        "on which day is the technician coming for the boiler maintenance?", [("aa11aa", a, 0.4), ("bb22bb", b, 0.35)]
    )
    lines = _quoted(answer)
    assert lines[0].startswith("Der Techniker kommt") and lines[0].endswith("[c:aa11aa]")
    assert all(line.endswith(("[c:aa11aa]", "[c:bb22bb]")) for line in lines) and len(lines) <= 4
