"""A mutation fuzzer over the real-world fixture corpus (issue 31): each file is damaged the ways
files are damaged in people's homes, then read by its connector, and the result is judged.

Mutations (seeded, so a failure names its seed and replays): truncation at a random offset, a
few byte flips, an encoding swap (the file's text re-encoded as UTF-16, cp1252 or Latin-1), a
duplicated line, a deleted line, and a huge line (a megabyte of one character, spaces or
letters) inserted at a line boundary.

The property, per mutated file:
- the read never raises (a raise fails the whole source);
- every document it yields can be stored (the documents step's own Arrow rows are built);
- every record the mutation did not touch is still read;
- when records were lost, the file's read reports at least one error (a record a truncation
  cut off whole is gone from the file, not lost by its reader).

"Touched" is decided by where each original record lies in the file. In line formats (mbox,
loose mail, iCalendar) a record's region runs from where its native id (a Message-ID, a UID)
first appears to where the next record's begins (the first one's from the top), and a mutation
touches the records whose regions overlap the bytes it changed, widened by one line each side;
a truncation also touches every record after the cut, and an encoding swap touches all.
WhatsApp's text export is a line format whose windows are placed by their first message (``chat_anchor``).
Formats parsed as one whole (JSON exports, SQLite databases, PDF, HTML) count every record as
touched by any mutation: for them the property is no raise, storable output, and a reported
error for every loss.
"""

from __future__ import annotations

import json
import random
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent / "fixtures" / "realworld"
EXPECTATIONS: dict[str, dict] = json.loads((ROOT / "expectations.json").read_text(encoding="utf-8"))
LINE_FORMATS = {"mail", "calendar", "whatsapp"}
KINDS = ("truncate", "flip", "encoding", "duplicate_line", "delete_line", "huge_line")
HUGE = 1 << 20


@dataclass
class Mutation:
    kind: str
    data: bytes
    start: int  # the changed bytes of the original: [start, end)
    end: int
    everything: bool = False  # the whole file is touched (encoding swap)
    after: bool = False  # everything from ``start`` on is touched (truncation)


@dataclass
class Tally:
    """What a fuzz run did: the figures docs/reliability.md quotes."""

    mutations: int = 0
    records_before: int = 0
    untouched: int = 0
    kept: int = 0
    lost: int = 0
    errors: int = 0
    failures: list[str] = field(default_factory=list)


def _lines(data: bytes) -> list[int]:
    """Offsets where lines start."""
    starts = [0]
    at = data.find(b"\n")
    while at != -1:
        starts.append(at + 1)
        at = data.find(b"\n", at + 1)
    return [s for s in starts if s < len(data)] or [0]


def mutate(data: bytes, kind: str, rng: random.Random) -> Mutation:
    n = len(data)
    if kind == "truncate":
        cut = rng.randrange(max(n, 1))
        return Mutation(kind, data[:cut], cut, n, after=True)
    if kind == "flip":
        out = bytearray(data)
        spots = sorted(rng.randrange(max(n, 1)) for _ in range(rng.randint(1, 8)))
        for at in spots:
            if at < n:
                out[at] ^= 1 << rng.randrange(8)
        return Mutation(kind, bytes(out), spots[0], spots[-1] + 1) if n else Mutation(kind, data, 0, 0)
    if kind == "encoding":
        text = data.decode("utf-8", "replace")
        codec = rng.choice(["utf-16", "cp1252", "latin-1"])
        return Mutation(kind, text.encode(codec, "replace"), 0, n, everything=True)
    starts = _lines(data)
    i = rng.randrange(len(starts))
    a, b = starts[i], starts[i + 1] if i + 1 < len(starts) else n
    if kind == "duplicate_line":
        return Mutation(kind, data[:b] + data[a:b] + data[b:], a, b)
    if kind == "delete_line":
        return Mutation(kind, data[:a] + data[b:], a, b)
    filler = rng.choice([b" ", b"A", b"=", b"#"]) * HUGE
    return Mutation(kind, data[:a] + filler + b"\n" + data[a:], a, a + 1)


def chat_anchor(doc) -> str:
    """Where a chat text export's window starts in its file: its first message's "sender: text"
    (the window's id is the chat and a time, which the file writes its own way)."""
    first = doc.text.split("\n", 1)[0]
    return first[len("YYYY-MM-DD HH:MM ") :][:40]


def regions(data: bytes, ids: list[str], anchors: dict[str, str] | None = None) -> dict[str, tuple[int, int]]:
    """Each placeable record's byte region, by where its id first appears. A record whose id is
    not in the bytes (a hashed id) or shares its key with another record (a series and its moved
    occurrences share a UID) cannot be placed and is left out: it counts as touched. The bytes
    before the first record (a calendar's header and zones, a mailbox's first postmark) are
    shared by all: a mutation there touches every record (``HEADER``)."""
    keys = {i: (anchors or {}).get(i, i.split("/", 1)[0]).encode("utf-8", "surrogateescape") for i in ids}
    shared = {k for k in keys.values() if list(keys.values()).count(k) > 1}
    starts = {i: _start(data, k, anchored=bool(anchors)) for i, k in keys.items() if k and k not in shared}
    order = sorted(((at, i) for i, at in starts.items() if at != -1))
    out = {HEADER: (0, order[0][0] if order else len(data))}
    for k, (at, native_id) in enumerate(order):
        out[native_id] = (at, order[k + 1][0] if k + 1 < len(order) else len(data))
    return out


HEADER = "\0header"


def _start(data: bytes, key: bytes, anchored: bool) -> int:
    """Where a record's key first appears (-1: nowhere); an anchor (a chat line's "sender: text")
    is looked for after what ends a message line's head (" - " or "] ") and placed at its line's
    start."""
    if not anchored:
        return data.find(key)
    found = [at for head in (b" - ", b"] ") if (at := data.find(head + key)) != -1]
    return data.rfind(b"\n", 0, min(found)) + 1 if found else -1


def _removed(m: Mutation, region: tuple[int, int], one_line: bool) -> bool:
    """Whether the mutation took the record at ``region`` out of the file: cut off, or deleted
    whole (its region, or its one line: ``one_line``, a chat window of one message)."""
    if m.after:
        return region[0] >= m.start
    inside = m.start <= region[0] and region[1] <= m.end or one_line and m.start == region[0]
    return m.kind == "delete_line" and inside


def touched(m: Mutation, region: tuple[int, int], data: bytes) -> bool:
    """Whether the mutation's bytes (widened by a line each side) overlap ``region``."""
    if m.everything:
        return True
    lines = _lines(data)
    lo = max((s for s in lines if s <= m.start), default=0)
    lo = max((s for s in lines if s < lo), default=0)  # one line more before
    hi = next((s for s in lines if s > m.end), len(data))
    hi = next((s for s in lines if s > hi), len(data))  # and after
    if m.after:
        return region[1] > lo
    return region[0] < hi and region[1] > lo


def read(connector: str, path: Path) -> tuple[list, list]:
    """(documents, errors); a raise propagates (the caller records it as a failure)."""
    from ragbag import connectors
    from ragbag.core.records import Document, ReadError

    docs, errors = [], []
    for item in connectors.get(connector).read(path, "fuzz", None):
        if isinstance(item, Document):
            docs.append(item)
        elif isinstance(item, ReadError):
            errors.append(item)
    return docs, errors


def storable(docs: list) -> None:
    """Builds the documents step's Arrow rows for ``docs`` (raises if one cannot be stored)."""
    from datetime import UTC, datetime

    from ragbag.pipeline.ingest import _document_rows

    now = datetime.now(UTC)
    unique = {d.doc_id: d for d in docs}
    _document_rows(list(unique.values()), dict.fromkeys(unique, (1, now)))


def fuzz(
    rounds: int,
    seed: int,
    work: Path,
    files: list[str] | None = None,
    log: Callable[[str], None] | None = None,
    corpus: dict[str, str] | None = None,
    root: Path = ROOT,
) -> Tally:
    """``rounds`` mutations of each kind for every fixture (or those named), read in ``work``.
    ``corpus`` (relative path → connector, under ``root``): other files than the real-world
    corpus's, such as the public corpus's."""
    tally = Tally()
    chosen = corpus if corpus is not None else {rel: exp["connector"] for rel, exp in EXPECTATIONS.items()}
    for rel, connector in sorted(chosen.items()):
        if files is not None and rel not in files:
            continue
        exp = {"connector": connector}
        source = root / rel
        original = source.read_bytes()
        before, _ = read(exp["connector"], source)
        # The records are the source's (mails, events...): an attachment's document is part of
        # its mail's content, which a mutation of that mail may change like any other part.
        ids = [d.native_id for d in before if "parent_doc_id" not in d.metadata]
        anchors = {d.native_id: chat_anchor(d) for d in before} if connector == "whatsapp" else None
        # A chat window of one message is gone with its line.
        single = {d.native_id for d in before if anchors and d.metadata.get("messages") == 1}
        places = regions(original, ids, anchors) if connector in LINE_FORMATS else {}
        for r in range(rounds):
            for k, kind in enumerate(KINDS):
                rng = random.Random(f"{seed}:{rel}:{r}:{k}")
                m = mutate(original, kind, rng)
                target = work / f"{r}-{kind}" / source.name
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(m.data)
                tally.mutations += 1
                tally.records_before += len(ids)
                label = f"{rel} [{kind}, seed {seed}:{r}:{k}]"
                try:
                    docs, errors = read(exp["connector"], target)
                    storable(docs)
                except Exception as exc:  # noqa: BLE001 — exactly what the fuzzer looks for
                    tally.failures.append(f"{label}: {type(exc).__name__}: {exc}"[:400])
                    continue
                finally:
                    shutil.rmtree(target.parent, ignore_errors=True)
                got = {d.native_id for d in docs if "parent_doc_id" not in d.metadata}
                shared = HEADER in places and touched(m, places[HEADER], original)
                safe = [i for i in ids if i in places and not shared and not touched(m, places[i], original)]
                missing = [i for i in safe if i not in got]
                # A record wholly cut off by a truncation, or whose only line was deleted (a chat
                # window of one message), is no longer in the file: no reader can report it. One
                # whose id the mutation changed comes back under a new id.
                present = [i for i in ids if not (i in places and _removed(m, places[i], i in single))]
                lost = max(0, sum(i not in got for i in present) - len(got - set(ids)))
                tally.untouched += len(safe)
                tally.kept += len(ids) - lost
                tally.lost += lost
                tally.errors += len(errors)
                if missing:
                    tally.failures.append(f"{label}: untouched records lost: {missing[:3]}")
                elif lost and not errors:
                    tally.failures.append(f"{label}: {lost} records lost without an error")
                if log:
                    log(f"{label}: {len(docs)} documents, {len(errors)} errors, {lost} lost")
    return tally
