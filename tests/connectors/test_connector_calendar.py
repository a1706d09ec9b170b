"""The calendar connector: real .ics exports (Google, Outlook), zones, recurrences, bad files."""

from __future__ import annotations

import json
import time
import zipfile
from datetime import UTC, datetime
from pathlib import Path

import pytest

from ragbag.connectors import calendar
from ragbag.core.records import Cursor, Document, ReadError, Seen
from ragbag.models.embedding import token_counter


@pytest.fixture(scope="module")
def count():
    return token_counter()


def fold(line: str) -> str:
    """RFC 5545 folding: at most 75 octets a line, continuation lines start with a space,
    never inside a UTF-8 sequence."""
    out, cur, size = [], "", 0
    for ch in line:
        n = len(ch.encode("utf-8"))
        if size + n > 75:
            out.append(cur)
            cur, size = " ", 1
        cur += ch
        size += n
    return "\r\n".join(out + [cur])


def ics(lines: list[str]) -> str:
    return "".join(fold(line) + "\r\n" for line in lines)


BERLIN_TZ = [
    "BEGIN:VTIMEZONE",
    "TZID:Europe/Berlin",
    "X-LIC-LOCATION:Europe/Berlin",
    "BEGIN:DAYLIGHT",
    "TZOFFSETFROM:+0100",
    "TZOFFSETTO:+0200",
    "TZNAME:CEST",
    "DTSTART:19700329T020000",
    "RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU",
    "END:DAYLIGHT",
    "BEGIN:STANDARD",
    "TZOFFSETFROM:+0200",
    "TZOFFSETTO:+0100",
    "TZNAME:CET",
    "DTSTART:19701025T030000",
    "RRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=-1SU",
    "END:STANDARD",
    "END:VTIMEZONE",
]
UID = "5g1k2j3h4lm6n7@google.com"


def google_family() -> str:
    """A calendar as Google Calendar exports it (Takeout or Settings → Export)."""
    return ics(
        [
            "BEGIN:VCALENDAR",
            "PRODID:-//Google Inc//Google Calendar 70.9054//EN",
            "VERSION:2.0",
            "CALSCALE:GREGORIAN",
            "METHOD:PUBLISH",
            "X-WR-CALNAME:Family",
            "X-WR-TIMEZONE:Europe/Berlin",
            *BERLIN_TZ,
            "BEGIN:VEVENT",
            "DTSTART;TZID=Europe/Berlin:20250303T090000",
            "DTEND;TZID=Europe/Berlin:20250303T100000",
            "RRULE:FREQ=WEEKLY;WKST=MO;UNTIL=20250630T065959Z;BYDAY=MO",
            "EXDATE;TZID=Europe/Berlin:20250421T090000",
            "DTSTAMP:20250701T120000Z",
            "ORGANIZER;CN=Alice Example:mailto:alice@example.com",
            f"UID:{UID}",
            "ATTENDEE;CUTYPE=INDIVIDUAL;ROLE=REQ-PARTICIPANT;PARTSTAT=ACCEPTED;CN=Bob Smith;X-NUM-GUESTS=0:"
            "mailto:Bob@Example.com",
            "ATTENDEE;CUTYPE=INDIVIDUAL;ROLE=REQ-PARTICIPANT;PARTSTAT=NEEDS-ACTION;X-NUM-GUESTS=0:mailto:carol@example.com",
            "CREATED:20250220T101500Z",
            "DESCRIPTION:Agenda: the garden shed roadmap<br>Bring the <b>quotes from three carpenters</b>",
            "LAST-MODIFIED:20250301T080000Z",
            "LOCATION:Room 4.12\\, Main Building",
            "SEQUENCE:0",
            "STATUS:CONFIRMED",
            "SUMMARY:Family planning sync",
            "TRANSP:OPAQUE",
            "END:VEVENT",
            "BEGIN:VEVENT",
            "DTSTART;TZID=Europe/Berlin:20250311T140000",
            "DTEND;TZID=Europe/Berlin:20250311T150000",
            "DTSTAMP:20250701T120000Z",
            f"UID:{UID}",
            "RECURRENCE-ID;TZID=Europe/Berlin:20250310T090000",
            "CREATED:20250220T101500Z",
            "LAST-MODIFIED:20250305T070000Z",
            "SEQUENCE:1",
            "STATUS:CONFIRMED",
            "SUMMARY:Family planning sync (moved to Tuesday)",
            "END:VEVENT",
            "BEGIN:VEVENT",
            "DTSTART;VALUE=DATE:20250418",
            "DTEND;VALUE=DATE:20250422",
            "DTSTAMP:20250701T120000Z",
            "UID:easter-trip-2025@google.com",
            "SUMMARY:Easter trip to the Baltic coast",
            "LOCATION:Warnemünde",
            "DESCRIPTION:Ferry tickets are in the shared folder.",
            "LAST-MODIFIED:20250310T120000Z",
            "END:VEVENT",
            "BEGIN:VEVENT",
            "DTSTART:20250506T180000",
            "DTEND:20250506T193000",
            "DTSTAMP:20250701T120000Z",
            "RRULE:FREQ=WEEKLY;INTERVAL=2;BYDAY=TU,TH",
            "UID:choir@google.com",
            "SUMMARY:Choir rehearsal",
            "END:VEVENT",
            "BEGIN:VEVENT",
            "DTSTART;VALUE=DATE:20250230",
            "DTSTAMP:20250701T120000Z",
            "UID:never@google.com",
            "END:VEVENT",
            "BEGIN:VEVENT",
            "DTSTART;VALUE=DATE:20250201",
            "RRULE:FREQ=DAILY;BYMONTH=2;BYMONTHDAY=30",
            "DTSTAMP:20250701T120000Z",
            "UID:impossible@google.com",
            "SUMMARY:Thirtieth of February",
            "END:VEVENT",
            "END:VCALENDAR",
        ]
    )


WINDOWS_TZ = [
    "BEGIN:VTIMEZONE",
    "TZID:W. Europe Standard Time",
    "BEGIN:STANDARD",
    "DTSTART:16011028T030000",
    "RRULE:FREQ=YEARLY;BYDAY=-1SU;BYMONTH=10",
    "TZOFFSETFROM:+0200",
    "TZOFFSETTO:+0100",
    "END:STANDARD",
    "BEGIN:DAYLIGHT",
    "DTSTART:16010325T020000",
    "RRULE:FREQ=YEARLY;BYDAY=-1SU;BYMONTH=3",
    "TZOFFSETFROM:+0100",
    "TZOFFSETTO:+0200",
    "END:DAYLIGHT",
    "END:VTIMEZONE",
]
LONG = (
    "Quartalsbesprechung mit den Inhabern vom Café Müller: Umsätze, die neue Espressomaschine, "
    "und ob wir im Sommer auch sonntags öffnen. Bitte die Unterlagen für Frühjahr mitbringen."
)


def outlook_work() -> bytes:
    """An Outlook export: Windows zone names (quoted), cp1252 text, one broken event."""
    return ics(
        [
            "BEGIN:VCALENDAR",
            "PRODID:-//Microsoft Corporation//Outlook 16.0 MIMEDIR//EN",
            "VERSION:2.0",
            "METHOD:PUBLISH",
            "X-WR-CALNAME:Work",
            *WINDOWS_TZ,
            "BEGIN:VEVENT",
            "CLASS:PUBLIC",
            "CREATED:20250401T090000Z",
            f"DESCRIPTION:{LONG}\\n",
            'DTEND;TZID="W. Europe Standard Time":20250415T153000',
            "DTSTAMP:20250701T120000Z",
            'DTSTART;TZID="W. Europe Standard Time":20250415T140000',
            "LAST-MODIFIED:20250402T100000Z",
            "LOCATION:Café Müller\\, Königstraße 5",
            "PRIORITY:5",
            "SEQUENCE:0",
            "SUMMARY;LANGUAGE=de:Quartalsbericht Café Müller",
            "TRANSP:OPAQUE",
            "UID:040000008200E00074C5B7101A82E0080000000010A2F1B0D8A5DB01000000000000000010000000",
            "X-MICROSOFT-CDO-BUSYSTATUS:BUSY",
            "END:VEVENT",
            "BEGIN:VEVENT",
            "UID:broken-1",
            "SUMMARY:Broken start",
            "DTSTART:2025garbage",
            "END:VEVENT",
            "END:VCALENDAR",
        ]
    ).encode("cp1252")


def write_calendars(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "Family.ics").write_bytes(google_family().encode("utf-8"))
    (folder / "outlook").mkdir()
    (folder / "outlook" / "Calendar.ics").write_bytes(outlook_work())
    trip = ics(
        [
            "BEGIN:VCALENDAR",
            "VERSION:2.0",
            "BEGIN:VEVENT",
            "UID:t1",
            "DTSTART:20250801T080000Z",
            "SUMMARY:Flight to Lisbon",
            "END:VEVENT",
            "BEGIN:VEVENT",
            "UID:t2",
            "DTSTART:20250805T080000Z",
            "SUMMARY:Flight ho",
        ]
    )
    (folder / "Trip.ics").write_text(trip[: len(trip) - 2])  # the download was cut off
    (folder / "notes.ics").write_text("hello, this is not a calendar\n")
    with zipfile.ZipFile(folder / "takeout-20250701T120000Z-001.zip", "w") as zf:
        zf.writestr("Takeout/archive_browser.html", "<html></html>")
        zf.writestr(
            "Takeout/Calendar/Book club.ics",
            ics(
                [
                    "BEGIN:VCALENDAR",
                    "PRODID:-//Google Inc//Google Calendar 70.9054//EN",
                    "VERSION:2.0",
                    "BEGIN:VEVENT",
                    "DTSTART:20250909T170000Z",
                    "DTEND:20250909T183000Z",
                    "UID:book-1@google.com",
                    "SUMMARY:Book club: The Left Hand of Darkness",
                    "END:VEVENT",
                    "END:VCALENDAR",
                ]
            ),
        )
    whole = (folder / "takeout-20250701T120000Z-001.zip").read_bytes()
    (folder / "takeout-20250801T120000Z-001.zip").write_bytes(whole[: len(whole) // 2])  # cut download
    return folder


def read_all(path: Path, cursor=None):
    items = list(calendar.read(path, "cal", cursor))
    assert isinstance(items[-1], Cursor)
    docs = {i.native_id: i for i in items if isinstance(i, Document)}
    errors = [i for i in items if isinstance(i, ReadError)]
    seen = [i.native_id for i in items if isinstance(i, Seen)]
    return docs, errors, seen, items[-1].state


def test_recurring_event_with_override_field_by_field(tmp_path):
    docs, _, _, _ = read_all(write_calendars(tmp_path / "cals"))
    sync = docs[UID]
    assert sync.title == "Family planning sync"
    assert sync.text == (
        "Family planning sync\n"
        "When: Mon 2025-03-03 09:00–10:00 (Europe/Berlin)\n"
        "Repeats: weekly on Monday until 2025-06-30\n"
        "Occurrences: Mon 2025-03-03 09:00, Mon 2025-03-10 09:00 (changed), Mon 2025-03-17 09:00, "
        "Mon 2025-03-24 09:00, Mon 2025-03-31 09:00\n"
        "16 occurrences in all, the last Mon 2025-06-23 09:00\n"
        "Where: Room 4.12, Main Building\n"
        "Organizer: Alice Example <alice@example.com>\n"
        "Attendees: Bob Smith <bob@example.com>, carol@example.com\n"
        "Calendar: Family\n"
        "\nAgenda: the garden shed roadmap\nBring the quotes from three carpenters\n"
    )
    assert sync.created_at == datetime(2025, 3, 3, 8, 0, tzinfo=UTC)
    assert sync.updated_at == datetime(2025, 3, 1, 8, 0, tzinfo=UTC)
    assert sync.authors == ["Alice Example <alice@example.com>"]
    assert sync.metadata == {
        "uid": UID,
        "calendar": "Family",
        "start": "2025-03-03T09:00:00+01:00",
        "end": "2025-03-03T10:00:00+01:00",
        "all_day": False,
        "timezone": "Europe/Berlin",
        "recurring": True,
        "file": "Family.ics",
        "rrule": "FREQ=WEEKLY;UNTIL=20250630T065959Z;BYDAY=MO;WKST=MO",
        "recurrence": "weekly on Monday until 2025-06-30",
        "status": "confirmed",
        "location": "Room 4.12, Main Building",
        "organizer": "alice@example.com",
        "organizer_name": "Alice Example",
        "attendees": ["bob@example.com", "carol@example.com"],
        "attendee_names": ["Bob Smith"],
    }
    moved = docs[f"{UID}/20250310T080000Z"]
    assert moved.title == "Family planning sync (moved to Tuesday)"
    assert moved.text.splitlines()[1:3] == [
        "When: Tue 2025-03-11 14:00–15:00 (Europe/Berlin)",
        "Changed occurrence of a repeating event (originally Mon 2025-03-10 09:00)",
    ]
    assert moved.metadata["recurrence_id"] == "20250310T080000Z" and moved.metadata["recurring"] is False
    assert moved.created_at == datetime(2025, 3, 11, 13, 0, tzinfo=UTC)


def test_all_day_unbounded_and_impossible_rules(tmp_path):
    docs, _, _, _ = read_all(write_calendars(tmp_path / "cals"))
    trip = docs["easter-trip-2025@google.com"]
    assert trip.text.splitlines()[1] == "When: Fri 2025-04-18 – Mon 2025-04-21 (all day)"
    assert trip.created_at == datetime(2025, 4, 18, tzinfo=UTC)
    assert {k: trip.metadata[k] for k in ("start", "end", "all_day", "timezone", "location")} == {
        "start": "2025-04-18",
        "end": "2025-04-21",
        "all_day": True,
        "timezone": "",
        "location": "Warnemünde",
    }
    choir = docs["choir@google.com"]  # floating time: the calendar's X-WR-TIMEZONE
    assert choir.metadata["recurrence"] == "every 2 weeks on Tuesday and Thursday"
    assert choir.metadata["start"] == "2025-05-06T18:00:00+02:00"
    assert (
        "First occurrences: Tue 2025-05-06 18:00, Thu 2025-05-08 18:00, Tue 2025-05-20 18:00, "
        "Thu 2025-05-22 18:00, Tue 2025-06-03 18:00\n"
    ) in choir.text
    assert "occurrences in all" not in choir.text  # no end: never counted
    started = time.monotonic()
    docs, _, _, _ = read_all(tmp_path / "cals" / "Family.ics")
    assert time.monotonic() - started < 2
    assert "Occurrences: none (the rule matches no date)" in docs["impossible@google.com"].text


def test_windows_zones_charset_and_bad_input(tmp_path):
    docs, errors, _, _ = read_all(write_calendars(tmp_path / "cals"))
    (review,) = [d for d in docs.values() if d.metadata["calendar"] == "Work"]
    assert review.title == "Quartalsbericht Café Müller"
    assert review.metadata["timezone"] == "Europe/Berlin"  # from "W. Europe Standard Time"
    assert review.metadata["start"] == "2025-04-15T14:00:00+02:00"
    assert review.created_at == datetime(2025, 4, 15, 12, 0, tzinfo=UTC)
    assert LONG in review.text  # unfolded
    assert review.metadata["file"] == "outlook/Calendar.ics"
    reasons = {e.uri.split("/cals/", 1)[1]: e.error for e in errors}
    assert set(reasons) == {
        "outlook/Calendar.ics#broken-1",
        "Trip.ics",
        "notes.ics",
        "Family.ics#never@google.com",
        "takeout-20250801T120000Z-001.zip",
    }
    assert reasons["takeout-20250801T120000Z-001.zip"].startswith("unreadable zip (truncated or corrupt?)")
    assert reasons["outlook/Calendar.ics#broken-1"].startswith("bad DTSTART")
    assert "truncated" in reasons["Trip.ics"] and "t1" in docs and "t2" not in docs
    assert reasons["notes.ics"].startswith("not an iCalendar file")
    book = docs["book-1@google.com"]  # from the Takeout zip; no X-WR-CALNAME: the file's name
    assert book.metadata["calendar"] == "Book club"
    assert book.metadata["file"] == "takeout-20250701T120000Z-001.zip!/Takeout/Calendar/Book club.ics"
    assert book.uri.endswith("takeout-20250701T120000Z-001.zip!/Takeout/Calendar/Book club.ics#book-1@google.com")


def test_incremental_and_duplicate_events(tmp_path):
    folder = write_calendars(tmp_path / "cals")
    docs, errors, _, cursor = read_all(folder)
    docs2, errors2, seen2, cursor2 = read_all(folder, json.loads(json.dumps(cursor)))
    assert set(docs2) == {"t1"}  # the truncated file is read again each time
    assert sorted(seen2) == sorted(set(docs) - {"t1"})
    assert sorted(e.uri for e in errors2) == sorted(e.uri for e in errors)
    # The same event in a newer export of the calendar wins over the older copy.
    newer = google_family().replace("SUMMARY:Easter trip to the Baltic coast", "SUMMARY:Easter trip to Rügen")
    newer = newer.replace("LAST-MODIFIED:20250310T120000Z", "LAST-MODIFIED:20250320T120000Z")
    (folder / "Family (2).ics").write_text(newer, encoding="utf-8")
    docs3, _, seen3, _ = read_all(folder, cursor2)
    assert docs3["easter-trip-2025@google.com"].title == "Easter trip to Rügen"
    assert "easter-trip-2025@google.com" not in seen3


def test_spans_fit(tmp_path, count):
    docs, _, _, _ = read_all(write_calendars(tmp_path / "cals"))
    for doc in docs.values():
        spans = calendar.spans(doc, count, 30)
        assert spans and all(count(doc.text[s.start : s.end]) <= 30 for s in spans)
    assert calendar.SCHEDULE == "0 */6 * * *"


CUSTOM_ZONE = """BEGIN:VCALENDAR\r\nVERSION:2.0\r\nBEGIN:VTIMEZONE\r\nTZID:Office Time\r\nBEGIN:STANDARD\r
DTSTART:19700101T000000\r\nTZOFFSETFROM:+0100\r\nTZOFFSETTO:+0100\r\nEND:STANDARD\r\nEND:VTIMEZONE\r
BEGIN:VEVENT\r\nUID:defines\r\nDTSTART;TZID=Office Time:20250101T160000\r\nSUMMARY:Defines the zone\r
END:VEVENT\r\nEND:VCALENDAR\r\n"""
USES_ZONE = """BEGIN:VCALENDAR\r\nVERSION:2.0\r\nBEGIN:VEVENT\r\nUID:uses\r
DTSTART;TZID=Office Time:20250101T160000\r\nSUMMARY:Uses an undefined zone\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"""


def _docs(path) -> dict[str, Document]:
    return {d.native_id: d for d in calendar.read(path, "cal", None) if isinstance(d, Document)}


def test_a_zone_is_resolved_from_the_file_itself_never_from_another(tmp_path):
    alone = tmp_path / "alone"
    alone.mkdir()
    (alone / "b.ics").write_text(USES_ZONE)
    both = tmp_path / "both"
    both.mkdir()
    (both / "a.ics").write_text(CUSTOM_ZONE)
    (both / "b.ics").write_text(USES_ZONE)
    by_itself = _docs(alone)["uses"].created_at
    beside = _docs(both)
    assert beside["uses"].created_at == by_itself == datetime(2025, 1, 1, 16, tzinfo=UTC)
    assert beside["defines"].created_at == datetime(2025, 1, 1, 15, tzinfo=UTC)  # its own +01:00
    assert _docs(alone)["uses"].created_at == by_itself  # and again after the other file was read


def test_uidless_look_alikes_stay_two_and_tasks_are_records(tmp_path):
    twin = "BEGIN:VEVENT\r\nDTSTART:20250301T090000Z\r\nSUMMARY:Stand-up\r\nEND:VEVENT\r\n"
    todo = (
        "BEGIN:VTODO\r\nUID:t1\r\nSUMMARY:Renew passport\r\nDUE;VALUE=DATE:20250415\r\nSTATUS:NEEDS-ACTION\r\n"
        "DESCRIPTION:Bring two photos and the old passport.\r\nEND:VTODO\r\n"
    )
    (tmp_path / "c.ics").write_text(f"BEGIN:VCALENDAR\r\nVERSION:2.0\r\n{twin}{twin}{todo}END:VCALENDAR\r\n")
    (tmp_path / "bare.ics").write_text(todo.replace("t1", "t2"))  # no VCALENDAR wrapper
    items = list(calendar.read(tmp_path, "cal", None))
    docs = {d.native_id: d for d in items if isinstance(d, Document)}
    assert not [e for e in items if isinstance(e, ReadError)]
    assert sum(d.title == "Stand-up" for d in docs.values()) == 2
    task = docs["t1"]
    assert task.metadata["kind"] == "task" and task.metadata["status"] == "needs-action"
    assert "Bring two photos" in task.text and task.created_at == datetime(2025, 4, 15, tzinfo=UTC)
    assert "t2" in docs
