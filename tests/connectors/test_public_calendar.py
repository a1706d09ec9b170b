"""The calendar connector on public files no test here was written for (issue 31): each class
of defect those files showed, held by the file that showed it (tests/fixtures/public/calendar,
SOURCES.tsv names origin, commit and licence), or by a minimal mutation of one where it says so."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from conftest import FIXTURES

from ragbag.connectors import calendar
from ragbag.core.records import Document, ReadError

PUBLIC = FIXTURES / "public" / "calendar"


def read(path: Path) -> tuple[dict[str, Document], list[ReadError]]:
    docs, errors = {}, []
    for item in calendar.read(path, "test", None):
        if isinstance(item, Document):
            docs[item.native_id] = item
        elif isinstance(item, ReadError):
            errors.append(item)
    return docs, errors


def mutated(tmp_path: Path, name: str, old: str, new: str) -> Path:
    """A copy of public file ``name`` with one line changed (``old`` must be in it)."""
    text = (PUBLIC / name).read_bytes().decode()
    if "\r\n" not in text:
        old, new = old.replace("\r\n", "\n"), new.replace("\r\n", "\n")
    assert old in text
    out = tmp_path / Path(name).name
    out.write_bytes(text.replace(old, new, 1).encode())
    return out


# 1. One record or file never fails the source.


def test_a_vtimezone_with_two_tzids_is_left_out_and_the_event_read():
    """icalendar raises AttributeError while caching this VTIMEZONE (two TZID lines): the whole
    file failed. Now that VTIMEZONE alone is reported and the event's IANA TZID is used."""
    docs, errors = read(PUBLIC / "node-ical/test__fixtures__test_with_multiple_tzids_in_vtimezone.ics")
    assert len(docs) == 1
    assert [e.error.split(":")[0] for e in errors] == ["VTIMEZONE left out"]
    assert "AttributeError" in errors[0].error and errors[0].uri.endswith("#vtimezone1")


def test_any_exception_in_one_record_is_that_records_error(monkeypatch):
    """Not a list of exception types: an error no list foresaw (here RuntimeError, raised while
    the series' rule is described) is a ReadError for that event, and the next event is read."""

    def broken(*_):
        raise RuntimeError("a parser bug nobody listed")

    monkeypatch.setattr(calendar, "describe", broken)
    docs, errors = read(PUBLIC / "node-ical/test__fixtures__exchange_whole_day_moved_recurrence.ics")
    assert list(docs) == ["exchange-moved-recurrence/20260226"]
    assert [e.uri.rsplit("#", 1)[1] for e in errors] == ["exchange-moved-recurrence"]
    assert errors[0].error == "RuntimeError: a parser bug nobody listed"


def test_any_exception_in_one_file_is_that_files_error(monkeypatch, tmp_path):
    """Two calendars in a folder; reading one raises something unforeseen: the other is read."""
    for name in ("khal/tests__ics__cal_d.ics", "khal/tests__ics__event_dt_simple.ics"):
        (tmp_path / Path(name).name).write_bytes((PUBLIC / name).read_bytes())
    monkeypatch.setattr(calendar, "_calendar", _failing_for(calendar._calendar, "tests__ics__cal_d.ics"))
    docs, errors = read(tmp_path)
    assert docs and all("cal_d" not in d.uri for d in docs.values())
    assert [(Path(e.uri).name, e.error) for e in errors] == [("tests__ics__cal_d.ics", "RuntimeError: unforeseen")]


def _failing_for(real, name):
    def calendar_(data, uri, key, source):
        if uri.endswith(name):
            raise RuntimeError("unforeseen")
        return real(data, uri, key, source)

    return calendar_


# 2. Exchange/Outlook zone names are zones, not UTC.


@pytest.mark.parametrize(
    ("name", "starts"),
    [
        # "(UTC-05:00) Eastern Time (US and Canada)", no VTIMEZONE: 12:00 EDT
        ("node-ical/test__fixtures__windows-quoted-tz-rrule.ics", [datetime(2015, 7, 6, 16, tzinfo=UTC)]),
        # "Amsterdam, Belgrade, Berlin, …", no VTIMEZONE: 19:00 CEST
        ("node-ical/test__fixtures__test_with_tz_list.ics", [datetime(2024, 4, 15, 17, tzinfo=UTC)]),
        # "(GMT+10:00) Canberra, Melbourne, Sydney" (13:30 AEDT) and "(UTC-05:00) Eastern Time (US & Canada)"
        (
            "node-ical/test__fixtures__Office-2012-owa.ics",
            [
                datetime(2020, 10, 28, 2, 30, tzinfo=UTC),
                datetime(2020, 10, 28, 17, 30, tzinfo=UTC),
                datetime(2020, 11, 2, 18, 30, tzinfo=UTC),
                datetime(2020, 11, 2, 18, 30, tzinfo=UTC),
            ],
        ),
    ],
)
def test_exchange_display_names_resolve_to_their_zone(name, starts):
    docs, errors = read(PUBLIC / name)
    assert not errors
    assert sorted(d.created_at for d in docs.values()) == sorted(starts)
    assert all("unknown" not in d.metadata["timezone"] for d in docs.values())


def test_an_unresolvable_tzid_is_said_not_silently_utc():
    """ "tzone://Microsoft/Custom" without a VTIMEZONE: the record says its zone is unknown."""
    docs, _ = read(PUBLIC / "node-ical/test__fixtures__bad_custom_ms_tz.ics")
    doc = docs["1173422081SZR322"]
    assert doc.metadata["timezone_unknown"] == "tzone://Microsoft/Custom"
    assert "unknown zone, read as UTC" in doc.text


# 3. An unused part does not kill the file.


def test_a_bad_valarm_trigger_loses_nothing():
    """TRIGGER;RELATED=START:PT-2H (not a duration) in each event's VALARM: every event read."""
    docs, errors = read(PUBLIC / "khal/tests__ics__non_dst_error.ics")
    assert len(docs) == 2 and not errors
    assert sorted(d.created_at for d in docs.values())[0] == datetime(2023, 2, 3, 14, 15, tzinfo=UTC)


def test_a_bad_historic_offset_in_an_iana_vtimezone_uses_the_iana_zone():
    """TZID:Europe/Berlin whose first STANDARD says TZOFFSETFROM:+5328: the event is read, at
    08:00 in Europe/Berlin (the IANA zone; the broken VTIMEZONE is not needed)."""
    docs, errors = read(PUBLIC / "khal/tests__ics__invalid_tzoffset.ics")
    assert not errors
    assert [(d.created_at, d.metadata["timezone"]) for d in docs.values()] == [
        (datetime(2012, 12, 2, 7, tzinfo=UTC), "Europe/Berlin")
    ]


def test_a_calendar_of_one_broken_vtimezone_is_no_error():
    """icalendar's own test file: VTIMEZONE Europe/Prague with TZOFFSETFROM:+5744 and no event."""
    assert read(PUBLIC / "icalendar/src__icalendar__tests__calendars__parsing_error_in_UTC_offset.ics") == ({}, [])


# 4. Calendar semantics.


def test_duration_is_used_when_dtend_is_unusable(tmp_path):
    """Mutation of node-ical's test_date_time_duration.ics (DTSTART 09:00Z + DURATION:PT1H15M): a
    broken DTEND line added. The event still ends at 10:15, not at its start."""
    name = "node-ical/test__fixtures__test_date_time_duration.ics"
    [doc] = read(mutated(tmp_path, name, "DURATION:", "DTEND:garbage\r\nDURATION:"))[0].values()
    assert doc.metadata["start"] == "2024-02-15T09:00:00+00:00"
    assert doc.metadata["end"] == "2024-02-15T10:15:00+00:00"


def test_a_moved_all_day_occurrence_is_not_a_plain_occurrence():
    """Exchange names the moved occurrence of an all-day series by its local midnight
    (RECURRENCE-ID;TZID=W. Europe Standard Time:20260226T000000): that date is changed."""
    docs, _ = read(PUBLIC / "node-ical/test__fixtures__exchange_whole_day_moved_recurrence.ics")
    series = docs["exchange-moved-recurrence"]
    assert "Thu 2026-02-26 (changed)" in series.text
    assert docs["exchange-moved-recurrence/20260226"].metadata["recurrence_id"] == "20260226"


def test_a_zoned_override_of_a_zoned_series_is_matched(tmp_path):
    """Mutation of the same file: the series zoned (DTSTART;TZID=W. Europe Standard Time at
    00:00) and its RECURRENCE-ID floating (no TZID): it is in the series' zone, so the occurrence
    it moves is marked changed."""
    path = mutated(
        tmp_path,
        "node-ical/test__fixtures__exchange_whole_day_moved_recurrence.ics",
        "DTSTART;VALUE=DATE:20260219\r\nDTEND;VALUE=DATE:20260220",
        "DTSTART;TZID=W. Europe Standard Time:20260219T000000\r\nDTEND;TZID=W. Europe Standard Time:20260219T010000",
    )
    path.write_bytes(path.read_bytes().replace(b"RECURRENCE-ID;TZID=W. Europe Standard Time:", b"RECURRENCE-ID:"))
    docs, _ = read(path)
    assert "Thu 2026-02-26 00:00 (changed)" in docs["exchange-moved-recurrence"].text


# 5. A damaged structure loses no component silently: each is read, or its loss reported.

HOLIDAYS = "icalendar/src__icalendar__tests__calendars__example.ics"  # three events, X-WR-CALNAME:Holidays
TITLES = ["International Women's Day", "New Year's Day", "Orthodox Christmas"]


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # The fuzzer's delete_line: icalendar closed the first event at the second's END, nested
        # the rest in it, closed it at END:VCALENDAR and returned no calendar: 0 of 3, no error.
        ("END:VEVENT\r\n", ""),
        # duplicate_line: the same nesting, the same silent loss of all three.
        ("BEGIN:VEVENT\r\n", "BEGIN:VEVENT\r\nBEGIN:VEVENT\r\n"),
        # flip (one bit of the first BEGIN:VEVENT): an unknown component, 2 of 3 read, no error.
        ("BEGIN:VEVENT\r\n", "BEGIN:VEVEFT\r\n"),
        # delete_line: the first event's END closed the calendar; the file failed as a whole.
        ("BEGIN:VEVENT\r\n", ""),
        # flip in BEGIN:VCALENDAR: read as a bare file, the calendar's name lost.
        ("BEGIN:VCALENDAR", "BEGIN:VCALEFDAR"),
    ],
)
def test_a_damaged_begin_or_end_line_is_mended(tmp_path, old, new):
    docs, errors = read(mutated(tmp_path, HOLIDAYS, old, new))
    assert not errors
    assert sorted(d.title for d in docs.values()) == TITLES
    assert {d.metadata["calendar"] for d in docs.values()} == {"Holidays"}


def test_one_event_in_two_copies_is_one_record_not_a_loss(tmp_path):
    text = (PUBLIC / HOLIDAYS).read_bytes().decode()
    first = text[text.index("BEGIN:VEVENT") : text.index("END:VEVENT") + len("END:VEVENT\r\n")]
    docs, errors = read(mutated(tmp_path, HOLIDAYS, first, first + first))
    assert not errors and sorted(d.title for d in docs.values()) == TITLES


def test_an_override_that_lost_its_recurrence_id_is_reported(tmp_path):
    """The fuzzer's delete_line (seed 11) on ical.js's moved occurrence: without its RECURRENCE-ID
    the override reads as a second master of its UID, and keeping the newest copy replaced the
    whole series by one event without a word. A series and a single event under one UID cannot
    be revisions of each other: the copy that is lost is reported."""
    name = "node-ical/test__fixtures__exchange_whole_day_moved_recurrence.ics"
    intact, errors = read(PUBLIC / name)
    assert not errors and "exchange-moved-recurrence/20260226" in intact
    path = mutated(tmp_path, name, "RECURRENCE-ID;TZID=W. Europe Standard Time:20260226T000000\r\n", "")
    docs, errors = read(path)
    assert "exchange-moved-recurrence/20260226" not in docs
    assert [e.error for e in errors] == [
        "two different copies of one event: one copy is a series, the other a single event"
        " (a RECURRENCE-ID missing?); the newest is kept"
    ]


def test_a_revision_with_a_higher_sequence_supersedes_without_an_error():
    """Google's export holding a master twice, SEQUENCE 1 and 2 (python-recurring-ical-events
    issue 163): a revision, not damage. The newer copy is the record, and nothing is reported."""
    docs, errors = read(
        PUBLIC
        / "python-recurring-ical-events/recurring_ical_events__test__calendars__issue_163_deleted_modification.ics"
    )
    assert not errors
    assert docs["111"].created_at == datetime(2024, 7, 29, tzinfo=UTC)


def test_a_structural_line_that_swallowed_the_next_lines_is_reported(tmp_path):
    """The fuzzer's byte flips (seed 2) turned two line breaks of ical.js's component.ics into
    other characters: ``END:VALARM`` ran into ``END:VEVENT`` and ``BEGIN:VEVENT``. The line was
    mended to END:VALARM and the rest dropped, so the file held one event where it had two, and
    the count of its components agreed: no error. A mend that drops text is now reported."""
    source = FIXTURES / "realworld" / "calendar" / "ical.js" / "component.ics"
    text = source.read_text()
    assert len(read(source)[0]) == 2
    (tmp_path / "component.ics").write_text(
        text.replace("END:VALARM\nEND:VEVENT\nBEGIN:VEVENT", "END:VALARMEND:VEVENTBEGIN:VEVENT")
    )
    docs, errors = read(tmp_path / "component.ics")
    assert len(docs) == 1
    assert [e.error for e in errors] == [
        "damaged structure, text left out: line 6: 'END:VEVENTBEGIN:VEVENT' after END:VALARM left out"
    ]


def test_a_truncated_bare_event_is_reported(tmp_path):
    """A VEVENT saved without VCALENDAR (icalendar's fuzzing corpus), cut inside the event (the
    fuzzer's truncate): it was wrapped, closed by the wrapper's END:VCALENDAR and dropped whole,
    without an error. Now the truncation is reported."""
    bare = PUBLIC / "icalendar/src__icalendar__fuzzing__corpus__event_with_unicode_organizer.ics"
    data = bare.read_bytes()
    assert b"BEGIN:VCALENDAR" not in data and len(read(bare)[0]) == 1
    (tmp_path / "cut.ics").write_bytes(data[: data.index(b"END:VEVENT") - 3])
    docs, errors = read(tmp_path / "cut.ics")
    assert not docs
    assert [e.error for e in errors] == ["file ends before END:VCALENDAR (truncated?); complete events and tasks kept"]


def test_components_the_parse_does_not_return_are_counted_and_reported(monkeypatch):
    """The file-level accounting: every VEVENT/VTODO/VJOURNAL of the (mended) text is a record or a
    ReadError. A component the parse loses for a reason no repair foresaw is reported for the file."""
    real = calendar.parse

    def losing_one(text):
        calendars = real(text)
        del calendars[0].subcomponents[1]
        return calendars

    monkeypatch.setattr(calendar, "parse", losing_one)
    docs, errors = read(PUBLIC / HOLIDAYS)
    assert len(docs) == 2
    assert [e.error for e in errors] == ["1 of 3 components could not be read (icalendar did not return them)"]
