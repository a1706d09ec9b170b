"""What kind of fact a question asks for, and which sentences hold one (ragbag.answer.answer_types)."""

from __future__ import annotations

import pytest

from ragbag.answer.answer_types import asked, held


@pytest.mark.parametrize(
    ("question", "kinds"),
    [
        ("how much extra did I have to pay for electricity?", {"amount"}),
        ("Wie viel kostet die Reparatur?", {"amount"}),
        ("on which day is the technician coming?", {"date"}),
        ("from what time can I check in at the hotel?", {"time"}),
        ("what was the key box code?", {"code"}),
        ("月饼快递的顺丰单号是多少？", {"code"}),
        ("how many people came?", {"count"}),
        ("Wie lautet meine Beitragsnummer beim Rundfunkbeitrag?", {"code"}),
        ("which seat did I reserve on the train?", {"seat"}),
        ("who takes the minutes at the meeting?", set()),
    ],
)
def test_what_a_question_asks_for(question, kinds):
    assert asked(question) == kinds


@pytest.mark.parametrize(
    ("sentence", "kind", "holds"),
    [
        ("Nachzahlung: 142,37 EUR", "amount", True),
        ("Gesamt: 89,50 €.", "amount", True),
        ("your standing order was executed: €1,120.00", "amount", True),
        ("Der Techniker kommt am Dienstag, 14.10.2025.", "date", True),
        ("Arriving Thursday, 6 March", "date", True),
        ("la date limite, fixée au 28 février", "date", True),
        ("5月12日から16日まで滞在します。", "date", True),
        ("La navette partira de la gare à 14h.", "time", True),
        ("Check-in from 14:00", "time", True),
        ("le code de la boîte à clés est 4827", "code", True),
        ("Reservierung: Wagen 12, Platz 64, Fenster", "seat", True),
        ("Seat: 44K (window)", "seat", True),
        ("Passager : Jan Hoffmann – voiture 5 place 112", "seat", True),
        ("Return: LH 729 Shanghai Pudong – Munich", "seat", False),
        ("Tom hat Kohle und Grill.", "amount", False),
        ("Tom hat Kohle und Grill.", "date", False),
    ],
)
def test_which_sentences_hold_a_fact_of_the_kind(sentence, kind, holds):
    assert (held(sentence, {kind}) == {kind}) is holds
