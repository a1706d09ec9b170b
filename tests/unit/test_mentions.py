"""Which people a query names (``ragbag.search.mentions``): whole names, a word only one person's
name holds, written as a name; lower-case nicknames from contacts; names in a script without
case; the owner ("Me") and plain words never."""

from __future__ import annotations

import pytest

from ragbag.core.records import ME
from ragbag.search import mentions

CONTACTS = [{"name": "Sabine Hoffmann", "nicknames": ["Mum"]}, {"name": "Will Turner"}]
RECORDS = [
    {"from_name": "Wei Zhang", "from": "Wei Zhang <wei.zhang@example.cn>"},
    {"sender": "Wei", "chat": "Wei"},
    {"sender": "陈静", "chat": "Hiking group 🏔"},
    {"from": "Tom Becker <tom@fernwerk.io>", "to": ["Anna Weber <anna@example.org>"]},
    {"attendees": ["Anna Schmidt <a.schmidt@example.com>", "bob@example.com"]},
    {"sender": ME},
    {"sender": "+491701234567", "participants": ["wxid_k3n9zw1988"]},
]
NAMES = mentions.names_of(CONTACTS, [RECORDS])


@pytest.mark.parametrize(
    "query, named",
    [
        ("Wei's mail about the mooncake parcel", ["Wei Zhang"]),  # "Wei" is held by Wei Zhang's name too
        ("what did Tom say about the outage?", ["Tom Becker"]),
        ("Tom's handover notes", ["Tom Becker"]),  # first word, possessive
        ("what did mum say about Christmas?", ["Sabine Hoffmann"]),  # a contact's nickname
        ("陈静的婚礼几点开始", ["陈静"]),  # no case: found inside the text
        ("Anna Schmidt and Tom Becker meeting", ["Anna Schmidt", "Tom Becker"]),
        ("anna weber ferry", ["Anna Weber"]),  # a whole name, in lower case
    ],
)
def test_a_query_names_the_people_it_holds(query, named):
    assert mentions.named(query, NAMES) == named


@pytest.mark.parametrize(
    "query",
    [
        "what did Anna say?",  # two Annas: nobody guessed
        "Will the train be late?",  # a first word that is not possessive
        "what did I say about the hiking group",  # a group chat's title names no one
        "Me and the ferry",  # the owner
        "wei's mail",  # one word of a name, not written as a name
        "tom's notes",
    ],
)
def test_a_query_without_one_persons_name_names_no_one(query):
    assert mentions.named(query, NAMES) == []


def test_a_word_only_one_name_holds_names_its_person():
    assert mentions.named("when will Turner's paintings arrive", NAMES) == ["Will Turner"]


@pytest.mark.parametrize(
    "query", ["Chen Jing's wedding – when does the banquet start?", "what did chen jing say", "Jing Chen's banquet"]
)
def test_a_chinese_name_is_named_in_pinyin(query):
    assert mentions.named(query, NAMES) == ["陈静"]


def test_a_family_name_read_otherwise_is_named_in_its_reading():
    names = mentions.names_of([], [[{"sender": "曾小明"}, {"sender": "欧阳娜娜"}]])  # 曾 reads zeng as a name
    assert mentions.named("what did zeng xiaoming say?", names) == ["曾小明"]
    assert mentions.named("Ouyang Nana's trip", names) == ["欧阳娜娜"]


SCRIPTS = mentions.names_of(
    [{"name": "Łukasz Wójcik"}],
    [[{"sender": "坂本彩"}, {"sender": "이민지"}, {"from_name": "Дмитрий Орлов"}, {"sender": "陈静"}]],
)


@pytest.mark.parametrize(
    "query, named",
    [
        ("what did Aya promise to treat me to in Shanghai?", ["坂本彩"]),  # Japanese: a dictionary's reading
        ("Sakamoto Aya's flat", ["坂本彩"]),
        ("what did Min-ji say about the flight?", ["이민지"]),  # Korean: syllables, or joined
        ("Minji's recipe", ["이민지"]),
        ("lee minji birthday", ["이민지"]),  # a whole name in lower case, the family name as written
        ("did Lukasz send the invoice?", ["Łukasz Wójcik"]),  # typed without the diacritics
        ("Dmitriy Orlov contract", ["Дмитрий Орлов"]),
        ("what did Jing say", ["陈静"]),  # a Chinese name is not given a made-up Japanese reading
    ],
)
def test_a_name_in_another_script_is_named_as_a_question_in_latin_letters_writes_it(query, named):
    assert mentions.named(query, SCRIPTS) == named


def test_a_name_needing_a_dictionary_is_read_only_for_a_question_no_cheaper_spelling_explains():
    names = mentions.names_of([], [[{"sender": "坂本彩"}, {"sender": "Tom Becker"}]])
    assert names.unread == ("坂本彩",)
    assert mentions.named("what did Tom say", names) == ["Tom Becker"] and "read" not in names.memo
    # Numbers are no names: an invoice number read no dictionary (its digits have no case either).
    assert mentions.named("RE-2025-08817 invoice 4711", names) == [] and "read" not in names.memo
    assert mentions.named("what did Aya say", names) == ["坂本彩"] and "read" in names.memo
    assert mentions.named("what did I say to Tom?", SCRIPTS) == []  # "I" is no spelling of 이


def test_a_kinship_word_names_the_one_person_a_contact_or_chat_calls_so():
    names = mentions.names_of([{"name": "Sabine Hoffmann", "nicknames": ["Mum"]}], [[{"sender": "Mãe"}]])
    assert mentions.names_of([{"name": "Sabine Hoffmann", "nicknames": ["Mum"]}], []).kin == {
        "mother": ("Sabine Hoffmann",)
    }
    assert names.kin == {"mother": ("Mãe", "Sabine Hoffmann")}  # two people called mother…
    assert mentions.named("what did mom say about Christmas?", names) == []  # …are shown, not guessed
    one = mentions.names_of([], [[{"sender": "Papa ❤"}, {"sender": "엄마"}]])
    assert mentions.named("what did dad say about the car?", one) == ["Papa ❤"]
    assert mentions.named("엄마가 뭐라고 했어?", one) == ["엄마"]
    assert mentions.named("how far is the station?", one) == []  # "far" is no father in a question
