"""iMessage attachments as documents of their own (connectors/_chat_attachments.py): found on
disk from chat.db's ``attachment`` rows (``~`` = the chat.db's user's home, or the copied Messages
folder of an export), linked to their window, read through the same readers as a folder's files
(OCR for pictures), missing iCloud files reported once per window, stickers skipped, limits and
on/off per source, and kept with their window across refreshes."""

from __future__ import annotations

import io
import os
import shutil
import sqlite3
from pathlib import Path

import pytest
from conftest import split_read
from test_connector_imessage import BOB, ChatDB, at

from ragbag.connectors import imessage
from ragbag.connectors._chat_attachments import MISSING, OUTSIDE, locate
from ragbag.models.embedding import token_counter
from ragbag_evalsets.formats.pdf import make_pdf

FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
PDF = make_pdf([["# Invoice 4711", "Boiler service for the flat in Kreuzberg", "Total: 312.50 EUR"]])
BOB_CHAT = f"iMessage;-;{BOB}"


def picture(lines: list[str]) -> bytes:
    """A PNG screenshot of ``lines`` in DejaVu Sans, black on white."""
    from PIL import Image, ImageDraw, ImageFont

    try:
        font = ImageFont.truetype(FONT, 40)
    except OSError:  # a machine without DejaVu: Pillow's own scalable font
        font = ImageFont.load_default(size=40)
    img = Image.new("RGB", (900, 90 + 70 * len(lines)), "white")
    draw = ImageDraw.Draw(img)
    for i, line in enumerate(lines):
        draw.text((40, 40 + i * 70), line, font=font, fill="black")
    buf = io.BytesIO()
    img.save(buf, "PNG")
    return buf.getvalue()


SHOT = picture(["Parking level 3", "Spot 42 near the lift"])


@pytest.fixture(autouse=True)
def ocr_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGBAG_OCR_CACHE", str(tmp_path / "ocr-cache"))


class Messages:
    """A user's ``~/Library/Messages``: chat.db with attachment rows as Messages writes them
    (``~/Library/Messages/Attachments/<xx>/<nn>/<GUID>/<name>``) and the files that are on disk."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.folder = home / "Library" / "Messages"
        self.db = ChatDB(self.folder / "chat.db")  # in WAL mode, as Messages keeps it: read from a copy
        self.n = 0

    def attach(
        self,
        message: int,
        name: str,
        mime: str,
        data: bytes | None,
        sticker: bool = False,
        hidden: bool = False,
        stored: str | None = None,
    ) -> int:
        """An attachment row joined to ``message``; its file written unless ``data`` is None
        (not downloaded from iCloud). ``stored``: the ``filename`` column, if not the usual one."""
        self.n += 1
        guid = f"AT{self.n:06d}-0000-4000-8000-00000000{self.n:04d}"
        rel = f"Attachments/{self.n:02x}/{self.n:02d}/{guid}/{name}"
        if data is not None:
            (self.folder / rel).parent.mkdir(parents=True, exist_ok=True)
            (self.folder / rel).write_bytes(data)
        cur = self.db.db.execute(
            "INSERT INTO attachment (guid, created_date, filename, uti, mime_type, transfer_state,"
            " is_outgoing, transfer_name, total_bytes, is_sticker, hide_attachment, original_guid)"
            " VALUES (?, 0, ?, 'public.data', ?, 5, 0, ?, ?, ?, ?, ?)",
            (
                guid,
                stored if stored is not None else f"~/Library/Messages/{rel}",
                mime,
                name,
                len(data or b""),
                int(sticker),
                int(hidden),
                guid,
            ),
        )
        self.db.db.execute("INSERT INTO message_attachment_join VALUES (?, ?)", (message, cur.lastrowid))
        return cur.lastrowid

    def path(self, rowid: int) -> Path:
        (stored,) = self.db.db.execute("SELECT filename FROM attachment WHERE ROWID = ?", (rowid,)).fetchone()
        return self.home / stored[2:]

    def commit(self) -> Path:
        self.db.db.commit()
        return self.db.path


def fixture(home: Path) -> tuple[Messages, dict]:
    """Bob sends an invoice and a screenshot, a photo still in iCloud, a sticker, a hidden
    attachment and a video; a day later, a message with text only."""
    m = Messages(home)
    bob = m.db.chat(BOB_CHAT, BOB, [BOB])
    ids: dict = {"chat": bob}
    ids["first"] = m.db.message(bob, at(1, 9, 0), BOB, "Here is the invoice for the boiler \ufffc")
    ids["pdf"] = m.attach(ids["first"][0], "invoice.pdf", "application/pdf", PDF)
    ids["shot_msg"] = m.db.message(bob, at(1, 9, 2), None, "\ufffc")
    ids["png"] = m.attach(ids["shot_msg"][0], "Screenshot.png", "image/png", SHOT)
    ids["photo_msg"] = m.db.message(bob, at(1, 9, 3), BOB, "\ufffc\ufffc")
    ids["missing"] = m.attach(ids["photo_msg"][0], "IMG_0001.jpeg", "image/jpeg", None)
    ids["sticker"] = m.attach(ids["photo_msg"][0], "sticker.png", "image/png", SHOT, sticker=True)
    ids["hidden"] = m.attach(ids["photo_msg"][0], "hidden.png", "image/png", SHOT, hidden=True)
    ids["video"] = m.attach(ids["photo_msg"][0], "clip.mov", "video/quicktime", b"\0\0\0\x14ftypqt  ")
    ids["later"] = m.db.message(bob, at(2, 18, 0), None, "Paid it, thanks!")
    m.commit()
    return m, ids


def read(path: Path, cursor=None, options=None):
    return split_read(imessage.read(path, "texts", cursor, options=options))


def window_id(ids: dict) -> str:
    return f"{BOB_CHAT}/{ids['first'][1]}"


def test_attachments_are_documents_linked_to_their_window(tmp_path):
    m, ids = fixture(tmp_path / "home")
    path = m.commit()
    docs, seen, errors, cursor = read(path)
    wid = window_id(ids)
    window = docs[wid]
    pdf_id, png_id = f"{wid}/attachment/{ids['pdf']}", f"{wid}/attachment/{ids['png']}"
    assert set(docs) == {wid, pdf_id, png_id, f"{BOB_CHAT}/{ids['later'][1]}"} and not seen

    # The window names what was sent with each message; stickers and hidden ones are not content.
    assert f"2024-05-01 09:00 {BOB}: Here is the invoice for the boiler [attachment invoice.pdf]\n" in window.text
    assert "2024-05-01 09:02 Me: [attachment Screenshot.png]\n" in window.text
    assert f"09:03 {BOB}: [attachment IMG_0001.jpeg] [attachment clip.mov]\n" in window.text
    assert "sticker" not in window.text and "hidden" not in window.text
    assert window.metadata["messages"] == 3

    pdf = docs[pdf_id]
    assert pdf.text.startswith(f"Attachment invoice.pdf sent by {BOB} in the chat “{BOB}”, 2024-05-01 09:00")
    assert "Invoice 4711" in pdf.text and "312.50 EUR" in pdf.text
    assert pdf.title == f"invoice.pdf (attachment in: {BOB})"
    assert pdf.created_at == at(1, 9, 0) and pdf.authors == [BOB] and pdf.connector == "imessage"
    assert pdf.uri == f"{path.absolute()}#{pdf_id}"
    meta = pdf.metadata
    assert meta["parent_doc_id"] == window.doc_id and meta["parent_native_id"] == wid
    assert meta["sender"] == [BOB] and meta["is_from_me"] is False and meta["date"] == "2024-05-01"
    assert meta["chat"] == BOB and meta["chat_guid"] == BOB_CHAT and meta["service"] == "iMessage"
    assert meta["filename"] == "invoice.pdf" and meta["mime"] == "application/pdf" and meta["format"] == "pdf"
    assert meta["attachment"] is True and meta["size"] == len(PDF)
    assert Path(meta["path"]) == m.path(ids["pdf"]).resolve()
    spans = imessage.spans(pdf, token_counter(), 256)  # chunked as the same PDF in a folder
    assert spans and spans[0].metadata["page_start"] == 1 and "sender" not in spans[0].metadata

    shot = docs[png_id]  # the picture's text, recognised (OCR)
    assert shot.metadata["sender"] == ["Me"] and shot.metadata["is_from_me"] is True
    assert shot.metadata["format"] == "image" and shot.created_at == at(1, 9, 2)
    assert "parking level 3" in shot.text.lower() and "spot 42" in shot.text.lower()
    assert any((tmp_path / "ocr-cache" / "ocr" / "texts").iterdir())  # the OCR result was cached

    # The photo not downloaded from iCloud: one report for the window, saying how many and why;
    # the video: no reader, reported too. The sticker and the hidden one: nothing.
    assert sorted((e.uri, e.error) for e in errors) == sorted(
        [
            (
                f"{path.absolute()}#{wid}",
                "1 attachment not on this Mac (kept in iCloud and not downloaded, or deleted;"
                " open the chat in Messages to download them): IMG_0001.jpeg",
            ),
            (f"{path.absolute()}#{wid}", "1 attachment not read: clip.mov (no reader for .mov)"),
        ]
    )
    state = cursor["files"][str(path.absolute())]
    assert state["inside"] == [True, True, 20, 25 * 2**20, True]  # attachments, ocr, limits, speech


def test_unchanged_window_vouches_for_its_attachments(tmp_path):
    m, ids = fixture(tmp_path / "home")
    path = m.commit()
    docs1, _, errors1, cursor1 = read(path)
    docs, seen, errors, cursor = read(path, cursor1)
    assert not docs and seen == set(docs1) and cursor == cursor1
    assert sorted(e.error for e in errors) == sorted(e.error for e in errors1)  # reports repeated

    # A message in the window's hour re-reads it, with its attachments; the other window is Seen.
    m.db.message(ids["chat"], at(1, 9, 30), BOB, "Pay by Friday please")
    m.commit()
    docs, seen, _, _ = read(path, cursor1)
    wid = window_id(ids)
    assert set(docs) == {wid, f"{wid}/attachment/{ids['pdf']}", f"{wid}/attachment/{ids['png']}"}
    assert seen == {f"{BOB_CHAT}/{ids['later'][1]}"}


def test_attachments_off_reads_none_and_a_settings_change_rereads(tmp_path):
    m, ids = fixture(tmp_path / "home")
    path = m.commit()
    wid = window_id(ids)
    docs, seen, errors, cursor_off = read(path, options={"attachments": False})
    assert set(docs) == {wid, f"{BOB_CHAT}/{ids['later'][1]}"} and not errors
    assert "[attachment invoice.pdf]" in docs[wid].text  # still named in the window

    docs, seen, errors, cursor_on = read(path, cursor_off)  # attachments on again: all read anew
    assert not seen and f"{wid}/attachment/{ids['pdf']}" in docs and len(errors) == 2
    docs, seen, _, _ = read(path, cursor_on, options={"ocr": False})  # OCR off: read anew as well
    assert not seen and f"{wid}/attachment/{ids['pdf']}" in docs
    assert f"{wid}/attachment/{ids['png']}" not in docs  # a picture with neither text, date nor place
    docs, seen, _, _ = read(path, cursor_on, options={"attachments": "no"})
    assert not seen and set(docs) == {wid, f"{BOB_CHAT}/{ids['later'][1]}"}


def test_deleted_attachment_is_gone_and_a_downloaded_one_appears(tmp_path):
    m, ids = fixture(tmp_path / "home")
    path = m.commit()
    wid = window_id(ids)
    _, _, _, cursor1 = read(path)

    m.db.db.execute("DELETE FROM message_attachment_join WHERE attachment_id = ?", (ids["pdf"],))
    m.db.db.execute("DELETE FROM attachment WHERE ROWID = ?", (ids["pdf"],))
    m.commit()
    docs, seen, _, cursor2 = read(path, cursor1)
    gone = f"{wid}/attachment/{ids['pdf']}"
    assert gone not in docs and gone not in seen
    assert wid in docs and "[attachment invoice.pdf]" not in docs[wid].text
    assert f"{wid}/attachment/{ids['png']}" in docs

    # iCloud downloads the photo: the file appears, its window is read again, no report.
    photo = m.path(ids["missing"])
    photo.parent.mkdir(parents=True)
    photo.write_bytes(picture(["Receipt 0815", "Bakery Schmidt"]))
    docs, seen, errors, _ = read(path, cursor2)
    assert f"{wid}/attachment/{ids['missing']}" in docs and "0815" in docs[f"{wid}/attachment/{ids['missing']}"].text
    assert [e.error for e in errors] == ["1 attachment not read: clip.mov (no reader for .mov)"]
    assert seen == {f"{BOB_CHAT}/{ids['later'][1]}"}


def test_limits_per_message_and_per_file(tmp_path):
    m = Messages(tmp_path / "home")
    chat = m.db.chat(BOB_CHAT, BOB, [BOB])
    rowid, guid = m.db.message(chat, at(3, 10), BOB, "\ufffc\ufffc")
    first, second = m.attach(rowid, "a.pdf", "application/pdf", PDF), m.attach(rowid, "b.pdf", "application/pdf", PDF)
    m.attach(m.db.message(chat, at(3, 10, 1), BOB, "\ufffc")[0], "notes.txt", "text/plain", b"x" * (2 * 2**20))
    path = m.commit()
    docs, _, errors, _ = read(path, options={"max_attachments": 1, "max_attachment_mb": 1})
    wid = f"{BOB_CHAT}/{guid}"
    assert set(docs) == {wid, f"{wid}/attachment/{first}"}
    assert [e.error for e in errors] == [
        "2 attachments not read: b.pdf (the message has more than 1: max_attachments);"
        " notes.txt (2 MB, over 1 MB: max_attachment_mb)"
    ]
    docs, _, errors, _ = read(path)
    assert f"{wid}/attachment/{second}" in docs and not errors


def test_an_export_of_the_messages_folder_and_paths_outside_it(tmp_path):
    m = Messages(tmp_path / "home")
    chat = m.db.chat(BOB_CHAT, BOB, [BOB])
    rowid, guid = m.db.message(chat, at(4, 12), BOB, "\ufffc\ufffc\ufffc")
    usual = m.attach(rowid, "invoice.pdf", "application/pdf", PDF)
    relative = m.attach(rowid, "notes.txt", "text/plain", b"Gate code 4711#", stored="Attachments/notes.txt")
    (m.folder / "Attachments" / "notes.txt").write_bytes(b"Gate code 4711#")
    secret = tmp_path / "home" / ".ssh" / "id_rsa.txt"
    secret.parent.mkdir()
    secret.write_text("PRIVATE KEY")
    m.attach(rowid, "id_rsa.txt", "text/plain", None, stored="~/.ssh/id_rsa.txt")
    m.attach(rowid, "passwd.txt", "text/plain", None, stored="Attachments/../../../.ssh/id_rsa.txt")
    m.commit()
    export = tmp_path / "backup" / "Messages"  # the Messages folder copied elsewhere
    shutil.copytree(m.folder, export)
    for path in (m.folder / "chat.db", export / "chat.db"):
        docs, _, errors, _ = read(path)
        wid = f"{BOB_CHAT}/{guid}"
        assert set(docs) == {wid, f"{wid}/attachment/{usual}", f"{wid}/attachment/{relative}"}
        assert docs[f"{wid}/attachment/{relative}"].text.endswith("Gate code 4711#")
        assert Path(docs[f"{wid}/attachment/{usual}"].metadata["path"]).is_relative_to(path.parent.resolve())
        assert not any("PRIVATE KEY" in d.text for d in docs.values())
        (error,) = [e.error for e in errors]
        assert error.startswith("2 attachments not read: id_rsa.txt (outside the Messages folder: ~/.ssh/id_rsa.txt)")


def test_locate(tmp_path):
    folder = tmp_path / "home" / "Library" / "Messages"
    (folder / "Attachments" / "ab").mkdir(parents=True)
    (folder / "Attachments" / "ab" / "x.pdf").write_bytes(b"%PDF")
    db = folder / "chat.db"
    found = (folder / "Attachments" / "ab" / "x.pdf").resolve()
    assert locate(db, "~/Library/Messages/Attachments/ab/x.pdf") == (found, "")
    assert locate(db, "Attachments/ab/x.pdf") == (found, "")
    assert locate(db, "/Users/someone/Library/Messages/Attachments/ab/x.pdf") == (found, "")
    assert locate(db, "~/Library/Messages/Attachments/ab/y.pdf") == (None, MISSING)
    assert locate(db, "") == (None, MISSING)
    assert locate(db, "~/Documents/x.pdf") == (None, OUTSIDE)
    assert locate(db, "/etc/passwd") == (None, OUTSIDE)
    assert locate(db, "bad\0name") == (None, MISSING)
    os.symlink("/etc", folder / "Attachments" / "link")  # a link out of the folder is not followed
    assert locate(db, "Attachments/link/passwd") == (None, OUTSIDE)


def test_damaged_or_old_attachment_tables(tmp_path):
    """A chat.db from before stickers (no is_sticker/hide_attachment columns) is read; one
    without the attachment tables at all too."""
    m, ids = fixture(tmp_path / "home")
    path = m.commit()
    m.db.close()
    con = sqlite3.connect(path)
    con.execute("ALTER TABLE attachment DROP COLUMN is_sticker")
    con.execute("ALTER TABLE attachment DROP COLUMN hide_attachment")
    con.commit()
    docs, _, _, _ = read(path)
    wid = window_id(ids)
    assert f"{wid}/attachment/{ids['sticker']}" in docs  # a sticker no longer told apart
    con.execute("DROP TABLE message_attachment_join")
    con.commit()
    con.close()
    docs, _, errors, _ = read(path)
    assert set(docs) == {wid, f"{BOB_CHAT}/{ids['later'][1]}"}
    assert not errors
