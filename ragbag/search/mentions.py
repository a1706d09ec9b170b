"""The people a query names, and their records lifted in a hybrid ranking.

"What did Camille say about the trip" asks about what Camille sent, received or attended, but
those records seldom say "Camille": an iMessage carries her number, a mail her address, a chat
her handle, and a question in English about her French mail shares no other word with it. So a
query that names a person of the home lifts that person's records (``search.people.Holders``,
resolved as ``--person`` resolves a name) by ``LIFT`` in the fused ranking: above records that
score alike, never filtering any out, so a question about Camille answered elsewhere still finds
its answer.

The names a query can name are the home's own: contacts' names and nicknames, and the display
names in records' people fields (a mail's sender name, a chat's sender and title, an attendee).
A query names one when it holds a whole name of two words or more (in any case; a Chinese name
also in pinyin: "Chen Jing" names 陈静), or a name's word that no other person's name holds
(``Wei`` for Wei Zhang, also named "Wei" in a chat). A single word counts only when written
with a capital (or in a script without case, where a name is found inside the text) and not as
the query's first word unless possessive (``Tom's …``), so "Will the …" names no Will; a
contact's nickname may be written in lower case ("mum").
A name in another script is named as a question in Latin letters writes it (陈静 "Chen Jing",
坂本彩 "Aya Sakamoto", 이민지 "Min-ji Lee", Łukasz "Lukasz": ``ragbag.text.name_spellings``; the
Japanese readings, which need a dictionary, only for a question holding a name no other spelling
explains). A kinship word ("dad", "mum", "oma", "엄마": ``ragbag.text.kinship``) names the one
person the home calls so: a contact's nickname or a chat called by that word alone, or else the
person whose letters are signed with it ("Veel liefs, Papa") or whom the owner's letters greet
with it ("Hoi pap,"), read from the records only when a question holds such a word.
The owner's own messages are "Me" in every source (``core.records.ME``): that names no one.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ragbag.core.errors import RagbagError
from ragbag.core.people_fields import display_name, names_in, record_of, strings
from ragbag.core.records import ME
from ragbag.search import people
from ragbag.search.fusion import Candidate
from ragbag.search.snapshot import Snapshot
from ragbag.text import kinship, name_spellings

# Chosen on the personal set's tune half among 0.05, 0.1 and 0.2 (benchmarks/README.md,
# "People in the ranking"); judged on its test half and on persona B.
LIFT = 0.2
_LAST: list[tuple[Any, Names] | None] = [None]  # the last query's directory, and what it was made of
_STAMPS = itertools.count()
_TOKEN = re.compile(r"\w+")
_POSSESSIVE = re.compile(r"\s*['’]s\b")


@dataclass(frozen=True)
class Names:
    """The home's people as a query may name them."""

    whole: dict[frozenset[str], str]  # a name's words, casefolded -> the name as written
    by_word: dict[str, frozenset[str]]  # a name word -> the names holding it
    keys: dict[str, frozenset[frozenset[str]]]  # a name word -> the keys of ``whole`` holding it
    nicknames: dict[str, str]  # a contact's nickname (may be written in lower case) -> their name
    caseless: tuple[str, ...]  # names in a script without case, found as substrings
    unread: tuple[str, ...] = ()  # names whose readings need a dictionary, read when a query needs them
    kin: dict[str, tuple[str, ...]] = field(default_factory=dict)  # a relation -> whom the home calls so
    memo: dict[str, Names] = field(default_factory=dict, compare=False, repr=False)


def names_of(contacts: Iterable[dict[str, Any]], record_sets: Iterable[Sequence[dict[str, Any]]]) -> Names:
    """The directory of names from contact records and the people fields of every record."""
    names = {n for records in record_sets for rec in records for n in names_in(rec)}
    nicknames: dict[str, str] = {}
    for rec in contacts:
        called = people.display_name(str(rec.get("name") or rec.get("title") or ""))
        if called:
            names.add(called)
        for nick in people.strings(rec.get("nicknames")):
            if shown := people.display_name(nick):
                nicknames[shown] = called or shown
    return _directory(names | set(nicknames), nicknames)


def named(query: str, names: Names, every_word: bool = False) -> list[str]:
    """The names of the home's people ``query`` names (see the module doc), each one person;
    ``every_word``: each of its words is taken as written as a name (``--person aya``)."""
    tokens = list(_TOKEN.finditer(query))
    folded = {t.group().casefold() for t in tokens}
    as_names = folded if every_word else {w.casefold() for w in written_as_names(query)}
    if names.unread and not as_names <= names.by_word.keys():  # a name no cheap spelling explains
        names = _read(names)
    found = {names.kin[r][0] for r in kinship.relations_in(query) if len(names.kin.get(r, ())) == 1}
    for words in {k for w in folded for k in names.keys.get(w, ())}:  # names holding a query word
        name = names.whole[words]
        as_name = len(words) > 1 or name in names.nicknames or name.casefold() in as_names
        if words <= folded and as_name:
            found.add(names.nicknames.get(name, name))
    for n in names.caseless:
        if n in query:
            found.add(n)
    for t in tokens:
        holders = _fullest(names.by_word.get(t.group().casefold(), frozenset()))
        if len(holders) == 1 and t.group().casefold() in as_names:
            found |= holders
    return sorted(_fullest(found))


def person(asked: str, contacts: list[dict[str, Any]], snaps: Sequence[Snapshot]) -> people.Person:
    """``--person NAME``: resolved through the contacts (``search.people``); a NAME that no
    contact's addresses, numbers or handles back is also read as a question would name someone,
    every word of it a name — another script's spelling ("Aya" for 坂本彩) or a kinship word
    ("dad") — when that names exactly one person; a kinship word the home calls several people
    by is a one-line error naming them."""
    found = people.resolve(asked, contacts)
    if found.emails or found.phones or found.handles:
        return found
    names = _home_names(asked, contacts, snaps)
    for relation in kinship.relations_in(asked):
        if len(called := names.kin.get(relation, ())) > 1:  # shown, not guessed
            raise RagbagError(f"--person {asked!r}: the home calls {len(called)} people so: {', '.join(called)}")
    spelled = named(asked, names, every_word=True)
    return people.resolve(spelled[0], contacts) if len(spelled) == 1 and spelled[0] != asked else found


def _home_names(query: str, contacts: list[dict[str, Any]], snaps: Sequence[Snapshot]) -> Names:
    """The directory of the home's names for ``query``. A source's names are gathered once per
    snapshot (in its ``memo``): from what its publish counted (``ragbag.pipeline.people_names``),
    else from every one of its records; a kinship word in the query adds what the letters say."""
    memo = [s.memo for s in snaps]
    for s, m in zip(snaps, memo):
        if __name__ not in m:  # stamped, so a reloaded snapshot is never taken for the one before
            known = s.people_names()
            if known is not None and (spelled := s.people_spellings()) is not None:
                for name in known:  # spelled at publish: no spelling library in a search
                    _SPELLED.setdefault(name, [frozenset(w) for w in spelled.get(name, [])])
            names = _directory(set(known), {}) if known is not None else names_of((), [s.records])
            m[__name__] = (next(_STAMPS), names)
    key = (tuple(m[__name__][0] for m in memo), tuple(sorted(str(c.get("name")) for c in contacts)))
    last = _LAST[0]  # one read: another thread may replace it
    if last is None or last[0] != key:  # the same snapshots and contacts as the last query: no rebuild
        last = (key, _merged(names_of(contacts, ()), [m[__name__][1] for m in memo]))
        _LAST[0] = last
    if kinship.relations_in(query):  # "what did dad ask…": whom the home's letters call so
        return _with_letters(last[1], snaps, contacts)
    return last[1]


def lift(ranked: list[Candidate], theirs: list[Candidate]) -> list[Candidate]:
    """The ranking with the named people's candidates (ranked alike, under their mask) lifted."""
    best = {(i, j): s for i, j, s in ranked}
    for i, j, s in theirs:
        best[(i, j)] = max(best.get((i, j), 0.0), s) + LIFT
    return sorted(((i, j, s) for (i, j), s in best.items()), key=lambda t: -t[2])


def masks(
    query: str, contacts: list[dict[str, Any]], snaps: Sequence[Snapshot], base: list[np.ndarray | None]
) -> list[np.ndarray | None] | None:
    """Per source, the rows of the people ``query`` names (within ``base``); None when it names
    no one."""
    names = _home_names(query, contacts, snaps)
    persons = []
    for n in named(query, names):
        try:
            persons.append(people.resolve(n, contacts))
        except RagbagError:  # several contacts fit the name: shown by --person, guessed by no one
            continue
    if not persons:
        return None
    out: list[np.ndarray | None] = []
    for s, b in zip(snaps, base):
        held = people.holders_of(s.rows.column("metadata"), s.memo)
        theirs = np.logical_or.reduce([held.rows(p) for p in persons])
        out.append(theirs if b is None else theirs & b)
    return out


def _merged(first: Names, rest: list[Names]) -> Names:
    return _directory({n for d in (first, *rest) for n in d.whole.values()}, first.nicknames)


def _read(names: Names) -> Names:
    """The directory with the dictionary readings of its names (Japanese), made once."""
    if "read" not in names.memo:  # only the unread names' readings are new: the rest is kept
        whole = dict(names.whole)
        for n in names.unread:
            whole.update(dict.fromkeys(name_spellings.dictionary_spellings(n), n))
        names.memo["read"] = _indexed(whole, set(names.whole.values()), names.nicknames, (), names.kin)
    return names.memo["read"]


def _with_letters(names: Names, snaps: Sequence[Snapshot], contacts: list[dict[str, Any]]) -> Names:
    """The directory with the relations the home's letters call people by: a letter signed with a
    kinship word ("Papa") by its one sender, or opening with one ("Hoi pap,") to its one recipient.
    A relation goes to a person when they hold at least twice the letters of anyone else so
    called; otherwise (the owner's children call her "Mama" too) to no one."""
    key = "letters"  # a directory is made for one set of snapshots and contacts (``masks``)
    if key not in names.memo:
        votes: Counter[tuple[str, str]] = Counter()
        for s in snaps:
            if __name__ + ":letters" not in s.memo:
                s.memo[__name__ + ":letters"] = _letters(s, contacts)
            votes.update(s.memo[__name__ + ":letters"])
        kin = dict(names.kin)
        for relation in {r for r, _ in votes}:
            ranked = sorted(((n, p) for (r, p), n in votes.items() if r == relation), reverse=True)
            if relation in kin:
                continue  # a contact or chat called so says more than letters do
            clear = len(ranked) == 1 or ranked[0][0] >= 2 * ranked[1][0]
            kin[relation] = (ranked[0][1],) if clear else tuple(sorted(p for _, p in ranked))
        names.memo[key] = replace(names, kin=kin, memo={})
    return names.memo[key]


def _letters(s: Snapshot, contacts: list[dict[str, Any]]) -> Counter[tuple[str, str]]:
    """(relation, person) -> the letters of one snapshot that call the person so (see
    ``_with_letters``); an address alone is named by a contact or by the source's own letters."""
    if not {"text", "metadata", "ordinal"} <= set(s.rows.column_names):
        return Counter()
    named_as = {e.lower(): str(c.get("name") or "") for c in contacts for e in strings(c.get("emails"))}
    calls: list[tuple[str, str]] = []  # (relation, address or name)
    rows = s.rows.filter(kinship.letters_calling(s.rows.column("text"), s.rows.column("metadata")))
    texts = rows.column("text").to_pylist()
    metas = rows.column("metadata").to_pylist()
    ordinals = rows.column("ordinal").to_pylist()
    for text, meta, ordinal in zip(texts, metas, ordinals):
        lines = (text or "").splitlines()
        opening = kinship.greeted(lines[:8]) if ordinal == 0 else None
        closing = kinship.signed(lines[-4:])
        if not (opening or closing):
            continue
        rec = record_of(meta)
        sender = str(rec.get("from") or "")
        if rec.get("from_name") and "@" in sender:
            named_as.setdefault(sender.lower(), str(rec["from_name"]))
        recipients = [*strings(rec.get("to")), *strings(rec.get("cc"))]
        if opening and len(recipients) == 1:
            calls.append((opening, recipients[0]))
        if closing and sender:
            calls.append((closing, str(rec.get("from_name") or sender)))
    votes: Counter[tuple[str, str]] = Counter()
    for relation, who in calls:
        address = who.strip().lower()
        name = named_as.get(address) or named_as.get(address.rsplit("<", 1)[-1].strip(">")) or display_name(who)
        if name and name != ME:
            votes[(relation, name)] += 1
    return votes


def _fullest(names: Iterable[str]) -> set[str]:
    """The names that are no part of another ("Wei" and "Wei Zhang" name one person: Wei Zhang)."""
    names = set(names)
    return {n for n in names if not any(n != m and _words(n) < _words(m) for m in names)}


def _directory(names: set[str], nicknames: dict[str, str]) -> Names:
    names.discard(ME)
    whole = {_words(n): n for n in sorted(names)}
    for n in sorted(names):
        if n not in _SPELLED:
            _SPELLED[n] = name_spellings.spellings(n)
        whole.update(dict.fromkeys(_SPELLED[n], n))
    unread = tuple(n for n in sorted(names) if name_spellings.needs_dictionary(n))
    return _indexed(whole, names, nicknames, unread, _kin_named(names, nicknames))


# A name's spellings in Latin letters (``name_spellings.spellings``, a function of the name alone):
# as the publications wrote them, else made once a process.
_SPELLED: dict[str, list[frozenset[str]]] = {}


def _indexed(
    whole: dict[frozenset[str], str],
    names: set[str],
    nicknames: dict[str, str],
    unread: tuple[str, ...],
    kin: dict[str, tuple[str, ...]],
) -> Names:
    """The directory of ``whole`` (every spelling of a name -> the name): its words looked up."""
    by_word: dict[str, set[str]] = {}
    keys: dict[str, set[frozenset[str]]] = {}
    for words, n in whole.items():
        for w in words:
            by_word.setdefault(w, set()).add(n)
            keys.setdefault(w, set()).add(words)
    caseless = tuple(n for n in sorted(names) if len(n) >= 2 and n.casefold() == n.upper())
    frozen = {w: frozenset(v) for w, v in keys.items()}
    by_word_frozen = {w: frozenset(v) for w, v in by_word.items()}
    return Names(whole, by_word_frozen, frozen, nicknames, caseless, unread, kin)


def _kin_named(names: set[str], nicknames: dict[str, str]) -> dict[str, tuple[str, ...]]:
    """Relation -> the people a contact, nickname or chat calls by a kinship word alone ("Mãe",
    "Papa ❤", "엄마"); a relation two people are called by names no one (``named``)."""
    called: dict[str, set[str]] = {}
    for n in names:
        relations = {kinship.relation(w) for w in _TOKEN.findall(n)}
        if len(relations) == 1 and None not in relations:
            called.setdefault(relations.pop() or "", set()).add(nicknames.get(n, n))
    return {r: tuple(sorted(p)) for r, p in called.items()}


def written_as_names(query: str, caseless: bool = True) -> list[str]:
    """The words of ``query`` written as names: with a capital (or, with ``caseless``, in a script
    without case), but its first word only when possessive ("Tom's …"), since a sentence's first
    word is capitalised whatever it is."""
    tokens = list(_TOKEN.finditer(query))
    return [
        t.group()
        for k, t in enumerate(tokens)
        if _as_name(t.group()[:1], caseless) and (k > 0 or _POSSESSIVE.match(query, t.end()))
    ]


def _as_name(first: str, caseless: bool) -> bool:
    """A word starting so is written as a name: a capital, or a letter of a script without case
    (not a digit: "2025" in "RE-2025-08817" names no one)."""
    return first.isupper() or (caseless and first.isalpha() and not first.islower())


def _words(name: str) -> frozenset[str]:
    return frozenset(w.casefold() for w in _TOKEN.findall(name))
