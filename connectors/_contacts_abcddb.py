"""macOS Contacts' store, ``AddressBook-v22.abcddb``: a Core Data SQLite database, read into
:class:`Contact` s.

``ZABCDRECORD`` holds people, companies and groups (one table, told apart by ``Z_ENT``); a row
with a name, an organisation or an address is read as a contact. The one-to-many tables are
joined on ``ZOWNER``: ``ZABCDEMAILADDRESS.ZADDRESS``, ``ZABCDPHONENUMBER.ZFULLNUMBER``,
``ZABCDPOSTALADDRESS`` (street, city, state, zip code, country name), ``ZABCDURLADDRESS.ZURL``,
``ZABCDSOCIALPROFILE`` (service, user name); notes are ``ZABCDNOTE.ZTEXT`` joined on
``ZCONTACT``. Labels are Apple's ``_$!<Mobile>!$_`` form. Dates are Core Data seconds since
2001-01-01 UTC. Columns an older or newer schema lacks are read as empty, not as an error.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

from ragbag.connectors._contacts_card import Contact

CORE_DATA_EPOCH = datetime(2001, 1, 1, tzinfo=UTC)
_APPLE_LABEL = re.compile(r"^_\$!<(.*)>!\$_$")


def _columns(conn: sqlite3.Connection, table: str) -> set[str]:
    return {row[1].upper() for row in conn.execute(f"PRAGMA table_info({table})")}


def _select(conn: sqlite3.Connection, table: str, wanted: tuple[str, ...]) -> list[dict]:
    """Rows of ``table`` with the ``wanted`` columns (absent ones as None); no rows if the table
    is absent."""
    have = _columns(conn, table)
    if not have:
        return []
    cols = ", ".join(c if c in have else f"NULL AS {c}" for c in wanted)
    conn.row_factory = sqlite3.Row
    return [dict(r) for r in conn.execute(f"SELECT {cols} FROM {table}")]  # noqa: S608 — fixed names


def _label(value: object) -> str:
    text = str(value or "")
    return _APPLE_LABEL.sub(r"\1", text).lower()


def _when(seconds: object) -> datetime | None:
    if not isinstance(seconds, (int, float)):
        return None
    try:
        return CORE_DATA_EPOCH + timedelta(seconds=seconds)
    except OverflowError:
        return None


def records(conn: sqlite3.Connection) -> Iterator[tuple[int, Contact]]:
    """(Z_PK, contact) of every person or company record. Raises ``sqlite3.DatabaseError``
    (reported for the file) when the database has no ``ZABCDRECORD`` table."""
    if not _columns(conn, "ZABCDRECORD"):
        raise sqlite3.DatabaseError("not an AddressBook database (no ZABCDRECORD table)")
    wanted: tuple[str, ...] = ("Z_PK", "ZFIRSTNAME", "ZMIDDLENAME", "ZLASTNAME", "ZTITLE", "ZSUFFIX", "ZNICKNAME")
    wanted += ("ZORGANIZATION", "ZJOBTITLE", "ZDEPARTMENT", "ZBIRTHDAY", "ZUNIQUEID", "ZMODIFICATIONDATE", "ZNAME")
    people = _select(conn, "ZABCDRECORD", wanted)
    owned: dict[str, dict[int, list[dict]]] = {}
    for table, cols, owner in (
        ("ZABCDEMAILADDRESS", ("ZOWNER", "ZADDRESS", "ZLABEL", "ZORDERINGINDEX"), "ZOWNER"),
        ("ZABCDPHONENUMBER", ("ZOWNER", "ZFULLNUMBER", "ZLABEL", "ZORDERINGINDEX"), "ZOWNER"),
        (
            "ZABCDPOSTALADDRESS",
            ("ZOWNER", "ZSTREET", "ZCITY", "ZSTATE", "ZZIPCODE", "ZCOUNTRYNAME", "ZLABEL", "ZORDERINGINDEX"),
            "ZOWNER",
        ),
        ("ZABCDURLADDRESS", ("ZOWNER", "ZURL", "ZLABEL", "ZORDERINGINDEX"), "ZOWNER"),
        ("ZABCDSOCIALPROFILE", ("ZOWNER", "ZSERVICENAME", "ZUSERNAME", "ZURLSTRING", "ZORDERINGINDEX"), "ZOWNER"),
        ("ZABCDNOTE", ("ZCONTACT", "ZTEXT"), "ZCONTACT"),
    ):
        by: dict[int, list[dict]] = {}
        for row in _select(conn, table, cols):
            by.setdefault(row[owner], []).append(row)
        for rows in by.values():
            rows.sort(key=lambda r: r.get("ZORDERINGINDEX") or 0)
        owned[table] = by
    for p in sorted(people, key=lambda r: r["Z_PK"]):
        pk = p["Z_PK"]
        c = Contact()
        c.names = [str(p[k]) for k in ("ZTITLE", "ZFIRSTNAME", "ZMIDDLENAME", "ZLASTNAME", "ZSUFFIX") if p[k]]
        c.nicknames = [str(p["ZNICKNAME"])] if p["ZNICKNAME"] else []
        c.org = ", ".join(str(p[k]) for k in ("ZORGANIZATION", "ZDEPARTMENT") if p[k])
        c.title = str(p["ZJOBTITLE"] or "")
        born = _when(p["ZBIRTHDAY"])
        if born:
            c.birthday = f"--{born:%m-%d}" if born.year == 1604 else f"{born:%Y-%m-%d}"
        c.uid = str(p["ZUNIQUEID"] or "")
        c.updated = _when(p["ZMODIFICATIONDATE"])

        def get(table: str, pk: int = pk) -> list[dict]:
            return owned[table].get(pk, [])

        c.emails = [(_label(r["ZLABEL"]), str(r["ZADDRESS"])) for r in get("ZABCDEMAILADDRESS") if r["ZADDRESS"]]
        c.phones = [(_label(r["ZLABEL"]), str(r["ZFULLNUMBER"])) for r in get("ZABCDPHONENUMBER") if r["ZFULLNUMBER"]]
        for r in get("ZABCDPOSTALADDRESS"):
            parts = [str(r[k]) for k in ("ZSTREET", "ZCITY", "ZSTATE", "ZZIPCODE", "ZCOUNTRYNAME") if r[k]]
            if parts:
                c.addresses.append((_label(r["ZLABEL"]), ", ".join(" ".join(x.split()) for x in parts)))
        c.urls = [(_label(r["ZLABEL"]), str(r["ZURL"])) for r in get("ZABCDURLADDRESS") if r["ZURL"]]
        c.handles = [
            (str(r["ZSERVICENAME"] or "social").lower(), str(r["ZUSERNAME"] or r["ZURLSTRING"]))
            for r in get("ZABCDSOCIALPROFILE")
            if r["ZUSERNAME"] or r["ZURLSTRING"]
        ]
        c.notes = [str(r["ZTEXT"]) for r in get("ZABCDNOTE") if r["ZTEXT"]]
        if c.names or c.org or c.emails or c.phones:
            yield pk, c
