"""WhatsApp exports, differentially: ragbag's windows against a plain reading with the standard library.

The reference shares no code with the connector. It reads the text (a ``.txt``, or the ``.txt``
members of a zip) as UTF-8 and recognises one line form per file, from a fixed list of the
forms WhatsApp writes (iOS ``[date, time] Name: text``, Android ``date, time - Name: text``,
with or without seconds and a 12-hour day half): the first line that matches a form fixes the
file's form, and lines of another form continue the message before them. Dates are read with
:func:`datetime.strptime` in both day/month orders; the order under which every date is valid
and the messages never go back in time is the file's (both: day-first, unless the form is the
US one with slashes and AM/PM). Times are the machine's local time, as ragbag reads them without
a ``timezone`` option.

Kept as messages: lines with a sender whose text is not the app's (iOS marks those with U+200E
unless they are media) nor a deletion or encryption notice (English only). Media placeholders
are messages whose text ragbag shows as ``[media…]``.

Checks, per reference message: ``count`` (ragbag's windows hold as many messages as the
reference has, per file), ``times`` (a line of the message's UTC minute is in ragbag's text),
``people`` (that line names the same sender), ``text`` (its first text line follows, or a
``[media`` marker for a media placeholder).
"""

from __future__ import annotations

import re
import zipfile
from datetime import UTC, datetime
from pathlib import Path

from tests.differential.common import FIXTURES, PUBLIC, Outcome, chat_checks, ragbag_read, rel

CONNECTOR = "whatsapp"

_MIXED = (
    "a loader's test file that mixes the line forms of several phones (iOS brackets, Android dashes,"
    " dotted and ISO dates) in one file, which no export does; ragbag reads the file's dominant form"
    " and takes lines of other forms as text of the message before (reported when they come first),"
    " the reference reads its own first form the same way: they differ on which form is the file's"
)
_ME = (
    "ragbag shows the exporting user as Me: in a direct chat of two senders it is whoever the"
    " encryption notice (iOS writes it under the contact's name) does not name; the reference keeps"
    " every sender's name"
)
EXPLAINED: dict[str, str] = {
    "public/whatsapp/langchain-community/libs__community__tests__examples__whatsapp_chat.txt": _MIXED,
    "public/whatsapp/langchain-community/libs__community__tests__integration_tests__examples__whatsapp_chat.txt": _MIXED,
    "public/whatsapp/langchain-community/libs__community__tests__unit_tests__chat_loaders__data__whatsapp_chat.txt": _ME,
}

_DATE = r"(\d{1,4}[./-]\d{1,2}[./-]\d{1,4})"
_TIME = r"(\d{1,2}:\d{2}(?::\d{2})?)"
_HALF = r"(?:[ \u202f\u00a0]([AaPp]\.?[ \u00a0\u202f]?[Mm]\.?))?"
# The forms, each (name, pattern with groups date, time, half, rest).
_FORMS = [
    ("ios", re.compile(rf"^\u200e?\[{_DATE},? {_TIME}{_HALF}\] (.*)$")),
    ("android", re.compile(rf"^{_DATE},? {_TIME}{_HALF} - (.*)$")),
]
_SENDER = re.compile(r"^([^:]+?): (.*)$", re.S)
_NOTICES = re.compile(
    r"^(this message was deleted|you deleted this message|messages and calls are end-to-end encrypted|"
    r"messages you send to this group are now secured with end-to-end encryption|"
    r"messages to this group are now secured with end-to-end encryption)",
    re.I,
)
_MEDIA = re.compile(r"<media omitted>|^\S+ omitted$|<attached: [^>]+>|\(file attached\)", re.I)
_MARKS = re.compile("[\u200e\u200f\u202a-\u202e]")


def units() -> list[Path]:
    files = []
    for root in (PUBLIC / CONNECTOR, FIXTURES / "realworld" / CONNECTOR):
        if root.is_dir():
            files += [p for p in sorted(root.rglob("*")) if p.is_file() and p.suffix.lower() in (".txt", ".zip")]
    return files


def _texts(path: Path) -> list[str]:
    if path.suffix.lower() != ".zip":
        return [path.read_bytes().decode("utf-8-sig")]
    with zipfile.ZipFile(path) as zf:
        names = [n for n in zf.namelist() if n.endswith(".txt") and not n.startswith("__MACOSX/")]
        return [zf.read(n).decode("utf-8-sig") for n in sorted(names)]


def _records(text: str) -> list[tuple[str, str, str, str]]:
    """(date, time, half, rest) per message of the file's first form, continuation lines joined."""
    form = None
    out: list[list[str]] = []
    for line in text.splitlines():
        match = None
        for name, pattern in _FORMS:
            if form in (None, name) and (m := pattern.match(line)):
                form, match = name, m
                break
        if match:
            out.append([match.group(1), match.group(2), match.group(3) or "", match.group(4)])
        elif out:
            out[-1][3] += "\n" + line
    return [(a, b, c, d) for a, b, c, d in out]


def _parse(date: str, time: str, half: str, day_first: bool) -> datetime:
    parts = re.split(r"[./-]", date)
    if len(parts[0]) == 4:
        fmt = "%Y %m %d"
    else:
        fmt = ("%d %m " if day_first else "%m %d ") + ("%Y" if len(parts[2]) == 4 else "%y")
    day = datetime.strptime(" ".join(parts), fmt)
    hour, minute, *second = (int(x) for x in time.split(":"))
    if half:  # 12 AM (or 0 AM) is the hour after midnight
        hour = hour % 12 + (12 if half.lower().startswith("p") else 0)
    return day.replace(hour=hour, minute=minute, second=second[0] if second else 0)


def reference(path: Path) -> list[tuple[datetime, str, str, bool]]:
    """(UTC time, sender, first text line, is media) of every message the export holds."""
    out = []
    for text in _texts(path):
        records = _records(text)
        orders = []
        for day_first in (True, False):
            try:
                times = [_parse(d, t, h, day_first) for d, t, h, _ in records]
            except ValueError:
                continue
            orders.append((day_first, times == sorted(times)))
        candidates = [o for o, ok in orders if ok] or [o for o, _ in orders]
        us = bool(records) and "/" in records[0][0] and any(h for _, _, h, _ in records)
        day_first = candidates[0] if len(candidates) == 1 else not us
        for d, t, h, rest in records:
            m = _SENDER.match(rest)
            if not m:
                continue  # the app's events have no sender
            sender = _MARKS.sub("", m.group(1)).replace("\u202f", " ").strip()
            sender = sender[1:].strip() if sender.startswith("~") else sender
            body = m.group(2)
            clean = _MARKS.sub("", body).replace("<This message was edited>", "").strip()
            media = bool(_MEDIA.search(clean))
            if not media and (body.startswith("\u200e") or _NOTICES.match(clean)) or not clean:
                continue
            try:
                when = _parse(d, t, h, day_first).astimezone(UTC)
            except ValueError:
                continue
            out.append((when, sender, clean.splitlines()[0].strip(), media))
    return out


def compare(path: Path) -> Outcome:
    ref = reference(path)
    docs, errors = ragbag_read(CONNECTOR, path)
    lines = [line for d in docs for line in d.text.splitlines() if not line.startswith("  ")]
    out = Outcome(rel(path), path.parent.name, len(ref), len(docs), len(errors))
    timed = people = texts = 0
    for when, sender, first, media in ref:
        stamp = f"{when:%Y-%m-%d %H:%M} "
        at = [line for line in lines if line.startswith(stamp)]
        if not at:
            out.disagreements.append(f"no line at {stamp.strip()} for {first[:40]!r}")
            continue
        timed += 1
        by = [line for line in at if line.startswith(f"{stamp}{sender}: ")]
        if by:
            people += 1
        else:
            out.disagreements.append(f"at {stamp.strip()}: no line by {sender!r}")
            by = at
        want = "[media" if media else first
        if any(want in line for line in by):
            texts += 1
        else:
            out.disagreements.append(f"text at {stamp.strip()} by {sender}: {want[:40]!r} not found")
    return chat_checks(out, docs, len(ref), timed, people, texts)
