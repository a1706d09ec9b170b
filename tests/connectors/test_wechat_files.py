"""The files WeChat messages point at (connectors/wechat.py, connectors/_wechat_files.py):
PyWxDump's rows name each picture, file and video by ``src``, a path under the account's
``FileStorage`` folder that its export does not copy. Copied next to the export, the files
become documents of their window; pictures are unmasked by their signature; what is missing,
encrypted, outside the source or unreadable is reported; a refresh reads again only when an
export or one of its files changed.

The pictures and the document are real files from other projects' test suites
(tests/fixtures/public/images and files, SOURCES.tsv there), stored here as WeChat stores them
(pictures XORed with one key byte, under ``MsgAttach/<md5>/Image/<month>/``)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from conftest import FIXTURES, sort_read

from ragbag.connectors import wechat
from ragbag.connectors._wechat_files import sniff, stored_parts
from ragbag.core.records import Document, ReadError

IMAGES = FIXTURES / "public/images"
JPEG = IMAGES / "RapidOCR/python__tests__test_files__ch_en_num.jpg"  # OCR: 正品促销 …
DOCX = FIXTURES / "public/files/python-docx/features__steps__test_files__blk-paras-and-tables.docx"
ROOM, BOB = "4455@chatroom", "wxid_bob"
KEY = 0x5A
PICTURE = r"FileStorage\MsgAttach\9e20f478899dc29eb19741386f9343c8\Image\2024-03\3d6296d68e01767a9476.dat"
LEASE = r"FileStorage\File\2024-03\Mietvertrag.docx"


@pytest.fixture(autouse=True)
def _ocr_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGBAG_OCR_CACHE", str(tmp_path / "ocr"))


def masked(data: bytes, key: int = KEY) -> bytes:
    return bytes(b ^ key for b in data)


def row(n: int, type_name: str, msg: str, src: str = "", at: str = "2024-03-02 09:00:00") -> dict:
    return {
        "id": n,
        "MsgSvrID": str(9000 + n),
        "type_name": type_name,
        "is_sender": 0,
        "talker": BOB,
        "room_name": ROOM,
        "msg": msg,
        "src": src,
        "extra": {},
        "CreateTime": at,
    }


def store(root: Path, src: str, data: bytes) -> Path:
    path = root.joinpath(*stored_parts(src))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def export(root: Path, rows: list[dict]) -> Path:
    folder = root / "export" / ROOM
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{ROOM}_0_{len(rows)}.json").write_text(json.dumps(rows, ensure_ascii=False))
    (folder / "users.json").write_text(json.dumps({BOB: {"wxid": BOB, "nickname": "Bob"}}))
    return folder


def read(path: Path, cursor: dict | None = None, **options) -> tuple[list[Document], list[ReadError], list, dict]:
    return sort_read(wechat.read(path, "chats", cursor, options or None))


def home_with_files(tmp_path: Path) -> Path:
    """A source folder holding PyWxDump's export and a copy of the account's FileStorage."""
    root = tmp_path / "wechat"
    store(root, PICTURE, masked(JPEG.read_bytes()))
    store(root, LEASE, DOCX.read_bytes())
    store(root, r"FileStorage\File\2024-03\budget.csv", b"item,eur\nrent,1150\n")
    store(root, r"FileStorage\MsgAttach\aa\Image\2024-03\new.dat", b"\x07\x08V2\x08\x07" + os.urandom(64))
    store(root, r"FileStorage\Video\2024-03\clip.mp4", b"\x00\x00\x00\x18ftypmp42" + bytes(32))
    export(
        root,
        [
            row(1, "文本", "Die Fotos vom Flohmarkt und der Vertrag", at="2024-03-02 09:00:00"),
            row(2, "图片", "图片", PICTURE, at="2024-03-02 09:01:00"),
            row(3, "文件", "Mietvertrag.docx", LEASE, at="2024-03-02 09:02:00"),
            row(4, "文件", "budget.csv", r"FileStorage\File\2024-03\budget.csv", at="2024-03-02 09:03:00"),
            row(5, "图片", "图片", r"FileStorage\MsgAttach\aa\Image\2024-03\new.dat", at="2024-03-02 09:04:00"),
            row(6, "视频", "视频", r"FileStorage\Video\2024-03\clip.mp4", at="2024-03-02 09:05:00"),
            row(7, "图片", "图片", r"FileStorage\MsgAttach\bb\Image\2024-03\gone.dat", at="2024-03-02 09:06:00"),
        ],
    )
    return root


def test_files_beside_the_export_become_documents_of_their_window(tmp_path):
    root = home_with_files(tmp_path)
    docs, errors, _, _ = read(root)
    (window,) = [d for d in docs if not d.metadata.get("attachment")]
    files = {d.metadata["filename"]: d for d in docs if d.metadata.get("attachment")}
    assert [line.split(": ", 1)[1] for line in window.text.splitlines()] == [
        "Die Fotos vom Flohmarkt und der Vertrag",
        "[image]",
        "[file] Mietvertrag.docx",
        "[file] budget.csv",
        "[image]",
        "[video]",
        "[image]",
    ]
    assert set(files) == {"3d6296d68e01767a9476.jpg", "Mietvertrag.docx", "budget.csv"}
    photo = files["3d6296d68e01767a9476.jpg"]
    assert "正品促销" in photo.text  # the picture was unmasked and recognised
    assert photo.metadata["ext"] == "jpg" and photo.metadata["size"] == JPEG.stat().st_size
    assert photo.text.startswith("Attachment 3d6296d68e01767a9476.jpg sent by Bob in the chat")
    for doc in files.values():
        assert doc.metadata["parent_doc_id"] == window.doc_id and doc.metadata["chat_id"] == ROOM
        assert doc.native_id.startswith(f"{window.native_id}/attachment/900")
        assert doc.metadata["sender"] == ["Bob"] and doc.metadata["file"] == window.metadata["file"]
    assert "rent" in files["budget.csv"].text and "1150" in files["budget.csv"].text
    assert files["Mietvertrag.docx"].metadata["format"] == "docx"
    # Nothing silent: the missing picture, the encrypted one and the video are each named once.
    reports = sorted(e.error for e in errors)
    assert len(reports) == 2, reports
    missing = next(r for r in reports if "not beside the export" in r)
    assert missing.startswith("1 attachment not beside the export") and "gone.dat" in missing
    unread = next(r for r in reports if "not read" in r)
    assert "new.dat (encrypted by WeChat 4" in unread and "clip.mp4 (no reader for .mp4)" in unread
    assert all(e.uri == window.uri for e in errors)
    # The copied FileStorage holds no chat exports: its .csv is an attachment, not a bad export.
    assert not any("not a WeChat chat export" in r for r in reports)


def test_an_unchanged_refresh_reads_nothing_and_a_file_copied_in_later_is_read(tmp_path, monkeypatch):
    root = home_with_files(tmp_path)
    lease = root.joinpath(*stored_parts(LEASE))
    kept = lease.read_bytes()
    lease.unlink()
    docs, errors, _, state = read(root)
    assert "Mietvertrag.docx" not in {d.metadata.get("filename") for d in docs}
    assert any("Mietvertrag.docx" in e.error for e in errors)

    opened = []
    monkeypatch.setattr(wechat, "_load", lambda file: opened.append(file))  # a re-read would fail loudly
    again, errors2, seen, state2 = read(root, state)
    assert not again and not opened
    assert set(seen) == {d.native_id for d in docs}  # every window and file vouched for
    assert sorted(e.error for e in errors2) == sorted(e.error for e in errors)  # reports repeated
    assert state2 == state
    monkeypatch.undo()
    monkeypatch.setenv("RAGBAG_OCR_CACHE", str(tmp_path / "ocr"))

    lease.write_bytes(kept)  # the user copies the rest of FileStorage in
    docs3, errors3, _, _ = read(root, state2)
    assert "Mietvertrag.docx" in {d.metadata.get("filename") for d in docs3}
    assert not any("Mietvertrag.docx" in e.error for e in errors3)


def test_files_outside_the_source_folder_are_not_opened(tmp_path):
    outside = tmp_path / "WeChat Files" / "wxid_me"
    store(outside, LEASE, DOCX.read_bytes())
    root = tmp_path / "wechat"
    export(
        root,
        [
            row(1, "文件", "Mietvertrag.docx", LEASE),
            row(2, "文件", "passwd", r"..\..\..\etc\passwd", at="2024-03-02 09:01:00"),
            row(3, "文件", "hosts", "/etc/hosts", at="2024-03-02 09:02:00"),
        ],
    )
    (root / "FileStorage").symlink_to(outside / "FileStorage")  # a link the user made
    docs, errors, _, _ = read(root)
    assert [d for d in docs if d.metadata.get("attachment")] == []
    assert any("Mietvertrag.docx (outside the source's folder" in e.error for e in errors)
    assert not any("passwd" in e.error or "hosts" in e.error for e in errors)  # named no file: text only
    docs, errors, _, _ = read(root, None, follow_links_outside=True)
    assert [d.metadata["filename"] for d in docs if d.metadata.get("attachment")] == ["Mietvertrag.docx"]


def test_no_attachments_reads_no_file_and_keeps_the_chat(tmp_path):
    root = home_with_files(tmp_path)
    docs, errors, _, _ = read(root, None, attachments=False)
    assert [d.metadata.get("attachment") for d in docs] == [None]
    assert docs[0].text.count("[image]") == 3 and not errors
    shutil.rmtree(root / "FileStorage")
    docs2, _, _, _ = read(root, None, attachments=False)
    assert docs2[0].text == docs[0].text  # the chat's text does not depend on the files


@pytest.mark.parametrize(
    ("real", "ext"),
    [
        (JPEG, "jpg"),
        (FIXTURES / "public/images/tesseract-test/testing__phototest-rotated-L.png", "png"),
        (FIXTURES / "public/images/exifr/test__fixtures__tif-with-iptc-icc-xmp.tif", "tif"),
    ],
)
@pytest.mark.parametrize("key", [0x01, 0x5A, 0xE7, 0xFF])
def test_sniff_finds_the_key_and_the_format(real, ext, key):
    head = real.read_bytes()[:16]
    assert sniff(masked(head, key)) == (key, ext)


def test_sniff_names_what_it_cannot_read():
    assert "WeChat 4" in sniff(b"\x07\x08V1\x08\x07" + bytes(10))  # type: ignore[operator]
    assert "not a WeChat picture" in sniff(b"PK\x03\x04" + bytes(12))  # type: ignore[operator]


def test_stored_parts_takes_either_separator_and_refuses_what_names_no_file_here():
    assert stored_parts(r"FileStorage\File\2024-03\a b.pdf") == ["FileStorage", "File", "2024-03", "a b.pdf"]
    assert stored_parts(r"C:\Users\me\Documents\WeChat Files\wxid_me\FileStorage\File\x.pdf")[:2] == [
        "FileStorage",
        "File",
    ]
    assert stored_parts("FileStorage/Video/2024-03/v.mp4")[-1] == "v.mp4"
    for nothing in ("", "/api/audio/123", r"..\secret.txt", "/etc/hosts", r"C:\Windows\win.ini"):
        assert stored_parts(nothing) == []


@pytest.mark.slow
def test_a_built_wechat_source_finds_its_files_and_follows_them(home, tmp_path):
    """Through a real build: search finds the lease inside the chat with its parent named, a
    refresh after the file is deleted deletes its document and names it missing, `remove` leaves
    no transcript or recognised text behind."""
    from conftest import build_in_process, cli, cli_json

    from ragbag.index.store import Store

    root = home_with_files(tmp_path)
    cli("add", "wechat", "wx", str(root))
    build_in_process(home, "wx")
    hits = cli_json("search", "正品促销 大桶装", "--source", "wx", "-k", "3")
    assert hits[0]["title"].startswith("3d6296d68e01767a9476.jpg (attachment in: ")
    store = Store(home.lance_uri)
    ids = lambda: sorted(store.rows("documents", "wx", ["native_id"]).to_pydict()["native_id"])  # noqa: E731
    assert len(ids()) == 4  # the window, the picture, the lease, the budget

    root.joinpath(*stored_parts(LEASE)).unlink()
    (report,) = cli_json("build", "wx")  # the real command, through Dagster
    assert len(ids()) == 3 and not any(i.endswith("/attachment/9003") for i in ids())
    assert any("Mietvertrag.docx" in e["error"] and "not beside the export" in e["error"] for e in report["errors"])

    cache = tmp_path / "ocr" / "ocr" / "wx"
    assert any(cache.rglob("*.json"))
    cli("remove", "wx")
    assert not cache.exists()
