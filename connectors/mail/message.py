"""One RFC 822 message as a Document: the summary line, the trimmed body, attachments, thread
ids; and :class:`Run`, what one read of a mail source has produced so far."""

from __future__ import annotations

import email.parser
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from email import policy
from email.message import EmailMessage

from ragbag.connectors._inside import Inside
from ragbag.connectors.mail.attachments import attachment_documents, attachment_id
from ragbag.connectors.mail.body import Attachment, body_and_attachments
from ragbag.connectors.mail.headers import (
    addresses,
    header_values,
    is_forward,
    is_reply,
    message_ids,
    msgid,
    normalise_subject,
    parse_date,
    person,
)
from ragbag.connectors.mail.quoting import trim_quotes
from ragbag.core.records import Document, ReadError, Seen, stable_hash
from ragbag.text.unreadable import Unreadable

NAME = "mail"  # the connector's name, which its documents carry
MAX_BODY_CHARS = 1_000_000
# One message's bytes at most (mbox record, Maildir/emlx/eml file): parsing holds a few times
# this, so the limit bounds what one message can cost; a larger one is a ReadError.
MAX_MESSAGE_BYTES = 64 * 2**20
MAX_RECIPIENTS_SHOWN = 6
_FEED = 1 << 16


@dataclass
class Run:
    """State of one read: what has been emitted (for duplicates) and the next cursor.

    Duplicates: one Message-ID names one mail, but not every sender keeps to that (list
    software and bulk mailers reuse ids, a draft and its sent copy share one), so a message
    is a duplicate only when its content is the same too: :func:`content_key`, a hash of the
    document's text (the From · To · Date · Subject line, the body, the attachments), which the
    same mail filed in two folders shares. The first distinct content keeps the bare id;
    each later distinct one gets ``<id>#<content key>``, so ids stay what they were for every
    mailbox without such a clash and do not depend on anything but the mail (and, among
    clashing ones, which comes first in sorted path order)."""

    source: str
    inside: Inside
    emitted: set[str] = field(default_factory=set)
    keys: dict[str, str] = field(default_factory=dict)  # native id emitted → its content key
    files: dict[str, list] = field(default_factory=dict)
    mbox: dict[str, dict] = field(default_factory=dict)

    def vouch(self, native_id: str, key: str | None) -> bool:
        """Record an unchanged message read before (its stored id and content key); False
        when it was already emitted or vouched for in this read."""
        if native_id in self.emitted:
            return False
        self.emitted.add(native_id)
        if key:
            self.keys[native_id] = key
        return True

    def seen(self, native_id: str, key: str | None, kids: list[int]) -> Iterator[Seen]:
        """``Seen`` for an unchanged message read before and for its attachments' documents
        (``kids``: their places among its attachments), unless it was already vouched for."""
        if self.vouch(native_id, key):
            yield Seen(native_id)
            yield from (Seen(attachment_id(native_id, n)) for n in kids)

    def attachments_of(self, doc: Document, mail: Mail, kids: list[int]) -> Iterator[Document | ReadError]:
        """The documents of the placed message ``doc``'s attachments (their places appended to
        ``kids``, for the cursor), and why the others are not."""
        for n, item in attachment_documents(doc, mail.attachments, self.inside, _attached_mail):
            if isinstance(item, Document):
                kids.append(n)
            yield item

    def place(self, doc: Document) -> tuple[Document | None, str]:
        """(the document under the id it gets in this read, or None for a true duplicate of
        one already emitted; its content key). ``doc.native_id`` is set to that id either way."""
        key = content_key(doc)
        if doc.native_id in self.emitted and self.keys.get(doc.native_id, key) != key:
            doc.native_id = f"{doc.native_id}#{key}"  # the same Message-ID, another mail
        if not self.vouch(doc.native_id, key):
            return None, key
        return doc, key


def content_key(doc: Document) -> str:
    """What tells two mails with one Message-ID apart: a hash of the document's text, which
    holds nothing of the folder or file the message was found in."""
    return stable_hash(doc.text, length=16)


class Broken(Unreadable):
    """A message that is not readable; the text is the one-line reason."""


def parse_bytes(data: bytes | bytearray | memoryview) -> EmailMessage:
    """The message, parsed by the standard library (``policy.default``) from ``_FEED``-byte
    pieces: handed the whole message at once, the parser holds it as one string and again as a
    list of lines besides the bytes, about ten times the message in all; fed in pieces it
    holds the pieces' lines only until each part's payload is joined."""
    parser = email.parser.BytesFeedParser(policy=policy.default)
    view = memoryview(data)
    for i in range(0, len(view), _FEED):
        parser.feed(bytes(view[i : i + _FEED]))
    msg = parser.close()
    assert isinstance(msg, EmailMessage)
    return msg


def declared_charsets(msg: EmailMessage) -> list[str]:
    """The charsets the message's parts declare, most used first: what raw 8-bit headers and
    undeclared parts were most likely written in."""
    counts: dict[str, int] = {}
    for part in msg.walk():
        charset = part.get_param("charset")
        if isinstance(charset, str) and charset.strip() and not charset.lower().startswith(("us-ascii", "ascii")):
            counts[charset.strip().lower()] = counts.get(charset.strip().lower(), 0) + 1
    return sorted(counts, key=lambda c: -counts[c])


@dataclass
class Mail:
    """One parsed message: its document, and its attachments (name, type, inlined text, bytes)."""

    doc: Document
    attachments: list[Attachment]


def parse_message(
    data: bytes, source: str, uri: str, folder: str, fmt: str, location: str, index: int, fallback_date: datetime | None
) -> Mail:
    """Parse one RFC 822 message; raises Broken (or anything) when unusable."""
    msg = parse_bytes(data)
    hints = declared_charsets(msg)
    headers = header_values(msg, hints)
    if not any(k in headers for k in ("from", "to", "subject", "date", "message-id")):
        raise Broken("no mail headers (From/To/Subject/Date/Message-ID) found")
    subject = " ".join(headers.get("subject", [""])[0].split())
    sender = addresses(msg, "from", hints)
    to = addresses(msg, "to", hints)
    cc = addresses(msg, "cc", hints)
    message_id = msgid(headers.get("message-id", [""])[0])
    created = parse_date(headers.get("date", [""])[0]) or fallback_date

    body, attachments = body_and_attachments(msg, hints)
    body = trim_quotes(body, forward=is_forward(subject))
    if len(body) > MAX_BODY_CHARS:
        body = body[:MAX_BODY_CHARS]
    names = [a.name for a in attachments]
    types = [a.mime for a in attachments]
    extra = [f"[attachment {a.name}]\n{a.inlined.strip()}" for a in attachments if a.inlined.strip()]

    from_name, from_addr = sender[0] if sender else ("", "")
    if sender and not from_name and headers.get("x-from"):  # Exchange exports (Enron)
        from_name = " ".join(re.sub(r"<[^<>]*>", "", headers["x-from"][0]).split()).strip("'\" ")
        from_name = "" if from_name.lower() == from_addr else from_name
    summary = [f"From: {person(from_name, from_addr)}" if sender else "From: (unknown)"]
    if to:
        shown = ", ".join(person(n, a) for n, a in to[:MAX_RECIPIENTS_SHOWN])
        more = len(to) - MAX_RECIPIENTS_SHOWN
        summary.append(f"To: {shown}" + (f" and {more} more" if more > 0 else ""))
    if created:
        summary.append(f"Date: {created:%Y-%m-%d %H:%M} UTC")
    summary.append(f"Subject: {subject or '(no subject)'}")
    parts = [" · ".join(summary), body.strip()]
    if names:
        parts.append("Attachments: " + ", ".join(f"{n} ({t})" for n, t in zip(names, types)))
    parts += extra
    text = "\n\n".join(p for p in parts if p) + "\n"

    refs = message_ids(" ".join(headers.get("references", [])))
    reply_to = message_ids(" ".join(headers.get("in-reply-to", [])))
    norm_subject = normalise_subject(subject)
    if refs or reply_to:
        thread_id = (refs or reply_to)[0]
    elif message_id and not is_reply(subject):
        thread_id = message_id
    else:
        thread_id = "subject:" + norm_subject.lower()
    labels = [x.strip() for x in ",".join(headers.get("x-gmail-labels", [])).split(",") if x.strip()]
    meta = {
        "from": from_addr,
        "from_name": from_name,
        "to": [a for _, a in to],
        "cc": [a for _, a in cc],
        "subject": subject,
        "date": created.isoformat() if created else "",
        "message_id": message_id,
        "thread_id": thread_id,
        "thread_subject": norm_subject,
        "folder": folder,
        "has_attachments": bool(names),
        "attachments": names,
        "attachment_types": types,
        "labels": labels,
        "format": fmt,
    }
    native_id = message_id or "nomid:" + stable_hash(location, str(index))
    doc = Document(
        source=source,
        connector=NAME,
        native_id=native_id,
        uri=uri,
        title=subject or "(no subject)",
        text=text,
        created_at=created,
        updated_at=None,
        authors=[person(from_name, from_addr)] if sender else [],
        metadata=meta,
    )
    return Mail(doc, attachments)


def _attached_mail(data: bytes, source: str, uri: str, folder: str) -> tuple[str, str]:
    """(title, text) of a mail attached to another (forwarded or bounced), read as a mail."""
    inner = parse_message(data, source, uri, folder, "eml", uri, 0, None).doc
    return inner.title, inner.text
