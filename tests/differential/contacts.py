"""Address books, differentially: ragbag's contacts against a plain reading.

No vCard library is installed (``vobject`` is not a dependency), so the reference is a plain
reading written apart from the connector, with the stdlib: folded lines joined by a regular
expression (RFC 6350 §3.2), cards found as ``BEGIN:VCARD … END:VCARD`` spans, ``EMAIL`` and
``FN`` values taken by a regular expression, QUOTED-PRINTABLE decoded by ``quopri`` and
``\\,`` escapes removed. Google Contacts CSV files are read by ``csv.DictReader``.

Checks, as (agree, compared): ``count`` (cards against documents plus cards reported as
malformed), ``people`` (per card with an FN, a document titled so), ``text`` (per email
address, a document listing it in ``emails``).
"""

from __future__ import annotations

import csv
import io
import quopri
import re
from pathlib import Path

from tests.differential.common import PUBLIC, Outcome, ragbag_read, rel

CONNECTOR = "contacts"
HERE = PUBLIC / "contacts"

EXPLAINED: dict[str, str] = {
    "public/contacts/VCards/Cropped_2_1.vcf": (
        "The file is cut off inside its only card (no END:VCARD). The reference finds no complete"
        " card; ragbag reports the cut card as a ReadError (`#1`, file ends before END:VCARD), so"
        " the user learns that a contact was lost instead of reading an empty success."
    ),
}


def units() -> list[Path]:
    return sorted(p for p in HERE.rglob("*") if p.suffix.lower() in (".vcf", ".csv") and p.is_file())


def _value(head: str, value: str) -> str:
    if "QUOTED-PRINTABLE" in head.upper():
        charset = re.search(r"CHARSET=([^;:]+)", head, re.I)
        raw = quopri.decodestring(value.encode("latin-1", "replace"))
        return raw.decode(charset.group(1) if charset else "utf-8", "replace")
    return re.sub(r"\\([,;\\])", r"\1", value).replace("\\n", "\n")


def _text(data: bytes) -> tuple[str, bool]:
    """The file's text and whether it is certain: UTF-8 or a UTF-16 with its BOM. The reference
    guesses no legacy code page; such a file is read as Latin-1, its cards counted but their
    names and addresses not compared."""
    for bom, codec in ((b"\xef\xbb\xbf", "utf-8-sig"), (b"\xff\xfe", "utf-16"), (b"\xfe\xff", "utf-16")):
        if data.startswith(bom):
            return data.decode(codec), True
    try:
        return data.decode("utf-8"), True
    except UnicodeDecodeError:
        return data.decode("latin-1"), False


def _vcards(data: bytes) -> list[dict[str, list[str]]]:
    text, sure = _text(data)
    text = re.sub(r"\r+\n|\r", "\n", text)
    text = re.sub(r"\n[ \t]", "", text)
    cards = []
    for body in re.findall(r"^BEGIN:VCARD\s*$(.*?)^END:VCARD\s*$", text, re.S | re.M | re.I):
        found: dict[str, list[str]] = {"FN": [], "EMAIL": []}
        lines = body.split("\n")
        i = 0
        while i < len(lines):
            line = lines[i]
            while "QUOTED-PRINTABLE" in line.split(":", 1)[0].upper() and line.endswith("=") and i + 1 < len(lines):
                i += 1
                line = line + "\n" + lines[i]
            i += 1
            m = re.match(r"^(?:[\w-]+\.)?(FN|EMAIL)([;][^:]*)?:(.*)$", line, re.I | re.S)
            if m:
                value = _value(m.group(2) or "", m.group(3)).strip().removeprefix("mailto:")
                if value:
                    found[m.group(1).upper()].append(value)
        cards.append(found if sure else {"FN": [], "EMAIL": []})
    return cards


def _csv_rows(data: bytes) -> list[dict[str, list[str]]]:
    text = data.decode("utf-8-sig", "replace")
    rows = []
    for row in csv.DictReader(io.StringIO(text, newline="")):
        emails = [
            v.strip()
            for k, cell in row.items()
            if k and re.match(r"E-mail \d+ - Value", k)
            for v in (cell or "").split(" ::: ")
            if v.strip()
        ]
        rows.append({"FN": [row["Name"]] if row.get("Name") else [], "EMAIL": emails})
    return rows


def compare(unit: Path) -> Outcome:
    docs, errors = ragbag_read(CONNECTOR, unit)
    data = unit.read_bytes()
    cards = _csv_rows(data) if unit.suffix.lower() == ".csv" else _vcards(data)
    project = rel(unit).split("/")[2]
    out = Outcome(rel(unit), project, len(cards), len(docs), len(errors))
    # Copies of one UID are one document: the reference's count is of distinct cards.
    read = len(docs) + sum(1 for e in errors if "#" in e.uri)  # a file-level error is no card
    titles = [d.title for d in docs]
    named = [c["FN"][0] for c in cards if c["FN"]]
    people = sum(1 for n in named if " ".join(n.split()) in titles)
    emails = [e.lower() for c in cards for e in c["EMAIL"]]
    have = {e for d in docs for e in d.metadata["emails"]}
    texts = sum(1 for e in emails if e in have)
    out.checks = {
        "count": (min(read, len(cards)), max(read, len(cards))),
        "people": (people, len(named)),
        "text": (texts, len(emails)),
    }
    if read != len(cards):
        out.disagreements.append(
            f"ragbag has {len(docs)} contacts and {len(errors)} errors, the reference {len(cards)} cards"
        )
    for n in named:
        if " ".join(n.split()) not in titles:
            out.disagreements.append(f"no contact titled {n!r}")
    for e in emails:
        if e not in have:
            out.disagreements.append(f"no contact with the address {e!r}")
    return out
