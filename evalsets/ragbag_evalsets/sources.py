"""The sources of an evaluation home, one per connector, laid down from a persona's data files in
the order of :func:`lay`: mail (Takeout mbox and Maildir++), browser history, calendars, iMessage,
WeChat, the ChatGPT and Claude exports, a code repository, a notes folder, WhatsApp and Telegram
exports, a Signal Desktop folder, an Obsidian vault, a Slack export and a Google Takeout (Chrome,
Keep); then the judged queries.

The chat apps' sources (WhatsApp, Telegram, Signal, Slack) are laid down by
:mod:`ragbag_evalsets.chats`.

The order matters where a random stream is shared. The pictures (scans, photos) are drawn from
the persona's one stream: ``documents.json``'s first, in its order (:class:`Persona`), then mail's
attachments as they are met, then the notes folder's. Visits not given are drawn from the
browser's own stream. Each data file's ``about`` says what its entries hold.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import quote_plus

from ragbag_evalsets.chats import signal, slack, telegram, whatsapp
from ragbag_evalsets.formats.assistants import chatgpt_conv, claude_conv
from ragbag_evalsets.formats.browser import chrome_db, draw_visits, firefox_db
from ragbag_evalsets.formats.calendar import Event, calendar
from ragbag_evalsets.formats.contacts import Person, google_csv, vcard
from ragbag_evalsets.formats.imessage import ChatDB
from ragbag_evalsets.formats.mail import Mail, maildir, mbox
from ragbag_evalsets.formats.obsidian import Vault
from ragbag_evalsets.formats.takeout import Note, Takeout
from ragbag_evalsets.formats.wechat import WeChat
from ragbag_evalsets.persona import HomeSet, Persona, text


def mail(p: Persona) -> None:
    made: dict[str, Mail] = {}
    boxes: dict[str, list] = {"home": [], "work": []}
    for m in p.load("mail")["mails"]:
        message = Mail(
            p.time(m["when"]),
            p.who(m["from"]),
            [p.who(t) for t in m["to"]],
            m["subject"],
            text(m.get("body", "")),
            html=text(m["html"]) if "html" in m else None,
            html_only=m.get("html_only", False),
            charset=m.get("charset", "utf-8"),
            cte=m.get("cte", "quoted-printable"),
            labels=m.get("labels", ["Inbox"]),
            reply_to=made[m["reply_to"]] if "reply_to" in m else None,
            quote=m.get("quote"),
            attachments=[p.attachment(a) for a in m.get("attachments", [])],
            cc=[p.who(c) for c in m.get("cc", [])],
        )
        if "id" in m:
            assert m["id"] not in made, m["id"]
            made[m["id"]] = message
        boxes[m.get("box", "home")].append(message)
    layout = p.layout
    p.s.file(layout["mbox"], mbox(boxes["home"]))
    folder, pid = layout["maildir"], layout["maildir_pid"]
    for rel, raw, when in maildir(boxes["work"], layout["maildir_host"], (pid[0], pid[1])):
        p.s.file(f"{folder}/{rel}", raw, when)
    p.s.file(f"{folder}/new/.keep", b"")
    p.s.file(f"{folder}/tmp/.keep", b"")


def browser(p: Persona) -> None:
    """Pages with their visits given, or with a first visit and a count drawn around it; filler
    (visited at random times in a span) drawn from the browser's own stream."""
    d = p.load("browser")
    rng = random.Random(p.meta["seed"]) if "seed" in p.meta else None
    profiles: dict[str, list] = {"chrome": [], "firefox": []}
    seen: set[tuple[str, str]] = set()

    def visit(browser: str, url: str, title: str, visits: Any, desc: str | None) -> None:
        if (browser, url) in seen:
            return
        seen.add((browser, url))
        if not isinstance(visits, list):  # (first, n, spread): drawn
            assert rng is not None, "drawn visits need persona.json's seed"
            visits = draw_visits(rng, *visits)
        profiles[browser].append((url, title, visits) if browser == "chrome" else (url, title, visits, desc))

    for v in d["visited"]:
        if "visits" in v:
            visits: Any = [p.time(t) for t in v["visits"]]
        else:
            visits = (p.time(v["first"]), v.get("n", 1), v.get("spread", 3))
        visit(v["browser"], v["url"], v["title"], visits, v.get("desc"))
    if "filler" in d:
        assert rng is not None, "filler needs persona.json's seed"
        _filler(p, d["filler"], visit, rng)
    p.s.file(p.layout["chrome"], chrome_db(profiles["chrome"]))
    p.s.file(p.layout["firefox"], firefox_db(profiles["firefox"]))


def _filler(p: Persona, f: dict, visit: Callable[[str, str, str, Any, str | None], None], rng: random.Random) -> None:
    """Pages visited at random times in ``span``: Wikipedia articles, searches, videos, pages."""
    start, end = (p.time(x) for x in f["span"])
    days = (end - start).days

    def when() -> datetime:
        return start + timedelta(days=rng.randrange(days), minutes=rng.randrange(7 * 60, 23 * 60))

    def n() -> int:
        return rng.choice((1, 1, 1, 2, 2, 3, 4))

    for lang, slug, title in f["wiki"]:
        visit("chrome", f"https://{lang}.wikipedia.org/wiki/{slug}", title, (when(), n(), 40), None)
    engines = {k: tuple(v) for k, v in f["engines"].items()}  # a search engine: browser, url prefix, title
    for engine, term in f["search"]:
        browser, prefix, title = engines[engine]
        visit(browser, prefix + quote_plus(term), title.format(term), (when(), 1, 1), None)
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    for title in f["youtube"]:
        vid = "".join(rng.choice(alphabet) for _ in range(11))
        visit("chrome", f"https://www.youtube.com/watch?v={vid}", f"{title} - YouTube", (when(), n(), 10), None)
    for page in f["pages"]:
        url, title, browser = page[0], page[1], page[2] if len(page) > 2 else "chrome"
        visit(browser, url, title, (when(), n(), 30), page[3] if len(page) > 3 else None)


def calendars(p: Persona) -> None:
    for cal in p.load("calendar")["calendars"]:
        events = [
            Event(
                e["summary"],
                p.cal_time(e["start"]),
                p.cal_time(e["end"]) if "end" in e else None,
                location=e.get("location", ""),
                description=text(e.get("description", "")),
                organizer=p.who(e["organizer"]) if "organizer" in e else None,
                attendees=[p.who(a) for a in e.get("attendees", [])],
                rrule=e.get("rrule", ""),
                status=e.get("status", "CONFIRMED"),
                categories=e.get("categories", []),
                recurrence_id=p.time(e["recurrence_id"]).astimezone(p.tz) if "recurrence_id" in e else None,
                uid=e["uid"] if "uid" in e else p.event_uid(p, cal, e),
                modified=p.time(e["modified"]) if "modified" in e else None,
            )
            for e in cal["events"]
        ]
        p.s.file(f"calendar/{cal['file']}", p.ics(calendar(cal["name"], events, cal["prodid"])))


def imessage(p: Persona) -> None:
    db = ChatDB()
    for chat in p.load("imessage")["chats"]:
        members = [p.phones.get(m, m) for m in chat["members"]]
        service = chat.get("service", "iMessage")
        cid = db.chat(chat.get("identifier") or members[0], members, chat.get("name", ""), service)
        for talk in chat["talks"]:
            t = p.time(talk["start"])
            for line in talk["lines"]:
                gap, who, said = line[:3]
                t += timedelta(minutes=gap)
                db.say(cid, t, p.handle(who), said, **(line[3] if len(line) > 3 else {}))
    p.s.file("imessage/chat.db", db.bytes())


def wechat(p: Persona) -> None:
    for chat in p.load("wechat")["chats"]:
        wx = WeChat(chat["name"], chat["talker"], chat.get("members"))
        for talk in chat["talks"]:
            t = p.time(talk["start"])
            for gap, who, what in talk["lines"]:
                t += timedelta(minutes=gap)
                if what == "<image>":
                    wx.image(t, who)
                elif what == "<sticker>":
                    wx.sticker(t, who)
                elif what == "<recall>":  # who: the display name the notice quotes
                    wx.recall(t, who)
                elif isinstance(what, list):
                    wx.link(t, who, what[0], what[1])
                elif isinstance(what, dict):  # another message type, its content as exported
                    wx.say(t, who, what["content"], what["type"])
                else:
                    wx.say(t, who, what)
        p.s.file(f"wechat/{wx.name}-{wx.talker}.json", wx.bytes())


def assistants(p: Persona) -> None:
    convs = [
        chatgpt_conv(
            c["title"],
            p.time(c["start"]),
            [(role, text(said)) for role, said in c["turns"]],
            model=c.get("model", "gpt-4o"),
            dead_branch=(c["dead_branch"][0], text(c["dead_branch"][1])) if "dead_branch" in c else None,
        )
        for c in p.load("chatgpt")["conversations"]
    ]
    p.s.file("chatgpt/conversations.json", json.dumps(convs, ensure_ascii=False, indent=1).encode("utf-8"))
    convs = [
        claude_conv(
            c["name"], p.time(c["start"]), [(t[0], text(t[1]), *t[2:]) for t in c["turns"]], c.get("summary", "")
        )
        for c in p.load("claude")["conversations"]
    ]
    p.s.file("claude/conversations.json", json.dumps(convs, ensure_ascii=False, indent=1).encode("utf-8"))


def code(p: Persona) -> None:
    """A file is its lines (each ending in a newline) or one string (exactly its text); files are
    committed ``hours_apart`` in path order."""
    d = p.load("code")
    t = p.time(d["first_commit"])
    for n, (rel, lines) in enumerate(sorted(d["files"].items())):
        content = "".join(line + "\n" for line in lines) if isinstance(lines, list) else lines
        p.s.file(f"code/{rel}", content, t + timedelta(hours=d["hours_apart"] * n))


def notes(p: Persona) -> None:
    d = p.load("notes")
    for rel, f in d["text"].items():
        p.s.file(f"notes/{rel}", text(f["text"]).encode(f.get("encoding", "utf-8")), p.time(f["mtime"]))
    for key, kind in (("pdfs", "pdf"), ("scans", "scan"), ("screenshots", "png"), ("photos", "jpg")):
        for f in d.get(key, []):
            p.s.file(f"notes/{f['path']}", p.draw({"type": kind, **f}), p.time(f["mtime"]))
    for rel, data, mtime in p.notes_documents:
        p.s.file(f"notes/{rel}", data, mtime)


def obsidian(p: Persona) -> None:
    """A vault: notes with their properties, daily notes, written at their ``mtime``."""
    vault = Vault()
    times: dict[str, datetime] = {}
    for rel, n in p.load("obsidian")["notes"].items():
        created = p.time(n["created"]).date() if "created" in n else None
        path = vault.note(
            rel, text(n["body"]), tags=n.get("tags"), aliases=n.get("aliases"), created=created, extra=n.get("extra")
        )
        times[path] = p.time(n["mtime"])
    for rel, data in sorted(vault.files.items()):
        p.s.file(f"obsidian/{rel}", data, times.get(rel))


def takeout(p: Persona) -> None:
    """A Google Takeout, unzipped: Chrome's history and bookmarks, Keep's notes."""
    d = p.load("takeout")
    out = Takeout(d.get("lang", "en"))
    for when, url, title in d.get("history", []):
        out.visit(p.time(when), url, title)
    for folders, url, title, added in d.get("bookmarks", []):
        out.bookmark(folders, url, title, p.time(added))
    for n in d.get("keep", []):
        out.note(
            Note(
                n["title"],
                text(n.get("text", "")),
                items=[(item, done) for item, done in n.get("items", [])],
                labels=n.get("labels", []),
                created=p.time(n["created"]),
                edited=p.time(n.get("edited", n["created"])),
                pinned=n.get("pinned", False),
            )
        )
    for rel, data in out.files().items():
        p.s.file(f"takeout/{rel}", data)


def contacts(p: Persona) -> None:
    """The persona's address book: vCard files and a Google Contacts CSV, its people from
    persona.json with the numbers and addresses contacts.json gives them."""
    d = p.load("contacts")
    p.s.options["contacts"] = {"region": d["region"]}
    for f in d["files"]:
        people = []
        for card in f["cards"]:
            name, address = p.who(card["person"])
            given, _, family = name.partition(" ")
            people.append(
                Person(
                    given,
                    family,
                    emails=[("home", address)],
                    phones=[(label, number) for label, number in card.get("phones", [])],
                    org=card.get("org", ""),
                    title=card.get("title", ""),
                    address=tuple(card["address"]) if "address" in card else None,
                    birthday=card.get("birthday", ""),
                    nickname=card.get("nickname", ""),
                    note=card.get("note", ""),
                    uid=card.get("uid", ""),
                    handles=[(service, handle) for service, handle in card.get("handles", [])],
                )
            )
        data = vcard(people, f["version"]) if f["format"] == "vcard" else google_csv(people)
        p.s.file(f"contacts/{f['path']}", data)


def queries(p: Persona) -> None:
    for q in p.load("queries")["queries"]:
        extra = {k: q[k] for k in ("lang", "where", "after", "before", "connectors", "absent") if k in q}
        if "distractors" in q:
            extra["distractors"] = [tuple(x) for x in q["distractors"]]
        p.s.q(q["kind"], q["text"], [tuple(r) for r in q["relevant"]], **extra)


def lay(p: Persona) -> HomeSet:
    """The persona's whole set: its sources, then its queries."""
    parts = (mail, browser, calendars, imessage, wechat, assistants, code, notes)
    for part in (*parts, whatsapp, telegram, signal, obsidian, slack, takeout, contacts, queries):
        part(p)
    return p.s
