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
from datetime import UTC, datetime, tzinfo
from pathlib import Path
from typing import Any

import icalendar
from icalendar.timezone import tzp

from ragbag.connectors._exports import export_files, read_exports, zip_members
from ragbag.connectors._walk import follows_outside
from ragbag.connectors.calendar.recurrence import describe, occurrences
from ragbag.connectors.calendar.times import (
    as_utc,
    end_of,
    occurrence_key,
    property_time,
    show,
    span_text,
    stamp_of,
    zone_of,
)
from ragbag.connectors.calendar.values import address_of, as_list, as_str, person
from ragbag.core.records import Cursor, Document, ReadError, Seen, Span, stable_hash
from ragbag.text.chunking import TokenCounter, prose_spans
from ragbag.text.decode import decode
from ragbag.text.extract import html_text
from ragbag.text.unreadable import Unreadable, one_line

NAME = "calendar"
SCHEDULE = "0 */6 * * *"
_VERSION = "calendar-1"
_EXTS = (".ics", ".ical", ".ifb", ".icalendar")
_HTML = re.compile(r"<(br|p|div|a|b|i|u|ul|ol|li|span|html)\b[^>]*>", re.I)
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
        floating = zone_of(str(cal.get("X-WR-TIMEZONE") or "")) or UTC
        events = cal.walk("VEVENT")
        changed: dict[str, dict[str, str]] = {}  # uid → {occurrence key: status}
        for ev in events:
            if "RECURRENCE-ID" in ev and "UID" in ev:
                try:
                    rid, _ = property_time(ev, "RECURRENCE-ID", floating)
                except ValueError:
                    continue
                changed.setdefault(str(ev["UID"]), {})[occurrence_key(rid)] = str(ev.get("STATUS") or "").lower()
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
    summary = " ".join(as_str(item.get("SUMMARY")).split()) or "(no title)"
    meta: dict[str, Any] = {"uid": uid, "calendar": calendar, "kind": kind, "file": key}
    lines = [f"{'Task' if kind == 'task' else 'Journal'}: {summary}"]
    when = None
    for prop, label in (("DTSTART", "Starts"), ("DUE", "Due"), ("COMPLETED", "Completed")):
        if prop in item:
            value, tz_name = property_time(item, prop, floating)
            meta[prop.lower()] = value.isoformat()
            lines.append(f"{label}: {show(value)}" + (f" ({tz_name})" if tz_name else ""))
            when = value if prop == "DUE" or when is None else when
    status = as_str(item.get("STATUS")).lower()
    if status:
        meta["status"] = status
        lines.append(f"Status: {status}")
    if "PRIORITY" in item:
        meta["priority"] = int(item["PRIORITY"])
    categories = [str(c) for cat in as_list(item.get("CATEGORIES")) for c in getattr(cat, "cats", [cat])]
    if categories:
        meta["categories"] = categories
    lines.append(f"Calendar: {calendar}")
    description = "\n".join(as_str(d).replace("\r\n", "\n").strip() for d in as_list(item.get("DESCRIPTION")))
    if _HTML.search(description):
        description = html_text(description)[1].strip()
    text = "\n".join(lines) + "\n" + (f"\n{description}\n" if description else "")
    created = stamp_of(item, "CREATED")
    created_at = as_utc(when) if when is not None else created
    updated_at = stamp_of(item, "LAST-MODIFIED") or created
    stamp = stamp_of(item, "LAST-MODIFIED") or stamp_of(item, "DTSTAMP")
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
    start, tz_name = property_time(ev, "DTSTART", floating)
    all_day = not isinstance(start, datetime)
    end = end_of(ev, start, floating)
    summary = " ".join(as_str(ev.get("SUMMARY")).split()) or "(no title)"
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
    lines = [summary, f"When: {span_text(start, end, tz_name)}"]
    rid = None
    if "RECURRENCE-ID" in ev:
        rid, _ = property_time(ev, "RECURRENCE-ID", floating)
        meta["recurrence_id"] = occurrence_key(rid)
        lines.append(f"Changed occurrence of a repeating event (originally {show(rid)})")
    rules = as_list(ev.get("RRULE"))
    if rules:
        meta["rrule"] = " | ".join(r.to_ical().decode() for r in rules)
        meta["recurrence"] = "; ".join(describe(r, start) for r in rules)
        lines.append(f"Repeats: {meta['recurrence']}")
        lines += occurrences(ev, rules, start, floating, changed)
    status = as_str(ev.get("STATUS")).lower()
    if status:
        meta["status"] = status
        if status != "confirmed":
            lines.append(f"Status: {status}")
    location = " ".join(as_str(ev.get("LOCATION")).split())
    if location:
        meta["location"] = location
        lines.append(f"Where: {location}")
    organizer = ev.get("ORGANIZER")
    if organizer is not None:
        address, who = address_of(organizer)
        meta["organizer"], meta["organizer_name"] = address, who
        lines.append(f"Organizer: {person(address, who)}")
    people = [address_of(a) for a in as_list(ev.get("ATTENDEE"))]
    if people:
        meta["attendees"] = [a for a, _ in people if a]
        meta["attendee_names"] = [n for _, n in people if n]
        lines.append("Attendees: " + ", ".join(person(a, n) for a, n in people))
    categories = [str(c) for cat in as_list(ev.get("CATEGORIES")) for c in getattr(cat, "cats", [cat])]
    if categories:
        meta["categories"] = categories
    lines.append(f"Calendar: {calendar}")
    description = as_str(ev.get("DESCRIPTION")).replace("\r\n", "\n").strip()
    if _HTML.search(description):
        description = html_text(description)[1].strip()
    text = "\n".join(lines) + "\n" + (f"\n{description}\n" if description else "")

    created_at = as_utc(start)
    updated_at = stamp_of(ev, "LAST-MODIFIED") or stamp_of(ev, "CREATED")
    stamp = stamp_of(ev, "LAST-MODIFIED") or stamp_of(ev, "DTSTAMP")
    identity = (calendar, start.isoformat(), summary, meta.get("location", ""), description)
    native_id = uid or f"no-uid:{stable_hash(*identity, length=16)}"
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
        authors=[person(meta["organizer"], meta["organizer_name"])] if organizer is not None else [],
        metadata=meta,
    )
    return doc, stamp.timestamp() if stamp else 0.0
