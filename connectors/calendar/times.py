"""Times in iCalendar files: TZIDs resolved to IANA zones (Windows names and vendor-prefixed ids
too), floating and all-day values, and how a time is shown in an event's text."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from icalendar.timezone.windows_to_olson import WINDOWS_TO_OLSON

from ragbag.connectors.calendar.values import as_list
from ragbag.text.unreadable import one_line


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


def property_time(ev, prop: str, floating: tzinfo) -> tuple[date | datetime, str]:
    """(value, zone name) of a date-time property, in an IANA zone where the TZID maps to one."""
    broken = [msg for name, msg in getattr(ev, "errors", []) if name == prop]
    if broken or prop not in ev:
        raise ValueError(f"{'bad' if broken else 'no'} {prop}{': ' + one_line(broken[0]) if broken else ''}")
    value = as_list(ev[prop])[0]
    dt = getattr(value, "dt", None)
    if not isinstance(dt, date):
        raise ValueError(f"bad {prop}: {one_line(repr(dt))}")
    return in_zone(dt, value.params.get("TZID"), floating)


def in_zone(dt: date | datetime, tzid: str | None, floating: tzinfo) -> tuple[date | datetime, str]:
    if not isinstance(dt, datetime):
        return dt, ""
    zone = zone_of(tzid) if tzid else None
    if zone is not None:
        return dt.replace(tzinfo=zone), str(zone)
    if dt.tzinfo is None:  # floating: the calendar's zone, else UTC
        return dt.replace(tzinfo=floating), str(floating)
    return dt, tzid or str(dt.tzinfo)


def end_of(ev, start: date | datetime, floating: tzinfo) -> date | datetime:
    """The last day of an all-day event (DTEND is exclusive), else the end time."""
    all_day = not isinstance(start, datetime)
    end: date | datetime | None = None
    if "DTEND" in ev:
        try:
            end = property_time(ev, "DTEND", floating)[0]
        except ValueError:
            end = None
    elif "DURATION" in ev and isinstance(getattr(ev["DURATION"], "dt", None), timedelta):
        end = start + ev["DURATION"].dt
    if end is None or isinstance(end, datetime) != (not all_day) or end < start:
        end = start + timedelta(days=1) if all_day else start
    return end - timedelta(days=1) if all_day and end > start else end


def as_utc(value: date | datetime) -> datetime:
    if not isinstance(value, datetime):
        return datetime.combine(value, time(), tzinfo=UTC)
    return value.astimezone(UTC)


def occurrence_key(value: date | datetime) -> str:
    """An occurrence's identity: its UTC start (or its date for all-day events)."""
    if not isinstance(value, datetime):
        return f"{value:%Y%m%d}"
    return f"{value.astimezone(UTC):%Y%m%dT%H%M%SZ}"


def stamp_of(ev, prop: str) -> datetime | None:
    value = ev.get(prop)
    dt = getattr(value, "dt", None)
    return as_utc(dt) if isinstance(dt, date) else None


def show(value: date | datetime) -> str:
    return f"{value:%a %Y-%m-%d}" if not isinstance(value, datetime) else f"{value:%a %Y-%m-%d %H:%M}"


def span_text(start: date | datetime, end: date | datetime, tz_name: str) -> str:
    if not isinstance(start, datetime):
        return f"{show(start)} (all day)" if end == start else f"{show(start)} – {show(end)} (all day)"
    end = end.astimezone(start.tzinfo)
    until = "" if end == start else f"–{end:%H:%M}" if end.date() == start.date() else f" – {show(end)}"
    return f"{show(start)}{until}" + (f" ({tz_name})" if tz_name else "")
