"""Persona B: a second personal-data home, written independently of the first and held out.

Two evaluation personas, one command each (both build a throwaway home unless ``--home`` keeps it):

- ``ragbag eval personal [--home DIR] [--json]``: persona A, Jan Hoffmann, a backend developer in
  Berlin (German, English, French, Spanish, Chinese; :mod:`ragbag_evalsets.personal`). This
  is the set search is developed against: its misses are read, and ranking is tuned on it.
- ``ragbag eval persona-b [--home DIR] [--json]``: persona B, this module. Luana Carvalho de
  Vries, a Dutch-Brazilian marine biologist in Lisbon with a Japanese partner, writing in
  Portuguese (European and Brazilian), Dutch, English and Japanese: a research cruise and a PhD
  student, a sailing club, a dog, a flat being renovated, Portuguese taxes (NIF, IMI, IRS),
  her grandmother's house in Delft, a trip to Kyoto and Tokyo. Dates in 2025–2026.

Held-out discipline: persona B is never used for tuning. Do not read its misses to pick weights,
thresholds, synonyms or prompts; run it only to judge a change already decided on persona A and
the public sets, and report both. When a change helps A but not B, it fitted A. If B's content
ever has to change, change it for a reason of its own (a format the connectors should handle, a
wrong judgement), never to move a score.

The persona's content is data: ``personas/b/*.json`` holds the people, mails, pages, events,
chats, conversations, code, notes and the judged queries, laid down by the same code and writers
as persona A's (:mod:`ragbag_evalsets.sources`), so both personas share one copy of every
format. Same layout (``data/``, ``home.json``, ``queries.jsonl``; the same sources, one per
connector, and query kinds), so :mod:`ragbag.apps.eval.homes` scores it unchanged; ids are
``b-001``… so the two sets' queries never collide. What is Luana's own is here: her calendar
app's UIDs, and her calendars on Europe/Lisbon (the calendar writer speaks Europe/Berlin; :func:`_lisbon`).
"""

from __future__ import annotations

from pathlib import Path

from ragbag_evalsets.formats import h
from ragbag_evalsets.formats.calendar import in_zone
from ragbag_evalsets.persona import Persona, write_set
from ragbag_evalsets.sources import lay

DATA = Path(__file__).resolve().parent / "personas" / "b"
NAME = "persona-b"
VTIMEZONE_LISBON = """BEGIN:VTIMEZONE
TZID:Europe/Lisbon
X-LIC-LOCATION:Europe/Lisbon
BEGIN:DAYLIGHT
TZOFFSETFROM:+0000
TZOFFSETTO:+0100
TZNAME:WEST
DTSTART:19700329T010000
RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU
END:DAYLIGHT
BEGIN:STANDARD
TZOFFSETFROM:+0100
TZOFFSETTO:+0000
TZNAME:WET
DTSTART:19701025T020000
RRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=-1SU
END:STANDARD
END:VTIMEZONE"""


def _event_uid(p: Persona, calendar: dict, event: dict) -> str:
    """The UID of an event, or of the series an exception belongs to: its calendar, summary and
    first start as the data writes it."""
    series = (calendar["name"], event.get("series", event["summary"]), event.get("series_start", event["start"]))
    return f"{h(*series, n=12)}@luana-devries.pt"


def _lisbon(ics: bytes) -> bytes:
    """The calendar writer's Europe/Berlin, as Luana's Lisbon calendars say it."""
    return in_zone(ics, "Europe/Lisbon", VTIMEZONE_LISBON)


def generate(out: Path) -> Path:
    """Write the set under ``out`` (``data/``, ``home.json``, ``queries.jsonl``); the same bytes and
    file times on every run. ``data/`` is replaced; nothing else under ``out`` is touched."""
    return write_set(Path(out), lay(Persona(DATA, _event_uid, _lisbon)), NAME, "b")
