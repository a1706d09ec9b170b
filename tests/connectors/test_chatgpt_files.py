"""Files inside a ChatGPT export (connectors/chatgpt.py): uploads and pictures become documents
linked to their conversation, found by file id in every layout exports have used, read through
the same readers as a folder's files (OCR for pictures), reported when the export left them out,
vouched for with their conversation across refreshes, and switchable per source."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest

from ragbag.connectors import chatgpt
from ragbag.core.records import Cursor, Document, ReadError, Seen
from ragbag.models.embedding import token_counter
from ragbag_evalsets.formats.pdf import make_pdf

T0 = 1709630000.0  # 2024-03-05 09:13:20 UTC
FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
PNG_ID = "file_00000000aa11bb22cc33dd44ee55ff66"  # a sediment:// id, as newer exports write them


@pytest.fixture(autouse=True)
def _ocr_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGBAG_OCR_CACHE", str(tmp_path / "ocr"))


def picture(lines: list[str], fmt: str = "PNG") -> bytes:
    """A screenshot of text (none: a blank picture, like most generated art to OCR)."""
    from PIL import Image, ImageDraw, ImageFont

    img = Image.new("RGB", (900, 260), "white")
    draw = ImageDraw.Draw(img)
    for i, line in enumerate(lines):
        draw.text((60, 60 + i * 70), line, font=ImageFont.truetype(FONT, 34), fill="black")
    buf = io.BytesIO()
    img.save(buf, fmt)
    return buf.getvalue()


PDF = make_pdf([["Notice of assessment 2023", "Tax due: 412.50 EUR by 30 April"]])  # a real text layer
SHOT = picture(["Wi-Fi network: Gartenhaus", "Password: tulpe-9931"])
ART = picture([], "WEBP")


class Tree:
    """A conversation's ``mapping`` as the export writes it."""

    def __init__(self) -> None:
        self.mapping: dict[str, dict] = {
            "client-created-root": {"id": "client-created-root", "message": None, "parent": None, "children": []}
        }

    def add(self, node_id: str, parent: str, role: str, content: dict, t: float, **meta) -> str:
        self.mapping[node_id] = {
            "id": node_id,
            "message": {
                "id": node_id,
                "author": {"role": role, "name": "dalle.text2im" if role == "tool" else None, "metadata": {}},
                "create_time": t,
                "update_time": None,
                "content": content,
                "status": "finished_successfully",
                "end_turn": role == "assistant" or None,
                "weight": 1.0,
                "metadata": meta,
                "recipient": "all",
                "channel": None,
            },
            "parent": parent,
            "children": [],
        }
        self.mapping[parent]["children"].append(node_id)
        return node_id


def text(*parts) -> dict:
    return {"content_type": "text", "parts": list(parts)}


def image_part(pointer: str) -> dict:
    return {
        "content_type": "image_asset_pointer",
        "asset_pointer": pointer,
        "size_bytes": 48211,
        "width": 900,
        "height": 260,
        "fovea": None,
        "metadata": None,
    }


def upload(file_id: str, name: str, mime: str, size: int) -> dict:
    return {"id": file_id, "name": name, "mime_type": mime, "size": size}


def conversation(conv_id: str, title: str, tree: Tree, current: str, created: float, updated: float) -> dict:
    return {
        "title": title,
        "create_time": created,
        "update_time": updated,
        "mapping": tree.mapping,
        "moderation_results": [],
        "current_node": current,
        "conversation_id": conv_id,
        "default_model_slug": "gpt-4o",
        "gizmo_id": None,
        "is_archived": False,
        "id": conv_id,
    }


def taxes() -> dict:
    """An uploaded PDF, a pasted screenshot (sediment pointer), a file the export left out, and
    an upload on a dead branch (an edited question)."""
    t = Tree()
    q1 = t.add(
        "u-1",
        "client-created-root",
        "user",
        text("What does this notice say?"),
        T0,
        attachments=[upload("file-PdF111", "notice.pdf", "application/pdf", len(PDF))],
    )
    t.add(
        "u-1-old",
        "client-created-root",
        "user",
        text("DEADBRANCH"),
        T0 - 5,
        attachments=[upload("file-DeadBr", "draft.pdf", "application/pdf", 10)],
    )
    a1 = t.add("a-1", q1, "assistant", text("You owe 412.50 EUR, due by 30 April."), T0 + 10)
    q2 = t.add(
        "u-2",
        a1,
        "user",
        {"content_type": "multimodal_text", "parts": [image_part(f"sediment://{PNG_ID}"), "And this screenshot?"]},
        T0 + 86400,
        attachments=[upload(PNG_ID, "image.png", "image/png", len(SHOT))],
    )
    a2 = t.add("a-2", q2, "assistant", text("That is your Wi-Fi name and password."), T0 + 86410)
    q3 = t.add(
        "u-3",
        a2,
        "user",
        text("And the old contract?"),
        T0 + 86420,
        attachments=[
            upload(
                "file-Gone999",
                "old-contract.docx",
                "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
                5000,
            )
        ],
    )
    a3 = t.add("a-3", q3, "assistant", text("I cannot see that file any more."), T0 + 86430)
    return conversation("67f0-taxes", "Tax notice questions", t, a3, T0, T0 + 86430)


def logo() -> dict:
    """A generated image: the image tool's message points at a picture with no text in it."""
    t = Tree()
    q = t.add("u-1", "client-created-root", "user", text("Draw a logo for my bakery."), T0 + 500)
    c = t.add(
        "c-1",
        q,
        "assistant",
        {"content_type": "code", "language": "json", "text": '{"prompt": "a bakery logo"}'},
        T0 + 501,
    )
    t.mapping[c]["message"]["recipient"] = "dalle.text2im"
    img = t.add(
        "t-1",
        c,
        "tool",
        {"content_type": "multimodal_text", "parts": [image_part("file-service://file-Art42")]},
        T0 + 520,
    )
    a = t.add("a-1", img, "assistant", text("Here is your logo."), T0 + 521)
    return conversation("67f1-logo", "Bakery logo", t, a, T0 + 500, T0 + 521)


def export_zip(path: Path, conversations: list) -> Path:
    """The export zip as ChatGPT writes it (2024-25 layout): conversations.json, chat.html,
    user.json, uploads at the top as ``file-<id>-<name>``, sediment files under ``user-<id>/``,
    generated images under ``dalle-generations/``."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("user.json", json.dumps({"id": "user-abc123", "email": "me@example.com"}))
        zf.writestr("conversations.json", json.dumps(conversations, ensure_ascii=False))
        zf.writestr("message_feedback.json", "[]")
        zf.writestr("chat.html", "<html><body>…</body></html>")
        zf.writestr("file-PdF111-notice.pdf", PDF)
        zf.writestr("file-PdF1110-other.pdf", b"not this one: another id that starts alike")
        zf.writestr(f"user-abc123/{PNG_ID}-6c1d2e3f-4a5b-4c6d-8e9f-0a1b2c3d4e5f.png", SHOT)
        zf.writestr("dalle-generations/file-Art42-0b9e1f2a-3c4d-4e5f-8a6b-7c8d9e0f1a2b.webp", ART)
    return path


def read(path: Path, cursor=None, **options):
    items = list(chatgpt.read(path, "src", cursor, options=options))
    assert isinstance(items[-1], Cursor)
    docs = {i.native_id: i for i in items if isinstance(i, Document)}
    errors = [i for i in items if isinstance(i, ReadError)]
    seen = sorted(i.native_id for i in items if isinstance(i, Seen))
    return docs, errors, seen, json.loads(json.dumps(items[-1].state))


PDF_DOC = "67f0-taxes/attachment/file-PdF111"
PNG_DOC = f"67f0-taxes/attachment/{PNG_ID}"


def test_files_become_documents_linked_to_their_conversation(tmp_path):
    path = export_zip(tmp_path / "export.zip", [taxes(), logo()])
    docs, errors, _, _ = read(path)
    assert set(docs) == {"67f0-taxes", "67f1-logo", PDF_DOC, PNG_DOC}
    conv = docs["67f0-taxes"]
    assert "DEADBRANCH" not in conv.text

    pdf = docs[PDF_DOC]
    assert pdf.title == "notice.pdf (attachment of: Tax notice questions)"
    assert pdf.text.startswith("Attachment notice.pdf of the ChatGPT conversation “Tax notice questions”, 2024-03-05\n")
    assert "Tax due: 412.50 EUR by 30 April" in pdf.text
    assert pdf.uri == f"{conv.uri}/attachment/file-PdF111"
    assert pdf.created_at is not None and pdf.created_at.timestamp() == T0
    meta = pdf.metadata
    assert meta["parent_doc_id"] == conv.doc_id and meta["parent_native_id"] == "67f0-taxes"
    assert (meta["filename"], meta["mime"], meta["ext"], meta["format"]) == (
        "notice.pdf",
        "application/pdf",
        "pdf",
        "pdf",
    )
    assert (meta["conversation_id"], meta["conversation"], meta["role"]) == (
        "67f0-taxes",
        "Tax notice questions",
        "user",
    )
    assert meta["attachment"] is True and meta["file_id"] == "file-PdF111" and meta["size"] == len(PDF)
    assert meta["member"] == f"{path}!/file-PdF111-notice.pdf"  # not file-PdF1110-other.pdf

    png = docs[PNG_DOC]  # the picture's text, through OCR; sent a day later
    assert png.text.startswith("Attachment image.png of the ChatGPT conversation “Tax notice questions”, 2024-03-06")
    assert "Gartenhaus" in png.text and "tulpe" in png.text
    assert png.metadata["member"].endswith(f"!/user-abc123/{PNG_ID}-6c1d2e3f-4a5b-4c6d-8e9f-0a1b2c3d4e5f.png")
    assert png.metadata["ocr_lines"] and png.metadata["parent_doc_id"] == conv.doc_id

    # The file the export left out: one report for the conversation, with how many, which and
    # why. The generated logo holds no text: no document, and nothing to report.
    (missing,) = errors
    assert missing.uri == conv.uri
    assert missing.error.startswith(
        "1 file this conversation refers to is not in the export: old-contract.docx (ChatGPT leaves out"
    )


def test_attachment_spans_are_a_files(tmp_path):
    docs, _, _, _ = read(export_zip(tmp_path / "export.zip", [taxes()]))
    count = token_counter()
    (span,) = chatgpt.spans(docs[PDF_DOC], count, 400)
    assert span.metadata == {"page_start": 1, "page_end": 1}
    assert "roles" in chatgpt.spans(docs["67f0-taxes"], count, 400)[0].metadata


def test_unchanged_export_vouches_for_the_files_and_settings_read_again(tmp_path):
    path = export_zip(tmp_path / "export.zip", [taxes(), logo()])
    _, errors, _, cursor = read(path)

    docs2, errors2, seen2, cursor2 = read(path, cursor)
    assert docs2 == {}
    assert seen2 == sorted(["67f0-taxes", "67f1-logo", PDF_DOC, PNG_DOC])
    assert [(e.uri, e.error) for e in errors2] == [(e.uri, e.error) for e in errors]  # the report stays

    # Other settings: the cursor is not trusted, everything is read again.
    docs3, errors3, seen3, cursor3 = read(path, cursor2, ocr=False)
    assert set(docs3) == {"67f0-taxes", "67f1-logo", PDF_DOC} and not seen3  # no OCR: the screenshot is out
    assert len(errors3) == 1 and "old-contract.docx" in errors3[0].error

    docs4, errors4, seen4, _ = read(path, cursor3, attachments=False)
    assert set(docs4) == {"67f0-taxes", "67f1-logo"} and not errors4 and not seen4


def test_limits_are_reported(tmp_path):
    path = export_zip(tmp_path / "export.zip", [taxes()])
    docs, errors, _, _ = read(path, max_attachment_mb=0)
    assert set(docs) == {"67f0-taxes"}
    unread = next(e for e in errors if "not read" in e.error)
    assert unread.error.startswith("2 files of the export not read: notice.pdf (")
    assert "max_attachment_mb" in unread.error and "image.png" in unread.error
    assert any("old-contract.docx" in e.error for e in errors)


def test_2026_layout_dat_files_named_by_the_asset_index(tmp_path):
    """2026 exports: conversation shards, every file stored as ``file-<id>.dat``, their names in
    ``conversation_asset_file_names.json``; a pointer with a query string."""
    t = Tree()
    q = t.add(
        "u-1",
        "client-created-root",
        "user",
        {
            "content_type": "multimodal_text",
            "parts": [image_part("file-service://file-Dat777?shared_conversation_id=x"), "Read this, please."],
        },
        T0,
    )
    a = t.add("a-1", q, "assistant", text("It is a tax notice."), T0 + 1)
    path = tmp_path / "export-2026.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("conversations-000.json", json.dumps([conversation("6a01-dat", "Scan", t, a, T0, T0 + 1)]))
        zf.writestr("conversation_asset_file_names.json", json.dumps({"file-Dat777.dat": "Scan_2026.pdf"}))
        zf.writestr("file-Dat777.dat", PDF)
    docs, errors, _, _ = read(path)
    assert not errors
    doc = docs["6a01-dat/attachment/file-Dat777"]
    assert doc.title == "Scan_2026.pdf (attachment of: Scan)"
    assert doc.metadata["ext"] == "pdf" and doc.metadata["mime"] == "application/pdf"
    assert "Notice of assessment 2023" in doc.text


def test_extracted_export_folder_and_a_conversation_file_on_its_own(tmp_path):
    folder = tmp_path / "extracted"
    with zipfile.ZipFile(export_zip(tmp_path / "export.zip", [taxes()])) as zf:
        zf.extractall(folder)
    docs, errors, _, _ = read(folder / "conversations.json")
    assert PDF_DOC in docs and PNG_DOC in docs
    assert docs[PDF_DOC].metadata["member"] == str(folder / "file-PdF111-notice.pdf")
    assert len(errors) == 1 and "old-contract.docx" in errors[0].error

    alone = tmp_path / "alone"
    alone.mkdir()
    (alone / "conversations.json").write_bytes((folder / "conversations.json").read_bytes())
    docs, errors, _, _ = read(alone / "conversations.json")
    assert set(docs) == {"67f0-taxes"} and not errors  # no export beside it: no files to look for


def test_a_damaged_file_costs_that_file_alone(tmp_path):
    path = tmp_path / "export.zip"
    export_zip(path, [taxes()])
    with zipfile.ZipFile(path, "a") as zf:
        zf.writestr("other/file-PdF111.pdf", b"%PDF-1.4 garbage")  # deeper: the top one is still chosen
    docs, errors, _, _ = read(path)
    assert PDF_DOC in docs

    broken = tmp_path / "broken.zip"
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(broken, "w") as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename == "file-PdF111-notice.pdf":
                data = b"%PDF-1.4 garbage"
            elif info.filename.endswith(".png"):
                data = data[:40]  # a picture cut short: nothing to index, like a blank one
            dst.writestr(info, data)
    docs, errors, _, _ = read(broken)
    assert set(docs) == {"67f0-taxes"}
    unread = next(e for e in errors if "not read" in e.error)
    assert unread.error.startswith("1 file of the export not read: notice.pdf (")
    assert not any("image.png" in e.error for e in errors)
