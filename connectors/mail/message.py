"""One RFC 822 message as a Document: the summary line, the trimmed body, attachments, thread
ids; and :class:`Run`, what one read of a mail source has produced so far."""

from __future__ import annotations

import email
import re
from dataclasses import dataclass, field
from datetime import datetime
from email import policy

from ragbag.connectors.mail.body import body_and_attachments
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
from ragbag.core.records import Document, stable_hash

NAME = "mail"  # the connector's name, which its documents carry
MAX_BODY_CHARS = 1_000_000
MAX_RECIPIENTS_SHOWN = 6


@dataclass
class Run:
    """State of one read: what has been emitted (for duplicates) and the next cursor."""

    source: str
    emitted: set[str] = field(default_factory=set)
    files: dict[str, list] = field(default_factory=dict)
    mbox: dict[str, dict] = field(default_factory=dict)


class Broken(Exception):
    """A message that is not readable; the text is the one-line reason."""


def parse_message(
    data: bytes, source: str, uri: str, folder: str, fmt: str, location: str, index: int, fallback_date: datetime | None
) -> Document:
    """Parse one RFC 822 message into a Document; raises Broken (or anything) when unusable."""
    msg = email.message_from_bytes(data, policy=policy.default)
    headers = header_values(msg)
    if not any(k in headers for k in ("from", "to", "subject", "date", "message-id")):
        raise Broken("no mail headers (From/To/Subject/Date/Message-ID) found")
    subject = " ".join(headers.get("subject", [""])[0].split())
    sender = addresses(msg, "from")
    to = addresses(msg, "to")
    cc = addresses(msg, "cc")
    message_id = msgid(headers.get("message-id", [""])[0])
    created = parse_date(headers.get("date", [""])[0]) or fallback_date

    body, attachments = body_and_attachments(msg)
    body = trim_quotes(body, forward=is_forward(subject))
    if len(body) > MAX_BODY_CHARS:
        body = body[:MAX_BODY_CHARS]
    names = [name for name, _, _ in attachments]
    types = [ctype for _, ctype, _ in attachments]
    extra = [f"[attachment {name}]\n{text.strip()}" for name, _, text in attachments if text.strip()]

    from_name, from_addr = sender[0] if sender else ("", "")
    if sender and not from_name and headers.get("x-from"):  # Exchange exports (Enron)
        from_name = " ".join(re.sub(r"<[^>]*>", "", headers["x-from"][0]).split()).strip("'\" ")
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
    return Document(
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
