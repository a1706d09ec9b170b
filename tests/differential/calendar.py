"""Calendars, differentially: ragbag's records against icalendar + recurring-ical-events + zoneinfo.

The reference parses each ``.ics`` with icalendar as it ships (strict: its default components,
nothing of the connector's tolerance or salvage), lets recurring-ical-events' ``x_wr_timezone``
put a calendar-wide ``X-WR-TIMEZONE`` onto floating times (what recurring-ical-events does
before it expands), and resolves a TZID icalendar left naive with :mod:`zoneinfo` or icalendar's
own lookup (IANA, Windows, vendor-prefixed ids). It shares no code with the connector.

Records: every ``VEVENT``, ``VTODO`` and ``VJOURNAL`` (masters and ``RECURRENCE-ID`` overrides),
paired with ragbag's documents by UID, override or not, and order in the file. Checks:

- ``count``: (records paired, the larger of the two counts);
- ``times``: the record's start in UTC (a task's due, else start, else completion, else
  creation; a date at 00:00 UTC), for the paired records where the reference can place it;
- ``people``: the organizer's and attendees' addresses, lower-cased, ``mailto:`` dropped;
- ``text``: the summary, whitespace-normalised, appears in the document's text.
"""

from __future__ import annotations

import warnings
from collections import defaultdict
from datetime import UTC, date, datetime, time
from pathlib import Path
from zoneinfo import ZoneInfo

import icalendar
import x_wr_timezone
from icalendar.timezone import tzp

from tests.differential.common import FIXTURES, PUBLIC, Outcome, ragbag_read, rel

CONNECTOR = "calendar"
_KINDS = ("VEVENT", "VTODO", "VJOURNAL")

# One reason per class of disagreement; tests/fixtures/public/calendar/README.md has a section each.
_STRICT = (
    "icalendar's strict parse fails on the whole file (one bad VTIMEZONE, VALARM or content line);"
    " ragbag's tolerant parse and per-component salvage read every record the failure does not touch,"
    " and report the part left out"
)
_BAD_START = (
    "a record whose DTSTART cannot be parsed ('Next Year', 20240230T100000Z) is a ReadError naming it"
    " in ragbag; icalendar keeps it with a broken start, which places it nowhere in time"
)
_SAME_UID = (
    "several copies of one UID (and RECURRENCE-ID) in one file (iTIP message streams, SEQUENCE"
    " updates, duplicated exports) are one event: ragbag keeps the newest copy (LAST-MODIFIED, else"
    " DTSTAMP), the reference lists every copy"
)
_EMPTY = "a VEVENT with no DTSTART and nothing else to index (only a UID and a VALARM) is reported, not a record"
_TRUNCATED = (
    "the file ends before END:VCALENDAR: icalendar returns nothing, ragbag reads the complete"
    " components and reports the truncation"
)
_BROKEN_VTIMEZONE = (
    "TZID 'New Zealand Standard Time' with a VTIMEZONE whose offsets are wrong (+01:00 standard):"
    " ragbag resolves the Windows name to Pacific/Auckland (CLDR table), the reference uses the broken"
    " VTIMEZONE; 13:00 NZDT is 00:00 UTC"
)
_XWR_TODO = (
    "a floating VTODO DUE in a calendar with X-WR-TIMEZONE:US/Pacific: ragbag reads it in that zone,"
    " as for events; x_wr_timezone converts only events, so the reference reads it as UTC"
)
_MENDED = (
    "the file's component structure is damaged (fuzzing test files of icalendar and libical: a BEGIN line one"
    " character off, BEGIN:VEVENT\\r, stray END lines): icalendar drops the component or the whole calendar,"
    " ragbag mends the structure line by line and reads the record"
)
EXPLAINED: dict[str, str] = {
    **{
        f"public/calendar/{name}": _STRICT
        for name in (
            "icalendar/src__icalendar__tests__calendars__issue_104_broken_calendar.ics",
            "khal/tests__ics__invalid_tzoffset.ics",
            "khal/tests__ics__non_dst_error.ics",
            "libical/src__Net-ICal-Libical__test-data__rfc2445.ics",
            "libical/src__test__2445.ics",
            "libical/test-data__1.ics",
            "node-ical/test__fixtures__test_with_multiple_tzids_in_vtimezone.ics",
        )
    },
    **{
        f"public/calendar/{name}": _BAD_START
        for name in (
            "icalendar/src__icalendar__tests__calendars__broken_dtstart.ics",
            "icalendar/src__icalendar__tests__calendars__issue_1081_invalid_start_and_end.ics",
            "icalendar/src__icalendar__tests__calendars__issue_1081_invalid_start_valid_end.ics",
            "libical/test-data__process-calendar.ics",
            "libical/test-data__process-incoming.ics",
            "node-ical/test__fixtures__large-file-with-late-error.ics",
            "node-ical/test__fixtures__ms_timezones.ics",
            "node-ical/test__fixtures__multi-event-basic.ics",
        )
    },
    **{
        f"public/calendar/{name}": _SAME_UID
        for name in (
            "khal/tests__ics__event_dt_multi_uid.ics",
            "libical/src__Net-ICal-Libical__test-data__rfc2446.ics",
            "libical/src__test__outgoing.ics",
            "libical/test-data__2446.ics",
            "libical/test-data__classify.ics",
            "libical/test-data__incoming.ics",
            "node-ical/test__fixtures__duplicate-rrule-sequence.ics",
            "node-ical/test__fixtures__duplicate-uid-sequence.ics",
            "node-ical/test__fixtures__recurrence-sequence.ics",
            "node-ical/test__fixtures__tv-show-episode.ics",
            "python-recurring-ical-events/recurring_ical_events__test__calendars__alarm_absolute_edited.ics",
            "python-recurring-ical-events/recurring_ical_events__test__calendars__issue_132_swapped_start_and_end.ics",
            "python-recurring-ical-events/recurring_ical_events__test__calendars__issue_148_edge_case_1.ics",
            "python-recurring-ical-events/recurring_ical_events__test__calendars__issue_148_edge_case_2.ics",
            "python-recurring-ical-events/recurring_ical_events__test__calendars__issue_148_exdate_and_rdate_updated.ics",
            "python-recurring-ical-events/recurring_ical_events__test__calendars__issue_148_ignored_exdate.ics",
            "python-recurring-ical-events/recurring_ical_events__test__calendars__issue_163_deleted_modification.ics",
            "python-recurring-ical-events/recurring_ical_events__test__calendars__issue_164_duplicated_event.ics",
        )
    },
    "public/calendar/icalendar/src__icalendar__tests__events__rfc_9074_example_proximity.ics": _EMPTY,
    "public/calendar/icalendar/src__icalendar__tests__calendars__pr_480_summary_with_colon.ics": _TRUNCATED,
    "public/calendar/khal/tests__ics__tz_windows_format.ics": _BROKEN_VTIMEZONE,
    "public/calendar/icalendar/src__icalendar__fuzzing__corpus__issue_100_transformed_doctests_into_unittests.ics": (
        _MENDED
    ),
    "public/calendar/libical/test-data__issue251.ics": _MENDED,
    "public/calendar/node-ical/test__fixtures__vtodo-vfreebusy.ics": _XWR_TODO,
}


def units() -> list[Path]:
    files = []
    for root in (PUBLIC / CONNECTOR, FIXTURES / "realworld" / CONNECTOR):
        files += [p for p in sorted(root.rglob("*")) if p.is_file() and p.suffix.lower() == ".ics"]
    return files


def _utc(prop, floating) -> datetime | None:
    """A date-time property in UTC; None where the reference cannot say (unknown zone)."""
    try:
        value = prop.dt
    except Exception:  # noqa: BLE001 — a value icalendar kept as broken: the reference cannot place it
        return None
    if isinstance(value, list):
        value = value[0]
    if not isinstance(value, date):
        return None
    if not isinstance(value, datetime):
        return datetime.combine(value, time(), tzinfo=UTC)
    if value.tzinfo is None:
        tzid = prop.params.get("TZID")
        if tzid:
            zone = None
            try:
                zone = ZoneInfo(str(tzid))
            except Exception:  # noqa: BLE001 — not an IANA name: icalendar's own lookup
                zone = tzp.timezone(str(tzid))
            if zone is None:
                return None
            value = value.replace(tzinfo=zone)
        else:
            value = value.replace(tzinfo=floating)
    return value.astimezone(UTC)


def _first(value):
    return value[0] if isinstance(value, list) and value else value


def _address(value) -> str:
    text = str(value).strip()
    return (text[7:] if text.lower().startswith("mailto:") else text).lower()


def _reference(path: Path) -> list[dict]:
    """Each record's identity, start (UTC), people and summary, as the reference reads them."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tzp.use_zoneinfo()
        calendars = icalendar.Calendar.from_ical(path.read_bytes(), multiple=True)
        records = []
        for cal in calendars:
            floating = UTC
            if cal.name == "VCALENDAR" and cal.get("X-WR-TIMEZONE"):
                try:
                    cal = x_wr_timezone.to_standard(cal)
                except Exception:  # noqa: BLE001 — an X-WR-TIMEZONE it cannot apply stays floating
                    pass
            for kind in _KINDS:
                for comp in cal.walk(kind):
                    records.append(_record(comp, floating))
    return records


def _record(comp, floating) -> dict:
    order = ("DTSTART",) if comp.name != "VTODO" else ("DUE", "DTSTART", "COMPLETED")
    start, placed = None, True
    for prop in (*order, "CREATED") if comp.name != "VEVENT" else order:
        if prop in comp:
            start = _utc(comp[prop], floating)
            placed = start is not None
            break
    people = set()
    if comp.get("ORGANIZER") is not None:
        people.add(_address(comp["ORGANIZER"]))
    attendees = comp.get("ATTENDEE")
    for a in attendees if isinstance(attendees, list) else [attendees] if attendees is not None else []:
        people.add(_address(a))
    return {
        "uid": str(comp.get("UID") or ""),
        "override": "RECURRENCE-ID" in comp,
        "kind": comp.name,
        "start": start,
        "placed": placed,
        "people": {p for p in people if p},
        "summary": " ".join(str(_first(comp.get("SUMMARY")) or "").split()),
    }


def _paired(records: list[dict], docs: list) -> list[tuple[dict, object]]:
    """Reference records with ragbag's documents: same UID, both overrides or both not, the
    n-th of that group with the n-th."""
    groups: dict[tuple, list] = defaultdict(list)
    for doc in docs:
        meta = doc.metadata
        kind = {"task": "VTODO", "journal": "VJOURNAL"}.get(meta.get("kind", ""), "VEVENT")
        groups[(kind, meta.get("uid", ""), "recurrence_id" in meta)].append(doc)
    out, taken = [], defaultdict(int)
    for rec in records:
        key = (rec["kind"], rec["uid"], rec["override"])
        n = taken[key]
        if n < len(groups[key]):
            out.append((rec, groups[key][n]))
            taken[key] += 1
    return out


def compare(path: Path) -> Outcome:
    docs, errors = ragbag_read(CONNECTOR, path)
    outcome = Outcome(rel(path), rel(path).split("/")[2], 0, len(docs), len(errors))
    try:
        records = _reference(path)
    except Exception as exc:  # noqa: BLE001 — the reference cannot read the file at all
        outcome.checks = {"count": (0, len(docs))} if docs else {"count": (1, 1)}
        if docs:
            outcome.disagreements.append(
                f"reference cannot parse ({type(exc).__name__}: {str(exc)[:80]}); ragbag reads {len(docs)} records"
            )
        return outcome
    outcome.reference = len(records)
    pairs = _paired(records, docs)
    outcome.checks["count"] = (len(pairs), max(len(records), len(docs)))
    if len(pairs) != max(len(records), len(docs)):
        outcome.disagreements.append(
            f"count: reference {len(records)}, ragbag {len(docs)} ({len(errors)} errors reported)"
        )
    times, people, text = [0, 0], [0, 0], [0, 0]
    for rec, doc in pairs:
        label = f"{rec['kind']} {rec['uid'] or '(no uid)'}{' override' if rec['override'] else ''}"
        if rec["placed"]:
            times[1] += 1
            if rec["start"] == doc.created_at:
                times[0] += 1
            else:
                outcome.disagreements.append(f"times: {label}: reference {rec['start']}, ragbag {doc.created_at}")
        if rec["kind"] == "VEVENT":
            mine = {doc.metadata.get("organizer", "")} | set(doc.metadata.get("attendees", []))
            people[1] += 1
            if {p for p in mine if p} == rec["people"]:
                people[0] += 1
            else:
                outcome.disagreements.append(
                    f"people: {label}: reference {sorted(rec['people'])}, ragbag {sorted(mine)}"
                )
        if rec["summary"]:
            text[1] += 1
            if rec["summary"] in " ".join(doc.text.split()):
                text[0] += 1
            else:
                outcome.disagreements.append(f"text: {label}: summary {rec['summary'][:60]!r} not in ragbag's text")
    outcome.checks |= {"times": tuple(times), "people": tuple(people), "text": tuple(text)}
    return outcome
