"""The lines of a WhatsApp export: which ones start a message, in what order a file writes day and
month, and what instant a line's local wall-clock time is.

A message starts with a timestamp in the phone's locale and a separator: ``[31/12/23, 21:41:05]
`` (iOS), ``31/12/2023, 21:41 - `` (Android), ``12/31/23, 9:41 PM - `` (US),
``31.12.23, 21:41 - `` (German), ``2023-12-31 21:41 - ``, ``31/12/2023 à 21:41 - `` (a word
before the time), ``2023. 12. 31. 오후 9:41 - `` (a day-half before the time), Spanish
``p. m.``; the old iOS form ``31.12.15 21:41:05: ``. Every other line continues the message
before it. A file keeps one form throughout (its *shape*: bracket, date separator, seconds, the
separator after the time, where the year is), so a line of another shape is a pasted or quoted
timestamp inside a message, not a message of its own.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, tzinfo

# Direction marks and the BOM: iOS writes U+200E before what the app wrote, Android wraps phone
# numbers in U+202A…U+202C; none of them is part of a name or a text.
MARKS = "\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\ufeff"
_SPACE = "\\s\u00a0\u202f"  # iOS writes a narrow no-break space before AM/PM, Spanish a no-break one
_HEADER = re.compile(
    rf"^[{MARKS}]*(?P<open>\[)?"
    r"(?P<date>(?P<a>\d{1,4})(?P<sep>[-/.])\s?(?P<b>\d{1,2})(?P=sep)\s?(?P<c>\d{1,4}))\.?"
    rf",?[{_SPACE}]+"
    rf"(?:(?P<pre>[^\d{_SPACE}\[\]]{{1,5}})[{_SPACE}]*)?"
    r"(?P<time>(?P<h>\d{1,2})[:.](?P<m>\d{2})(?:[:.](?P<s>\d{2}))?)"
    rf"(?:[{_SPACE}]*(?P<post>[aApP]\.?[{_SPACE}]?[mM]\.?|ص|م))?"
    r"(?(open)\][ \t]?|(?P<close>[ \t][-–][ \t]|:[ \t]))"
)
# Day halves, normalised (dots and spaces removed, lower case); a word not here (French "à",
# Finnish "klo") is no day half and the time is read as a 24-hour one.
_AM = {"am", "上午", "午前", "오전", "ص"}
_PM = {"pm", "下午", "午後", "오후", "م"}


@dataclass
class Line:
    """A message's first line: where it is, its timestamp's parts and what follows them."""

    number: int  # 1-based line number in the file
    parts: tuple[str, str, str]  # the date's three numbers as written
    hour: int
    minute: int
    second: int
    half: str  # "am", "pm" or ""
    rest: str  # the text after the timestamp and its separator
    shape: tuple


def header(text: str, number: int) -> Line | None:
    """The message start ``text`` holds, None for a continuation line."""
    m = _HEADER.match(text)
    if m is None:
        return None
    half = ""
    for word in (m["pre"], m["post"]):
        key = re.sub(rf"[.{_SPACE}]", "", word or "").lower()
        half = "am" if key in _AM else "pm" if key in _PM else half
    a, c = m["a"], m["c"]
    year_first = len(a) == 4
    # Where the year is and how many digits it has: constant in a file (days and months are
    # written with one or two digits, so their widths are not part of the shape).
    shape = (
        bool(m["open"]),
        m["sep"],
        m["s"] is not None,
        (m["close"] or "]").strip(),
        year_first,
        0 if year_first else len(c),
    )
    return Line(
        number,
        (a, m["b"], c),
        int(m["h"]),
        int(m["m"]),
        int(m["s"] or 0),
        half,
        text[m.end() :],
        shape,
    )


def split(text: str) -> tuple[list[tuple[Line, list[str]]], list[int]]:
    """(messages, stray): each message's first line with its continuation lines, and the numbers
    of the non-empty lines before the first message. Lines whose timestamp has another shape
    than the file's own are continuations (a timestamp pasted into a message)."""
    raw = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    heads = [header(line, n) for n, line in enumerate(raw, 1)]
    shapes = Counter(h.shape for h in heads if h is not None)
    if not shapes:
        return [], [n for n, line in enumerate(raw, 1) if line.strip()]
    shape = shapes.most_common(1)[0][0]
    messages: list[tuple[Line, list[str]]] = []
    stray: list[int] = []
    for n, (line, head) in enumerate(zip(raw, heads), 1):
        if head is not None and head.shape == shape:
            messages.append((head, []))
        elif messages:
            messages[-1][1].append(line)
        elif line.strip():
            stray.append(n)
    return messages, stray


# --- day and month ----------------------------------------------------------------------------

YMD, DMY, MDY = "ymd", "dmy", "mdy"


def date_order(lines: list[Line]) -> str:
    """How the file writes dates, decided from all of them (a file is written in one locale, so
    never per line): year first when the first number has four digits (or is no day); else a
    first number above 12 makes it day-first, a second one above 12 month-first; where neither
    occurs, the order under which the messages run forward in time (fewer steps back, then the
    number that changes more often being the day); a tie goes to the form's convention: the US
    12-hour clock with slashes is month-first, everything else day-first."""
    if not lines:
        return DMY
    if any(len(ln.parts[0]) == 4 or int(ln.parts[0]) > 31 for ln in lines):
        return YMD
    firsts = sum(int(ln.parts[0]) > 12 for ln in lines)
    seconds = sum(int(ln.parts[1]) > 12 for ln in lines)
    if firsts != seconds:  # both happen only with damaged lines: the majority decides
        return DMY if firsts > seconds else MDY
    back = {order: _steps_back(lines, order) for order in (DMY, MDY)}
    if back[DMY] != back[MDY]:
        return DMY if back[DMY] < back[MDY] else MDY
    change = [sum(abs(int(x.parts[i]) - int(y.parts[i])) for x, y in zip(lines, lines[1:])) for i in (0, 1)]
    if change[0] != change[1]:
        return DMY if change[0] > change[1] else MDY
    us = lines[0].shape[1] == "/" and any(ln.half for ln in lines)
    return MDY if us else DMY


def _steps_back(lines: list[Line], order: str) -> int:
    """How often the wall-clock time goes backwards under ``order`` (an impossible date counts)."""
    steps, last = 0, None
    for ln in lines:
        try:
            now = wall_time(ln, order)
        except ValueError:
            steps += 1
            continue
        if last is not None and now < last:
            steps += 1
        last = now
    return steps


def wall_time(line: Line, order: str) -> datetime:
    """The naive local date and time a line was written with; ValueError for an impossible one."""
    a, b, c = (int(p) for p in line.parts)
    year, month, day = (a, b, c) if order == YMD else (c, b, a) if order == DMY else (c, a, b)
    if year < 100:
        year += 2000  # WhatsApp dates from 2009: a two-digit year is this century's
    hour = line.hour
    if line.half:
        if hour > 12:
            raise ValueError(f"hour {hour} with {line.half.upper()}")
        # 12 AM is midnight; locales counting the day's halves from 0 (Spanish "00:08 a. m.",
        # Japanese "午前0:08") write 0 for it
        hour = hour % 12 + (12 if line.half == "pm" else 0)
    return datetime(year, month, day, hour, line.minute, line.second)


def instant(wall: datetime, zone: tzinfo | None) -> datetime:
    """The aware instant of a wall-clock time in ``zone`` (None: this machine's zone). In the hour
    a clock change repeats, ``wall.fold`` picks the reading (0: the first pass)."""
    return wall.replace(tzinfo=zone) if zone is not None else wall.astimezone()
