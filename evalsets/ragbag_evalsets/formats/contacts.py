"""Address book exports as the apps write them: vCard 3.0 (Apple Contacts: ``item1.`` groups with
``X-ABLabel``, ``TYPE=`` lists, folded at 75 octets, CRLF) and 4.0 (RFC 6350: ``TEL;VALUE=uri``
``tel:`` numbers, ``BDAY`` without a year as ``--MMDD``), and Google Contacts' CSV (the current
``First Name,Middle Name,Last Name,…,E-mail 1 - Label,E-mail 1 - Value`` header, several values in
one cell joined by `` ::: ``)."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field


@dataclass
class Person:
    given: str
    family: str = ""
    emails: list[tuple[str, str]] = field(default_factory=list)  # (label, address)
    phones: list[tuple[str, str]] = field(default_factory=list)  # (label, number as written)
    org: str = ""
    title: str = ""
    address: tuple[str, str, str, str, str] | None = None  # street, city, region, postcode, country
    birthday: str = ""  # YYYY-MM-DD or --MM-DD
    nickname: str = ""
    note: str = ""
    uid: str = ""
    handles: list[tuple[str, str]] = field(default_factory=list)  # (service, handle)

    @property
    def name(self) -> str:
        return " ".join(p for p in (self.given, self.family) if p)


def _esc(text: str) -> str:
    return text.replace("\\", "\\\\").replace(",", "\\,").replace(";", "\\;").replace("\n", "\\n")


def _fold(line: str) -> str:
    """Lines longer than 75 octets folded (CRLF + space), never inside a UTF-8 sequence."""
    out: list[str] = []
    cur = ""
    for ch in line:
        if len((cur + ch).encode()) > (75 if not out else 74):
            out.append(cur)
            cur = ""
        cur += ch
    out.append(cur)
    return "\r\n ".join(out)


def vcard(people: list[Person], version: str = "3.0") -> bytes:
    """One ``.vcf`` file holding every person's card."""
    lines: list[str] = []
    for p in people:
        lines += ["BEGIN:VCARD", f"VERSION:{version}"]
        if version == "3.0":
            lines.append("PRODID:-//Apple Inc.//macOS 15.2//EN")
        lines.append(f"N:{_esc(p.family)};{_esc(p.given)};;;")
        lines.append(f"FN:{_esc(p.name)}")
        if p.nickname:
            lines.append(f"NICKNAME:{_esc(p.nickname)}")
        if p.org:
            lines.append(f"ORG:{_esc(p.org)};")
        if p.title:
            lines.append(f"TITLE:{_esc(p.title)}")
        for label, address in p.emails:
            lines.append(f"EMAIL;TYPE=INTERNET,{label.upper()}:{address}")
        for n, (label, number) in enumerate(p.phones, 1):
            if version == "4.0":
                lines.append(f'TEL;VALUE=uri;TYPE="{label}":tel:{number.replace(" ", "-")}')
            else:
                lines += [f"item{n}.TEL;TYPE=pref:{number}", f"item{n}.X-ABLabel:_$!<{label.title()}>!$_"]
        if p.address:
            lines.append("ADR;TYPE=HOME:;;" + ";".join(_esc(x) for x in p.address))
        if p.birthday:
            yearless = p.birthday.startswith("--")
            if version == "4.0":  # RFC 6350: basic form, --MMDD without a year
                lines.append(
                    "BDAY:" + ("--" + p.birthday[2:].replace("-", "") if yearless else p.birthday.replace("-", ""))
                )
            else:  # Apple Contacts: the year 1604 stands for "no year"
                lines.append("BDAY;VALUE=date:" + ("1604" + p.birthday[1:] if yearless else p.birthday))
        for service, handle in p.handles:
            lines.append(f"IMPP;X-SERVICE-TYPE={service.title()}:{service}:{handle}")
        if p.note:
            lines.append(f"NOTE:{_esc(p.note)}")
        if p.uid:
            lines.append(f"UID:{p.uid}")
        lines.append("END:VCARD")
    return "".join(_fold(line) + "\r\n" for line in lines).encode("utf-8")


GOOGLE_HEADER = [
    *("First Name", "Middle Name", "Last Name", "Nickname", "Organization Name", "Organization Title"),
    *("Birthday", "Notes", "Labels", "E-mail 1 - Label", "E-mail 1 - Value", "E-mail 2 - Label", "E-mail 2 - Value"),
    *("Phone 1 - Label", "Phone 1 - Value", "Address 1 - Label", "Address 1 - Formatted", "Address 1 - Street"),
    *("Address 1 - City", "Address 1 - Region", "Address 1 - Postal Code", "Address 1 - Country"),
]


def google_csv(people: list[Person]) -> bytes:
    """Google Contacts' export: UTF-8 with a BOM-less header, CRLF rows, the ``::: `` join."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\r\n")
    w.writerow(GOOGLE_HEADER)
    for p in people:
        emails = (p.emails + [("", "")] * 2)[:2]
        phones = " ::: ".join(n for _, n in p.phones)
        street, city, region, code, country = p.address or ("", "", "", "", "")
        formatted = "\n".join(x for x in (street, f"{code} {city}".strip(), country) if x)
        row = [p.given, "", p.family, p.nickname, p.org, p.title, p.birthday, p.note, "* myContacts"]
        row += [f"* {emails[0][0].title()}" if emails[0][1] else "", emails[0][1], emails[1][0].title(), emails[1][1]]
        row += [p.phones[0][0].title() if p.phones else "", phones, "Home" if p.address else "", formatted]
        row += [street, city, region, code, country]
        w.writerow(row)
    return buf.getvalue().encode("utf-8")
