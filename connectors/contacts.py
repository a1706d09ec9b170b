"""Documents from address books: one contact per document, so people are records search finds
("Anna's phone number") and the addresses and numbers that name them in mail and chats can be
resolved to one person (:func:`identities`).

Format: vCard files (``.vcf``/``.vcard``; 2.1, 3.0, 4.0; one or many cards per file: the exports
of Apple Contacts, Google Contacts, Outlook, Android, Evolution), Google Contacts CSV exports
(``.csv``, both header generations) and macOS Contacts' ``AddressBook-v22.abcddb``; a folder is
searched for all three. ``read(None, …)`` reads what :func:`discover` finds.

Traps handled: see :mod:`connectors._contacts_vcard` (folding, QUOTED-PRINTABLE with CHARSET,
2.1 bare types, escapes, Apple's grouped labels, handles, birthdays without a year),
:mod:`connectors._contacts_csv` (numbered columns, `` ::: `` multi-values) and
:mod:`connectors._contacts_abcddb` (Core Data tables, columns absent in a schema). The database
is opened read-only and immutable, or copied with its WAL (``_sqlite.snapshot``). Phone numbers
are normalised to E.164 where ``phonenumbers`` can place them: with a country code, or in the
source's ``options: {region: "DE"}``.

Records: each card, CSV row or AddressBook person is read inside ``_isolate.each_record``; a
malformed one is ``ReadError("{file}#{n}")`` (n: the card's 1-based index, the CSV's row
number, the record's Z_PK) and the rest is read. A file that is not of its kind is one
``ReadError``.

Metadata: ``name``, ``nicknames``, ``emails`` (lower-cased), ``phones`` (E.164 where possible, else as written),
``phones_raw`` (as written), ``handles`` (``service:handle``), ``org``, ``birthday``
(``YYYY-MM-DD`` or ``--MM-DD``), ``file`` (the file's path under the source), ``uid``.

native_id: the card's UID (the AddressBook's unique id), else a hash of the file, the name and the
first address or number. The same person in two files without a UID is two records (two
sources of truth); copies of one UID are one (the newest ``REV`` wins).

Incremental: per file (``_exports.read_exports``); an AddressBook database counts as changed
when its WAL does.

Left out: photos and logos (binary), groups/categories, related names, the AddressBook's older
``.abcdp`` bundles, CardDAV servers, Outlook's own CSV layout.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from ragbag.connectors import _contacts_abcddb, _contacts_csv, _contacts_vcard
from ragbag.connectors._contacts_card import Contact, document, identities
from ragbag.connectors._exports import export_files, read_exports
from ragbag.connectors._isolate import each_record
from ragbag.connectors._sqlite import snapshot
from ragbag.connectors._walk import excluded_paths, follows_outside
from ragbag.core.records import Cursor, Document, ReadError, Seen, Span
from ragbag.text.chunking import TokenCounter, prose_spans

__all__ = ["NAME", "SCHEDULE", "discover", "identities", "read", "spans"]

NAME = "contacts"
SCHEDULE = "0 4 * * *"
OPTIONS = {"region": "the country (ISO code, e.g. DE) of numbers written without +country code"}  # ragbag add --option
_VERSION = "contacts-1"
_VCARD = (".vcf", ".vcard")
_DB = ".abcddb"


def discover() -> tuple[list[Path], list[str]]:
    """macOS Contacts' databases of the current user (``$HOME`` honoured): the root one and each
    account's under ``Sources/``."""
    root = Path.home() / "Library" / "Application Support" / "AddressBook"
    found = [root / "AddressBook-v22.abcddb", *sorted(root.glob("Sources/*/AddressBook-v22.abcddb"))]
    return [p for p in found if p.is_file()], [str(root / "AddressBook-v22.abcddb"), str(root / "Sources")]


def _wanted(name: str) -> bool:
    return name.lower().endswith(_VCARD + (".csv", _DB))


def read(
    path: Path | None, source: str, cursor: dict | None = None, options: dict | None = None
) -> Iterator[Document | ReadError | Seen | Cursor]:
    """Every contact under ``path`` (see the module doc). ``options``: ``region`` (the country
    whose numbers are written without a country code), and those of :mod:`connectors._walk`."""
    region = (options or {}).get("region")
    files: list[tuple[Path, str]] = []
    if path is None:
        files = [(p, str(p)) for p in discover()[0]]
    else:
        found, errors = export_files(Path(path), _wanted, follows_outside(options), excluded_paths(options))
        yield from errors
        files = found
    paths = dict((k, f) for f, k in files)

    def depends(key: str) -> str:
        wal = paths[key].with_name(paths[key].name + "-wal")
        try:
            st = wal.stat()
        except OSError:
            return ""
        return f"{st.st_size}:{st.st_mtime_ns}"

    version = f"{_VERSION}:{region or ''}"
    yield from read_exports(files, lambda f, k: _read_file(f, k, source, region), cursor, version, depends)


def spans(doc: Document, count: TokenCounter, max_tokens: int) -> list[Span]:
    """A contact is small: one chunk, cut only if a long note makes it exceed the budget."""
    return prose_spans(doc.text, count, max_tokens)


def _read_file(file: Path, key: str, source: str, region: str | None) -> Iterator[tuple[Document, float] | ReadError]:
    uri = str(file.absolute())
    name = file.name.lower()
    if name.endswith(_DB):
        with snapshot(file) as conn:
            for pk, contact in list(_contacts_abcddb.records(conn)):
                yield from _made(contact, f"{uri}#{pk}", source, key, region)
        return
    data = file.read_bytes()
    if name.endswith(".csv"):
        for n, row in _contacts_csv.rows(data):
            if isinstance(row, str):
                yield ReadError(f"{uri}#{n}", row)
            else:
                yield from _made(row, f"{uri}#{n}", source, key, region)
        return
    for n, card in _contacts_vcard.cards(data):
        if isinstance(card, Exception):
            yield ReadError(f"{uri}#{n}", f"malformed card: {card}")
            continue
        made = each_record(f"{uri}#{n}", _contacts_vcard.contact, card)
        if isinstance(made, ReadError):
            yield made
        else:
            yield from _made(made, f"{uri}#{n}", source, key, region)


def _made(
    contact: Contact, uri: str, source: str, key: str, region: str | None
) -> Iterator[tuple[Document, float] | ReadError]:
    if contact.empty():
        yield ReadError(uri, "empty card: no name, address, number or note")
        return
    doc = each_record(uri, document, contact, source, NAME, uri, key, region)
    if isinstance(doc, ReadError):
        yield doc
        return
    stamp = contact.updated.timestamp() if contact.updated else 0.0
    yield doc, stamp
