"""iCalendar property values as plain Python: people (ORGANIZER, ATTENDEE), lists and text."""

from __future__ import annotations

import re


def address_of(value) -> tuple[str, str]:
    """(lower-cased address without mailto:, display name) of an ORGANIZER/ATTENDEE."""
    address = re.sub(r"^mailto:", "", str(value).strip(), flags=re.I).lower()
    params = getattr(value, "params", {}) or {}
    return address, " ".join(str(params.get("CN") or "").strip('"').split())


def person(address: str, name: str) -> str:
    return f"{name} <{address}>" if name and address else name or address


def as_list(value) -> list:
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def as_str(value) -> str:
    if value is None:
        return ""
    if isinstance(value, list):
        return " ".join(str(v) for v in value)
    return str(value)
