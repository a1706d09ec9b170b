"""Several copies of one event in one file: revisions that supersede each other, or damage.

RFC 5545 allows one component per UID (and RECURRENCE-ID) in a calendar, but real files hold
several: iTIP message streams, Google's duplicated overrides, a master re-sent with a higher
``SEQUENCE``. Those are revisions; the connector keeps the newest copy (see ``_exports``).
A copy that cannot be a revision of the other is damage that would otherwise vanish in that
deduplication: an override whose ``RECURRENCE-ID`` line is lost reads as a second master, a
single event beside its own series (found by the fuzzer). :func:`conflict` names it, so the file
reports the copy it loses.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Copy:
    text: str
    sequence: int | None
    recurring: bool


def sequence_of(component) -> int | None:
    """``SEQUENCE`` as an integer; None when absent or not a number."""
    try:
        return int(str(component.get("SEQUENCE")).strip()) if "SEQUENCE" in component else None
    except ValueError:
        return None


def conflict(prior: Copy, new: Copy) -> str | None:
    """Why two copies of one record cannot both be revisions of one event, or None if they can:
    identical text, or one a later ``SEQUENCE`` of the other with the same shape (both a series,
    or both single)."""
    if prior.text == new.text:
        return None
    if prior.recurring != new.recurring:
        return "one copy is a series, the other a single event (a RECURRENCE-ID missing?)"
    if prior.sequence is not None and new.sequence is not None and prior.sequence != new.sequence:
        return None
    if prior.sequence is None or new.sequence is None:
        return None if prior.sequence != new.sequence else "copies differ and neither has a SEQUENCE"
    return f"copies differ with the same SEQUENCE {new.sequence}"
