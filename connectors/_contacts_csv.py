"""Google Contacts CSV exports read into :class:`Contact` s.

Two headers are in use: the older "Google CSV" (``Name,Given Name,Additional Name,Family Name,
…,E-mail 1 - Type,E-mail 1 - Value,Phone 1 - Type,Phone 1 - Value,…``) and the current one
(``First Name,Middle Name,Last Name,…,E-mail 1 - Label,E-mail 1 - Value,…``). Numbered columns
(``<Kind> <n> - <Field>``) are matched by pattern, so any count of them is read; one cell holding
several values joins them with `` ::: ``; labels start with ``* `` for the preferred one.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterator

from ragbag.connectors._contacts_card import Contact
from ragbag.connectors._contacts_vcard import birthday
from ragbag.text.decode import decode
from ragbag.text.unreadable import Unreadable

_NUMBERED = re.compile(r"^(E-mail|Phone|Address|Website|IM|Organization|Relation|Event) (\d+) - (.+)$")
_NAME_COLUMNS = ("Name", "Given Name", "Family Name", "First Name", "Last Name")
_SEP = " ::: "


def rows(data: bytes) -> Iterator[tuple[int, Contact | str]]:
    """(row number, contact or why the row is malformed) for every data row. Raises
    :class:`Unreadable` for a CSV that is not a Google Contacts export."""
    text = decode(data)[0]
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = [h.strip().lstrip("\ufeff") for h in next(reader)]
    except (StopIteration, csv.Error):
        raise Unreadable("not a Google Contacts CSV (no header line)") from None
    if not any(h in header for h in _NAME_COLUMNS) or not any(_NUMBERED.match(h) for h in header):
        raise Unreadable("not a Google Contacts CSV (expected a header with Name/First Name and E-mail 1 - Value …)")
    n = 1
    while True:
        try:
            cells = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            n += 1
            yield n, f"unreadable CSV row: {exc}"
            continue
        n += 1
        if not any(c.strip() for c in cells):
            continue
        if len(cells) > len(header):
            yield n, f"{len(cells)} cells for a header of {len(header)} columns"
            continue
        yield n, contact(dict(zip(header, cells, strict=False)))


def _split(cell: str) -> list[str]:
    return [v.strip() for v in cell.split(_SEP) if v.strip()]


def _clean_label(label: str) -> str:
    return label.strip().lstrip("* ").strip().lower()


def contact(row: dict[str, str]) -> Contact:
    """The contact one row describes."""
    get = lambda k: (row.get(k) or "").strip()  # noqa: E731
    c = Contact()
    c.name = get("Name") or get("File As")
    c.names = [
        get(k) for k in ("Name Prefix", "Given Name", "First Name", "Additional Name", "Middle Name") if get(k)
    ] + [get(k) for k in ("Family Name", "Last Name", "Name Suffix") if get(k)]
    c.nicknames = _split(get("Nickname"))
    c.org = get("Organization Name")
    c.title = get("Organization Title")
    if get("Birthday"):
        c.birthday = birthday(get("Birthday"))
    if get("Notes"):
        c.notes.append(get("Notes"))
    groups: dict[tuple[str, str], dict[str, str]] = {}
    for column, cell in row.items():
        m = _NUMBERED.match(column or "")
        if m and cell and cell.strip():
            groups.setdefault((m.group(1), m.group(2)), {})[m.group(3)] = cell.strip()
    for (kind, _), fields in sorted(groups.items(), key=lambda kv: (kv[0][0], int(kv[0][1]))):
        label = _clean_label(fields.get("Label") or fields.get("Type") or "")
        if kind == "Organization":
            c.org = c.org or fields.get("Name", "")
            c.title = c.title or fields.get("Title", "")
            continue
        if kind == "Address":
            formatted = fields.get("Formatted") or ", ".join(
                fields[k] for k in ("Street", "City", "Region", "Postal Code", "Country") if fields.get(k)
            )
            for value in formatted.split(_SEP):
                if value.strip():
                    c.addresses.append((label, ", ".join(x.strip() for x in value.splitlines() if x.strip())))
            continue
        values = _split(fields.get("Value", ""))
        if kind == "E-mail":
            c.emails += [(label, v) for v in values]
        elif kind == "Phone":
            c.phones += [(label, v) for v in values]
        elif kind == "Website":
            c.urls += [(label, v) for v in values]
        elif kind == "IM":
            service = _clean_label(fields.get("Service") or label)
            c.handles += [(service, v) for v in values]
        elif kind == "Event" and label == "birthday" and values and not c.birthday:
            c.birthday = birthday(values[0])
    return c
