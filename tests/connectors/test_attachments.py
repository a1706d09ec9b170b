"""Mail attachments as documents of their own (connectors/mail/attachments.py): linked to their
mail, read through the same readers as a folder's files (OCR for scans and screenshots),
limited and switchable per source, kept with their mail across refreshes, and never recognised
twice."""

from __future__ import annotations

import io
import mailbox
import shutil
from email.message import EmailMessage
from pathlib import Path

import pytest
from conftest import FIXTURES, build_in_process, cli, split_read

from ragbag.connectors import mail
from ragbag.core.records import Document, ReadError, doc_id_for
from ragbag.index.store import Store
from ragbag.text import ocr

PUBLIC = FIXTURES / "public"
DOCX = PUBLIC / "files" / "python-docx" / "features__steps__test_files__par-known-paragraphs.docx"
FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"


def _font(size: int):
    from PIL import ImageFont

    try:
        return ImageFont.truetype(FONT, size)
    except OSError:  # a machine without DejaVu: Pillow's own scalable font
        return ImageFont.load_default(size=size)


def _page(lines: list[str], size=(1240, 900)):
    from PIL import Image, ImageDraw

    img = Image.new("RGB", size, "white")
    draw = ImageDraw.Draw(img)
    for i, line in enumerate(lines):
        draw.text((90, 90 + i * 70), line, font=_font(34), fill="black")
    return img


def scanned_pdf(lines: list[str]) -> bytes:
    """An image-only PDF, as a scanner writes it: no text layer at all."""
    buf = io.BytesIO()
    _page(lines).save(buf, "PDF", resolution=150)
    return buf.getvalue()


def screenshot(lines: list[str]) -> bytes:
    buf = io.BytesIO()
    _page(lines, (900, 260)).save(buf, "PNG")
    return buf.getvalue()


SCAN = scanned_pdf(["Finanzamt München", "Steuernummer 143/222/90817", "Nachzahlung: 412,50 EUR"])
SHOT = screenshot(["Wi-Fi network: Gartenhaus", "Password: tulpe-9931"])


def message(msgid: str, subject: str, body: str, attachments: list[tuple[bytes, str, str]]) -> EmailMessage:
    m = EmailMessage()
    m["From"] = "Anna Berg <anna@example.org>"
    m["To"] = "me@example.org"
    m["Subject"] = subject
    m["Date"] = "Mon, 10 Feb 2025 10:00:00 +0000"
    m["Message-ID"] = f"<{msgid}>"
    m.set_content(body)
    for data, mime, name in attachments:
        main, sub = mime.split("/")
        m.add_attachment(data, maintype=main, subtype=sub, filename=name)
    return m


def write_mbox(path: Path, messages: list[EmailMessage]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    box = mailbox.mbox(str(path))
    for m in messages:
        box.add(m)
    box.flush()
    box.close()
    return path


def bescheid() -> EmailMessage:
    return message(
        "bescheid@fa",
        "Ihr Bescheid",
        "Anbei Ihr Bescheid und die Unterlagen.",
        [
            (SCAN, "application/pdf", "bescheid.pdf"),
            (SHOT, "image/png", "wifi.png"),
            (DOCX.read_bytes(), "application/vnd.openxmlformats-officedocument.wordprocessingml.document", "n.docx"),
            (b"\x00\x01\x02binary", "application/octet-stream", "blob.bin"),
            (b"-----BEGIN PGP SIGNATURE-----\n...\n", "application/pgp-signature", "signature.asc"),
        ],
    )


@pytest.fixture(autouse=True)
def _ocr_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGBAG_OCR_CACHE", str(tmp_path / "ocr-cache"))


@pytest.fixture
def recognised(monkeypatch) -> list[int]:
    """How many pictures the recogniser was really run on (cache hits do not count)."""
    calls: list[int] = []
    real = ocr.recognise

    def counting(image):
        calls.append(1)
        return real(image)

    monkeypatch.setattr(ocr, "recognise", counting)
    return calls


def test_each_readable_attachment_is_a_document_linked_to_its_mail(tmp_path, recognised):
    box = write_mbox(tmp_path / "mail" / "inbox.mbox", [bescheid()])
    docs, _, errors, _ = split_read(mail.read(box.parent, "m"))
    parent = docs["bescheid@fa"]
    assert parent.metadata["attachments"] == ["bescheid.pdf", "wifi.png", "n.docx", "blob.bin", "signature.asc"]
    kids = {k: d for k, d in docs.items() if k != "bescheid@fa"}
    assert sorted(kids) == ["bescheid@fa/attachment/1", "bescheid@fa/attachment/2", "bescheid@fa/attachment/3"]
    scan = kids["bescheid@fa/attachment/1"]
    assert scan.title == "bescheid.pdf (attachment of: Ihr Bescheid)"
    assert scan.text.startswith("Attachment bescheid.pdf of the mail “Ihr Bescheid” from Anna Berg")
    assert "Steuernummer 143/222/90817" in scan.text and "Nachzahlung: 412,50" in scan.text
    assert scan.metadata["ocr_pages"] == [1] and scan.metadata["format"] == "pdf"
    for kid in kids.values():
        assert kid.metadata["parent_doc_id"] == parent.doc_id == doc_id_for("m", "bescheid@fa")
        assert kid.metadata["from"] == "anna@example.org" and kid.metadata["subject"] == "Ihr Bescheid"
        assert kid.created_at == parent.created_at and kid.authors == parent.authors
    assert "Password: tulpe-9931" in kids["bescheid@fa/attachment/2"].text
    assert kids["bescheid@fa/attachment/3"].metadata["format"] == "docx"
    # The binary blob is named with its reason; the PGP signature is the mail's seal, not a document.
    (err,) = errors
    assert err.uri.endswith("inbox.mbox#0&attachment=4") and "no reader for .bin" in err.error
    assert len(recognised) == 2  # one scanned page, one screenshot


def test_limits_and_switches_are_per_source_and_reported(tmp_path):
    box = write_mbox(tmp_path / "mail" / "inbox.mbox", [bescheid()])
    docs, _, errors, _ = split_read(mail.read(box.parent, "m", options={"max_attachments": 1}))
    assert sorted(docs) == ["bescheid@fa", "bescheid@fa/attachment/1"]
    assert sum("more than 1: max_attachments" in e.error for e in errors) == 3
    docs, _, errors, _ = split_read(mail.read(box.parent, "m", options={"max_attachment_mb": 0}))
    assert sorted(docs) == ["bescheid@fa"] and all("max_attachment_mb" in e.error for e in errors)
    docs, _, errors, _ = split_read(mail.read(box.parent, "m", options={"attachments": False}))
    assert sorted(docs) == ["bescheid@fa"] and errors == []
    docs, _, errors, _ = split_read(mail.read(box.parent, "m", options={"ocr": False}))
    assert sorted(docs) == ["bescheid@fa", "bescheid@fa/attachment/3"]
    why = sorted(e.error for e in errors)
    assert "no text: a scanned PDF (OCR is off for this source)" in why
    assert any(w.startswith("picture with no date or place (OCR is off") for w in why)


def test_an_unchanged_mail_vouches_for_its_attachments_and_new_settings_read_again(tmp_path, recognised):
    box = write_mbox(tmp_path / "mail" / "inbox.mbox", [bescheid()])
    _, _, _, cursor = split_read(mail.read(box.parent, "m", options={"attachments": False}))
    docs, seen, _, cursor = split_read(mail.read(box.parent, "m", cursor))  # attachments on now
    assert len(docs) == 4 and not seen  # the settings changed: everything read again
    docs, seen, _, _ = split_read(mail.read(box.parent, "m", cursor))
    assert not docs and seen == {"bescheid@fa", *(f"bescheid@fa/attachment/{n}" for n in (1, 2, 3))}
    assert len(recognised) == 2


def test_apple_mail_partial_messages_find_their_attachments_stored_beside_them(tmp_path):
    m = bescheid()
    for part in m.iter_attachments():  # Apple Mail keeps the message without the attachments' bytes
        if part.get_filename() == "wifi.png":
            part.set_payload("")
    raw = m.as_bytes()
    data = tmp_path / "Mail" / "V10" / "A" / "INBOX.mbox" / "B" / "Data" / "0" / "1"
    (data / "Messages").mkdir(parents=True)
    (data / "Messages" / "7.partial.emlx").write_bytes(b"%d\n" % len(raw) + raw + b"<?xml version='1.0'?><plist/>")
    (data / "Attachments" / "7" / "3").mkdir(parents=True)
    (data / "Attachments" / "7" / "3" / "wifi.png").write_bytes(SHOT)
    docs, _, _, _ = split_read(mail.read(tmp_path / "Mail", "m"))
    assert "Password: tulpe-9931" in docs["bescheid@fa/attachment/2"].text


def test_attached_mails_and_text_parts_are_read(tmp_path):
    inner = message("inner@x", "Flight booking", "Booking code QX7RZ2, seat 14C.", [])
    outer = message(
        "outer@x", "Fwd: Flight booking", "See below.", [(b"int main(void) { return 0; }\n", "text/x-csrc", "a.c")]
    )
    outer.add_attachment(inner)
    box = write_mbox(tmp_path / "mail" / "inbox.mbox", [outer])
    docs, _, errors, _ = split_read(mail.read(box.parent, "m"))
    forwarded = next(d for d in docs.values() if d.metadata.get("format") == "eml")
    assert "Booking code QX7RZ2" in forwarded.text and forwarded.metadata["parent_doc_id"] == docs["outer@x"].doc_id
    assert not errors


def test_a_public_mail_with_a_pdf_attached_gives_the_pdf_its_document():
    """flanker's attached-pdf.eml (tests/fixtures/public/mail): a real mail nobody here wrote."""
    path = PUBLIC / "mail" / "flanker" / "tests__fixtures__messages__attached-pdf.eml"
    items = list(mail.read(path, "m"))
    kids = [i for i in items if isinstance(i, Document) and "parent_doc_id" in i.metadata]
    assert [k.metadata["filename"] for k in kids] == ["test.pdf"] and kids[0].metadata["format"] == "pdf"
    assert not [i for i in items if isinstance(i, ReadError)]


def test_a_public_mail_with_a_mail_enclosed_reads_it_through_the_mail_reader():
    """flanker's enclosed.eml: a message/rfc822 part (a real forwarded mail nobody here wrote) is
    read by the mail reader the attachments module is handed, into a document of its own."""
    path = PUBLIC / "mail" / "flanker" / "tests__fixtures__messages__enclosed.eml"
    items = list(mail.read(path, "m"))
    (outer,) = [i for i in items if isinstance(i, Document) and "parent_doc_id" not in i.metadata]
    (inner,) = [i for i in items if isinstance(i, Document) and "parent_doc_id" in i.metadata]
    assert inner.metadata["format"] == "eml" and inner.metadata["parent_doc_id"] == outer.doc_id
    assert "kicking ass" in inner.text and "Thanks!" in inner.text + inner.title
    assert not [i for i in items if isinstance(i, ReadError)]


@pytest.mark.slow
def test_a_refresh_recognises_nothing_and_attachments_follow_their_mail(home, tmp_path, recognised):
    """The first build recognises each picture once; a refresh after a new mail recognises
    nothing (the old mail vouches for its attachments), nor does a full re-read (the cache);
    deleting the mail deletes its attachments; `remove` deletes the OCR cache."""
    box = write_mbox(tmp_path / "mail" / "inbox.mbox", [bescheid()])
    cli("add", "mail", "m", str(box.parent))
    build_in_process(home, "m")
    assert len(recognised) == 2
    store = Store(home.lance_uri)
    ids = lambda: sorted(store.rows("documents", "m", ["native_id"]).to_pydict()["native_id"])  # noqa: E731
    assert len(ids()) == 4

    plain = message("later@x", "Later", "Nothing attached.", [])
    write_mbox(box, [bescheid(), plain])
    build_in_process(home, "m")
    assert len(recognised) == 2 and len(ids()) == 5

    (home.state_dir / "m.cursor.json").unlink()  # a full re-read: the cache answers
    build_in_process(home, "m")
    assert len(recognised) == 2 and len(ids()) == 5

    write_mbox(box, [plain])
    build_in_process(home, "m")
    assert ids() == ["later@x"]

    cache = tmp_path / "ocr-cache" / "ocr" / "m"
    assert any(cache.rglob("*.json"))
    cli("remove", "m")
    assert not cache.exists()
    shutil.rmtree(tmp_path / "mail")


@pytest.mark.slow
def test_show_outlines_the_recognised_lines_on_a_scanned_page(home, tmp_path):
    """A scanned PDF has no text layer to find a passage in: its OCR lines' boxes are the
    outline, on the page where they were read."""
    from ragbag.answer import visual

    folder = tmp_path / "scans"
    folder.mkdir()
    (folder / "bescheid.pdf").write_bytes(SCAN)
    cli("add", "files", "s", str(folder))
    build_in_process(home, "s")
    (chunk_id,) = Store(home.lance_uri).rows("chunks", "s", ["chunk_id"]).to_pydict()["chunk_id"]
    view = visual.make(home, chunk_id[:6], picture=True)
    assert view.kind == "pdf" and [p.page for p in view.pages] == [1]
    boxes = view.pages[0].boxes
    assert len(boxes) == 3  # one per recognised line, top line highest (PDF points, y up)
    width, height = view.pages[0].width, view.pages[0].height
    assert all(0 <= x0 < x1 <= width and 0 <= y0 < y1 <= height for x0, y0, x1, y1 in boxes)
    assert boxes[0][1] > boxes[1][1] > boxes[2][1]
    assert view.image is not None and len(view.image_boxes) >= 1
