"""Persona C: a third personal-data home, written independently of the first two and held out.

Three evaluation personas, one command each (each builds a throwaway home unless ``--home`` keeps it):

- ``ragbag eval personal``: persona A, Jan Hoffmann in Berlin (:mod:`ragbag_evalsets.personal`),
  the set search is developed against.
- ``ragbag eval persona-b``: persona B, Luana Carvalho de Vries in Lisbon
  (:mod:`ragbag_evalsets.persona_b`), held out.
- ``ragbag eval persona-c [--home DIR] [--json]``: persona C, this module. Marta Lee-Kowalska, an
  emergency physician in Vienna, born in Kraków, married to Jae-won Lee, a software engineer from
  Busan. She writes Austrian German at work and with Viennese landlords, schools and authorities,
  Polish with her parents, her brother and her grandmother's side of the family, English with
  her husband and international colleagues, a little Italian with one colleague, and receives
  Korean (Hangul) from her husband's family, who appear in Hangul in mail, chats and contacts
  (김순자, 이민지, 박준호) and in Latin letters in her notes (Min-ji, Jun-ho, Eomeonim); one
  group of Chinese colleagues. A family trip to Busan for Chuseok, a move across Vienna
  (Meldezettel, Kaution, Parkpickerl), her father's knee replacement in Kraków, a multicentre
  ultrasound study and a congress talk in Kraków, a cello in an amateur orchestra, Austrian taxes
  and insurance (e-card, ÖGK, SVS, Finanzamt). Dates in 2025–2026.

Held-out discipline: persona C is never used for tuning. It was written blind on 2026-12-06 by a
writer who had not seen the ranking code (nothing under ``ragbag/search`` or ``ragbag/answer``),
and its judgements were fixed before any score was seen. Do not read its misses to pick weights,
thresholds, synonyms or prompts; run it only to judge a change already decided on persona A and
the public sets, beside persona B, and report all of them. If C's content ever has to change,
change it for a reason of its own (a format the connectors should handle, a wrong judgement),
never to move a score.

The persona's content is data: ``personas/c/*.json``, one file per source with the same schemas
as persona B's, laid down by the same code and writers (:mod:`ragbag_evalsets.sources`). Same
layout (``data/``, ``home.json``, ``queries.jsonl``; one source per connector; the query kinds),
so :mod:`ragbag.apps.eval.homes` scores it unchanged; ids are ``c-001``…. What is Marta's own is
here: her calendars' UIDs (iCloud's and Outlook's, and her own roster tool's), and her calendars
on Europe/Vienna (the calendar writer speaks Europe/Berlin; :func:`_vienna`).
"""

from __future__ import annotations

from pathlib import Path

from ragbag_evalsets.formats import h
from ragbag_evalsets.formats.calendar import VTIMEZONE_BERLIN, in_zone
from ragbag_evalsets.persona import Persona, write_set
from ragbag_evalsets.sources import lay

DATA = Path(__file__).resolve().parent / "personas" / "c"
NAME = "persona-c"
# Vienna keeps the same rules as Berlin (CET/CEST); only the zone's name differs.
VTIMEZONE_VIENNA = VTIMEZONE_BERLIN.replace("Europe/Berlin", "Europe/Vienna")


def _event_uid(p: Persona, calendar: dict, event: dict) -> str:
    """The UID of an event, or of the series an exception belongs to, as each calendar's program
    makes it: the roster tool from the day and the shift code, Apple and Outlook opaque ids."""
    summary, start = event.get("series", event["summary"]), event.get("series_start", event["start"])
    if calendar["name"] == "Dienst":
        return f"{start[:10].replace('-', '')}-{summary.split()[0]}@dienstplan2ics"
    digest = h(calendar["name"], summary, start, n=16).upper()
    if calendar["name"] == "Klinik":
        return f"040000008200E00074C5B7101A82E008{digest}"
    return f"{digest[:8]}-{digest[8:12]}-{digest[12:16]}-{digest[16:20]}-{digest[20:]}"


def _vienna(ics: bytes) -> bytes:
    """The calendar writer's Europe/Berlin, as Marta's Vienna calendars say it."""
    return in_zone(ics, "Europe/Vienna", VTIMEZONE_VIENNA)


def generate(out: Path) -> Path:
    """Write the set under ``out`` (``data/``, ``home.json``, ``queries.jsonl``); the same bytes and
    file times on every run. ``data/`` is replaced; nothing else under ``out`` is touched."""
    return write_set(Path(out), lay(Persona(DATA, _event_uid, _vienna)), NAME, "c")
