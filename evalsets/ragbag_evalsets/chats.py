"""The chat apps' sources of an evaluation home (WhatsApp, Telegram, Signal, Slack), laid down in
:func:`ragbag_evalsets.sources.lay`'s order. They share one shape of data: chats of talks, a talk
a ``start`` on the persona's clock and ``lines`` ``[minutes since the last line, who, text]``,
``who`` null for the persona.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

from ragbag_evalsets.formats.signal import SignalDesktop
from ragbag_evalsets.formats.slack import SlackExport
from ragbag_evalsets.formats.telegram import TelegramAccount
from ragbag_evalsets.formats.whatsapp import WhatsApp
from ragbag_evalsets.persona import Persona, text


def _talks(p: Persona, chat: dict) -> Iterator[tuple[datetime, Any, Any]]:
    """A chat's lines with their times: (when, who, what)."""
    for talk in chat["talks"]:
        t = p.time(talk["start"])
        for gap, who, what in talk["lines"]:
            t += timedelta(minutes=gap)
            yield t, who, what


def whatsapp(p: Persona) -> None:
    """Chats as the phone exported them: an iOS ``_chat.txt`` in its unzipped folder, or an
    Android text file; the source says who the persona is and the phone's zone (its options)."""
    d = p.load("whatsapp")
    me = d["me"]
    for chat in d["chats"]:
        wa = WhatsApp(chat["name"], me, style=chat.get("style", "ios"), zone=p.meta["timezone"], group="group" in chat)
        if "group" in chat:
            wa.created(p.time(chat["group"]["created"]), chat["group"]["members"])
        for t, who, what in _talks(p, chat):
            if isinstance(what, dict):  # {"media": kind, "file": name} or {"deleted": true}
                if what.get("deleted"):
                    wa.deleted(t, who)
                else:
                    wa.media(t, who, what["media"], what.get("file", ""))
            else:
                wa.say(t, who, text(what))
        if wa.style == "ios":
            p.s.file(f"whatsapp/WhatsApp Chat - {wa.name}/{wa.file_name()}", wa.bytes())
        else:
            p.s.file(f"whatsapp/{wa.file_name()}", wa.bytes())
    p.s.options["whatsapp"] = {"me": me, "timezone": p.meta["timezone"]}


def telegram(p: Persona) -> None:
    """Telegram Desktop's account export (``result.json``); users are named with their ids."""
    d = p.load("telegram")
    first, last, uid = d["owner"]
    account = TelegramAccount(first, last, uid, p.tz)
    for chat in d["chats"]:
        tg = account.chat(chat.get("name"), chat["type"], chat["id"])
        for t, who, what in _talks(p, chat):
            sender = None if who is None else (who, d["users"][who])
            if isinstance(what, dict):  # {"document": file name, "caption": …} or {"link": [before, words, url]}
                if "link" in what:
                    tg.link(t, sender, *what["link"])
                else:
                    tg.document(t, sender, what["document"], what.get("caption", ""))
            else:
                tg.say(t, sender, text(what))
    p.s.file("telegram/result.json", account.bytes())


def signal(p: Persona) -> None:
    """Signal Desktop's folder: ``config.json`` with the key, ``sql/db.sqlite`` keyed with it."""
    d = p.load("signal")
    desk = SignalDesktop(account=d["account"])
    contacts = {k: desk.contact(c["name"], e164=p.phones.get(k, c.get("e164", ""))) for k, c in d["contacts"].items()}
    for chat in d["chats"]:
        cid = contacts[chat["with"]] if "with" in chat else desk.group(chat["group"])
        for t, who, what in _talks(p, chat):
            desk.say(cid, t, None if who is None else contacts[who], text(what))
    for rel, data in desk.files().items():
        p.s.file(f"signal/{rel}", data)


def slack(p: Persona) -> None:
    """A workspace export, unzipped; a line's fourth element ``{"thread": true}`` replies to the
    talk's first message."""
    d = p.load("slack")
    export = SlackExport(d["team"])
    users = {k: export.user(name, handle) for k, (name, handle) in d["users"].items()}
    for chat in d["channels"]:
        if "dm" in chat:
            folder = export.dm(*(users[u] for u in chat["dm"]))
        else:
            folder = export.channel(chat["name"], [users[u] for u in chat["members"]], chat.get("private", False))
        for talk in chat["talks"]:
            t = p.time(talk["start"])
            first: str | None = None  # the thread's first message, which later lines may answer
            for line in talk["lines"]:
                gap, who, said = line[:3]
                t += timedelta(minutes=gap)
                thread = first if len(line) > 3 and line[3].get("thread") else None
                ts = export.say(folder, t, users[who], text(said), thread=thread)
                first = first or ts
    for rel, data in export.files().items():
        p.s.file(f"slack/{rel}", data)
