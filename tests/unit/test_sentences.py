"""Sentences in the passage's own language (ragbag.text.sentences): a full stop after a day,
an abbreviation or an ordinal does not end a German, French or Spanish sentence; CJK sentences
end at their full stops; a chat transcript is a message a line; wrapped prose is joined."""

from __future__ import annotations

import pytest

from ragbag.text.sentences import language, split


def texts(text: str) -> list[str]:
    return [s.text for s in split(text)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Der Termin ist am 13. Dezember um 10 Uhr. Bitte bringen Sie z. B. Ihren Ausweis mit.",
            ["Der Termin ist am 13. Dezember um 10 Uhr.", "Bitte bringen Sie z. B. Ihren Ausweis mit."],
        ),
        (
            "Oma wird 85! Wir feiern am Samstag, 17. Mai, ab 12 Uhr im Gasthaus Zur Linde in Celle.",
            ["Oma wird 85!", "Wir feiern am Samstag, 17. Mai, ab 12 Uhr im Gasthaus Zur Linde in Celle."],
        ),
        (
            "Die Rechnung Nr. 4411 ist bezahlt. Wir treffen uns an der St. Marien Kirche.",
            ["Die Rechnung Nr. 4411 ist bezahlt.", "Wir treffen uns an der St. Marien Kirche."],
        ),
        (
            "M. Dupont arrive le 3 févr. à Lyon. La navette partira à 14h.",
            ["M. Dupont arrive le 3 févr. à Lyon.", "La navette partira à 14h."],
        ),
        (
            "El Sr. García llega el lunes. La mascletà es a las 14:00 en la Plaza.",
            ["El Sr. García llega el lunes.", "La mascletà es a las 14:00 en la Plaza."],
        ),
        ("月饼寄了。单号在邮件里！谢谢你", ["月饼寄了。", "单号在邮件里！", "谢谢你"]),
        (
            "来月ベルリンに行きます。5月12日から16日まで滞在します。",
            ["来月ベルリンに行きます。", "5月12日から16日まで滞在します。"],
        ),
    ],
)
def test_a_full_stop_ends_a_sentence_only_where_the_language_says(text, expected):
    assert texts(text) == expected


def test_a_chat_transcript_is_one_message_a_line():
    chat = (
        "2025-11-24 09:05 Priya Nair: Heads-up: the migration goes out Wednesday at 07:00\n"
        "2025-11-24 09:20 Tom Becker: Reminder that the deploy freeze starts on 15 December"
    )
    assert texts(chat) == chat.splitlines()


def test_wrapped_prose_is_joined_and_key_value_lines_stay_apart():
    mail = (
        "anbei erhalten Sie Ihre Jahresabrechnung für den Zeitraum 01.01.2024 bis 31.12.2024. Es ergibt\n"
        "sich eine Nachzahlung von 142,37 EUR, die am 13. Dezember fällig ist.\n"
        "Auftragsnummer: 736620914487\n"
        "Reservierung: Wagen 7, Platz 21, Gang"
    )
    assert texts(mail) == [
        "anbei erhalten Sie Ihre Jahresabrechnung für den Zeitraum 01.01.2024 bis 31.12.2024.",
        "Es ergibt sich eine Nachzahlung von 142,37 EUR, die am 13. Dezember fällig ist.",
        "Auftragsnummer: 736620914487",
        "Reservierung: Wagen 7, Platz 21, Gang",
    ]


def test_a_fragment_the_segmenter_cuts_off_stays_with_its_sentence():
    record = "2. Impfung: 25.03.2025, FSME-IMMUN Erwachsene, Ch.-B. AB3519"
    assert texts(record) == [record]


def test_paragraphs_are_numbered():
    assert [s.paragraph for s in split("One sentence here.\n\nAnother one there. And a third.")] == [0, 1, 1]


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("Sehr geehrter Herr Hoffmann, anbei erhalten Sie Ihre Jahresabrechnung.", "de"),
        ("Salut Jan ! On se voit samedi pour la navette ?", "fr"),
        ("Oye, ¿me prestas tu tienda de campaña para agosto?", "es"),
        ("月饼寄了，单号在邮件里", "zh"),
        ("来月ベルリンに行きます", "ja"),
        ("Heads-up: the migration goes out on Wednesday", "en"),
    ],
)
def test_the_language_of_a_paragraph(text, lang):
    assert language(text) == lang
