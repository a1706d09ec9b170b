"""Persona B: a second personal-data home, written independently of the first and held out.

Two evaluation personas, one command each (both build a throwaway home unless ``--home`` keeps it):

- ``ragbag eval personal [--home DIR] [--json]``: persona A, Jan Hoffmann, a backend developer in
  Berlin (German, English, French, Spanish, Chinese; :mod:`ragbag.apps.eval.personal_set`). This
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

The persona's content is data, not code: ``personas/b/*.json`` next to this module holds the
people, mails, pages, events, chats, conversations, code, notes and the judged queries. This
module only lays them down with the writers of the first set (``personal_set``: mbox and Maildir,
Chrome and Firefox history, ``.ics``, ``chat.db``, WeChat, ChatGPT and Claude exports, PDF;
``personal_inside``: office files, scans, screenshots, EXIF photos), so both personas share one
copy of every format. Deterministic: fixed dates and a seeded ``random.Random``, the same bytes on
every run. The calendar writer speaks Europe/Berlin; Luana's calendars are rewritten to
Europe/Lisbon (:func:`_lisbon`). Same layout as the first set (``data/``, ``home.json``,
``queries.jsonl``; the same nine sources and query kinds), so :mod:`ragbag.apps.eval.homes`
scores it unchanged; ids are ``b-001``… so the two sets' queries never collide.

Usage: ``python -m ragbag.apps.eval.persona_b OUT`` (or ``generate(Path(OUT))``).
"""

from __future__ import annotations

import json
import random
import sys
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import quote_plus
from zoneinfo import ZoneInfo

from ragbag.apps.eval import personal_inside as inside
from ragbag.apps.eval import personal_set as base

# Module attributes, not imported names: the writers are the first set's, used within this package.
Mail, Event, make_pdf = base.Mail, base.Event, base.make_pdf

DATA = Path(__file__).resolve().parent / "personas" / "b"
LISBON = ZoneInfo("Europe/Lisbon")
NAME = "persona-b"
SOURCES = base.SOURCES
KINDS = base.KINDS
MIME = {
    "pdf": "application/pdf",
    "scan": "application/pdf",
    "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "png": "image/png",
    "jpg": "image/jpeg",
}
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


def _load(name: str) -> Any:
    return json.loads((DATA / f"{name}.json").read_text(encoding="utf-8"))


def _text(value: str | list[str]) -> str:
    """A text in the data: one string, or a list of lines (easier to read and review)."""
    return "\n".join(value) if isinstance(value, list) else value


def _dt(value: str) -> datetime:
    """``2025-06-12 08:00`` is Lisbon's wall clock; an explicit offset (``+09:00``) is kept."""
    when = datetime.fromisoformat(value)
    return when.replace(tzinfo=LISBON) if when.tzinfo is None else when


def _cal_time(value: str) -> date | datetime:
    """An event's start or end: a date (all day), or a time shown on Lisbon's clock."""
    if len(value) == 10:
        return date.fromisoformat(value)
    return _dt(value).astimezone(LISBON)


class _Persona:
    def __init__(self) -> None:
        self.meta = _load("persona")
        self.people = {k: tuple(v) for k, v in self.meta["people"].items()}
        self.phones: dict[str, str] = self.meta["phones"]
        self.s = base._Set()
        self.s.rng = random.Random(self.meta["seed"])
        self.pictures = random.Random(self.meta["seed"] + 1)  # scans and photos draw from their own stream

    def who(self, ref: str | list[str]) -> tuple[str, str]:
        return self.people[ref] if isinstance(ref, str) else (ref[0], ref[1])

    def handle(self, ref: str | None) -> str | None:
        return None if ref is None else self.phones.get(ref, ref)

    def photo(self, p: dict) -> bytes:
        make, model = p["camera"]
        return inside._photo(self.pictures, p["taken"], p["offset"], p["lat"], p["lon"], make, model, p["look"])

    def attachment(self, a: dict) -> tuple[str, str, bytes]:
        kind = a["type"]
        if kind == "pdf":
            data = make_pdf(a["pages"], a.get("title", ""), a.get("author", ""))
        elif kind == "scan":
            data = inside._scan_pdf(a["pages"], a.get("title", ""), self.pictures)
        elif kind == "docx":
            data = inside._docx([(k, v) for k, v in a["blocks"]], a.get("title", ""), a.get("author", ""))
        elif kind == "xlsx":
            data = inside._xlsx([(n, rows) for n, rows in a["sheets"]], a.get("author", ""))
        elif kind == "png":
            data = inside._screenshot([(st, t) for st, t in a["rows"]], dark=a.get("dark", False), bar=a.get("bar", ""))
        elif kind == "jpg":
            data = self.photo(a)
        else:
            raise ValueError(f"unknown attachment type {kind!r}")
        return a["name"], MIME[kind], data


# ============================================================================ the nine sources


def _mail(p: _Persona) -> None:
    made: dict[str, Any] = {}
    boxes: dict[str, list] = {"home": [], "work": []}
    for m in _load("mail")["mails"]:
        mail = Mail(
            _dt(m["when"]),
            p.who(m["from"]),
            [p.who(t) for t in m["to"]],
            m["subject"],
            _text(m.get("body", "")),
            html_only=m.get("html_only", False),
            charset=m.get("charset", "utf-8"),
            cte=m.get("cte", "quoted-printable"),
            labels=m.get("labels", ["Inbox"]),
            reply_to=made[m["reply_to"]] if "reply_to" in m else None,
            quote=m.get("quote"),
            attachments=[p.attachment(a) for a in m.get("attachments", [])],
            cc=[p.who(c) for c in m.get("cc", [])],
        )
        assert m["id"] not in made, m["id"]
        made[m["id"]] = mail
        boxes[m.get("box", "home")].append(mail)
    p.s.file("mail/Takeout/Mail/Todo o correio, incluindo spam e lixo.mbox", base._mbox(boxes["home"]))
    for m in sorted(boxes["work"], key=lambda m: m.when):  # the institute's IMAP account, synced as Maildir++
        stamp = int(m.when.timestamp())
        raw = base._render_mail(m, gmail=False)
        name = f"{stamp}.M{int(base._h(m.mid, n=3), 16)}P{7000 + stamp % 991}.ccmt-ws14,S={len(raw)}:2,S"
        folder = ".Sent/" if "Sent" in m.labels else ""
        p.s.file(f"mail/ccmt/{folder}cur/{name}", raw, m.when)
    p.s.file("mail/ccmt/new/.keep", b"")
    p.s.file("mail/ccmt/tmp/.keep", b"")


def _browser(p: _Persona) -> None:
    d, rng = _load("browser"), p.s.rng
    profiles: dict[str, list] = {"chrome": [], "firefox": []}
    seen: set[tuple[str, str]] = set()

    def visit(browser: str, url: str, title: str, first: datetime, n: int, spread: int, desc: str | None) -> None:
        if (browser, url) in seen:
            return
        seen.add((browser, url))
        visits = base._visits(rng, first, n, spread)
        profiles[browser].append((url, title, visits) if browser == "chrome" else (url, title, visits, desc))

    for v in d["visited"]:
        visit(v["browser"], v["url"], v["title"], _dt(v["first"]), v.get("n", 1), v.get("spread", 3), v.get("desc"))
    f = d["filler"]
    start, end = (_dt(x) for x in f["span"])
    days = (end - start).days

    def when() -> datetime:
        return start + timedelta(days=rng.randrange(days), minutes=rng.randrange(7 * 60, 23 * 60))

    def n() -> int:
        return rng.choice((1, 1, 1, 2, 2, 3, 4))

    for lang, slug, title in f["wiki"]:
        visit("chrome", f"https://{lang}.wikipedia.org/wiki/{slug}", title, when(), n(), 40, None)
    engines = {  # Luana's Chrome searches Google in Portuguese; the institute's Firefox uses DuckDuckGo
        "google": ("chrome", "https://www.google.com/search?q=", "{} - Pesquisa Google"),
        "ddg": ("firefox", "https://duckduckgo.com/?q=", "{} at DuckDuckGo"),
    }
    for engine, term in f["search"]:
        browser, prefix, title = engines[engine]
        visit(browser, prefix + quote_plus(term), title.format(term), when(), 1, 1, None)
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    for title in f["youtube"]:
        vid = "".join(rng.choice(alphabet) for _ in range(11))
        visit("chrome", f"https://www.youtube.com/watch?v={vid}", f"{title} - YouTube", when(), n(), 10, None)
    for page in f["pages"]:
        url, title, browser = page[0], page[1], page[2] if len(page) > 2 else "chrome"
        visit(browser, url, title, when(), n(), 30, page[3] if len(page) > 3 else None)
    p.s.file("browser/Chrome/Default/History", base._chrome_db(profiles["chrome"]))
    p.s.file("browser/Firefox/Profiles/q7m2d4xa.default-release/places.sqlite", base._firefox_db(profiles["firefox"]))


def _lisbon(ics: bytes) -> bytes:
    """The calendar writer's Europe/Berlin, as Luana's Lisbon calendars say it."""
    berlin = base.VTIMEZONE_BERLIN.replace("\n", "\r\n").encode()
    assert berlin in ics
    ics = ics.replace(berlin, VTIMEZONE_LISBON.replace("\n", "\r\n").encode())
    return ics.replace(b"Europe/Berlin", b"Europe/Lisbon")


def _calendar(p: _Persona) -> None:
    for cal in _load("calendar")["calendars"]:
        events = []
        for e in cal["events"]:
            start = _cal_time(e["start"])
            rid = _dt(e["recurrence_id"]).astimezone(LISBON) if "recurrence_id" in e else None
            uid_of = e.get("series", e["summary"])  # an exception shares its series' UID
            events.append(
                Event(
                    e["summary"],
                    start,
                    _cal_time(e["end"]) if "end" in e else None,
                    location=e.get("location", ""),
                    description=_text(e.get("description", "")),
                    organizer=p.who(e["organizer"]) if "organizer" in e else None,
                    attendees=[p.who(a) for a in e.get("attendees", [])],
                    rrule=e.get("rrule", ""),
                    status=e.get("status", "CONFIRMED"),
                    categories=e.get("categories", []),
                    recurrence_id=rid,
                    uid=f"{base._h(cal['name'], uid_of, e.get('series_start', e['start']), n=12)}@luana-devries.pt",
                )
            )
        data = base._calendar(cal["name"], events, cal["prodid"])
        p.s.file(f"calendar/{cal['file']}", _lisbon(data))


def _imessage(p: _Persona) -> None:
    db = base._ChatDB()
    for chat in _load("imessage")["chats"]:
        members = [p.phones.get(m, m) for m in chat["members"]]
        service = chat.get("service", "iMessage")
        cid = db.chat(chat.get("identifier") or members[0], members, chat.get("name", ""), service)
        for talk in chat["talks"]:
            t = _dt(talk["start"])
            for line in talk["lines"]:
                gap, who, text = line[:3]
                t += timedelta(minutes=gap)
                db.say(cid, t, p.handle(who), text, **(line[3] if len(line) > 3 else {}))
    p.s.file("imessage/chat.db", db.bytes())


def _wechat(p: _Persona) -> None:
    for chat in _load("wechat")["chats"]:
        wx = base._WeChat(chat["name"], chat["talker"], chat.get("members"))
        for talk in chat["talks"]:
            t = _dt(talk["start"])
            for gap, who, what in talk["lines"]:
                t += timedelta(minutes=gap)
                if what == "<image>":
                    wx.image(t, who)
                elif what == "<sticker>":
                    wx.sticker(t, who)
                elif isinstance(what, list):
                    wx.link(t, who, what[0], what[1])
                else:
                    wx.say(t, who, what)
        p.s.file(f"wechat/{wx.name}-{wx.talker}.json", wx.bytes())


def _assistants(p: _Persona) -> None:
    convs = [
        base._chatgpt_conv(
            c["title"],
            _dt(c["start"]),
            [(role, _text(text)) for role, text in c["turns"]],
            model=c.get("model", "gpt-4o"),
            dead_branch=(c["dead_branch"][0], _text(c["dead_branch"][1])) if "dead_branch" in c else None,
        )
        for c in _load("chatgpt")["conversations"]
    ]
    p.s.file("chatgpt/conversations.json", json.dumps(convs, ensure_ascii=False, indent=1).encode("utf-8"))
    convs = [
        base._claude_conv(
            c["name"],
            _dt(c["start"]),
            [(t[0], _text(t[1]), *t[2:]) for t in c["turns"]],
            c.get("summary", ""),
        )
        for c in _load("claude")["conversations"]
    ]
    p.s.file("claude/conversations.json", json.dumps(convs, ensure_ascii=False, indent=1).encode("utf-8"))


def _code(p: _Persona) -> None:
    d = _load("code")
    t = _dt(d["first_commit"])
    for n, (rel, text) in enumerate(sorted(d["files"].items())):
        p.s.file(f"code/{rel}", _text(text) + "\n", t + timedelta(hours=5 * n))


def _notes(p: _Persona) -> None:
    d = _load("notes")
    for rel, f in d["text"].items():
        p.s.file(f"notes/{rel}", _text(f["text"]).encode(f.get("encoding", "utf-8")), _dt(f["mtime"]))
    for f in d["pdfs"]:
        p.s.file(f"notes/{f['path']}", make_pdf(f["pages"], f.get("title", ""), f.get("author", "")), _dt(f["mtime"]))
    for f in d["scans"]:
        p.s.file(f"notes/{f['path']}", inside._scan_pdf(f["pages"], f.get("title", ""), p.pictures), _dt(f["mtime"]))
    for f in d["screenshots"]:
        rows = [(st, t) for st, t in f["rows"]]
        png = inside._screenshot(rows, dark=f.get("dark", False), bar=f.get("bar", ""))
        p.s.file(f"notes/{f['path']}", png, _dt(f["mtime"]))
    for f in d["photos"]:
        p.s.file(f"notes/{f['path']}", p.photo(f), _dt(f["mtime"]))


def _queries(p: _Persona) -> None:
    for q in _load("queries")["queries"]:
        extra = {k: q[k] for k in ("lang", "where", "after", "before", "connectors", "absent") if k in q}
        if "distractors" in q:
            extra["distractors"] = [tuple(x) for x in q["distractors"]]
        p.s.q(q["kind"], q["text"], [tuple(r) for r in q["relevant"]], **extra)


# ============================================================================ assembly


def _build() -> _Persona:
    p = _Persona()
    for part in (_mail, _browser, _calendar, _imessage, _wechat, _assistants, _code, _notes, _queries):
        part(p)
    return p


def generate(out: Path) -> Path:
    """Write the set under ``out`` (``data/``, ``home.json``, ``queries.jsonl``); the same bytes and
    file times on every run. ``data/`` is replaced; nothing else under ``out`` is touched."""
    return base.write_set(Path(out), _build().s, NAME, SOURCES, "b")


def main(argv: list[str] | None = None) -> int:
    return base.main(argv, __name__, generate, KINDS)


if __name__ == "__main__":
    sys.exit(main())
