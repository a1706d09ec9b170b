"""iCalendar as calendar apps export it: a VTIMEZONE for Europe/Berlin, events timed on its clock
or all day, recurring series with their exceptions, lines folded at 75 octets."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

BERLIN = ZoneInfo("Europe/Berlin")
VTIMEZONE_BERLIN = """BEGIN:VTIMEZONE
TZID:Europe/Berlin
X-LIC-LOCATION:Europe/Berlin
BEGIN:DAYLIGHT
TZOFFSETFROM:+0100
TZOFFSETTO:+0200
TZNAME:CEST
DTSTART:19700329T020000
RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU
END:DAYLIGHT
BEGIN:STANDARD
TZOFFSETFROM:+0200
TZOFFSETTO:+0100
TZNAME:CET
DTSTART:19701025T030000
RRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=-1SU
END:STANDARD
END:VTIMEZONE"""


def in_zone(ics: bytes, tzid: str, vtimezone: str) -> bytes:
    """A calendar this writer made (on Europe/Berlin) as one kept on another zone says it: the
    VTIMEZONE block and every TZID replaced, for a persona whose calendars live elsewhere."""
    berlin = VTIMEZONE_BERLIN.replace("\n", "\r\n").encode()
    assert berlin in ics
    ics = ics.replace(berlin, vtimezone.replace("\n", "\r\n").encode())
    return ics.replace(b"Europe/Berlin", tzid.encode())


def _ical_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace(";", "\\;").replace(",", "\\,").replace("\n", "\\n")


def _fold(line: str) -> str:
    """RFC 5545 folding: lines of at most 75 octets, never splitting a UTF-8 sequence."""
    out: list[str] = []
    cur, size = "", 0
    for ch in line:
        n = len(ch.encode("utf-8"))
        if size + n > (75 if not out else 74):
            out.append(cur)
            cur, size = "", 0
        cur += ch
        size += n
    out.append(cur)
    return "\r\n ".join(out)


def _ical_time(value: date | datetime) -> str:
    if isinstance(value, datetime):
        return f";TZID=Europe/Berlin:{value:%Y%m%dT%H%M%S}"
    return f";VALUE=DATE:{value:%Y%m%d}"


class Event:
    """One VEVENT; ``end`` defaults to a day after an all-day start, an hour after a timed one."""

    def __init__(
        self,
        summary: str,
        start: date | datetime,
        end: date | datetime | None = None,
        *,
        location: str = "",
        description: str = "",
        organizer: tuple[str, str] | None = None,
        attendees=(),
        rrule: str = "",
        status: str = "CONFIRMED",
        categories=(),
        recurrence_id: datetime | None = None,
        uid: str,
        modified: datetime | None = None,
    ) -> None:
        self.summary, self.start, self.location, self.description = summary, start, location, description
        if end is None:
            end = start + timedelta(days=1) if not isinstance(start, datetime) else start + timedelta(hours=1)
        self.end, self.organizer, self.attendees, self.rrule = end, organizer, list(attendees), rrule
        self.status, self.categories, self.recurrence_id = status, list(categories), recurrence_id
        self.uid = uid
        begin = start if isinstance(start, datetime) else datetime(start.year, start.month, start.day, 9, tzinfo=BERLIN)
        self.modified = modified or min(begin - timedelta(days=9, hours=3), datetime(2026, 1, 30, tzinfo=UTC))

    def lines(self) -> list[str]:
        out = [
            "BEGIN:VEVENT",
            f"UID:{self.uid}",
            "DTSTAMP:20260201T120000Z",
            f"CREATED:{self.modified.astimezone(UTC):%Y%m%dT%H%M%SZ}",
            f"LAST-MODIFIED:{self.modified.astimezone(UTC):%Y%m%dT%H%M%SZ}",
        ]
        if self.recurrence_id is not None:
            out.append("RECURRENCE-ID" + _ical_time(self.recurrence_id))
        out += [
            "DTSTART" + _ical_time(self.start),
            "DTEND" + _ical_time(self.end),
            f"SUMMARY:{_ical_escape(self.summary)}",
        ]
        if self.rrule:
            out.append(f"RRULE:{self.rrule}")
        if self.location:
            out.append(f"LOCATION:{_ical_escape(self.location)}")
        if self.description:
            out.append(f"DESCRIPTION:{_ical_escape(self.description)}")
        if self.organizer:
            out.append(f"ORGANIZER;CN={self.organizer[0]}:mailto:{self.organizer[1]}")
        for name, addr in self.attendees:
            out.append(f"ATTENDEE;CN={name};CUTYPE=INDIVIDUAL;ROLE=REQ-PARTICIPANT;PARTSTAT=ACCEPTED:mailto:{addr}")
        if self.categories:
            out.append("CATEGORIES:" + ",".join(_ical_escape(c) for c in self.categories))
        out += [f"STATUS:{self.status}", "TRANSP:OPAQUE", "SEQUENCE:0", "END:VEVENT"]
        return out


def calendar(name: str, events: list[Event], prodid: str) -> bytes:
    """A whole ``.ics`` file: the calendar's name and producer, the time zone, its events."""
    lines = [
        "BEGIN:VCALENDAR",
        f"PRODID:{prodid}",
        "VERSION:2.0",
        "CALSCALE:GREGORIAN",
        "METHOD:PUBLISH",
        f"X-WR-CALNAME:{name}",
        "X-WR-TIMEZONE:Europe/Berlin",
    ]
    lines += VTIMEZONE_BERLIN.split("\n")
    for ev in events:
        lines += ev.lines()
    lines.append("END:VCALENDAR")
    return ("\r\n".join(_fold(line) for line in lines) + "\r\n").encode("utf-8")
