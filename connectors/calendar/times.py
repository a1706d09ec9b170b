"""Times in iCalendar files: TZIDs resolved to IANA zones (Windows names, Exchange display names
and vendor-prefixed ids too), floating and all-day values, and how a time is shown in an event's
text."""

from __future__ import annotations

import re
import unicodedata
from datetime import UTC, date, datetime, time, timedelta, timezone, tzinfo
from functools import cache
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

from icalendar.timezone.windows_to_olson import WINDOWS_TO_OLSON

from ragbag.connectors.calendar.values import as_list
from ragbag.text.unreadable import Unreadable, one_line


def zone_of(tzid: str) -> tzinfo | None:
    """An IANA zone for a TZID: itself, its Windows name's zone, or a vendor-prefixed id's tail."""
    tzid = tzid.strip().strip('"')
    if not tzid:
        return None
    parts = tzid.strip("/").split("/")
    for name in [tzid.strip("/"), WINDOWS_TO_OLSON.get(tzid)] + ["/".join(parts[i:]) for i in range(1, len(parts))]:
        if name:
            try:
                return ZoneInfo(name)
            except (ZoneInfoNotFoundError, ValueError):
                continue
    return None


UNKNOWN_ZONE = "unknown zone"
# "UTC-05:00", "GMT+1", "GMT +0100", "GMT-05.00": the offset an Exchange display name starts with.
# Bounded quantifiers only, so a search is linear in the TZID's length.
_OFFSET = re.compile(r"(?:UTC|GMT) ?([+-])(\d{1,2})(?:[:.]?(\d{2}))?")
_WORDS = re.compile(r"[^,/&()]+")  # the parts of a display name: cities, "Eastern Time", "US"
_NOW = datetime(2025, 1, 15)  # display names give today's standard offset, not a historic one


def display_zone(tzid: str) -> tzinfo | None:
    """The zone an Exchange/Outlook display name means: ``(UTC-05:00) Eastern Time (US & Canada)``
    (Windows' naming: the display "<name> Time" is the zone id "<name> Standard Time", in
    icalendar's CLDR table), ``Amsterdam, Belgrade, Berlin, …`` (cities that are IANA zone
    names), each candidate checked against the name's own UTC offset when it gives one. A name
    that only gives an offset is that fixed offset; a name that gives neither is None."""
    text = tzid.strip().strip('"').strip()
    found = _OFFSET.search(text)
    offset = None
    if found:
        sign = -1 if found.group(1) == "-" else 1
        offset = sign * timedelta(hours=int(found.group(2)), minutes=int(found.group(3) or 0))
    for part in _WORDS.findall(text):
        for name in _candidates(part.strip()):
            zone = ZoneInfo(name)
            if offset is None or (zone.utcoffset(_NOW) or timedelta()) - (zone.dst(_NOW) or timedelta()) == offset:
                return zone
    if offset is not None and abs(offset) < timedelta(hours=24):
        minutes = int(abs(offset).total_seconds()) // 60
        return timezone(offset, f"UTC{'-' if offset < timedelta() else '+'}{minutes // 60:02d}:{minutes % 60:02d}")
    return None


def _candidates(part: str) -> list[str]:
    """IANA names a part of a display name may stand for: a Windows zone ("Eastern Time" →
    "Eastern Standard Time"), or a city that is the last part of an IANA name."""
    out = []
    for windows in (part, part[: -len(" Time")] + " Standard Time" if part.endswith(" Time") else ""):
        if windows in WINDOWS_TO_OLSON:
            out.append(WINDOWS_TO_OLSON[windows])
    out += _cities().get(_folded(part), [])
    return out


def _folded(word: str) -> str:
    """A city as IANA spells it, case- and accent-blind: "São Paulo" → "sao_paulo"."""
    plain = "".join(c for c in unicodedata.normalize("NFKD", word) if not unicodedata.combining(c))
    return "_".join(plain.split()).casefold()


@cache
def _cities() -> dict[str, list[str]]:
    """Every IANA zone by its last part ("berlin" → ["Europe/Berlin"]), canonical areas first."""
    out: dict[str, list[str]] = {}
    areas = ("Africa/", "America/", "Antarctica/", "Arctic/", "Asia/", "Atlantic/", "Australia/", "Europe/", "Indian/")
    # the geographic areas first: "Newfoundland" is America/St_Johns's city, not the legacy Canada/…
    for name in sorted(available_timezones(), key=lambda n: (not n.startswith((*areas, "Pacific/")), n)):
        if "/" in name:
            out.setdefault(_folded(name.rsplit("/", 1)[1]), []).append(name)
    return out


def property_time(ev, prop: str, floating: tzinfo) -> tuple[date | datetime, str]:
    """(value, zone name) of a date-time property, in an IANA zone where the TZID maps to one."""
    bad = [msg for name, msg in getattr(ev, "errors", []) if name == prop]
    if bad or prop not in ev:
        raise Unreadable(f"{'bad' if bad else 'no'} {prop}{': ' + one_line(bad[0]) if bad else ''}")
    value = as_list(ev[prop])[0]
    dt = getattr(value, "dt", None)
    if not isinstance(dt, date):
        raise Unreadable(f"bad {prop}: {one_line(repr(dt))}")
    return in_zone(dt, value.params.get("TZID"), floating)


def in_zone(dt: date | datetime, tzid: str | None, floating: tzinfo) -> tuple[date | datetime, str]:
    """``dt`` in the zone its TZID names: an IANA or Windows name, else the file's own VTIMEZONE
    (icalendar read it), else an Exchange display name (:func:`display_zone`). A TZID none of
    these resolves is read in the calendar's zone like a floating time, and its zone name says
    so ("… (unknown zone, read as UTC)"): never silently UTC."""
    if not isinstance(dt, datetime):
        return dt, ""
    zone = zone_of(tzid) if tzid else None
    if zone is not None:
        return dt.replace(tzinfo=zone), str(zone)
    if dt.tzinfo is not None:  # the file's VTIMEZONE, or a UTC time
        return dt, tzid or str(dt.tzinfo)
    if tzid:
        zone = display_zone(tzid)
        if zone is not None:
            return dt.replace(tzinfo=zone), str(zone)
        name = tzid.strip().strip('"')
        return dt.replace(tzinfo=floating), f"{name} ({UNKNOWN_ZONE}, read as {floating})"
    return dt.replace(tzinfo=floating), str(floating)  # floating: the calendar's zone, else UTC


def end_of(ev, start: date | datetime, floating: tzinfo) -> date | datetime:
    """The last day of an all-day event (DTEND is exclusive), else the end time: ``DTEND``, else
    (absent, broken, of the other kind than the start, or before it) ``start + DURATION``, else
    the start itself (a one-day event for a date)."""
    all_day = not isinstance(start, datetime)
    end: date | datetime | None = None
    for prop in ("DTEND", "DURATION"):
        if end is not None or prop not in ev or broken(ev, prop):
            continue
        if prop == "DTEND":
            end = property_time(ev, "DTEND", floating)[0]
        elif isinstance(getattr(as_list(ev[prop])[0], "dt", None), timedelta):
            end = start + as_list(ev[prop])[0].dt
        if end is not None and (isinstance(end, datetime) == all_day or end < start):
            end = None  # unusable: try the next way
    if end is None:
        end = start + timedelta(days=1) if all_day else start
    return end - timedelta(days=1) if all_day and end > start else end


def broken(ev, prop: str) -> bool:
    """Whether icalendar could not parse ``prop`` (it keeps such a value as ``vBroken``, whose
    ``.dt`` raises)."""
    return any(name == prop for name, _ in getattr(ev, "errors", []))


def as_utc(value: date | datetime) -> datetime:
    if not isinstance(value, datetime):
        return datetime.combine(value, time(), tzinfo=UTC)
    return value.astimezone(UTC)


def occurrence_key(value: date | datetime, series: date | datetime | None = None) -> str:
    """An occurrence's identity: its UTC start (or its date for all-day events). A
    RECURRENCE-ID is keyed as its ``series`` start is: Exchange names an occurrence of an all-day
    series by its local midnight (``RECURRENCE-ID;TZID=…:20260226T000000``), which is that date;
    a date for a timed series is that day at the series' time of day; a floating time in a zoned
    series is in the series' zone."""
    if series is not None and not isinstance(series, datetime) and isinstance(value, datetime):
        value = value.date()
    elif isinstance(series, datetime) and not isinstance(value, datetime):
        value = datetime.combine(value, series.timetz())
    if not isinstance(value, datetime):
        return f"{value:%Y%m%d}"
    if value.tzinfo is None and isinstance(series, datetime) and series.tzinfo is not None:
        value = value.replace(tzinfo=series.tzinfo)
    return f"{value.astimezone(UTC):%Y%m%dT%H%M%SZ}"


def stamp_of(ev, prop: str) -> datetime | None:
    """A time stamp property (CREATED, LAST-MODIFIED, DTSTAMP) in UTC; None when absent or
    broken (the record is read without it)."""
    if broken(ev, prop):
        return None
    value = ev.get(prop)
    dt = getattr(value, "dt", None)
    return as_utc(dt) if isinstance(dt, date) else None


def show(value: date | datetime) -> str:
    return f"{value:%a %Y-%m-%d}" if not isinstance(value, datetime) else f"{value:%a %Y-%m-%d %H:%M}"


def span_text(start: date | datetime, end: date | datetime, tz_name: str) -> str:
    if not isinstance(start, datetime):
        return f"{show(start)} (all day)" if end == start else f"{show(start)} – {show(end)} (all day)"
    if isinstance(end, datetime):
        end = end.astimezone(start.tzinfo)
    else:  # a date end for a timed start: shown as the start's own time
        end = start
    until = "" if end == start else f"–{end:%H:%M}" if end.date() == start.date() else f" – {show(end)}"
    return f"{show(start)}{until}" + (f" ({tz_name})" if tz_name else "")
