"""Kinship words (``ragbag.text.kinship``) and the people a home's letters call by them
(``ragbag.search.mentions``): "what did dad ask…" finds the person whose mail is signed "Papa" or
to whom the owner writes "Hoi pap,"."""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pytest

from ragbag.core.errors import RagbagError
from ragbag.search import mentions
from ragbag.text import kinship


@pytest.mark.parametrize(
    "lines, relation",
    [
        (["Hoi pap,", "", "we komen allebei!"], "father"),
        (["Cześć mamo!", "Dzięki za paczkę."], "mother"),
        (["Liebe Oma,"], "grandmother"),
        (["Hi Mom"], "mother"),
        (["Querida tia,"], "aunt"),
        (["Lieve Luana,"], None),  # a name, not a relation
        (["Dear Mr. Papadopoulos,"], None),
        (["Papa has the keys, call him."], None),  # a sentence, not a greeting
    ],
)
def test_a_greeting_tells_the_relation_it_greets(lines, relation):
    assert kinship.greeted(lines) == relation


@pytest.mark.parametrize(
    "lines, relation",
    [
        (["Zal ik hem verkopen?", "", "Veel liefs, ook aan Haruto,", "Papa"], "father"),
        (["See you Sunday.", "Love,", "Mom", ""], "mother"),
        (["Buziaki, babcia"], "grandmother"),
        (["Liefs,", "Luana"], None),
        (["and I told papa about it"], None),
        (["Ja, verkoop hem.", "", "> Zal ik hem verkopen?", ">", "> Papa"], None),  # the quoted letter's sign-off
    ],
)
def test_a_sign_off_tells_the_relation_it_signs_with(lines, relation):
    assert kinship.signed(lines) == relation


def test_a_question_names_relations_in_its_words_or_inside_a_text_without_spaces():
    assert kinship.relations_in("what did dad ask about my old bike?") == ["father"]
    assert kinship.relations_in("when does my brother arrive, and mum?") == ["brother", "mother"]
    assert kinship.relations_in("엄마가 뭐라고 했어?") == ["mother"]
    assert kinship.relations_in("how far is the mere lake from the station?") == []


class _Snap:
    """What ``mentions.masks`` reads of a snapshot: its rows and a memo."""

    def __init__(self, rows: list[dict]) -> None:
        self.rows = pa.table(
            {
                "text": [r["text"] for r in rows],
                "metadata": [json.dumps(r["meta"]) for r in rows],
                "ordinal": [0] * len(rows),
            }
        )
        self.memo: dict = {}
        self.records = [r["meta"] for r in rows]

    def people_names(self):
        return None


def _mail(sender: str, to: list[str], body: str, name: str | None = None) -> dict:
    meta = {"from": sender, "to": to, "cc": []} | ({"from_name": name} if name else {})
    return {"text": f"From: {name or sender} · To: {', '.join(to)} · Subject: x\n\n{body}", "meta": meta}


LETTERS = [
    _mail(
        "p.devries@ziggo.nl",
        ["me@example.org"],
        "Lieve Luana,\n\nJe oude fiets?\n\nVeel liefs,\nPapa",
        "Pieter de Vries",
    ),
    _mail("me@example.org", ["p.devries@ziggo.nl"], "Hoi pap,\n\nverkoop hem maar.\n\nLiefs,\nLuana", "Luana"),
    _mail("daan@example.org", ["me@example.org"], "Hoi zus,\n\nkom je?\n\nDaan", "Daan de Vries"),
    _mail("me@example.org", ["x@example.org", "y@example.org"], "Hi Mom,\n\nboth of you", "Luana"),
]


def test_letters_call_a_person_by_a_relation_and_a_question_naming_it_lifts_their_records():
    snap = _Snap(LETTERS)
    out = mentions.masks("what did dad ask about my old bike?", [], [snap], [None])
    assert out is not None and out[0].tolist() == [True, False, False, False]  # from Pieter de Vries
    pieter = [{"name": "Pieter de Vries", "emails": ["p.devries@ziggo.nl"]}]
    out = mentions.masks("what did dad ask about my old bike?", pieter, [snap], [None])
    assert out is not None and out[0].tolist() == [True, True, False, False]  # and to his address
    assert mentions.masks("what did my brother ask?", [], [snap], [None]) is None  # nobody is called brother
    # "Hi Mom" went to two people: it calls no one mother
    assert mentions.masks("what did mom say?", [], [snap], [None]) is None


def test_person_with_a_kinship_word_two_people_are_called_by_names_them_in_one_line():
    jan = _mail("jan@example.org", ["me@example.org"], "Hoi,\n\nDoei,\nPapa", "Jan Visser")
    with pytest.raises(RagbagError, match="calls 2 people so: Jan Visser, Pieter de Vries"):
        mentions.person("dad", [], [_Snap([*LETTERS, jan, jan])])


def test_a_relation_two_people_are_called_by_alike_goes_to_no_one():
    jan = _mail("jan@example.org", ["me@example.org"], "Hoi,\n\nDoei,\nPapa", "Jan Visser")
    both = [*LETTERS, jan, jan]  # Pieter is called so twice (signed, greeted), Jan twice
    assert mentions.masks("what did dad ask?", [], [_Snap(both)], [None]) is None
    again = _mail("me@example.org", ["p.devries@ziggo.nl"], "Hoi pap,\n\nja.", "Luana")
    out = mentions.masks("what did dad ask?", [], [_Snap([*both, again, again])], [None])
    assert out is not None and np.flatnonzero(out[0]).tolist() == [0]  # four letters to two: Pieter's


def test_the_first_look_keeps_every_letter_a_kinship_word_opens_or_signs_and_few_others():
    texts = ["Hoi pap,\nx", "analysis of the ratio\nRegards", "Love,\nMom", "엄마가 뭐래", "Cześć mamo!"]
    texts += ["a broker's paper, brought over", "x\n" + "words " * 200 + "\nVeel liefs,\nPapa", "Olá Mãe,"]
    mail = ['{"from": "a@b"}'] * len(texts)
    kept = kinship.letters_calling(pa.chunked_array([texts]), pa.chunked_array([mail])).to_pylist()
    assert kept == [True, False, True, True, True, False, True, True]
    assert kinship.letters_calling(
        pa.chunked_array([["Love,\nMom"]]), pa.chunked_array([['{"sender": "x"}']])
    ).to_pylist() == [False]  # not a letter: a chat's messages are read otherwise


def test_person_reads_a_name_no_contact_backs_as_a_question_would():
    """``--person dad`` and ``--person aya``: the filter resolves what the question lift resolves."""
    snap = _Snap(
        [*LETTERS, {"text": "2025-11-16 12:45 坂本彩: 私のおごりで", "meta": {"sender": "坂本彩", "chat": "坂本彩"}}]
    )
    pieter = [{"name": "Pieter de Vries", "emails": ["p.devries@ziggo.nl"]}]
    dad = mentions.person("dad", pieter, [snap])
    assert dad.emails == frozenset({"p.devries@ziggo.nl"})  # the contact whose letters say "Papa"
    aya = mentions.person("aya", pieter, [snap])  # lower case: every word of --person is a name
    assert aya.names == (frozenset({"坂本彩"}),)
    nobody = mentions.person("Jan", pieter, [snap])  # names no one: matched by its words, as before
    assert nobody.names == (frozenset({"jan"}),) and not nobody.emails
