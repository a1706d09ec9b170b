"""``--person``: a name resolved through contacts, and the records that are that person's
(``ragbag.search.people``)."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

from ragbag.core.errors import RagbagError
from ragbag.search import people
from ragbag.search.request import SearchRequest

ANNA = {"name": "Anna Weber", "nicknames": ["Annie"], "emails": ["Anna.Weber@Example.org"], "phones": ["+49 170 1234567"], "handles": ["@annaw"]}  # fmt: skip
OTHER_ANNA = {"name": "Anna Schmidt", "emails": ["schmidt@example.com"]}
BEN = {"name": "Ben Okafor", "emails": ["ben@example.org"]}


def test_a_name_resolves_to_the_contacts_addresses_numbers_and_handles():
    p = people.resolve("anna weber", [ANNA, OTHER_ANNA, BEN])
    assert p.emails == {"anna.weber@example.org"} and p.phones == {"701234567"} and p.handles == {"@annaw"}
    assert people.is_theirs(p, {"from": "anna.weber@example.org"})  # mail from her
    assert people.is_theirs(p, {"cc": ["x@y.z", "ANNA.WEBER@example.org"]})  # copied
    assert people.is_theirs(p, {"participants": ["01701234567"]})  # an iMessage handle, written nationally
    assert people.is_theirs(p, {"attendees": ["Anna Weber <anna.weber@example.org>"]})  # an invitation
    assert people.is_theirs(p, {"sender": ["Annie"]})  # a chat that knows her by her nickname
    assert not people.is_theirs(p, {"sender": ["Anna Schmidt"], "from": "schmidt@example.com"})
    assert not people.is_theirs(p, {"sender": ["Anna"]})  # another Anna: her name whole, not a part
    assert not people.is_theirs(p, {"title": "Anna Weber's birthday"})  # a mention is not a record of hers


def test_a_name_that_fits_several_contacts_is_shown_not_guessed():
    with pytest.raises(RagbagError, match=r"fits 2 contacts: Anna Schmidt, Anna Weber"):
        people.resolve("Anna", [ANNA, OTHER_ANNA])
    assert people.resolve("Annie", [ANNA, OTHER_ANNA]).emails == {"anna.weber@example.org"}


def test_without_a_contact_the_name_itself_is_matched():
    p = people.resolve("Carol", [ANNA])
    assert people.is_theirs(p, {"from_name": "Carol Diaz"}) and not people.is_theirs(p, {"from_name": "Caroline"})


def test_the_request_takes_a_person_and_bounds_it():
    assert SearchRequest("trip", person="  Anna   Weber ").person == "Anna Weber"
    assert SearchRequest("trip", person="").person is None
    with pytest.raises(RagbagError, match="give a name"):
        SearchRequest("trip", person="x" * 300)


def test_a_raw_handle_is_shown_as_the_contacts_name_and_a_named_address_is_left():
    from ragbag.search import people

    book = people.book(
        [{"name": "Anna Weber", "emails": ["anna@example.org"], "phones": ["+49 170 1234567"], "handles": ["tg:annaw"]}]
    )
    record = {"sender": ["01701234567", "Me"], "from": "Anna Weber <anna@example.org>", "to": ["annaw"]}
    names = people.names_in(book, record)
    assert names == {"01701234567": "Anna Weber", "annaw": "Anna Weber"}  # "Anna Weber <…>" names her already
    text = "09:00 01701234567: see you · Cc: anna@example.org, Anna Weber <anna@example.org>, anna@example.org.uk"
    assert people.shown(text, names | {"anna@example.org": "Anna Weber"}) == (
        "09:00 Anna Weber: see you · Cc: Anna Weber, Anna Weber <anna@example.org>, anna@example.org.uk"
    )


def test_a_wechat_chat_is_its_contacts_by_wxid_whatever_remark_it_has():
    from ragbag.search import people

    contact = {"name": "Zhang Wei", "handles": ["wechat:wxid_k3n9zw1988"]}  # the remark says "Wei 🐼"
    person = people.resolve("Zhang Wei", [contact])
    chat = {"chat": "Wei 🐼", "chat_id": "wxid_k3n9zw1988", "sender": ["Wei 🐼", "Me"]}
    assert people.is_theirs(person, chat)
    assert not people.is_theirs(person, {**chat, "chat_id": "wxid_other"})
    assert people.names_in(people.book([contact]), chat) == {"wxid_k3n9zw1988": "Zhang Wei"}


def test_the_index_of_people_fields_finds_exactly_the_records_a_scan_finds():
    """``Holders.rows`` (what a search looks up) against ``is_theirs`` record by record (the
    definition), on records drawn from a pool of the ways people fields write a person: every
    field, lists, (label, value) pairs, dicts, case, numbers written nationally and
    internationally, names inside and without addresses, handles with and without a service."""
    import random

    rng = random.Random(7)
    pool = [
        "Anna Weber <anna.weber@example.org>", "ANNA.WEBER@example.org", "anna weber", "Weber, Anna",
        "Anna", "Annie", "+49 170 1234567", "01701234567", "0170 7654321", "@annaw", "telegram:@annaw",
        "Anna Schmidt", "schmidt@example.com", "Ben Okafor <ben@example.org>", "ben", "wxid_abc123",
        "Me", "", "  @AnnaW ", "Weber", "Chen Jing", "陈静", "+86 138 0013 8000",
    ]  # fmt: skip
    records = []
    for _ in range(400):
        rec: dict = {}
        for field in rng.sample(people.FIELDS, rng.randint(0, 4)):
            shape = rng.randint(0, 3)
            values = rng.sample(pool, rng.randint(1, 3))
            rec[field] = (
                values[0]
                if shape == 0
                else values
                if shape == 1
                else [["label", v] for v in values]
                if shape == 2
                else [{"name": v} for v in values]
            )
        records.append(rec)
    contacts = [
        ANNA,
        OTHER_ANNA,
        BEN,
        {"name": "Chen Jing", "phones": ["+86 138 0013 8000"], "handles": ["wxid_abc123"]},
    ]
    persons = [people.resolve(n, contacts) for n in ("Anna Weber", "Ben", "Chen Jing", "Schmidt")]
    persons += [people.resolve(n, []) for n in ("Weber", "anna weber", "陈静", "Nobody Here")]
    held = people.holders(records)
    # As a snapshot holds them: each row's metadata as JSON text, rows alike sharing one, some none.
    records += [records[k] for k in range(0, 400, 7)] + [{}]
    metadata = [json.dumps(r) for r in records] + [None]
    records.append({})
    from_metadata = people.holders_of(pa.chunked_array([metadata[:250], metadata[250:]]), {})
    for p in persons:
        expected = [people.is_theirs(p, r) for r in records]
        assert held.rows(p).tolist() == expected[:400], p.asked
        assert from_metadata.rows(p).tolist() == expected, p.asked
        assert 0 < sum(expected) < len(records) or p.asked == "Nobody Here", p.asked  # the draw tests something
    assert people.holders([]).rows(persons[0]).tolist() == []
