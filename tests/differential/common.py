"""What every differential module shares: ragbag's own reading of one corpus file, and the shape
of a comparison's outcome.

A differential module (``tests/differential/<connector>.py``) reads each file of the public
corpus twice: through the ragbag connector, and through an independent reference reader (the
format's established library, or direct SQL), and compares what matters to a user: how many
records, their times in UTC, who sent or took part, and the text. ``run.py`` aggregates.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
PUBLIC = FIXTURES / "public"


class SourceFailure(Exception):
    """ragbag's read of a file raised: the whole source would have failed. Never acceptable."""


@dataclass
class Outcome:
    """One corpus file compared. ``checks`` maps an aspect (count, times, people, text) to
    (records that agree, records compared); ``disagreements`` says what differs, one line each
    (empty: the readings agree)."""

    file: str  # relative to tests/fixtures
    project: str
    reference: int  # records the reference reader found
    ragbag: int  # documents ragbag produced
    errors: int  # ReadErrors ragbag reported
    checks: dict[str, tuple[int, int]] = field(default_factory=dict)
    disagreements: list[str] = field(default_factory=list)


def ragbag_read(connector: str, path: Path) -> tuple[list, list]:
    """(Documents, ReadErrors) of one connector read of ``path`` as a source of its own; a raise
    is a :class:`SourceFailure`."""
    from ragbag import connectors
    from ragbag.core.records import Document, ReadError

    docs, errors = [], []
    try:
        for item in connectors.get(connector).read(Path(path), "differential", None):
            if isinstance(item, Document):
                docs.append(item)
            elif isinstance(item, ReadError):
                errors.append(item)
    except Exception as exc:  # noqa: BLE001 — any raise is what this harness exists to find
        raise SourceFailure(f"{type(exc).__name__}: {exc}") from exc
    return docs, errors


def rel(path: Path) -> str:
    return Path(path).resolve().relative_to(FIXTURES).as_posix()


def chat_checks(out: Outcome, docs: list, reference: int, timed: int, people: int, texts: int) -> Outcome:
    """A chat connector's outcome: its windows' message lines counted against the reference's
    messages, and the messages found at their time, by their sender, with their text."""
    lines = sum(d.metadata["messages"] for d in docs)
    out.checks = {
        "count": (min(lines, reference), max(lines, reference)),
        "times": (timed, reference),
        "people": (people, reference),
        "text": (texts, reference),
    }
    if lines != reference:
        out.disagreements.append(f"ragbag has {lines} message lines, the reference {reference} messages")
    return out


def compare_messages(out: Outcome, docs: list, ref: list) -> Outcome:
    """A chat connector's windows against reference messages ``(when, sender, text)``: each found
    as a line at its minute, by its sender, holding its first line of text."""
    lines = [line for d in docs for line in d.text.splitlines() if not line.startswith("  ")]
    timed = people = texts = 0
    for when, sender, text in ref:
        stamp = f"{when:%Y-%m-%d %H:%M} "
        at = [line for line in lines if line.startswith(stamp)]
        if not at:
            out.disagreements.append(f"no line at {stamp.strip()} for {text[:40]!r}")
            continue
        timed += 1
        by = [line for line in at if line.startswith(f"{stamp}{sender}: ")]
        people += bool(by)
        first = text.splitlines()[0].strip()
        if any(first in line for line in by):
            texts += 1
        else:
            out.disagreements.append(f"text at {stamp.strip()} by {sender}: {first[:40]!r} not found")
    return chat_checks(out, docs, len(ref), timed, people, texts)
