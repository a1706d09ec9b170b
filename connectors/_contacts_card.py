"""One contact, whatever it was read from (a vCard, a Google CSV row, an AddressBook record), and
how it becomes a Document: the readable text search finds ("Anna's phone number"), the metadata
person resolution joins on, and the normalised identifiers (:func:`identities`)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime

import phonenumbers

from ragbag.core.records import Document, stable_hash

Labelled = tuple[str, str]  # (label such as "work" or "", value)


@dataclass
class Contact:
    name: str = ""
    names: list[str] = field(default_factory=list)  # the name's parts as the source split them
    nicknames: list[str] = field(default_factory=list)
    org: str = ""
    title: str = ""
    emails: list[Labelled] = field(default_factory=list)
    phones: list[Labelled] = field(default_factory=list)
    addresses: list[Labelled] = field(default_factory=list)
    urls: list[Labelled] = field(default_factory=list)
    handles: list[Labelled] = field(default_factory=list)  # (service, handle)
    birthday: str = ""
    notes: list[str] = field(default_factory=list)
    uid: str = ""
    updated: datetime | None = None

    def display_name(self) -> str:
        """FN, else the joined name parts, else the organisation, else the first address or number."""
        for candidate in (self.name, " ".join(p for p in self.names if p), self.org):
            if candidate.strip():
                return " ".join(candidate.split())
        for _, value in self.emails + self.phones + self.handles:
            if value.strip():
                return value.strip()
        return ""

    def empty(self) -> bool:
        return not (self.display_name() or self.notes or self.addresses or self.urls)


def phone_e164(raw: str, region: str | None) -> str | None:
    """The number in E.164 when ``phonenumbers`` can place it: with a country code, or in
    ``region`` (the source's ``options: {region: ...}``); None otherwise. A maintained library
    because national prefixes, trunk zeros and extensions differ by country."""
    text = raw.strip()
    if text.lower().startswith("tel:"):
        text = text[4:]
    if text.startswith("00"):
        text = "+" + text[2:]
    try:
        number = phonenumbers.parse(text, region.upper() if region else None)
    except phonenumbers.NumberParseException:
        return None
    if not phonenumbers.is_possible_number(number):
        return None
    return phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164)


def _digits(raw: str) -> str:
    return re.sub(r"\D", "", raw)


def _label(kind: str, label: str) -> str:
    return f"{kind} ({label})" if label else kind


def render(c: Contact, phones: list[str]) -> str:
    """Readable lines, one fact each, labelled in words so a question about a person matches."""
    lines = [c.display_name()]
    full = " ".join(p for p in c.names if p)
    if full and full != lines[0]:
        lines.append(f"Name: {full}")
    if c.nicknames:
        lines.append("Nickname: " + ", ".join(c.nicknames))
    if c.org or c.title:
        lines.append("Organisation: " + " — ".join(x for x in (c.org, c.title) if x))
    lines += [f"{_label('Email', t)}: {v}" for t, v in c.emails]
    for (t, v), norm in zip(c.phones, phones, strict=True):
        shown = v if norm == v.strip() else f"{v} ({norm})"  # the E.164 form too, so either is found
        lines.append(f"{_label('Phone', t)}: {shown}")
    lines += [f"{_label('Address', t)}: {v}" for t, v in c.addresses]
    if c.birthday:
        lines.append(f"Birthday: {c.birthday}")
    lines += [f"{_label('Website', t)}: {v}" for t, v in c.urls]
    lines += [f"{_label('Handle', t)}: {v}" for t, v in c.handles]
    lines += [f"Note: {n}" for n in c.notes]
    return "\n".join(line for line in lines if line.strip())


def document(c: Contact, source: str, connector: str, uri: str, key: str, region: str | None) -> Document:
    """The contact as a Document; its native id is its UID, else a hash of the file's key, the
    name and the first address or number (so an unchanged card keeps its id)."""
    phones = [phone_e164(v, region) or v.strip() for _, v in c.phones]
    emails = [v.strip().lower() for _, v in c.emails if v.strip()]
    first = (emails + phones + [""])[0]
    name = c.display_name()
    native_id = c.uid.strip() or "h:" + stable_hash(key, name, first)
    metadata = {
        "name": name,
        "nicknames": list(c.nicknames),
        "emails": emails,
        "phones": phones,
        "phones_raw": [v.strip() for _, v in c.phones],
        "handles": [f"{s}:{h}" if s else h for s, h in c.handles],
        "org": c.org,
        "birthday": c.birthday,
        "file": key,
    }
    if c.uid:
        metadata["uid"] = c.uid.strip()
    return Document(
        source=source,
        connector=connector,
        native_id=native_id,
        uri=uri,
        title=name,
        text=render(c, phones),
        updated_at=c.updated,
        metadata=metadata,
    )


def identities(metadata: dict) -> set[str]:
    """A contact's normalised identifiers, from its document's metadata, for person resolution:
    emails lower-cased, phones in E.164 (else their digits, without a plus), handles
    ``service:handle`` lower-cased. Two records sharing one identifier are the same person."""
    found: set[str] = set()
    for email in metadata.get("emails") or []:
        if str(email).strip():
            found.add(str(email).strip().lower())
    for phone in metadata.get("phones") or []:
        text = str(phone).strip()
        found.add(text if re.fullmatch(r"\+\d{4,15}", text) else _digits(text))
    for handle in metadata.get("handles") or []:
        if str(handle).strip():
            found.add(str(handle).strip().lower())
    found.discard("")
    return found
