"""Documents from calendars: one event (or task) per document, read from iCalendar (RFC 5545) files.

Formats: ``.ics`` files (Apple Calendar / Outlook / Thunderbird exports, subscribed feeds) and
Google Calendar export zips (``Calendar/<name>.ics`` in Takeout, or ``<email>.ics`` files in the
zip that Google Calendar's own export makes); a folder is searched for both. Parsing is
``icalendar``'s; recurrences are computed with ``dateutil``.

Traps handled:

- Folded lines, escaped text (``\\,`` ``\\n``) and several ``VCALENDAR`` blocks in one file.
  A file not in UTF-8 (old Outlook exports in cp1252) is decoded with a charset fallback.
- Time zones: ``TZID`` parameters resolve to IANA zones, including Windows names
  ("W. Europe Standard Time" → Europe/Berlin, CLDR's table shipped with icalendar) and
  vendor-prefixed ids (``/mozilla.org/…/Europe/Paris``); a TZID known only from the file's own
  ``VTIMEZONE`` uses that definition. Floating times (no zone) are taken in the calendar's
  ``X-WR-TIMEZONE``, else UTC.
- All-day events (``VALUE=DATE``; ``DTEND`` is exclusive, so a one-day event ends the same day).
- ``RRULE``: described in words ("weekly on Monday until 2025-06-30", "every 2 weeks on Tuesday
  and Thursday, 10 times"), ``EXDATE``/``RDATE`` applied, and at most 5 occurrences listed, from
  the first (so the text does not change as time passes); a bounded rule also gets its total
  and last occurrence (counted up to 1000). A rule is never expanded without end, and rules
  that can never occur (BYMONTHDAY=30 in February) are not expanded at all.
- ``RECURRENCE-ID`` overrides (one moved or cancelled occurrence) are documents of their own,
  ``native_id`` = UID + "/" + the occurrence's original start; the series lists them as changed.
- HTML descriptions (Google) become text.
- Bad input: an undecodable or non-iCalendar file → ``ReadError`` for the file; a file cut off
  before ``END:VCALENDAR`` → ``ReadError`` for the file, its complete events still read; an event
  without a usable ``DTSTART`` → ``ReadError("{file}#{uid}")``.

``created_at`` is the event's start (the first occurrence for a series; all-day events at 00:00
UTC), so ``--after/--before`` select events by when they happen, not when they were entered;
``updated_at`` is ``LAST-MODIFIED`` (else ``CREATED``). ``DTSTAMP`` is not used for either: exports
set it to the export time.

Metadata: ``start``, ``end`` (ISO in the event's own zone; dates for all-day events), ``all_day``,
``timezone``, ``location``, ``organizer`` (address) and ``organizer_name``, ``attendees``
(lower-cased addresses) and ``attendee_names``, ``calendar`` (``X-WR-CALNAME``, else the file
name), ``rrule`` (the RRULE value, as icalendar writes it back), ``recurring``, ``recurrence``
(in words), ``status``, ``categories``, ``recurrence_id`` (overrides), ``uid``, ``file``.

Incremental: per file (size, mtime → the events it produced); unchanged files yield ``Seen``. The
same event in several files (successive exports, or one invitation in two calendars) is kept
once: the copy with the newest ``LAST-MODIFIED`` (else ``DTSTAMP``).

Tasks and journal entries are personal data too: each ``VTODO`` is a record (summary, due,
start, completed, status, priority, description; ``kind: task``, ``created_at`` its due date,
else its start) and each ``VJOURNAL`` one (``kind: journal``). A file holding a bare component
without a ``VCALENDAR`` wrapper is read as if wrapped. A TZID is resolved from the file's own
``VTIMEZONE`` (or the IANA/Windows tables), never from another file read earlier (icalendar's
process-wide zone cache is reset per file). UID-less components that hash alike (same start,
summary, place and text) stay separate records, numbered in file order.

Left out: ``VFREEBUSY``, alarms, attachments, CalDAV servers, the macOS Calendar store (not
``.ics``; export the calendars instead), and ``discover()``.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterator
from datetime import UTC, date, datetime, time, timedelta, tzinfo
from itertools import islice
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import icalendar
from dateutil.rrule import rruleset, rrulestr
from icalendar.timezone import tzp
from icalendar.timezone.windows_to_olson import WINDOWS_TO_OLSON

from ragbag.connectors._chat import export_files, one_line, read_exports, zip_members
from ragbag.connectors._walk import follows_outside
from ragbag.connectors.files import Unreadable, decode, html_text
from ragbag.core.records import Cursor, Document, ReadError, Seen, Span, stable_hash
from ragbag.text.chunking import TokenCounter, prose_spans

NAME = "calendar"
SCHEDULE = "0 */6 * * *"
MAX_LISTED = 5
MAX_COUNTED = 1000
_VERSION = "calendar-1"
_EXTS = (".ics", ".ical", ".ifb", ".icalendar")
_DAYS = {
    "MO": "Monday",
    "TU": "Tuesday",
    "WE": "Wednesday",
    "TH": "Thursday",
    "FR": "Friday",
    "SA": "Saturday",
    "SU": "Sunday",
}
_MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
_ORDINALS = {1: "first", 2: "second", 3: "third", 4: "fourth", 5: "fifth", -1: "last", -2: "second to last"}
_FREQS = {
    "SECONDLY": ("every second", "second"),
    "MINUTELY": ("every minute", "minute"),
    "HOURLY": ("hourly", "hour"),
    "DAILY": ("daily", "day"),
    "WEEKLY": ("weekly", "week"),
    "MONTHLY": ("monthly", "month"),
    "YEARLY": ("yearly", "year"),
}
_MONTH_DAYS = {2: 29, 4: 30, 6: 30, 9: 30, 11: 30}
_HTML = re.compile(r"<(br|p|div|a|b|i|u|ul|ol|li|span|html)\b[^>]*>", re.I)
_BYDAY = re.compile(r"^([+-]?\d{1,2})?(MO|TU|WE|TH|FR|SA|SU)$")
_UNTERMINATED = "file ends before END:VCALENDAR (truncated?); complete events and tasks kept"
_COMPONENT = re.compile(r"^BEGIN:(VEVENT|VTODO|VJOURNAL)\s*$", re.I | re.M)
_COMPONENT_END = re.compile(r"^END:(VEVENT|VTODO|VJOURNAL)[ \t]*\r?$", re.I | re.M)


def read(
    path: Path, source: str, cursor: dict | None = None, options: dict | None = None
) -> Iterator[Document | ReadError | Seen | Cursor]:
    """Every event in the ``.ics`` files and Google Calendar zips under ``path``.
    ``options``: the source's options (None: those in ``sources.yaml``), see :mod:`connectors._walk`."""
    files, errors = export_files(
        Path(path), lambda name: name.lower().endswith(_EXTS + (".zip",)), follows_outside(options)
    )
    yield from errors
    yield from read_exports(files, lambda file, key: _read_file(file, key, source), cursor, _VERSION)


def spans(doc: Document, count: TokenCounter, max_tokens: int) -> list[Span]:
    return prose_spans(doc.text, count, max_tokens)


def _read_file(file: Path, key: str, source: str):
    if file.suffix.lower() == ".zip":
        for item in zip_members(file, lambda name: name.lower().endswith(_EXTS)):
            if isinstance(item, ReadError):
                yield item
            else:
                uri, data = item
                yield from _calendar(data, uri, f"{key}!/{uri.split('!/', 1)[1]}", source)
        return
    try:
        data = file.read_bytes()
    except OSError as exc:
        yield ReadError(str(file.absolute()), f"unreadable: {exc.strerror or exc}")
        return
    yield from _calendar(data, str(file.absolute()), key, source)


def _calendar(data: bytes, uri: str, key: str, source: str):
    """The events of one iCalendar file (or zip member) as (document, stamp) records."""
    try:
        text = decode(data)[0]
    except Unreadable as exc:
        yield ReadError(uri, str(exc))
        return
    upper = text.upper()
    if "BEGIN:VCALENDAR" not in upper and _COMPONENT.search(text):
        # A bare component file (one VEVENT/VTODO saved on its own) is valid input: wrap it.
        text = f"BEGIN:VCALENDAR\r\nVERSION:2.0\r\n{text.strip()}\r\nEND:VCALENDAR\r\n"
        upper = text.upper()
    truncated = not text.rstrip().upper().endswith("END:VCALENDAR")
    if truncated:  # keep what precedes the last complete component (icalendar drops it all otherwise)
        ends = list(_COMPONENT_END.finditer(text))
        text = text[: ends[-1].end()] + "\r\nEND:VCALENDAR\r\n" if ends else text
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            # icalendar caches every VTIMEZONE it has parsed, process-wide, and resolves a TZID
            # a later file leaves undefined from that cache: the same file would then read
            # differently beside another. Each file starts from the IANA zones alone.
            tzp.use_zoneinfo()
            calendars = icalendar.Calendar.from_ical(text, multiple=True)
    except (ValueError, IndexError, KeyError) as exc:
        yield ReadError(uri, f"not an iCalendar file: {one_line(exc)}")
        return
    if truncated:
        yield ReadError(uri, _UNTERMINATED)
    stem = re.sub(r"\.(ics|ical|ifb|icalendar)$", "", key.rsplit("/", 1)[-1], flags=re.I)
    for cal in calendars:
        name = " ".join(str(cal.get("X-WR-CALNAME") or "").split()) or stem
        floating = _zone(str(cal.get("X-WR-TIMEZONE") or "")) or UTC
        events = cal.walk("VEVENT")
        changed: dict[str, dict[str, str]] = {}  # uid → {occurrence key: status}
        for ev in events:
            if "RECURRENCE-ID" in ev and "UID" in ev:
                try:
                    rid, _ = _when(ev, "RECURRENCE-ID", floating)
                except ValueError:
                    continue
                changed.setdefault(str(ev["UID"]), {})[_key(rid)] = str(ev.get("STATUS") or "").lower()
        synthetic: dict[str, int] = {}  # UID-less components with the same identity, in file order
        for index, ev in enumerate(events):
            uid = str(ev.get("UID") or "")
            try:
                doc, stamp = _event(ev, uid, name, floating, changed.get(uid, {}), uri, key, source)
            except (ValueError, TypeError, KeyError, AttributeError, OverflowError) as exc:
                yield ReadError(f"{uri}#{uid or index}", one_line(exc))
                continue
            yield _unique(doc, uid, synthetic), stamp
        for index, item in enumerate(cal.walk("VTODO") + cal.walk("VJOURNAL")):
            uid = str(item.get("UID") or "")
            try:
                doc, stamp = _entry(item, uid, name, floating, uri, key, source)
            except (ValueError, TypeError, KeyError, AttributeError, OverflowError) as exc:
                yield ReadError(f"{uri}#{uid or item.name.lower() + str(index)}", one_line(exc))
                continue
            yield _unique(doc, uid, synthetic), stamp


def _unique(doc: Document, uid: str, seen: dict[str, int]) -> Document:
    """Two UID-less components that hash alike (same start, summary, place, text) are two
    records, not one: the second and later get their order in the file appended."""
    if uid:
        return doc
    n = seen.get(doc.native_id, 0)
    seen[doc.native_id] = n + 1
    if n:
        doc.native_id = f"{doc.native_id}#{n + 1}"
        doc.uri = f"{doc.uri}#{n + 1}"
    return doc


def _entry(item, uid: str, calendar: str, floating: tzinfo, uri: str, key: str, source: str):
    """A task (VTODO: summary, due, status, description) or journal entry (VJOURNAL) as a record.
    ``created_at`` is when it is due (else starts, else was created), like an event's start."""
    kind = "task" if item.name == "VTODO" else "journal"
    summary = " ".join(_str(item.get("SUMMARY")).split()) or "(no title)"
    meta: dict[str, Any] = {"uid": uid, "calendar": calendar, "kind": kind, "file": key}
    lines = [f"{'Task' if kind == 'task' else 'Journal'}: {summary}"]
    when = None
    for prop, label in (("DTSTART", "Starts"), ("DUE", "Due"), ("COMPLETED", "Completed")):
        if prop in item:
            value, tz_name = _when(item, prop, floating)
            meta[prop.lower()] = value.isoformat()
            lines.append(f"{label}: {_show(value)}" + (f" ({tz_name})" if tz_name else ""))
            when = value if prop == "DUE" or when is None else when
    status = _str(item.get("STATUS")).lower()
    if status:
        meta["status"] = status
        lines.append(f"Status: {status}")
    if "PRIORITY" in item:
        meta["priority"] = int(item["PRIORITY"])
    categories = [str(c) for cat in _list(item.get("CATEGORIES")) for c in getattr(cat, "cats", [cat])]
    if categories:
        meta["categories"] = categories
    lines.append(f"Calendar: {calendar}")
    description = "\n".join(_str(d).replace("\r\n", "\n").strip() for d in _list(item.get("DESCRIPTION")))
    if _HTML.search(description):
        description = html_text(description)[1].strip()
    text = "\n".join(lines) + "\n" + (f"\n{description}\n" if description else "")
    created = _stamp(item, "CREATED")
    created_at = _utc(when) if when is not None else created
    updated_at = _stamp(item, "LAST-MODIFIED") or created
    stamp = _stamp(item, "LAST-MODIFIED") or _stamp(item, "DTSTAMP")
    native_id = (
        uid or f"no-uid:{stable_hash(kind, calendar, summary, description, str(meta.get('due', '')), length=16)}"
    )
    doc = Document(
        source=source,
        connector=NAME,
        native_id=native_id,
        uri=f"{uri}#{native_id}",
        title=summary,
        text=text,
        created_at=created_at,
        updated_at=updated_at,
        authors=[],
        metadata=meta,
    )
    return doc, stamp.timestamp() if stamp else 0.0


def _event(ev, uid: str, calendar: str, floating: tzinfo, changed: dict[str, str], uri: str, key: str, source: str):
    start, tz_name = _when(ev, "DTSTART", floating)
    all_day = not isinstance(start, datetime)
    end = _end(ev, start, floating)
    summary = " ".join(_str(ev.get("SUMMARY")).split()) or "(no title)"
    meta: dict[str, Any] = {
        "uid": uid,
        "calendar": calendar,
        "start": start.isoformat(),
        "all_day": all_day,
        "end": end.isoformat(),
        "timezone": tz_name,
        "recurring": "RRULE" in ev or "RDATE" in ev,
        "file": key,
    }
    lines = [summary, f"When: {_span_text(start, end, tz_name)}"]
    rid = None
    if "RECURRENCE-ID" in ev:
        rid, _ = _when(ev, "RECURRENCE-ID", floating)
        meta["recurrence_id"] = _key(rid)
        lines.append(f"Changed occurrence of a repeating event (originally {_show(rid)})")
    rules = _list(ev.get("RRULE"))
    if rules:
        meta["rrule"] = " | ".join(r.to_ical().decode() for r in rules)
        meta["recurrence"] = "; ".join(_describe(r, start) for r in rules)
        lines.append(f"Repeats: {meta['recurrence']}")
        lines += _occurrences(ev, rules, start, floating, changed)
    status = _str(ev.get("STATUS")).lower()
    if status:
        meta["status"] = status
        if status != "confirmed":
            lines.append(f"Status: {status}")
    location = " ".join(_str(ev.get("LOCATION")).split())
    if location:
        meta["location"] = location
        lines.append(f"Where: {location}")
    organizer = ev.get("ORGANIZER")
    if organizer is not None:
        address, who = _address(organizer)
        meta["organizer"], meta["organizer_name"] = address, who
        lines.append(f"Organizer: {_person(address, who)}")
    people = [_address(a) for a in _list(ev.get("ATTENDEE"))]
    if people:
        meta["attendees"] = [a for a, _ in people if a]
        meta["attendee_names"] = [n for _, n in people if n]
        lines.append("Attendees: " + ", ".join(_person(a, n) for a, n in people))
    categories = [str(c) for cat in _list(ev.get("CATEGORIES")) for c in getattr(cat, "cats", [cat])]
    if categories:
        meta["categories"] = categories
    lines.append(f"Calendar: {calendar}")
    description = _str(ev.get("DESCRIPTION")).replace("\r\n", "\n").strip()
    if _HTML.search(description):
        description = html_text(description)[1].strip()
    text = "\n".join(lines) + "\n" + (f"\n{description}\n" if description else "")

    created_at = _utc(start)
    updated_at = _stamp(ev, "LAST-MODIFIED") or _stamp(ev, "CREATED")
    stamp = _stamp(ev, "LAST-MODIFIED") or _stamp(ev, "DTSTAMP")
    native_id = (
        uid
        or f"no-uid:{stable_hash(calendar, start.isoformat(), summary, meta.get('location', ''), description, length=16)}"
    )
    if rid is not None:
        native_id += f"/{meta['recurrence_id']}"
    doc = Document(
        source=source,
        connector=NAME,
        native_id=native_id,
        uri=f"{uri}#{native_id}",
        title=summary,
        text=text,
        created_at=created_at,
        updated_at=updated_at,
        authors=[_person(meta["organizer"], meta["organizer_name"])] if organizer is not None else [],
        metadata=meta,
    )
    return doc, stamp.timestamp() if stamp else 0.0


# --- times -------------------------------------------------------------------------------------


def _zone(tzid: str) -> tzinfo | None:
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


def _when(ev, prop: str, floating: tzinfo) -> tuple[date | datetime, str]:
    """(value, zone name) of a date-time property, in an IANA zone where the TZID maps to one."""
    broken = [msg for name, msg in getattr(ev, "errors", []) if name == prop]
    if broken or prop not in ev:
        raise ValueError(f"{'bad' if broken else 'no'} {prop}{': ' + one_line(broken[0]) if broken else ''}")
    value = _list(ev[prop])[0]
    dt = getattr(value, "dt", None)
    if not isinstance(dt, date):
        raise ValueError(f"bad {prop}: {one_line(repr(dt))}")
    return _fix(dt, value.params.get("TZID"), floating)


def _fix(dt: date | datetime, tzid: str | None, floating: tzinfo) -> tuple[date | datetime, str]:
    if not isinstance(dt, datetime):
        return dt, ""
    zone = _zone(tzid) if tzid else None
    if zone is not None:
        return dt.replace(tzinfo=zone), str(zone)
    if dt.tzinfo is None:  # floating: the calendar's zone, else UTC
        return dt.replace(tzinfo=floating), str(floating)
    return dt, tzid or str(dt.tzinfo)


def _end(ev, start: date | datetime, floating: tzinfo) -> date | datetime:
    """The last day of an all-day event (DTEND is exclusive), else the end time."""
    all_day = not isinstance(start, datetime)
    end: date | datetime | None = None
    if "DTEND" in ev:
        try:
            end = _when(ev, "DTEND", floating)[0]
        except ValueError:
            end = None
    elif "DURATION" in ev and isinstance(getattr(ev["DURATION"], "dt", None), timedelta):
        end = start + ev["DURATION"].dt
    if end is None or isinstance(end, datetime) != (not all_day) or end < start:
        end = start + timedelta(days=1) if all_day else start
    return end - timedelta(days=1) if all_day and end > start else end


def _utc(value: date | datetime) -> datetime:
    if not isinstance(value, datetime):
        return datetime.combine(value, time(), tzinfo=UTC)
    return value.astimezone(UTC)


def _key(value: date | datetime) -> str:
    """An occurrence's identity: its UTC start (or its date for all-day events)."""
    if not isinstance(value, datetime):
        return f"{value:%Y%m%d}"
    return f"{value.astimezone(UTC):%Y%m%dT%H%M%SZ}"


def _stamp(ev, prop: str) -> datetime | None:
    value = ev.get(prop)
    dt = getattr(value, "dt", None)
    return _utc(dt) if isinstance(dt, date) else None


def _show(value: date | datetime) -> str:
    return f"{value:%a %Y-%m-%d}" if not isinstance(value, datetime) else f"{value:%a %Y-%m-%d %H:%M}"


def _span_text(start: date | datetime, end: date | datetime, tz_name: str) -> str:
    if not isinstance(start, datetime):
        return f"{_show(start)} (all day)" if end == start else f"{_show(start)} – {_show(end)} (all day)"
    end = end.astimezone(start.tzinfo)
    until = "" if end == start else f"–{end:%H:%M}" if end.date() == start.date() else f" – {_show(end)}"
    return f"{_show(start)}{until}" + (f" ({tz_name})" if tz_name else "")


# --- recurrence ----------------------------------------------------------------------------------


def _describe(rule, start: date | datetime) -> str:
    """An RRULE in words: "weekly on Monday until 2025-06-30", "every 2 weeks"."""
    freq = str(rule.get("FREQ", ["?"])[0]).upper()
    word, unit = _FREQS.get(freq, (freq.lower(), freq.lower()))
    interval = int(rule.get("INTERVAL", [1])[0] or 1)
    out = [word if interval == 1 else f"every {interval} {unit}s"]
    days = [str(d).upper() for d in rule.get("BYDAY", [])]
    if days:
        out.append(_days(days))
    monthdays = [int(d) for d in rule.get("BYMONTHDAY", [])]
    if monthdays:
        out.append("on " + _join([f"day {d}" if d > 0 else _ordinal(d) + " day" for d in monthdays]))
    months = [int(m) for m in rule.get("BYMONTH", []) if 1 <= int(m) <= 12]
    if months:
        out.append("in " + _join([_MONTHS[m - 1] for m in months]))
    positions = [int(p) for p in rule.get("BYSETPOS", [])]
    if positions:
        out.append("(the " + _join([_ordinal(p) for p in positions]) + f" of each {unit})")
    if rule.get("COUNT"):
        out.append(f"{int(rule['COUNT'][0])} times")
    if rule.get("UNTIL"):
        until = rule["UNTIL"][0]
        if isinstance(until, datetime) and isinstance(start, datetime) and until.tzinfo:
            until = until.astimezone(start.tzinfo)
        out.append(f"until {until:%Y-%m-%d}")
    return " ".join(out)


def _days(days: list[str]) -> str:
    plain = [d for d in days if d in _DAYS]
    if sorted(plain) == sorted(["MO", "TU", "WE", "TH", "FR"]) and len(days) == 5:
        return "on weekdays"
    words = []
    for d in days:
        m = _BYDAY.match(d)
        if not m:
            continue
        name = _DAYS[m.group(2)]
        words.append(f"the {_ordinal(int(m.group(1)))} {name}" if m.group(1) else name)
    return "on " + _join(words) if words else ""


def _ordinal(n: int) -> str:
    return _ORDINALS.get(n) or (f"{n}th" if n > 0 else f"{-n}th to last")


def _join(words: list[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def _occurrences(ev, rules, start: date | datetime, floating: tzinfo, changed: dict[str, str]) -> list[str]:
    """Text lines listing the first occurrences (bounded), EXDATE/RDATE applied."""
    if not all(_possible(r) for r in rules):
        return ["Occurrences: none (the rule matches no date)"]
    all_day = not isinstance(start, datetime)
    first = datetime.combine(start, time()) if all_day else start
    try:
        rs = rruleset()
        for rule in rules:
            rs.rrule(rrulestr(_rule_text(rule, first), dtstart=first))
        for prop, add in (("EXDATE", rs.exdate), ("RDATE", rs.rdate)):
            for value in _list(ev.get(prop)):
                for item in getattr(value, "dts", []):
                    dt = item.dt
                    if isinstance(dt, tuple):  # RDATE;VALUE=PERIOD
                        dt = dt[0]
                    if not isinstance(dt, date):
                        continue
                    dt = _fix(dt, item.params.get("TZID") or value.params.get("TZID"), floating)[0]
                    dt = datetime.combine(dt, time()) if not isinstance(dt, datetime) else dt
                    add(dt.replace(tzinfo=None) if all_day else dt.astimezone(first.tzinfo))
        bounded = all(r.get("COUNT") or r.get("UNTIL") for r in rules)
        found = list(islice(rs, MAX_COUNTED + 1 if bounded else MAX_LISTED))
    except (ValueError, TypeError, OverflowError):
        return []  # a rule dateutil cannot expand is still described above
    shown = []
    for dt in found[:MAX_LISTED]:
        when = dt.date() if all_day else dt
        note = changed.get(_key(when))
        if note is not None:
            note = "cancelled" if note == "cancelled" else "changed"
        shown.append(_show(when) + (f" ({note})" if note else ""))
    lines = [f"{'Occurrences' if bounded else 'First occurrences'}: " + ", ".join(shown)] if shown else []
    if bounded and len(found) > MAX_LISTED:
        last = found[-1].date() if all_day else found[-1]
        total = f"{len(found)}" if len(found) <= MAX_COUNTED else f"more than {MAX_COUNTED}"
        lines.append(f"{total} occurrences in all" + (f", the last {_show(last)}" if len(found) <= MAX_COUNTED else ""))
    return lines


def _rule_text(rule, first: datetime) -> str:
    """The RRULE as dateutil wants it: UNTIL in UTC for a zoned start, naive for a floating one."""
    rule = icalendar.vRecur(dict(rule))
    if rule.get("UNTIL"):
        until = rule["UNTIL"][0]
        if not isinstance(until, datetime):
            until = datetime.combine(until, time(23, 59, 59))
        if first.tzinfo is not None:
            until = (until if until.tzinfo else until.replace(tzinfo=first.tzinfo)).astimezone(UTC)
        else:
            until = until.astimezone(UTC).replace(tzinfo=None) if until.tzinfo else until
        rule["UNTIL"] = [until]
    return rule.to_ical().decode()


def _possible(rule) -> bool:
    """False for a rule whose month days exist in none of its months (dateutil would search
    every year up to 9999 for them)."""
    days = [int(d) for d in rule.get("BYMONTHDAY", [])]
    if not days:
        return True
    months = [int(m) for m in rule.get("BYMONTH", [])] or list(range(1, 13))
    longest = max((_MONTH_DAYS.get(m, 31) for m in months if 1 <= m <= 12), default=0)
    return any(abs(d) <= longest for d in days if d)


# --- people and values ---------------------------------------------------------------------------


def _address(value) -> tuple[str, str]:
    """(lower-cased address without mailto:, display name) of an ORGANIZER/ATTENDEE."""
    address = re.sub(r"^mailto:", "", str(value).strip(), flags=re.I).lower()
    params = getattr(value, "params", {}) or {}
    return address, " ".join(str(params.get("CN") or "").strip('"').split())


def _person(address: str, name: str) -> str:
    return f"{name} <{address}>" if name and address else name or address


def _list(value) -> list:
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def _str(value) -> str:
    if value is None:
        return ""
    if isinstance(value, list):
        return " ".join(str(v) for v in value)
    return str(value)
