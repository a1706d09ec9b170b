"""``--person NAME``: what one person sent, received, attended or was in a chat of, across sources.

A person is resolved through the home's contacts (the ``contacts`` connector's documents): the
contacts whose name or nickname holds every word of NAME give the person's names (whole: "Anna"
resolved to Anna Weber is not every Anna), e-mail addresses, phone numbers and chat handles.
Two or more such contacts of different names are shown, not guessed (a one-line error naming
them); with no contact, NAME alone is matched against the people fields of records.

A record is the person's when one of its people fields — mail ``from``/``to``/``cc`` (and
``from_name``), chat ``sender``/``participants``/``chat``/``chat_id``, calendar ``organizer``/``attendees`` —
holds one of the person's addresses, one of their numbers (compared by their last nine digits,
so ``+49 170 1234567`` is ``01701234567``), a handle, or every word of one of their names.
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from ragbag.core.errors import RagbagError
from ragbag.core.people_fields import FIELDS, display_name, record_of, strings

CONNECTOR = "contacts"
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_WORD = re.compile(r"\w+")
_PHONE_DIGITS = 9  # the digits two writings of one number share (country code and trunk zero differ)
_SHOWN = 5


@dataclass(frozen=True)
class Person:
    asked: str
    names: tuple[frozenset[str], ...]  # each name as its words, casefolded
    emails: frozenset[str]
    phones: frozenset[str]  # last digits
    handles: frozenset[str]


def resolve(asked: str, contacts: Iterable[dict[str, Any]]) -> Person:
    """The person NAME means, from contact records (a search's records of the contacts
    connector); a one-line error when several contacts of different names fit it."""
    words = _words(asked)
    if not words:
        raise RagbagError("--person needs a name (a word of it at least)")
    fitting: dict[str, dict[str, Any]] = {}
    for rec in contacts:
        called = [str(rec.get("name") or rec.get("title") or ""), *strings(rec.get("nicknames"))]
        if any(words <= _words(n) for n in called if n):
            fitting.setdefault(" ".join(called[0].split()), rec)
    exact = [n for n in fitting if _words(n) == words]
    chosen = [fitting[exact[0]]] if len(exact) == 1 else list(fitting.values())
    if len({" ".join(str(r.get("name") or r.get("title")).split()) for r in chosen}) > 1:
        shown = ", ".join(sorted(fitting)[:_SHOWN]) + (", …" if len(fitting) > _SHOWN else "")
        raise RagbagError(f"--person {asked!r} fits {len(fitting)} contacts: {shown}; give more of the name")
    names: list[frozenset[str]] = [] if chosen else [words]  # a contact's names, else NAME itself
    emails: set[str] = set()
    phones: set[str] = set()
    handles: set[str] = set()
    for rec in chosen:
        names += [_words(n) for n in (rec.get("name"), *strings(rec.get("nicknames"))) if n and _words(str(n))]
        emails |= {e.lower() for e in strings(rec.get("emails"))}
        phones |= {p for p in (_phone(x) for x in strings(rec.get("phones"))) if p}
        for handle in strings(rec.get("handles")):  # "service:handle": a chat writes the handle alone
            handles |= {handle.casefold(), handle.split(":", 1)[-1].casefold()}
    return Person(asked, tuple(dict.fromkeys(names)), frozenset(emails), frozenset(phones), frozenset(handles))


def is_theirs(person: Person, record: dict[str, Any]) -> bool:
    """Whether one of the record's people fields names the person (see the module doc), record by
    record: the definition ``Holders.rows`` is held to (tests/unit/test_people.py); search looks
    a person's rows up in ``Holders`` instead of asking this of every record."""
    for key in FIELDS:
        for value in strings(record.get(key)):
            folded = value.casefold()
            if any(e in person.emails for e in (m.lower() for m in _EMAIL.findall(value))):
                return True
            if person.phones and (p := _phone(value)) and p in person.phones:
                return True
            if folded.strip() in person.handles:
                return True
            have = _words(value)
            if any(name <= have for name in person.names):
                return True
    return False


@dataclass(frozen=True)
class Book:
    """The contacts by what records carry of them, for showing a name instead of a raw handle."""

    emails: dict[str, str]  # address -> the contact's name
    phones: dict[str, str]  # a number's last digits -> name
    handles: dict[str, str]  # a chat handle, casefolded (with and without its "service:") -> name


def book(contacts: Iterable[dict[str, Any]]) -> Book:
    emails: dict[str, str] = {}
    phones: dict[str, str] = {}
    handles: dict[str, str] = {}
    for rec in contacts:
        name = " ".join(str(rec.get("name") or rec.get("title") or "").split())
        if not name:
            continue
        emails.update(dict.fromkeys((e.lower() for e in strings(rec.get("emails"))), name))
        phones.update(dict.fromkeys((p for p in map(_phone, strings(rec.get("phones"))) if p), name))
        for handle in strings(rec.get("handles")):
            handles.update(dict.fromkeys((handle.casefold(), handle.split(":", 1)[-1].casefold()), name))
    return Book(emails, phones, handles)


def names_in(contacts: Book, record: dict[str, Any]) -> dict[str, str]:
    """The raw values of a record's people fields — an address, a number or a handle that holds no
    name of its own — that are a contact's, each with the contact's name."""
    out: dict[str, str] = {}
    for key in FIELDS:
        for value in strings(record.get(key)):
            found = contacts.handles.get(value.strip().casefold())
            if found is None and not display_name(value):  # "Anna Weber <…>" names her already
                addresses = (e.lower() for e in _EMAIL.findall(value))
                found = next((contacts.emails[e] for e in addresses if e in contacts.emails), None)
                if found is None and (p := _phone(value)):
                    found = contacts.phones.get(p)
            if found and found != value:
                out[value] = found
    return out


def shown(text: str, names: dict[str, str]) -> str:
    """``text`` with each raw handle of ``names`` standing alone written as the person's name (an
    address inside "Name <…>" stays: the name is there already)."""
    if not names:
        return text
    alone = "|".join(re.escape(raw) for raw in sorted(names, key=len, reverse=True))
    return re.sub(rf"(?<![<\w.@+-])(?:{alone})(?![\w>@-]|\.\w)", lambda m: names[m.group()], text)


@dataclass(frozen=True)
class Holders:
    """A source's people fields indexed once, so a person's rows are looked up, not scanned (a
    question naming someone, or ``--person``, would otherwise test every record of the home).
    Records that are alike in their people fields (a document's chunks) are one entry, read once;
    each field value of an entry is one value, whose keys are its addresses, its number, itself as
    a handle and its words; ``rows(person)`` is exactly ``[is_theirs(person, r) for r in records]``."""

    row_entries: np.ndarray  # row -> its entry
    keys: dict[tuple[str, str], int]  # ("e"|"p"|"h"|"w", key) -> its id
    starts: np.ndarray  # key id -> its values' span in ``values``
    values: np.ndarray  # value ids, grouped by key, ascending within a key
    value_entries: np.ndarray  # value id -> its entry

    def rows(self, person: Person) -> np.ndarray:
        held = [("e", e) for e in person.emails] + [("p", p) for p in person.phones]
        found = [self._values(key) for key in held + [("h", h) for h in person.handles]]
        for name in person.names:  # a value holding every word of one of the person's names
            common: np.ndarray | None = None if name else np.arange(len(self.value_entries))
            for w in sorted(name, key=lambda w: len(self._values(("w", w)))):
                word = self._values(("w", w))
                common = word if common is None else np.intersect1d(common, word, assume_unique=True)
                if not len(common):
                    break
            if common is not None:
                found.append(common)
        entries = np.unique(self.value_entries[np.concatenate(found)]) if found else self.value_entries[:0]
        return np.isin(self.row_entries, entries)

    def _values(self, key: tuple[str, str]) -> np.ndarray:
        k = self.keys.get(key)
        return self.values[self.starts[k] : self.starts[k + 1]] if k is not None else self.values[:0]


def holders(records: Sequence[dict[str, Any]], row_entries: np.ndarray | None = None) -> Holders:
    """Index the people fields of ``records``: each an entry, or with ``row_entries`` the distinct
    entries the rows map to (typed arrays while building: a mailbox's values are many)."""
    keys: dict[tuple[str, str], int] = {}
    of_value: dict[str, list[int]] = {}  # a value's key ids: one sender's address is in many records
    pair_keys, pair_values, value_entries = array("i"), array("i"), array("i")
    for entry, rec in enumerate(records):
        for field in FIELDS:
            for value in strings(rec.get(field)):
                vid = len(value_entries)
                value_entries.append(entry)
                ids = of_value.get(value)
                if ids is None:
                    found = {("e", e.lower()) for e in _EMAIL.findall(value)} | {("h", value.casefold().strip())}
                    if p := _phone(value):
                        found.add(("p", p))
                    found |= {("w", w) for w in _words(value)}
                    ids = of_value[value] = [keys.setdefault(key, len(keys)) for key in found]
                pair_keys.extend(ids)
                pair_values.extend([vid] * len(ids))
    k = np.frombuffer(pair_keys, dtype=np.int32) if pair_keys else np.zeros(0, np.int32)
    v = np.frombuffer(pair_values, dtype=np.int32) if pair_values else np.zeros(0, np.int32)
    order = np.argsort(k, kind="stable")  # by key; value ids stay ascending within one
    starts = np.searchsorted(k[order], np.arange(len(keys) + 1))
    entries = np.frombuffer(value_entries, dtype=np.int32) if value_entries else np.zeros(0, np.int32)
    rows = np.arange(len(records), dtype=np.int32) if row_entries is None else row_entries
    return Holders(rows, keys, starts, v[order].copy(), entries.copy())


def holders_of(metadata: pa.ChunkedArray, memo: dict[str, Any]) -> Holders:
    """The holders of a snapshot's rows, from their ``metadata`` column (where every people field
    is): each distinct metadata text read once, kept in the snapshot's ``memo``, built by the
    first search that needs it."""
    if "people.holders" not in memo:
        encoded = metadata.combine_chunks().dictionary_encode()
        texts = encoded.dictionary.to_pylist()
        records = [record_of(t) for t in texts] + [{}]  # the last: rows without metadata
        rows = _indices(encoded.indices, len(texts))
        memo["people.holders"] = holders(records, rows)
    held: Holders = memo["people.holders"]
    return held


def _indices(indices: pa.Array, null: int) -> np.ndarray:
    """A dictionary's indices as int32, ``null`` where null; read from the buffers (pyarrow's own
    conversion of an array with nulls imports pandas, which a cold search never does)."""
    validity, data = indices.buffers()
    start, n = indices.offset, len(indices)
    width = indices.type.bit_width // 8
    values = np.frombuffer(data, dtype=f"<i{width}", count=start + n)[start:].astype(np.int32)
    if indices.null_count:
        valid = np.unpackbits(np.frombuffer(validity, np.uint8), bitorder="little")[start : start + n]
        values = np.where(valid.astype(bool), values, null).astype(np.int32)
    return values


def _words(text: Any) -> frozenset[str]:
    return frozenset(w.casefold() for w in _WORD.findall(str(text or "")))


def _phone(value: str) -> str | None:
    digits = re.sub(r"\D", "", value)
    if len(digits) < 7 or _EMAIL.search(value):
        return None
    return digits[-_PHONE_DIGITS:]
