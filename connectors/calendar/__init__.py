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
  ``VTIMEZONE`` uses that definition; an Exchange/Outlook display name without one
  (``(UTC-05:00) Eastern Time (US & Canada)``, ``Amsterdam, Belgrade, Berlin, …``) is matched
  to the Windows zone it names or to the IANA zones of its cities, checked against its offset
  (``times.display_zone``). A TZID nothing resolves is read in the calendar's zone and says so
  (``timezone``: "… (unknown zone, read as UTC)", ``timezone_unknown``): never silently UTC.
  Floating times (no zone) are taken in the calendar's ``X-WR-TIMEZONE``, else UTC.
- All-day events (``VALUE=DATE``; ``DTEND`` is exclusive, so a one-day event ends the same day).
  The end is ``DTEND``, else (absent, broken or before the start) ``DTSTART + DURATION``.
- ``RRULE``: described in words ("weekly on Monday until 2025-06-30", "every 2 weeks on Tuesday
  and Thursday, 10 times"), ``EXDATE``/``RDATE`` applied, and at most 5 occurrences listed, from
  the first (so the text does not change as time passes); a bounded rule also gets its total
  and last occurrence (counted up to 1000). A rule is never expanded without end, and rules
  that can never occur (BYMONTHDAY=30 in February) are not expanded at all.
- ``RECURRENCE-ID`` overrides (one moved or cancelled occurrence) are documents of their own,
  ``native_id`` = UID + "/" + the occurrence's original start; the series lists them as changed.
  The original start is keyed as the series' occurrences are: Exchange's local midnight for an
  all-day series (``RECURRENCE-ID;TZID=…:20260226T000000``) is that date; a floating one of a
  zoned series is in the series' zone.
- HTML descriptions (Google) become text.
- Bad input: each file (and zip member) is read inside ``_isolate.each_file`` and each event or
  task inside ``_isolate.each_record``: *any* exception is a ``ReadError`` for that file or
  record, never a failed source. Every component is parsed error-tolerant (``tolerant``: a property icalendar
  cannot parse — a VALARM's ``TRIGGER:PT-2H``, a VTIMEZONE's ``TZOFFSETFROM:+5744``, a broken
  ``DTSTAMP``, ``DURATION`` or ``RRULE`` — is kept as broken and fails only a record that needs
  it); when the whole parse still fails (a VTIMEZONE with two TZID lines), each top-level
  component is parsed alone, the ones that fail are reported (``VTIMEZONE left out: …``) and the
  rest read. A broken VTIMEZONE of an IANA TZID is never needed: the IANA zone is used. An
  undecodable, empty or non-iCalendar file → ``ReadError`` for the file; a file cut off before
  ``END:VCALENDAR`` → ``ReadError`` for the file, its complete events still read (the one cut
  off is left out); an event with an unparseable ``DTSTART`` → ``ReadError("{file}#{uid}")``;
  one without ``DTSTART`` (iTIP replies and cancellations may leave it out) is a record without
  a time, unless it holds nothing else to index.
- Damaged structure: one linear pass over the lines mends missing, repeated and one-character-off
  ``BEGIN``/``END`` lines before icalendar parses (see ``structure``), and every ``VEVENT``,
  ``VTODO`` and ``VJOURNAL`` of the mended text is a record or a ``ReadError``: a shortfall is
  reported for the file ("1 of 3 components could not be read (damaged structure: …)").
- Several copies of one UID in a file are revisions (the newest kept, below) unless they cannot
  be (see ``copies``): an override that lost its ``RECURRENCE-ID`` beside its series is reported.

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

Long because the read loop meets each trap listed above where it arises; the parts that stand
alone (times, recurrence, values, copies, structure, tolerant parsing) are modules of their own.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, date, datetime, tzinfo
from pathlib import Path
from typing import Any

from icalendar.prop import vBroken

from ragbag.connectors._exports import export_files, read_exports, zip_members
from ragbag.connectors._isolate import each_file, each_record
from ragbag.connectors._walk import excluded_paths, follows_outside
from ragbag.connectors.calendar.copies import Copy, conflict, sequence_of
from ragbag.connectors.calendar.recurrence import describe, occurrences
from ragbag.connectors.calendar.structure import RECORDS, structure
from ragbag.connectors.calendar.times import (
    UNKNOWN_ZONE,
    as_utc,
    broken,
    end_of,
    occurrence_key,
    property_time,
    show,
    span_text,
    stamp_of,
    zone_of,
)
from ragbag.connectors.calendar.tolerant import parse, salvaged
from ragbag.connectors.calendar.values import address_of, as_list, as_str, person
from ragbag.core.records import Cursor, Document, ReadError, Seen, Span, stable_hash
from ragbag.text.chunking import TokenCounter, prose_spans
from ragbag.text.decode import decode
from ragbag.text.extract import html_text
from ragbag.text.unreadable import Unreadable

NAME = "calendar"
SCHEDULE = "0 */6 * * *"
_VERSION = "calendar-1"
_EXTS = (".ics", ".ical", ".ifb", ".icalendar")
_HTML = re.compile(r"<(br|p|div|a|b|i|u|ul|ol|li|span|html)\b[^>]*>", re.I)
_UNTERMINATED = "file ends before END:VCALENDAR (truncated?); complete events and tasks kept"


def read(
    path: Path, source: str, cursor: dict | None = None, options: dict | None = None
) -> Iterator[Document | ReadError | Seen | Cursor]:
    """Every event in the ``.ics`` files and Google Calendar zips under ``path``.
    ``options``: the source's options (None: those in ``sources.yaml``), see :mod:`connectors._walk`."""
    files, errors = export_files(
        Path(path),
        lambda name: name.lower().endswith(_EXTS + (".zip",)),
        follows_outside(options),
        excluded_paths(options),
    )
    yield from errors
    yield from read_exports(files, lambda file, key: _read_file(file, key, source), cursor, _VERSION)


def spans(doc: Document, count: TokenCounter, max_tokens: int) -> list[Span]:
    return prose_spans(doc.text, count, max_tokens)


def invitation_text(data: bytes) -> str:
    """The text of an invitation attached to a mail (an ``.ics`` part): each event as this
    connector writes it, joined; :class:`Unreadable` when it holds none."""
    texts = [
        item[0].text for item in _calendar(data, "invitation.ics", "invitation.ics", "") if isinstance(item, tuple)
    ]
    if not texts:
        raise Unreadable("an invitation with no event")
    return "\n\n".join(texts)


def _read_file(file: Path, key: str, source: str):
    """The records of one ``.ics`` file, or of each calendar member of a zip: each read behind the
    isolation boundary, so any failure inside one is a ReadError for it, never for the source."""
    if file.suffix.lower() == ".zip":
        for item in zip_members(file, lambda name: name.lower().endswith(_EXTS)):
            if isinstance(item, ReadError):
                yield item
            else:
                uri, data = item
                member_key = f"{key}!/{uri.split('!/', 1)[1]}"
                yield from each_file(uri, lambda d=data, u=uri, k=member_key: _calendar(d, u, k, source))
        return
    uri = str(file.absolute())
    yield from each_file(uri, lambda: _calendar(file.read_bytes(), uri, key, source))


def _calendar(data: bytes, uri: str, key: str, source: str):
    """The events of one iCalendar file (or zip member) as (document, stamp) records; then the
    file's accounting: every event, task and journal its mended structure holds (see
    ``structure``) is a record or a ReadError, and any shortfall is reported for the file."""
    text = decode(data)[0]
    shape = structure(text)
    if not text.strip():  # a calendar file holds at least its VCALENDAR: this one was cut to nothing
        raise Unreadable("empty file")
    if not shape.structural:
        raise Unreadable("not an iCalendar file: no BEGIN:VCALENDAR or component line")
    left_out = 0  # components the per-component salvage reported
    try:
        calendars = parse(shape.text)
    except Exception:  # noqa: BLE001 — one part may be at fault: read the rest
        calendars, errors = salvaged(shape.text, uri)
        left_out = sum(e.error.split(" ", 1)[0].upper() in RECORDS for e in errors)
        yield from errors
    if shape.cut:
        yield ReadError(uri, _UNTERMINATED)
    if shape.lossy:
        yield ReadError(uri, "damaged structure, text left out: " + "; ".join(shape.lossy[:3]))
    made = 0
    for item in _records(calendars, uri, key, source):
        made += 1
        yield item
    # A file with component lines never reads as nothing without a word, whatever its structure.
    expected = max(shape.components, 1 if shape.seen and not shape.cut else 0)
    if made + left_out < expected:
        missing = expected - made - left_out
        why = "; ".join(shape.repairs[:3]) + (f"; {len(shape.repairs) - 3} more" if len(shape.repairs) > 3 else "")
        yield ReadError(
            uri,
            f"{missing} of {expected} components could not be read"
            + (f" (damaged structure: {why})" if why else " (icalendar did not return them)"),
        )


def _records(calendars: list, uri: str, key: str, source: str):
    """One record (or ReadError) per VEVENT, VTODO and VJOURNAL of ``calendars``."""
    stem = re.sub(r"\.(ics|ical|ifb|icalendar)$", "", key.rsplit("/", 1)[-1], flags=re.I)
    copies: dict[str, Copy] = {}  # native id → its first copy in the file (see ``copies``)
    for cal in calendars:
        name = " ".join(str(cal.get("X-WR-CALNAME") or "").split()) or stem
        floating = zone_of(str(cal.get("X-WR-TIMEZONE") or "")) or UTC
        events = cal.walk("VEVENT")
        series: dict[str, date | datetime] = {}  # uid → the series' start (its master's DTSTART)
        for ev in events:
            if "RECURRENCE-ID" not in ev and "UID" in ev:
                start = each_record(uri, property_time, ev, "DTSTART", floating)
                if not isinstance(start, ReadError):  # the series' own record reports it
                    series.setdefault(str(ev["UID"]), start[0])
        changed: dict[str, dict[str, str]] = {}  # uid → {occurrence key: status}
        for ev in events:
            if "RECURRENCE-ID" in ev and "UID" in ev:
                uid = str(ev["UID"])
                rid = each_record(uri, property_time, ev, "RECURRENCE-ID", _zone(series.get(uid), floating))
                if not isinstance(rid, ReadError):  # the override's own record reports it
                    key_ = occurrence_key(rid[0], series.get(uid))
                    changed.setdefault(uid, {})[key_] = as_str(ev.get("STATUS")).lower()
        synthetic: dict[str, int] = {}  # UID-less components with the same identity, in file order
        for index, ev in enumerate(events):
            uid = str(ev.get("UID") or "")
            args = (ev, uid, name, floating, changed.get(uid, {}), series.get(uid), uri, key, source)
            made = each_record(f"{uri}#{uid or index}", _event, *args)
            if isinstance(made, ReadError):
                yield made
                continue
            doc = _unique(made[0], uid, synthetic)
            copy = Copy(doc.text, sequence_of(ev), bool(doc.metadata.get("recurring")))
            why = conflict(copies[doc.native_id], copy) if doc.native_id in copies else None
            if why:
                yield ReadError(f"{uri}#{uid}", f"two different copies of one event: {why}; the newest is kept")
            copies.setdefault(doc.native_id, copy)
            yield doc, made[1]
        for index, item in enumerate(cal.walk("VTODO") + cal.walk("VJOURNAL")):
            uid = str(item.get("UID") or "")
            made = each_record(
                f"{uri}#{uid or item.name.lower() + str(index)}", _entry, item, uid, name, floating, uri, key, source
            )
            yield made if isinstance(made, ReadError) else (_unique(made[0], uid, synthetic), made[1])


def _zone(start: date | datetime | None, floating: tzinfo) -> tzinfo:
    """The zone a floating RECURRENCE-ID is in: its series' zone (RFC 5545 gives it the same
    form as the DTSTART), else the calendar's."""
    return start.tzinfo if isinstance(start, datetime) and start.tzinfo is not None else floating


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


def _event(
    ev,
    uid: str,
    calendar: str,
    floating: tzinfo,
    changed: dict[str, str],
    series: date | datetime | None,
    uri: str,
    key: str,
    source: str,
):
    """One VEVENT as a record. ``series``: the start of the series a RECURRENCE-ID override
    belongs to (its key is computed as the series' occurrences are, see ``occurrence_key``)."""
    summary = " ".join(as_str(ev.get("SUMMARY")).split()) or "(no title)"
    meta: dict[str, Any] = {"uid": uid, "calendar": calendar}
    start: date | datetime | None = None
    if "DTSTART" in ev or broken(ev, "DTSTART"):
        start, tz_name = property_time(ev, "DTSTART", floating)
        end = end_of(ev, start, floating)
        meta |= {"start": start.isoformat(), "all_day": not isinstance(start, datetime), "end": end.isoformat()}
        meta["timezone"] = tz_name
        if UNKNOWN_ZONE in tz_name:
            meta["timezone_unknown"] = as_list(ev["DTSTART"])[0].params.get("TZID")
        lines = [summary, f"When: {span_text(start, end, tz_name)}"]
    elif all(prop in ("UID", "DTSTAMP", "SEQUENCE") for prop in ev):
        raise Unreadable("no DTSTART, and nothing else to index")
    else:  # an iTIP message (METHOD:REPLY, CANCEL…) may leave DTSTART out: still who and what
        lines = [summary, "When: no start time given"]
    meta |= {"recurring": "RRULE" in ev or "RDATE" in ev, "file": key}
    rid = None
    if "RECURRENCE-ID" in ev:
        rid, _ = property_time(ev, "RECURRENCE-ID", _zone(series, floating))
        meta["recurrence_id"] = occurrence_key(rid, series)
        lines.append(f"Changed occurrence of a repeating event (originally {show(rid)})")
    rules = [r for r in as_list(ev.get("RRULE")) if not isinstance(r, vBroken)]
    if broken(ev, "RRULE"):
        meta["rrule_unreadable"] = True
        lines.append("Repeats: by a rule that cannot be read")
    if rules and start is not None:
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

    created_at = as_utc(start) if start is not None else None
    updated_at = stamp_of(ev, "LAST-MODIFIED") or stamp_of(ev, "CREATED")
    stamp = stamp_of(ev, "LAST-MODIFIED") or stamp_of(ev, "DTSTAMP")
    identity = (calendar, meta.get("start", ""), summary, meta.get("location", ""), description)
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
