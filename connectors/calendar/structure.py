"""The component structure of an iCalendar text, checked and mended line by line before icalendar
parses it, and the count of records it holds: the file-level accounting of the calendar connector.

icalendar pops the innermost open component at any ``END`` line, whatever it names, and returns
only the calendars it saw closed: one missing ``END:VEVENT`` nests every later event in that one
and then drops the whole calendar (the final ``END:VCALENDAR`` closes the event, not the
calendar); one missing ``BEGIN:VEVENT`` closes the calendar early and fails the rest. Both lose
records without an error. :func:`structure` reads the lines once (linear, no backtracking) with a
stack of open components and writes a text in which every component is closed where it ends:

- a ``BEGIN`` of an event, task, journal, VTIMEZONE or VFREEBUSY closes whatever is still open
  inside the calendar (their ``END`` lines are missing) — those never nest;
- an ``END`` closes up to the component it names, ending any left open inside it; an ``END`` of
  an event (or other top-level component) that is not open is the end of one whose ``BEGIN`` is
  missing: the component is taken to start after the previous one (past the calendar's own
  properties, ``VERSION`` … ``X-WR-*``), or, if nothing lies between, the line is a stray copy;
- a ``BEGIN`` repeated before anything it would hold, a stray ``END`` of a component not open,
  and a ``BEGIN``/``END`` line with one wrong character (``BEGIN:VEVEFT``, ``BEGIN;VEVENT``,
  ``BEGYN:VEVENT``) are mended; one naming no component at all (``BEGIN:`` cut after the colon,
  ``END:V"``) is left out, and every ``BEGIN``/``END`` line is written out plain (icalendar
  reads ``BEGIN:VEVENT\\r`` as a component named ``VEVENT\\r``);
- components outside any ``VCALENDAR`` (a bare VEVENT file, a missing ``BEGIN:VCALENDAR``) are
  wrapped in one; lines outside any calendar that no component follows are left out;
- at the end of the text, a component still open is cut off (the file is truncated): it is left
  out, and ``cut`` says so; so is a ``VCALENDAR`` opened by a line and never closed.

``components`` counts the events, tasks and journals of the mended text: the connector compares it
with what the parse produced, and reports any shortfall for the file. A mend that drops text of
the file (a ``BEGIN``/``END`` line that ran into the next lines when their line breaks were lost,
``END:VALARMDND:VEVENTBEGIN:VEVENT``) is listed in ``lossy``, and the file reports it even when
the count holds: what the dropped lines began may be gone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

RECORDS = ("VEVENT", "VTODO", "VJOURNAL")
# Components that stand directly in a VCALENDAR: one never holds another.
TOP = (*RECORDS, "VTIMEZONE", "VFREEBUSY", "VAVAILABILITY")
KNOWN = (*TOP, "VCALENDAR", "STANDARD", "DAYLIGHT", "VALARM", "AVAILABLE", "VLOCATION", "VRESOURCE", "PARTICIPANT")
# Properties of a VCALENDAR only (RFC 5545, RFC 7986 and the common X-WR-*), not of its components.
_CALENDAR_ONLY = ("VERSION", "PRODID", "CALSCALE", "METHOD", "REFRESH-INTERVAL", "SOURCE", "COLOR", "X-PUBLISHED-TTL")
_EOL = "\r\n"
_BEGIN_RECORD = tuple(f"BEGIN:{name}{_EOL}" for name in RECORDS)  # as written out
_NAME = re.compile(r"[A-Z0-9-]+")  # a component's name (RFC 5545 iana-token / x-name)
_SHORT = 80  # a BEGIN/END line is short; longer lines are not looked at as one


@dataclass
class Structure:
    text: str  # every component closed where it ends, every calendar closed
    components: int = 0  # the VEVENT, VTODO and VJOURNAL components in ``text``
    repairs: list[str] = field(default_factory=list)  # what was wrong, by line
    cut: bool = False  # the text ends inside a calendar: truncated, the incomplete component left out
    structural: bool = False  # a BEGIN/END line of an iCalendar component (else: not an iCalendar text)
    seen: int = 0  # BEGIN/END lines of a VEVENT, VTODO or VJOURNAL in the text as it was
    lossy: list[str] = field(default_factory=list)  # repairs that dropped text of the file


@dataclass
class _Open:
    name: str
    at: int  # index in the output of its BEGIN line
    lines: int = 0  # lines it holds so far
    explicit: bool = True  # a VCALENDAR opened by its own line (not wrapped around a bare component)
    since: int = 0  # a VCALENDAR: where in the output its last top-level component ended


def _near(word: str, target: str) -> bool:
    """One character off (or equal), same length."""
    return len(word) == len(target) and sum(a != b for a, b in zip(word, target, strict=True)) <= 1


def _known(name: str) -> str | None:
    """The component ``name`` is, or is one character off."""
    if name in KNOWN or name.startswith("X-"):
        return name
    return next((k for k in KNOWN if _near(name, k)), None)


def _line(raw: str) -> tuple[str, str, bool] | None:
    """("BEGIN" or "END", component name, whether the line was damaged), or None for a
    property line. Every line icalendar takes for one (``BEGIN:`` and anything, any case) is
    one; so is a short line one character off in the keyword or its separator (``BEGYN:VEVENT``,
    ``BEGIN;VEVENT``) when what it names is a known component. The name is mended to the known
    one it is one character off (``VEVEFT``), or that it starts with (``VEVENT*UID:…``, a line
    break lost); a name that is no component name at all (``""``, ``V"``) is returned as it is."""
    s = raw.strip()
    u = s[:6].upper()
    for word in ("BEGIN", "END"):
        n = len(word)
        if u[:n] == word and u[n : n + 1] == ":":
            name = s[n + 1 :].strip().upper()
            known = _known(name) or next((k for k in KNOWN if name.startswith(k)), None)
            return (word, known or name, known is not None and known != name)
        if len(s) <= _SHORT and _near(s[:n].upper(), word) and s[n + 1 :].strip().upper() in KNOWN:
            return (word, s[n + 1 :].strip().upper(), True)
    return None


def _property(line: str) -> str:
    end = min((i for i in (line.find(":"), line.find(";")) if i != -1), default=len(line))
    return line[:end].strip().upper()


def structure(text: str) -> Structure:
    """``text`` with its component structure mended; see the module docstring."""
    out: list[str] = []
    stack: list[_Open] = []
    outside: list[str] = []  # lines before any calendar: its header, if a component follows
    shape = Structure("")
    pending: list[str] = []  # a logical line: its first physical line and continuations

    def note(number: int, what: str) -> None:
        shape.repairs.append(f"line {number}: {what}")

    def emit(line: str) -> None:
        out.append(line)
        if stack:
            stack[-1].lines += 1

    def close(number: int, missing: bool) -> None:
        """Ends the innermost open component (its END line ``missing`` from the text)."""
        top = stack.pop()
        if missing:
            note(number, f"END:{top.name} missing")
        out.append(f"END:{top.name}{_EOL}")
        if stack and stack[-1].name == "VCALENDAR" and top.name in TOP:
            stack[-1].since = len(out)
        if stack:
            stack[-1].lines += 1

    def calendar(number: int) -> None:
        """Opens a VCALENDAR for a component standing outside one."""
        if any(line.strip() for line in outside):
            note(number, "BEGIN:VCALENDAR missing")
        out.append(f"BEGIN:VCALENDAR{_EOL}")
        stack.append(_Open("VCALENDAR", len(out) - 1, explicit=False, since=len(out)))
        for line in outside:
            emit(line)
        outside.clear()

    def begin(number: int, name: str, raw: str, damaged: bool) -> None:
        if stack and stack[-1].name == name and stack[-1].lines == 0:
            note(number, f"BEGIN:{name} repeated")
            return
        if name == "VCALENDAR":
            while stack:
                close(number, True)
            if any(line.strip() for line in outside):
                note(number, f"{sum(bool(line.strip()) for line in outside)} lines outside any VCALENDAR left out")
            outside.clear()
        elif not stack:
            calendar(number)
        elif name in TOP:  # closes what is open inside the calendar, short of a custom component
            while stack[-1].name in KNOWN and stack[-1].name != "VCALENDAR":
                close(number, True)
        if damaged:
            note(number, f"damaged line {raw.strip()[:40]!r} read as BEGIN:{name}")
        out.append(f"BEGIN:{name}{_EOL}")  # as END lines are: icalendar reads BEGIN:VEVENT\r as another name
        if stack:
            stack[-1].lines += 1
        stack.append(_Open(name, len(out) - 1))
        if name == "VCALENDAR":
            stack[-1].since = len(out)
        shape.components += name in RECORDS

    def end(number: int, name: str, raw: str, damaged: bool) -> None:
        names = [o.name for o in stack]
        if name in names:
            while stack[-1].name != name:
                close(number, True)
            if damaged:
                note(number, f"damaged line {raw.strip()[:40]!r} read as END:{name}")
            close(number, False)
            return
        if name in TOP and not stack and outside:  # BEGIN:VCALENDAR missing too
            calendar(number)
        if name in TOP and stack:  # not open: its BEGIN line is missing, or this is a stray copy
            while stack[-1].name != "VCALENDAR":
                close(number, True)
            cal = stack[-1]
            start = cal.since
            while start < len(out) and (not out[start].strip() or _calendar_only(out[start])):
                start += 1
            if start < len(out):
                note(number, f"BEGIN:{name} missing")
                out[start] = f"BEGIN:{name}{_EOL}{out[start]}"  # not list.insert: linear in all
                stack.append(_Open(name, start, lines=len(out) - start))
                shape.components += name in RECORDS
                close(number, False)
                return
        note(number, f"stray END:{name} left out")

    def flush(number: int) -> None:
        if not pending:
            return
        raw = "".join(pending)
        head = _line(pending[0])
        if head is None:
            if stack:
                emit(raw)
            elif raw.strip():
                outside.append(raw)
        elif not _NAME.fullmatch(head[1]):  # BEGIN: cut after the colon, END:V" …: no component
            shape.repairs.append(f"line {number}: damaged line {pending[0].strip()[:40]!r} left out")
            if ":" in head[1]:  # ``BEGIN:DAYLIGNIZER:0``: another line ran into it, and is gone
                shape.lossy.append(shape.repairs[-1])
        else:
            word, name, damaged = head
            written = pending[0].strip()[len(word) + 1 :].strip()
            if len(written) > len(name) + 1:  # ``END:VALARMDND:VEVENT…``: line breaks lost, the rest with them
                shape.lossy.append(
                    f"line {number}: {written[len(name) : len(name) + 30]!r} after {word}:{name} left out"
                )
            shape.structural |= _known(name) is not None  # a VCARD is no calendar
            shape.seen += name in RECORDS
            damaged = damaged or len(pending) > 1  # BEGIN:VEVENT folded onto a continuation line
            (begin if word == "BEGIN" else end)(number, name, pending[0], damaged)
        pending.clear()

    number = start = 0
    while start < len(text):
        stop = text.find("\n", start)
        stop = len(text) if stop == -1 else stop + 1
        line = text[start:stop] if stop > start and text[stop - 1] == "\n" else text[start:stop] + _EOL
        start = stop
        if line[:1] in (" ", "\t") and pending:
            pending.append(line)  # a folded continuation of the line before
            continue
        flush(number)
        number += 1
        pending.append(line)
    flush(number)

    if stack:
        if len(stack) > 1:  # cut off inside a component: it is incomplete, left out
            dropped = stack[1].at
            shape.components -= sum(line.startswith(_BEGIN_RECORD) for line in out[dropped:])
            del out[dropped:]
            del stack[1:]
            shape.cut = True
        elif stack[0].explicit:
            shape.cut = True
        out.append(f"END:VCALENDAR{_EOL}")
    shape.text = "".join(out)
    return shape


def _calendar_only(line: str) -> bool:
    name = _property(line)
    return name in _CALENDAR_ONLY or name.startswith("X-WR-")
