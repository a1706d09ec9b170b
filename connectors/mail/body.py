"""A message's text: which MIME part is the body (plain text unless it only stands in for the
HTML), which parts are attachments, and HTML bodies as text without the quoted blocks."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from email.message import EmailMessage
from typing import Any

from bs4 import BeautifulSoup
from bs4.dammit import EncodingDetector

from ragbag.connectors.mail.charsets import decode_bytes
from ragbag.connectors.mail.headers import decode_header
from ragbag.text.extract import html_text

MAX_ATTACHMENT_TEXT = 20_000
_META_SCAN = 4096  # an HTML part's charset declaration sits in its head


@dataclass
class Attachment:
    """An attachment of a message: its name, MIME type, the text inlined in the mail's own text
    (small text parts), and its part, decoded only when read (``data``): a mail's attachments
    are read one at a time, so one decoded attachment is held at a time, not all of them."""

    name: str
    mime: str
    inlined: str
    part: Any = None
    stored: bytes | None = None  # bytes kept elsewhere (Apple Mail's Attachments/ folder)

    def data(self) -> bytes:
        if self.stored is not None:
            return self.stored
        return _part_bytes(self.part) if self.part is not None else b""

    @property
    def size(self) -> int:
        """The decoded size, estimated without decoding (base64 is 4 characters for 3 bytes)."""
        if self.stored is not None:
            return len(self.stored)
        payload = self.part.get_payload() if self.part is not None else ""
        if not isinstance(payload, str):
            return 0
        base64 = str(self.part.get("content-transfer-encoding", "")).strip().lower() == "base64"
        return len(payload) * 3 // 4 if base64 else len(payload)


def body_and_attachments(msg: EmailMessage, hints: list[str] | None = None) -> tuple[str, list[Attachment]]:
    """(body text, [(attachment name, type, inlined text, bytes)]): the first inline text/plain part, unless it
    is empty or only a stand-in for the HTML ("view this email in your browser"), else the first
    inline text/html one; parts with a file name or ``attachment`` disposition are
    attachments, inline images with a Content-ID (logos) are neither. Each header is parsed
    once per part: the policy's header objects are what reading costs most. ``hints``: the
    charsets the message declares, for parts that declare none."""
    hints = hints or []
    attachments: list[Attachment] = []
    plain = html = None
    for part, ctype in _leaves(msg):
        filename = _filename(part)
        disposition = part.get_content_disposition()
        if ctype.startswith("image/") and disposition != "attachment" and part["content-id"]:
            continue  # an inline logo or signature image
        if ctype == "message/rfc822" or filename or disposition == "attachment":
            text = ""
            if ctype in ("text/plain", "text/markdown", "text/csv"):
                text = _part_text(part, hints)[:MAX_ATTACHMENT_TEXT]
            attachments.append(Attachment(filename or _attached_subject(part) or "(unnamed)", ctype, text, part))
        elif ctype == "text/plain" and plain is None:
            plain = part
        elif ctype == "text/html" and html is None:
            html = part
        elif ctype.startswith("text/") and plain is None and ctype != "text/html":
            plain = part  # text/enriched, text/x-...: better than nothing
    text = _part_text(plain, hints) if plain is not None else ""
    if html is not None and _stands_in(text):
        rendered = _html(_part_text(html, hints))
        if rendered.strip():
            text = rendered
    return text.replace("\r\n", "\n").replace("\r", "\n"), attachments


# What senders put in text/plain when the content is only in the HTML part.
_STAND_IN = re.compile(
    r"(html|rich[- ]text).{0,40}(content|version|message|mail|format)|view (it|this( e-?mail| message)?) "
    r"(in|with) (your|a|an) (web )?browser|(e-?mail|message) (client|program) (does not|doesn't|cannot|can't) "
    r"(support|display)|online version|im browser (an|öffnen)|webversion|version en ligne|versión web",
    re.I,
)


def _stands_in(plain: str) -> bool:
    """Whether a text/plain alternative carries no text of its own: empty, or a short notice
    that the message is HTML ("This message contains HTML content", "view this email in your
    browser"), so the HTML part is the content."""
    words = plain.split()
    return not words or (len(words) <= 40 and _STAND_IN.search(plain) is not None)


def _leaves(part, depth: int = 0) -> Iterator[tuple[Any, str]]:
    """(part, content type) of every non-multipart part; an attached message is one leaf."""
    ctype = part.get_content_type()
    if ctype.startswith("multipart/") and depth < 20 and isinstance(part.get_payload(), list):
        for sub in part.get_payload():
            yield from _leaves(sub, depth + 1)
    else:
        yield part, ctype


def _part_bytes(part) -> bytes:
    """An attachment's bytes, transfer encoding undone (an attached message: the message)."""
    if part.get_content_type() == "message/rfc822":
        payload = part.get_payload()
        inner = payload[0] if isinstance(payload, list) and payload else None
        try:
            return inner.as_bytes() if inner is not None else b""
        except Exception:  # noqa: BLE001 — an attached message the generator cannot write back
            return b""
    data = part.get_payload(decode=True)
    return data if isinstance(data, bytes) else b""


def _attached_subject(part) -> str:
    payload = part.get_payload()
    inner = payload[0] if isinstance(payload, list) and payload else None
    if inner is None:
        return ""
    for name, raw in inner.raw_items():
        if name.lower() == "subject":
            return decode_header(str(raw)) + ".eml"
    return ""


def _filename(part) -> str:
    try:
        name = part.get_filename()
    except Exception:
        name = None
    if name is None:
        return ""
    return decode_header(str(name)) if "=?" in str(name) else str(name).strip()


def _part_text(part, hints: list[str]) -> str:
    """A text part's text: its declared charset; an HTML part that declares none in its MIME
    header is read in the charset its own ``<meta charset>`` / ``http-equiv`` tag declares
    (found by BeautifulSoup's detector in the first ``_META_SCAN`` bytes); else UTF-8 or the
    charset detector, ``hints`` breaking its ties."""
    payload = part.get_payload(decode=True)
    if payload is None:
        payload = part.get_payload()
        return payload if isinstance(payload, str) else ""
    charset = part.get_content_charset()
    if charset is None and part.get_content_type() == "text/html":
        charset = EncodingDetector.find_declared_encoding(payload[:_META_SCAN], is_html=True)
    return decode_bytes(payload, charset, hints)


def _html(html: str) -> str:
    """Text of an HTML body, quoted blocks of earlier messages removed first."""
    soup = BeautifulSoup(html, "html.parser")
    for tag in soup.select(
        "blockquote[type=cite], div.gmail_quote, div#appendonsend, "
        "div#divRplyFwdMsg, div.moz-cite-prefix, blockquote.gmail_quote"
    ):
        tag.decompose()
    return html_text(str(soup))[1]
