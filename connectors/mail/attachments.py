"""A mail's attachments as documents of their own, each linked to its mail.

The invoice, ticket or payslip people search for is the PDF attached to a mail, not the mail
("please find attached"). Each attachment a reader handles becomes a document:
:mod:`ragbag.text.documents` reads PDFs (scanned pages through OCR), pictures, office documents
and e-books, HTML and text; the calendar connector's reader reads ``.ics`` invitations; attached
mails (forwards, bounces) are read as this connector reads a mail. Its ``native_id`` is
``<mail's id>/attachment/<n>`` (n: its place among the mail's attachments), so it is replaced
and deleted with its mail. It inherits the mail's sender, recipients, subject, date and thread
as metadata, adds ``parent_doc_id``, ``filename`` and ``mime``, and its first line says which
mail it came with, so a hit reads "attachment X of mail Y".

Not made documents: small text parts already inlined in the mail's own text (read once, not
twice), inline pictures with a Content-ID (logos; :mod:`.body` leaves them out), PGP and S/MIME
signatures (a seal, not a document), and, reported with the reason, formats no reader handles,
attachments past the per-message limits (:mod:`connectors._inside`) and attachments whose
reader finds no text.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from ragbag.connectors._inside import Inside
from ragbag.connectors._isolate import each_record
from ragbag.connectors.mail.body import Attachment
from ragbag.core.records import Document, ReadError
from ragbag.text.documents import document_text, extension_for
from ragbag.text.unreadable import Unreadable

_CALENDAR = {"ics", "ical", "icalendar", "vcs"}
_SIGNATURE_TYPES = {"application/pgp-signature", "application/pkcs7-signature", "application/x-pkcs7-signature"}
_INHERITED = ("from", "from_name", "to", "cc", "subject", "date", "message_id", "thread_id", "thread_subject", "folder")


def attachment_id(mail_native_id: str, n: int) -> str:
    return f"{mail_native_id}/attachment/{n}"


# An attached mail's (title, text), read by the mail reader that found it (``message.py``, which
# this module serves and so does not import).
ReadMail = Callable[[bytes, str, str, str], tuple[str, str]]


def attachment_documents(
    mail: Document, attachments: list[Attachment], inside: Inside, read_mail: ReadMail
) -> Iterator[tuple[int, Document | ReadError]]:
    """(n, document or the reason it is not one) for each attachment of ``mail`` that is read;
    each behind the isolation boundary, so a damaged PDF costs that attachment only.
    ``read_mail(data, source, uri, folder)`` reads an attached mail."""
    if not inside.attachments:
        return
    counted: dict[str, int] = {}
    for n, a in enumerate(attachments, 1):
        if a.inlined.strip() or _is_signature(a.name, a.mime):
            continue
        uri = f"{mail.uri}{'&' if '#' in mail.uri else '#'}attachment={n}"
        why = inside.admit(counted, mail.native_id, a.size)
        if why:
            yield n, ReadError(uri, f"attachment {a.name!r} not read: {why}")
            continue
        yield n, each_record(uri, _document, mail, n, a, uri, inside, read_mail)


def _is_signature(name: str, mime: str) -> bool:
    """A PGP or S/MIME signature part: the mail's seal, not something anyone reads."""
    mime = mime.lower()
    return mime in _SIGNATURE_TYPES or (
        mime == "application/octet-stream" and name.lower().endswith((".asc", ".sig", ".p7s"))
    )


def _document(
    mail: Document, n: int, attachment: Attachment, uri: str, inside: Inside, read_mail: ReadMail
) -> Document:
    name, mime, data = attachment.name, attachment.mime, attachment.data()
    if not data:
        raise Unreadable(f"attachment {name!r} has no bytes in the message (a partial download?)")
    ext = "ics" if mime.lower().startswith("text/calendar") else extension_for(name, mime)
    meta: dict[str, Any] = {k: mail.metadata[k] for k in _INHERITED if k in mail.metadata}
    meta.update(parent_doc_id=mail.doc_id, parent_native_id=mail.native_id, filename=name, mime=mime, ext=ext)
    meta.update(size=len(data), attachment=True, mail_format=mail.metadata.get("format", ""))
    if ext == "eml" or mime.lower() == "message/rfc822":  # a forwarded or bounced mail
        title, text = read_mail(data, mail.source, uri, meta.get("folder", ""))
        meta["format"] = "eml"
    elif ext in _CALENDAR:
        from ragbag.connectors.calendar import invitation_text

        title, text = "", invitation_text(data)
        meta["format"] = "ics"
    else:
        title, text = document_text(data, name, ext, meta, inside.ocr, inside.speech)
    subject = mail.metadata.get("subject") or "(no subject)"
    sender = mail.authors[0] if mail.authors else "(unknown sender)"
    when = f", {mail.created_at:%Y-%m-%d}" if mail.created_at else ""
    head = f"Attachment {name} of the mail “{subject}” from {sender}{when}"
    if title and title != name:
        head += f" · {title}"
    return Document(
        source=mail.source,
        connector=mail.connector,
        native_id=attachment_id(mail.native_id, n),
        uri=uri,
        title=f"{name} (attachment of: {subject})",
        text=f"{head}\n\n{text}",
        created_at=mail.created_at,
        authors=list(mail.authors),
        metadata=meta,
    )
