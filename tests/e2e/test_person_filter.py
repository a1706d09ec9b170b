"""``--person`` over mail, iMessage and calendar (issue 33): a contact's name finds what they sent,
received and attended across the three, by address and by a number written otherwise in each;
another Anna's records stay out, and a name two contacts share is answered with both names."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from conftest import cli, materialize_source, write

from ragbag.search import people, query
from ragbag_evalsets.formats.calendar import Event, calendar
from ragbag_evalsets.formats.imessage import ChatDB
from ragbag_evalsets.formats.mail import Mail, mbox

ME = ("Jan Hoffmann", "jan@example.org")
ANNA = ("Anna Weber", "anna.weber@example.org")
OTHER = ("Anna Schmidt", "a.schmidt@example.com")
VCARDS = (
    "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:anna-1\r\nFN:Anna Weber\r\nN:Weber;Anna;;;\r\n"
    "EMAIL;TYPE=HOME:anna.weber@example.org\r\nTEL;TYPE=CELL:+49 170 1234567\r\nEND:VCARD\r\n"
    "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:anna-2\r\nFN:Anna Schmidt\r\nN:Schmidt;Anna;;;\r\n"
    "EMAIL:a.schmidt@example.com\r\nEND:VCARD\r\n"
)


@pytest.fixture(scope="module")
def home(tmp_path_factory, instance):
    from ragbag.core.home import Home

    root = tmp_path_factory.mktemp("person")
    t = datetime(2025, 5, 2, 9, 0, tzinfo=UTC)
    mails = [
        Mail(t, ANNA, [ME], "Ferry tickets", "I booked the ferry to Hiddensee for Saturday."),
        Mail(t + timedelta(hours=1), ME, [ANNA], "Re: Ferry tickets", "Great, I bring the bikes to the ferry."),
        Mail(t + timedelta(hours=2), OTHER, [ME], "Ferry timetable", "The ferry timetable for the club trip."),
    ]
    write(root / "mail", {"inbox.mbox": mbox(mails)})
    db = ChatDB()
    chat = db.chat("+491701234567", ["+491701234567"])
    db.say(chat, t + timedelta(days=1), "+491701234567", "Ferry leaves at 10:15, see you at the pier")
    db.say(chat, t + timedelta(days=1, minutes=3), None, "On my way to the ferry")
    write(root / "messages", {"chat.db": db.bytes()})
    events = [
        Event("Ferry to Hiddensee", t + timedelta(days=1, hours=1), organizer=ME, attendees=[ANNA], uid="ev-1"),
        Event("Ferry club meeting", t + timedelta(days=3), organizer=OTHER, attendees=[ME], uid="ev-2"),
    ]
    write(root / "calendar", {"trips.ics": calendar("Trips", events, "-//test//EN")})
    write(root / "contacts", {"people.vcf": VCARDS})
    home = Home(root / "home").ensure()
    folders = {"mail": "mail", "messages": "messages", "cal": "calendar", "people": "contacts"}
    for name, connector in (("mail", "mail"), ("messages", "imessage"), ("cal", "calendar"), ("people", "contacts")):
        home.add_source(name, connector, str(root / folders[name]), known=(connector,))
        materialize_source(home, instance, name)
    return home


@pytest.mark.slow(seconds=30)
def test_a_person_is_found_across_mail_imessage_and_calendar(home):
    hits = query.search("ferry", home=home, k=20, person="Anna Weber")
    assert {s for s in hits["source"]} == {"mail", "messages", "cal"}
    titles = set(hits["title"])
    assert {"Ferry tickets", "Re: Ferry tickets", "Ferry to Hiddensee"} <= titles
    assert not titles & {"Ferry timetable", "Ferry club meeting"}  # the other Anna's
    everyone = query.search("ferry", home=home, k=20)
    assert {"Ferry timetable", "Ferry club meeting"} <= set(everyone["title"])


@pytest.mark.slow(seconds=10)
def test_a_name_two_contacts_share_is_answered_with_both(home):
    done = cli("search", "ferry", "--person", "Anna", env={"RAGBAG_HOME": str(home.root)}, check=False)
    assert done.returncode == 2 and "Anna Schmidt, Anna Weber" in done.stderr and done.stderr.count("\n") == 1


@pytest.mark.slow(seconds=10)
def test_a_person_named_in_the_query_is_lifted_without_filtering(home, monkeypatch):
    """ "Anna Weber" in a query lifts what she sent, received and attended — the iMessage that
    knows her only by number included — above the other Anna's ferry records; nothing is left out."""
    from ragbag.search import mentions

    question = "what did Anna Weber say about the ferry?"
    ranked = query.search(question, home=home, k=20)
    theirs = {"Ferry tickets", "Re: Ferry tickets", "Ferry to Hiddensee", "+491701234567"}
    titles = [t.split(" — ")[0] for t in ranked["title"] if t != "Anna Weber"]  # not her contact card
    assert set(titles[:4]) == theirs, titles
    assert {"Ferry timetable", "Ferry club meeting"} <= set(titles)  # lifted above, not filtered out
    monkeypatch.setattr(mentions, "LIFT", 0.0)
    unlifted = [t.split(" — ")[0] for t in query.search(question, home=home, k=20)["title"] if t != "Anna Weber"]
    assert set(unlifted[:4]) != theirs, unlifted  # the words alone rank the other Anna's among hers


@pytest.mark.slow(seconds=5)
def test_the_names_a_question_may_name_come_from_the_publish_not_from_every_record(home, monkeypatch):
    """Each source's publish counted the names its people fields hold (``people.json``): they are
    the names reading every record gives, and a search in a fresh process lifts Anna Weber's
    records without reading every record for them."""
    from ragbag.core.people_fields import names_in
    from ragbag.search import mentions, snapshot

    snapshot.forget()
    for name, connector in (("mail", "mail"), ("messages", "imessage"), ("cal", "calendar")):
        snap = snapshot.load(home, connector, name)
        counted = snap.people_names() if snap is not None else None
        assert counted is not None and set(counted) == {n for r in snap.records for n in names_in(r)}, name
    assert {"Anna Weber", "Jan Hoffmann", "Anna Schmidt"} <= set(snapshot.load(home, "mail", "mail").people_names())
    snapshot.forget()
    real = mentions.names_of

    def contacts_only(contacts, record_sets):
        assert not list(record_sets), "read every record of a source for the names"
        return real(contacts, record_sets)

    monkeypatch.setattr(mentions, "names_of", contacts_only)
    monkeypatch.setattr(mentions, "_LAST", [None])
    lifted = query.search("what did Anna Weber say about the ferry?", home=home, k=4)
    assert "Ferry tickets" in set(t.split(" — ")[0] for t in lifted["title"])
    # A version published before the count (no people.json): its records are read for the names.
    snapshot.forget()
    monkeypatch.setattr(mentions, "names_of", real)
    monkeypatch.setattr(snapshot.Snapshot, "people_names", lambda self: None)
    monkeypatch.setattr(mentions, "_LAST", [None])
    lifted = query.search("what did Anna Weber say about the ferry?", home=home, k=4)
    assert "Ferry tickets" in set(t.split(" — ")[0] for t in lifted["title"])
    snapshot.forget()


@pytest.mark.slow(seconds=10)
def test_a_cold_search_naming_a_person_stays_light(home):
    """A cold search that names someone (the people's index of each snapshot built from its rows'
    metadata, the names from what the publish counted) imports none of the build's libraries,
    as ``tests/e2e/test_search_path.py`` holds an unnamed search to."""
    import json
    import subprocess
    import sys

    from test_search_path import HEAVY

    probe = (
        "import sys, json; from ragbag.search import query; "
        "hits = query.results('what did Anna Weber say about the ferry?', k=3); "
        f"print(json.dumps([[h['title'] for h in hits], sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r}))]))"
    )
    env = {**__import__("os").environ, "RAGBAG_HOME": str(home.root)}
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    titles, heavy = json.loads(done.stdout.strip().splitlines()[-1])
    assert heavy == [] and "Ferry tickets" in {t.split(" — ")[0] for t in titles}, (heavy, titles, done.stderr[-2000:])


@pytest.mark.slow(seconds=5)
def test_a_hit_shows_a_contacts_name_for_their_raw_number(home):
    """The iMessage chat knows Anna Weber only as +491701234567: the terminal, the tools and the
    search page show her name; the hit keeps the number, with the name beside it."""
    from ragbag.answer.citations import hit_dict
    from ragbag.apps.web.hits import shape

    shown = cli("search", "pier", "--connector", "imessage", "-k", "1", env={"RAGBAG_HOME": str(home.root)}).stdout
    assert "Anna Weber — 2025-05-03" in shown and "Anna Weber: Ferry leaves at 10:15" in " ".join(shown.split())
    assert "+491701234567:" not in shown
    (hit,) = query.results("pier", home=home, k=1, connectors=("imessage",))
    assert hit["people"] == {"+491701234567": "Anna Weber"} and hit["title"].startswith("+491701234567")
    tool = hit_dict(hit, 1)
    assert tool["title"].startswith("Anna Weber — ") and tool["people"] == {"+491701234567": "Anna Weber"}
    page = shape(hit, 1, ["pier"], "pier")
    assert "Anna Weber:" in "".join(text for text, _ in page["snippet"])
    (mail,) = query.results("bikes", home=home, k=1, connectors=("mail",))
    assert "Anna Weber <anna.weber@example.org>" in mail["text"]
    assert "Anna Weber <anna.weber@example.org>" in people.shown(mail["text"], mail["people"])  # named already
