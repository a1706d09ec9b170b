"""Persona A, the personal-data set (``ragbag eval personal``): one made-up person's home, in the
real on-disk formats. The set search is developed against: its misses are read, and ranking is
tuned on its "tune" half (:mod:`ragbag_evalsets.persona_b` is the held-out persona).

Why it exists: public retrieval benchmarks (BEIR, SQuAD) are clean English paragraphs searched
with well-formed questions. A person searches their own data differently: they paste an
identifier (a parcel tracking number, an invoice number, an error code, a flight number, a
function name), they ask in English about a German bill or a Chinese chat, they remember who
said something rather than what, they narrow by sender, domain, file type or date, and they
often look for things that are not there at all. This set measures exactly that, through every
connector's real reading path (mbox and Maildir, Chrome ``History`` and Firefox
``places.sqlite``, ``.ics`` with VTIMEZONE, ``chat.db``, WeChat JSON exports, ChatGPT and
Claude ``conversations.json``, a git repository, a notes folder with HTML and PDF), and into
what lies inside records: attachments, scans, screenshots and photos, found only by reading
the inner document, by OCR or by EXIF.

Jan Hoffmann, a backend developer in Berlin-Neukölln, with a landlady, a mother and a brother
writing in German, a friend in Lyon (French), one in Valencia (Spanish), friends and a language
partner in China (WeChat, Chinese mail), a colleague writing in English, and a few Japanese and
Korean messages; all invented, dates in 2024–2026. ``personas/a/*.json`` holds it: 140 mails in
a Takeout mbox and a work Maildir++, 300 pages of Chrome and Firefox history, three calendars,
iMessage and WeChat conversations, ChatGPT and Claude exports, a small Python + TypeScript
repository, a notes folder, the documents inside them (``documents.json``: text PDFs, office
files, scans, screenshots, EXIF photos), and 299 judged queries of eleven kinds
(``ragbag_evalsets.persona.KINDS``): a document is relevant when it belongs to the named source
and its text contains the given string; ``filtered`` queries name the distractors their filter
keeps out, ``negative`` ones the strings no document holds. Ids are ``id-001``….
"""

from __future__ import annotations

from pathlib import Path

from ragbag_evalsets.formats import h
from ragbag_evalsets.persona import Persona, write_set
from ragbag_evalsets.sources import lay

DATA = Path(__file__).resolve().parent / "personas" / "a"
NAME = "personal"


def _event_uid(p: Persona, calendar: dict, event: dict) -> str:
    """The UID of an event, or of the series an exception belongs to: its summary and first start."""
    first = p.cal_time(event.get("series_start", event["start"]))
    return f"{h(event.get('series', event['summary']), first.isoformat(), n=12)}@jan-hoffmann.de"


def generate(out: Path) -> Path:
    """Write the set under ``out`` (``data/``, ``home.json``, ``queries.jsonl``); the same bytes and
    file times on every run. ``data/`` is replaced; nothing else under ``out`` is touched."""
    return write_set(Path(out), lay(Persona(DATA, _event_uid)), NAME, "id")
