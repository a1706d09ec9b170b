"""vCard 2.1, 3.0 and 4.0 (RFC 2425/2426/6350 and the 2.1 spec) read into :class:`Contact` s.

No maintained vCard parser is installed (``vobject`` would be a new dependency and refuses whole
files for one bad line), so this reader is written from the specifications and the exports
of real address books:

- Lines are unfolded (a continuation starts with a space or tab). A 2.1 QUOTED-PRINTABLE value
  continues over lines ending in a soft break ``=`` that are not indented (Outlook, Android).
- 2.1 parameters without a name (``TEL;WORK;VOICE``) are types; ``TYPE=a,b`` and repeated
  ``TYPE`` both are. ``CHARSET`` decodes QUOTED-PRINTABLE bytes (default UTF-8, with the
  charset fallback of ``ragbag.text.decode``). Base64 values (``PHOTO``, ``LOGO``, ``SOUND``,
  ``KEY``) are skipped.
- Text values are unescaped (``\\,`` ``\\;`` ``\\n`` ``\\\\``); structured values (``N``,
  ``ADR``, ``ORG``) are split on unescaped semicolons first.
- Apple's grouped labels (``item1.TEL`` + ``item1.X-ABLabel:_$!<Mobile>!$_``) name the value.
- Handles: ``IMPP`` (``xmpp:…``, ``skype:…``), ``X-SOCIALPROFILE`` (its ``x-user`` parameter,
  else the URL), and the older ``X-AIM``/``X-JABBER``/``X-SKYPE``/… properties.
- Birthdays: ``19800322``, ``1980-03-22``, ``--0322`` (no year), Apple's year 1604 (no year).
"""

from __future__ import annotations

import codecs
import quopri
import re
from collections.abc import Iterator
from datetime import UTC, datetime

from dateutil import parser as dateparser

from ragbag.connectors._contacts_card import Contact
from ragbag.text.decode import decode
from ragbag.text.unreadable import Unreadable

_BINARY = {"PHOTO", "LOGO", "SOUND", "KEY"}
_IM = {
    "X-AIM": "aim",
    "X-JABBER": "xmpp",
    "X-SKYPE": "skype",
    "X-SKYPE-USERNAME": "skype",
    "X-ICQ": "icq",
    "X-MSN": "msn",
    "X-YAHOO": "yahoo",
    "X-GOOGLE-TALK": "gtalk",
    "X-GTALK": "gtalk",
    "X-TWITTER": "twitter",
    "X-MS-IMADDRESS": "im",
    "X-QQ": "qq",
    "X-WECHAT": "wechat",
}
_NOT_TYPES = {"pref", "internet", "voice", "x400", "encoding", "charset", "value", "language"}
# vCard 2.1's type names: a parameter without a name is one of these, or an encoding, charset,
# language or value type written bare (``TEL;WORK;utf-8;QUOTED-PRINTABLE;de-DE;INLINE``).
_BARE_TYPES = {
    *("home", "work", "cell", "mobile", "fax", "pager", "msg", "bbs", "modem", "car", "isdn", "video"),
    *("pcs", "text", "textphone", "main", "iphone", "other", "dom", "intl", "postal", "parcel"),
    *("pref", "voice", "internet", "aol", "applelink", "attmail", "cis", "eworld", "ibmmail"),
    *("mcimail", "powershare", "prodigy", "tlx", "x400", "gif", "jpeg", "png", "wav"),
}
_APPLE_LABEL = re.compile(r"^_\$!<(.*)>!\$_$")


class Malformed(ValueError):
    """A card that cannot be read; the message says why, on one line."""


Prop = tuple[str, str, dict[str, list[str]], str]  # group, NAME, params, raw value


def cards(data: bytes) -> Iterator[tuple[int, list[Prop] | Malformed]]:
    """(1-based index, properties or why the card is malformed) for each top-level card. Raises
    :class:`Unreadable` when the data holds no ``BEGIN:VCARD`` at all."""
    # A CHARSET named on any line (Outlook writes it on some) is the likeliest code page of the rest.
    hints = dict.fromkeys(m.decode("ascii").lower() for m in re.findall(rb"CHARSET=([A-Za-z0-9_-]+)", data, re.I))
    text = decode(data, list(hints))[0]
    lines = _logical_lines(text)
    if not any(line.strip().upper() == "BEGIN:VCARD" for line in lines):
        raise Unreadable("not a vCard file (no BEGIN:VCARD line)")
    index = 0
    current: list[Prop] | None = None
    depth = 0
    problem: str | None = None
    for line in lines:
        if not line.strip():
            continue
        upper = line.strip().upper()
        if upper == "BEGIN:VCARD":
            depth += 1
            if depth == 1:
                index += 1
                current, problem = [], None
            continue  # a nested card (2.1's AGENT) is not a contact of its own
        if upper == "END:VCARD":
            depth -= 1
            if depth == 0 and current is not None:
                yield index, (Malformed(problem) if problem else current)
                current = None
            depth = max(depth, 0)
            continue
        if current is None or depth != 1:
            continue
        try:
            current.append(_property(line))
        except Malformed as exc:
            problem = problem or str(exc)
    if current is not None:
        yield index, Malformed("file ends before END:VCARD (truncated?)")


def _logical_lines(text: str) -> list[str]:
    out: list[str] = []
    qp_open = b64_open = False
    # "\r\r\n" (iPhone exports) is one line end, not a blank line that would end a folded value.
    for raw in re.split(r"\r*\n|\r", text):
        if out and qp_open:
            out[-1] += "\n" + raw.lstrip(" \t")  # quopri removes the soft break "=\n"
        elif out and raw[:1] in (" ", "\t"):
            out[-1] += raw[1:]
        elif out and b64_open and raw.strip() and ":" not in raw:
            out[-1] += raw.strip()  # 2.1 base64 runs on unindented until a blank line
        else:
            out.append(raw)
        last = out[-1]
        head = last.split(":", 1)[0].upper()
        qp_open = "QUOTED-PRINTABLE" in head and ":" in last and last.endswith("=")
        b64_open = bool(re.search(r";(ENCODING=)?(BASE64|B)\b", head)) and bool(raw.strip())
    return out


def _property(line: str) -> Prop:
    head, sep, value = _split_unquoted(line, ":")
    if not sep:
        raise Malformed(f"a line without a colon: {line[:60]!r}")
    parts = _split_params(head)
    name = parts[0]
    group = ""
    if "." in name:
        group, name = name.rsplit(".", 1)
    if not re.fullmatch(r"[\w-]+", name):  # vendors' X- names carry underscores (X-WAB-…_ANNIVERSARY)
        raise Malformed(f"not a property name: {name[:40]!r}")
    params: dict[str, list[str]] = {}
    for p in parts[1:]:
        key, eq, val = p.partition("=")
        if not eq:
            bare = key.strip().upper()
            if bare in ("QUOTED-PRINTABLE", "BASE64", "8BIT", "7BIT", "B"):
                key, val = "ENCODING", bare
            elif bare.lower() in _BARE_TYPES:
                key, val = "TYPE", bare
            elif _is_charset(bare):
                key, val = "CHARSET", bare
            else:
                continue  # a bare charset, language or value type: nothing to show
        val = val.strip()
        if len(val) >= 2 and val[0] == val[-1] == '"':
            val = val[1:-1]  # TYPE="work,voice" (RFC 6350) is a list too
        values = [v.strip().strip('"') for v in val.split(",")]
        params.setdefault(key.strip().upper(), []).extend(v for v in values if v)
    return group.upper(), name.upper(), params, value


def _split_unquoted(text: str, sep: str) -> tuple[str, str, str]:
    quoted = False
    for i, ch in enumerate(text):
        if ch == '"':
            quoted = not quoted
        elif ch == sep and not quoted:
            return text[:i], sep, text[i + 1 :]
    return text, "", ""


def _is_charset(name: str) -> bool:
    try:
        codecs.lookup(name)
    except LookupError:
        return False
    return True


def _split_unquoted_all(text: str, sep: str) -> list[str]:
    parts = []
    while True:
        head, found, text = _split_unquoted(text, sep)
        parts.append(head)
        if not found:
            return parts


def _split_params(head: str) -> list[str]:
    return _split_unquoted_all(head, ";")


def _raw_text(params: dict[str, list[str]], value: str) -> str:
    """The value as text: QUOTED-PRINTABLE decoded in its CHARSET."""
    if "QUOTED-PRINTABLE" in {e.upper() for e in params.get("ENCODING", [])}:
        data = quopri.decodestring(value.encode("latin-1", "replace"))
        charset = (params.get("CHARSET") or ["utf-8"])[0]
        try:
            return data.decode(charset)
        except (LookupError, UnicodeDecodeError):
            try:
                return decode(data, [charset])[0]
            except Unreadable:
                return data.decode("utf-8", "replace")
    return value


def _unescape(text: str) -> str:
    return re.sub(r"\\(.)", lambda m: "\n" if m.group(1) in "nN" else m.group(1), text)


def _components(text: str) -> list[str]:
    """A structured value split on unescaped semicolons, each part unescaped."""
    return [_unescape(p).strip() for p in re.split(r"(?<!\\);", text)]


def _types(params: dict[str, list[str]]) -> list[str]:
    return [t.lower() for t in params.get("TYPE", []) if t.lower() not in _NOT_TYPES and "=" not in t]


def _label(types: list[str], apple: str | None) -> str:
    if apple:
        return apple
    return ", ".join(dict.fromkeys(t for t in types if t not in {"x-", "other"}))


def birthday(value: str) -> str:
    """ISO date ``YYYY-MM-DD``, ``--MM-DD`` without a year, else the value as written."""
    v = value.strip()
    m = re.fullmatch(r"--(\d\d)-?(\d\d)", v)
    if m:
        return f"--{m.group(1)}-{m.group(2)}"
    m = re.match(r"(\d{4})-?(\d\d)-?(\d\d)", v)
    if m:
        year, month, day = m.groups()
        return f"--{month}-{day}" if year in ("1604", "0000") else f"{year}-{month}-{day}"
    return v


def contact(props: list[Prop]) -> Contact:
    """The contact a card's properties describe."""
    c = Contact()
    apple = {
        g: (_APPLE_LABEL.sub(r"\1", _unescape(_raw_text(p, v))) or "").lower()
        for g, n, p, v in props
        if n == "X-ABLABEL" and g
    }
    for group, name, params, raw in props:
        if name in _BINARY:
            continue
        text = _raw_text(params, raw)
        label = _label(_types(params), apple.get(group) if group else None)
        value = _unescape(text).replace("\r\n", "\n").strip()
        if name == "FN":
            c.name = c.name or value
        elif name == "N":
            family, given, additional, prefix, suffix = (_components(text) + [""] * 5)[:5]
            c.names = [x.replace(",", " ") for x in (prefix, given, additional, family, suffix) if x]
        elif name == "NICKNAME":
            c.nicknames += [_unescape(n).strip() for n in re.split(r"(?<!\\),", text) if n.strip()]
        elif name == "ORG":
            c.org = ", ".join(p for p in _components(text) if p)
        elif name == "TITLE":
            c.title = value
        elif name == "EMAIL" and value:
            c.emails.append((label, value.removeprefix("mailto:")))
        elif name == "TEL" and value:
            c.phones.append((label, value.removeprefix("tel:")))
        elif name == "ADR":
            parts = [p for p in _components(text) if p]
            if parts:
                c.addresses.append((label, ", ".join(" ".join(p.split()) for p in parts)))
        elif name == "BDAY" and value:
            c.birthday = birthday(value)
        elif name == "NOTE" and value:
            c.notes.append(value)
        elif name == "URL" and value:
            c.urls.append((label, value))
        elif name == "UID" and value:
            c.uid = value
        elif name == "REV" and value:
            c.updated = _time(value)
        elif name == "IMPP" and value:
            service, sep, handle = value.partition(":")
            c.handles.append((service.lower(), handle) if sep else (_label(_types(params), None), value))
        elif name == "X-SOCIALPROFILE" and value:
            service = (params.get("TYPE") or [label or "social"])[0].lower()
            user = (params.get("X-USER") or [""])[0]
            c.handles.append((service, user or value.removeprefix("x-apple:")))
        elif name in _IM and value:
            c.handles.append((_IM[name], value))
    return c


def _time(value: str) -> datetime | None:
    """REV as an aware UTC datetime (a floating one is taken as UTC); None when unreadable.
    dateutil because REV comes basic, extended, with and without zone."""
    try:
        when = dateparser.isoparse(value)
    except (ValueError, OverflowError):
        return None
    return (when.replace(tzinfo=UTC) if when.tzinfo is None else when).astimezone(UTC)
