"""Repeating events: an RRULE described in words and its first occurrences listed, bounded so
that no rule is expanded without end."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, time, tzinfo
from itertools import islice

import icalendar
from dateutil.rrule import rruleset, rrulestr

from ragbag.connectors.calendar.times import in_zone, occurrence_key, show
from ragbag.connectors.calendar.values import as_list

MAX_LISTED = 5
MAX_COUNTED = 1000
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
_BYDAY = re.compile(r"^([+-]?\d{1,2})?(MO|TU|WE|TH|FR|SA|SU)$")


def describe(rule, start: date | datetime) -> str:
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


def occurrences(ev, rules, start: date | datetime, floating: tzinfo, changed: dict[str, str]) -> list[str]:
    """Text lines listing the first occurrences (bounded), EXDATE/RDATE applied."""
    if not all(_possible(r) for r in rules):
        return ["Occurrences: none (the rule matches no date)"]
    all_day = not isinstance(start, datetime)
    first = start if isinstance(start, datetime) else datetime.combine(start, time())
    try:
        rs = rruleset()
        for rule in rules:
            rs.rrule(rrulestr(_rule_text(rule, first), dtstart=first))
        for prop, add in (("EXDATE", rs.exdate), ("RDATE", rs.rdate)):
            for value in as_list(ev.get(prop)):
                for item in getattr(value, "dts", []):
                    dt = item.dt
                    if isinstance(dt, tuple):  # RDATE;VALUE=PERIOD
                        dt = dt[0]
                    if not isinstance(dt, date):
                        continue
                    dt = in_zone(dt, item.params.get("TZID") or value.params.get("TZID"), floating)[0]
                    dt = datetime.combine(dt, time()) if not isinstance(dt, datetime) else dt
                    add(dt.replace(tzinfo=None) if all_day else dt.astimezone(first.tzinfo))
        bounded = all(r.get("COUNT") or r.get("UNTIL") for r in rules)
        found = list(islice(rs, MAX_COUNTED + 1 if bounded else MAX_LISTED))
    except Exception:  # noqa: BLE001 — a rule dateutil cannot expand is still described above
        return []
    shown = []
    for dt in found[:MAX_LISTED]:
        when = dt.date() if all_day else dt
        note = changed.get(occurrence_key(when))
        if note is not None:
            note = "cancelled" if note == "cancelled" else "changed"
        shown.append(show(when) + (f" ({note})" if note else ""))
    lines = [f"{'Occurrences' if bounded else 'First occurrences'}: " + ", ".join(shown)] if shown else []
    if bounded and len(found) > MAX_LISTED:
        last = found[-1].date() if all_day else found[-1]
        total = f"{len(found)}" if len(found) <= MAX_COUNTED else f"more than {MAX_COUNTED}"
        lines.append(f"{total} occurrences in all" + (f", the last {show(last)}" if len(found) <= MAX_COUNTED else ""))
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
