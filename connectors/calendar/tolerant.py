"""The error-tolerant parse of one iCalendar text: icalendar's, with every component tolerant of
the properties it cannot parse, and, when the whole parse still fails, each top-level component
parsed alone so that only the ones at fault are lost (and reported)."""

from __future__ import annotations

import warnings
from typing import Any

import icalendar
from icalendar.timezone import tzp

from ragbag.connectors._isolate import reason
from ragbag.core.records import ReadError


class _Tolerant(icalendar.ComponentFactory):
    """icalendar's components, each error-tolerant as its VEVENT already is: a property it
    cannot parse (a VALARM's ``TRIGGER:PT-2H``, a VTIMEZONE's ``TZOFFSETFROM:+5744``, a VTODO's
    bad ``DUE``) is kept as broken and listed in the component's ``errors`` instead of failing the
    whole file; a record fails only if it uses the broken value (see ``times.broken``)."""

    def add_component_class(self, cls: Any) -> None:
        self[cls.name] = type(cls.__name__, (cls,), {"ignore_exceptions": True})


class _Calendar(icalendar.Calendar):
    _components_factory = _Tolerant()


def parse(text: str) -> list:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # icalendar caches every VTIMEZONE it has parsed, process-wide, and resolves a TZID
        # a later file leaves undefined from that cache: the same file would then read
        # differently beside another. Each file starts from the IANA zones alone.
        tzp.use_zoneinfo()
        return _Calendar.from_ical(text, multiple=True)


def salvaged(text: str, uri: str) -> tuple[list, list[ReadError]]:
    """The calendars of ``text`` without the top-level components that fail alone. icalendar
    parses a file whole, and some failures are not a property's (a VTIMEZONE with two TZID lines
    raises while icalendar caches the zone): then each component of each VCALENDAR is parsed on
    its own, the ones that fail are reported (a VTIMEZONE's TZID is then resolved from the IANA
    and Windows tables, like a TZID without one), and the rest parsed together."""
    kept: list[str] = []
    errors: list[ReadError] = []
    block: list[str] = []
    depth = base = 0
    for line in text.splitlines(keepends=True):
        head = line.rstrip("\r\n").upper()
        if not block:
            if head == "BEGIN:VCALENDAR" and depth == 0 or head == "END:VCALENDAR" and depth == 1:
                depth = 1 - depth
            elif head.startswith("BEGIN:"):  # a component: of a VCALENDAR, or one standing alone
                block, base = [line], depth
                depth += 1
                continue
            kept.append(line)  # VCALENDAR's own lines and properties
            continue
        block.append(line)
        depth += head.startswith("BEGIN:") - head.startswith("END:")
        if depth == base:  # the component is complete
            part = "".join(block)
            try:
                parse(f"BEGIN:VCALENDAR\r\n{part}END:VCALENDAR\r\n")
            except Exception as exc:  # noqa: BLE001 — this component is reported, the rest read
                name = block[0].strip()[len("BEGIN:") :]
                errors.append(ReadError(f"{uri}#{name.lower()}{len(errors) + 1}", f"{name} left out: {reason(exc)}"))
            else:
                kept.append(part)
            block = []
    return parse("".join(kept + block)), errors
