"""People named the way a person asks, not the way the records write them (issue 33), on a home
built through Dagster from a real mbox and a vCard file: "dad" is whoever the letters sign
"Papa" and greet "Hoi pap,", "Aya" is 坂本彩, "Lukasz" is Łukasz — in the question's lift and in
``--person`` alike."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from conftest import materialize_source, write

from ragbag.search import query
from ragbag_evalsets.formats.mail import Mail, mbox

ME = ("Luana de Vries", "luana@example.org")
DAD = ("Pieter de Vries", "p.devries@example.nl")
AYA = ("坂本彩", "a.s.0815@example.jp")  # no address that spells a name: the name alone tells
LUKASZ = ("Łukasz Wójcik", "biuro@remont-example.pl")
YOKO = ("田中陽子", "tanaka@example.jp")
DAAN = ("Daan de Vries", "daan@example.nl")
VCARD = (
    "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:p-1\r\nFN:Pieter de Vries\r\nN:de Vries;Pieter;;;\r\n"
    "EMAIL:p.devries@example.nl\r\nEND:VCARD\r\n"
)


@pytest.fixture(scope="module")
def home(tmp_path_factory, instance):
    from ragbag.core.home import Home

    root = tmp_path_factory.mktemp("named")
    t = datetime(2025, 6, 2, 18, 0, tzinfo=UTC)
    mails = [
        Mail(
            t,
            DAD,
            [ME],
            "Het huis van oma",
            "Lieve Luana,\n\nJe oude fiets staat nog in mijn schuur. Zal ik hem verkopen?\n\nVeel liefs,\nPapa",
        ),
        Mail(
            t + timedelta(hours=9),
            ME,
            [DAD],
            "Re: Het huis van oma",
            "Hoi pap,\n\nde fiets mag je verkopen.\n\nLiefs,\nLuana",
        ),
        Mail(
            t + timedelta(days=1),
            DAAN,
            [ME],
            "Mijn boot",
            "Hoi zus,\n\nmijn oude fiets is kapot, en de boot ligt in de Houthaven.\n\nDaan",
        ),
        Mail(
            t + timedelta(days=2),
            AYA,
            [ME],
            "東京の部屋",
            "ルアナさん\n\n三軒茶屋の部屋に泊まってね。暗証番号は0815です。\n\n彩",
        ),
        Mail(
            t + timedelta(days=2, hours=1),
            YOKO,
            [ME],
            "東京のアパート",
            "ルアナさん\n\n東京のアパートの部屋、来月から空きます。\n\n陽子",
        ),
        Mail(
            t + timedelta(days=3),
            LUKASZ,
            [ME],
            "Faktura za remont",
            "Dzień dobry,\n\nw załączeniu faktura za remont kuchni.\n\nŁukasz",
        ),
        Mail(
            t + timedelta(days=4),
            ("Nuno Sá", "nuno@example.pt"),
            [ME],
            "Regata",
            "Olá,\n\na regata é no sábado; a bicicleta fica no clube.\n\nNuno",
        ),
    ]
    write(root / "mail", {"inbox.mbox": mbox(mails)})
    write(root / "contacts", {"people.vcf": VCARD})
    home = Home(root / "home").ensure()
    for name, connector in (("mail", "mail"), ("people", "contacts")):
        home.add_source(name, connector, str(root / name.replace("people", "contacts")), known=(connector,))
        materialize_source(home, instance, name)
    return home


def _senders(hits) -> list[str]:
    return [h["title"] for h in hits]


@pytest.mark.slow(seconds=20)
def test_a_kinship_word_lifts_the_one_the_letters_call_so(home):
    hits = query.results("what did dad ask about my old bike?", k=3, home=home)
    assert _senders(hits)[0] == "Het huis van oma", _senders(hits)  # not Daan's mail about his bike
    theirs = query.results("fiets", k=10, home=home, person="dad")
    assert sorted(_senders(theirs)) == ["Het huis van oma", "Re: Het huis van oma"]  # to and from him


def test_a_name_in_another_script_or_without_its_diacritics_is_named_as_typed(home):
    assert _senders(query.results("what did Aya say about the flat in Tokyo?", k=1, home=home)) == ["東京の部屋"]
    assert _senders(query.results("faktura", k=10, home=home, person="lukasz")) == ["Faktura za remont"]
    assert _senders(query.results("部屋", k=10, home=home, person="Yoko Tanaka")) == ["東京のアパート"]
    assert _senders(query.results("部屋", k=10, home=home, person="Aya")) == ["東京の部屋"]


def test_a_kinship_word_no_one_is_called_names_no_one(home):
    assert query.results("fiets", k=10, home=home, person="mum") == []  # no letter calls anyone mum
