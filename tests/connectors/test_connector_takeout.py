"""The takeout connector: Chrome history and bookmarks and Keep notes from Google Takeout exports
(folders, zip and tgz parts, English and German names), what it leaves to others, traps."""

from __future__ import annotations

import io
import json
import os
import shutil
import tarfile
import time
import zipfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from ragbag.connectors import browser, takeout
from ragbag.core.records import Cursor, Document, ReadError, Seen
from ragbag.models.embedding import token_counter
from ragbag_evalsets.formats.takeout import Note, Takeout, usec
from tests.differential.common import PUBLIC

T0 = datetime(2024, 3, 5, 9, 30, tzinfo=UTC)
MBOX = b"From a@example.com Tue Mar  5 09:30:00 2024\nFrom: a@example.com\nSubject: hi\n\nhello\n"
ICS = b"BEGIN:VCALENDAR\nVERSION:2.0\nEND:VCALENDAR\n"


def at(minutes: float) -> datetime:
    return T0 + timedelta(minutes=minutes)


def export(lang: str = "en") -> Takeout:
    """An export with every kind this connector reads and a few it leaves to others."""
    t = Takeout(lang)
    t.visit(at(0), "https://example.com/a", "Old title")
    t.visit(at(5), "https://example.com/a", "Page A")
    t.visit(at(7), "https://example.com/a", "")  # a later visit without a title keeps the title
    t.visit(at(1), "https://www.python.org/doc/", "Python docs", "TYPED")
    t.visit(at(2), "chrome://newtab/", "New Tab", "TYPED")  # not a web page
    t.visit(at(3), "https://ads.example.net/frame", "", "AUTO_SUBFRAME")  # an embedded frame
    t.bookmark([], "https://news.ycombinator.com/", "Hacker News", at(-60))
    t.bookmark(["Dev", "Python"], "https://docs.python.org/3/", "Python 3 docs", at(-30))
    t.bookmark(["Reading"], "https://docs.python.org/3/", "Python 3 docs", at(-90))  # the same URL twice
    t.bookmark([], "javascript:alert(1)", "A bookmarklet", at(-10))
    t.note(
        Note(
            "Groceries",
            items=[("Milk", True), ("Bread\nthe dark one", False)],
            labels=["Home", "Shopping"],
            created=at(-600),
            edited=at(-300),
            pinned=True,
        )
    )
    t.note(
        Note(
            "Trip ideas",
            "Lisbon in May\n\n\n\nPorto after",
            links=[("Visit Porto", "https://visitporto.travel/")],
            attachments=[("1700000000000.123.jpg", "image/jpeg", b"\xff\xd8\xff\xe0jpeg")],
            created=at(-500),
            edited=at(-100),
            color="TEAL",
            archived=True,
        )
    )
    t.note(Note("Old stuff", "gone soon", created=at(-900), edited=at(-800), trashed=True))
    t.other("Mail/All mail Including Spam and Trash.mbox", MBOX)
    t.other("Calendar/me@example.com.ics", ICS)
    t.other("YouTube and YouTube Music/history/watch-history.json", b'[{"header": "YouTube", "title": "x"}]')
    t.other("YouTube and YouTube Music/subscriptions/subscriptions.csv", b"Channel Id,Channel title\n")
    t.other("Chrome/Autofill.json", b'{"Autofill Profile": []}')
    return t


def write(root: Path, files: dict[str, bytes]) -> Path:
    """The files under ``root``; a file whose bytes did not change is left untouched (its mtime
    too), as extracting a new export over an old one with "skip identical" does."""
    for name, data in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        if not (root / name).is_file() or (root / name).read_bytes() != data:
            (root / name).write_bytes(data)
    return root


def run(path: Path, cursor=None, options=None):
    items = list(takeout.read(path, "takeout", cursor, options))
    docs = [i for i in items if isinstance(i, Document)]
    errors = [i for i in items if isinstance(i, ReadError)]
    seen = [i.native_id for i in items if isinstance(i, Seen)]
    cursors = [i for i in items if isinstance(i, Cursor)]
    assert len(cursors) == 1 and items[-1] is cursors[0]
    return docs, errors, seen, cursors[0].state


def by_id(docs: list[Document]) -> dict[str, Document]:
    return {d.native_id: d for d in docs}


def test_an_extracted_takeout_field_by_field(tmp_path):
    docs, errors, _, _ = run(write(tmp_path, export().files()))
    got = by_id(docs)
    assert sorted(got) == [
        "bookmark/https://docs.python.org/3/",
        "bookmark/https://news.ycombinator.com/",
        "chrome/takeout/https://example.com/a",
        "chrome/takeout/https://www.python.org/doc/",
        f"keep/{usec(at(-600))}",
        f"keep/{usec(at(-500))}",
    ]
    page = got["chrome/takeout/https://example.com/a"]
    assert page.connector == "takeout" and page.uri == "https://example.com/a"
    assert page.title == "Page A"  # the latest visit with a title
    assert (page.created_at, page.updated_at) == (at(0), at(7))
    assert page.metadata == {
        "url": "https://example.com/a",
        "domain": "example.com",
        "title": "Page A",
        "visit_count": 3,
        "first_visit": at(0).isoformat(),
        "last_visit": at(7).isoformat(),
        "browser": "chrome",
        "profile": "takeout",
        "kind": "history",
        "file": "Takeout/Chrome/History.json",
    }
    assert "visited 3 times in Chrome" in page.text and "first on 2024-03-05" in page.text
    assert got["chrome/takeout/https://www.python.org/doc/"].metadata["domain"] == "python.org"

    mark = got["bookmark/https://docs.python.org/3/"]
    assert mark.metadata["folders"] == ["Bookmarks bar / Dev / Python", "Bookmarks bar / Reading"]
    assert mark.created_at == at(-90).replace(second=0) and mark.metadata["added"] == at(-90).isoformat()
    assert mark.text.startswith("Python 3 docs\nhttps://docs.python.org/3/\nBookmark in Bookmarks bar / Dev / Python;")
    assert got["bookmark/https://news.ycombinator.com/"].metadata["folders"] == ["Bookmarks bar"]

    groceries = got[f"keep/{usec(at(-600))}"]
    assert groceries.title == "Groceries"
    assert groceries.text == "Groceries\n\n[x] Milk\n[ ] Bread\n    the dark one\n\nLabels: Home, Shopping\n"
    assert (groceries.created_at, groceries.updated_at) == (at(-600), at(-300))
    assert groceries.metadata["labels"] == ["Home", "Shopping"] and groceries.metadata["pinned"] is True
    assert groceries.uri.endswith("Takeout/Keep/Groceries.json")
    trip = got[f"keep/{usec(at(-500))}"]
    assert trip.text == (
        "Trip ideas\n\nLisbon in May\n\nPorto after\n\nLink: Visit Porto https://visitporto.travel/\n\n"
        "Attachment: 1700000000000.123.jpg (image/jpeg)\n"
    )
    meta = trip.metadata
    assert (meta["archived"], meta["color"], meta["links"]) == (True, "TEAL", ["https://visitporto.travel/"])
    assert meta["attachments"] == ["1700000000000.123.jpg"] and meta["edited"] == at(-100).isoformat()

    # One report per product left to others; Keep's attachment and labels, Takeout's index
    # page and the HTML twins are none.
    reports = {e.uri.rsplit("#", 1)[1]: e.error for e in errors}
    assert sorted(reports) == ["Calendar", "Chrome", "Mail", "YouTube and YouTube Music"]
    assert "ragbag add mail" in reports["Mail"] and reports["Mail"].startswith("Mail: 1 file not read")
    assert "ragbag add calendar" in reports["Calendar"]
    assert reports["YouTube and YouTube Music"].startswith("YouTube and YouTube Music: 2 files not read")
    assert "Autofill.json" in reports["Chrome"]


def test_a_german_export_reads_the_same(tmp_path):
    """Folder and file names are translated (Google Notizen, Verlauf.json, Lesezeichen.html):
    files are recognised by what they hold."""
    en = by_id(run(write(tmp_path / "en", export("en").files()))[0])
    de = by_id(run(write(tmp_path / "de", export("de").files()))[0])
    assert sorted(en) == sorted(de)
    assert de[f"keep/{usec(at(-600))}"].text == en[f"keep/{usec(at(-600))}"].text
    assert de["bookmark/https://docs.python.org/3/"].metadata["folders"][0] == "Lesezeichenleiste / Dev / Python"
    assert (tmp_path / "de/Takeout/Google Notizen/Groceries.json").is_file()


def test_multi_part_zips_report_each_product_once(tmp_path):
    parts = export().zips(parts=3)
    write(tmp_path, parts)
    docs, errors, _, _ = run(tmp_path)
    folder = by_id(run(write(tmp_path / "x", export().files()))[0])
    assert sorted(by_id(docs)) == sorted(folder)
    # The picture of a note in another part than its note is the note's attachment.
    products = sorted(e.uri.rsplit("#", 1)[1] for e in errors)
    assert products == ["Calendar", "Chrome", "Mail", "YouTube and YouTube Music"]
    one = next(iter(parts))
    docs1, errors1, _, _ = run(tmp_path / one)  # a single part given by its path
    assert docs1 and all(e.uri.startswith(str((tmp_path / one).absolute())) for e in errors1)


def test_a_notes_html_in_another_part_than_its_json(tmp_path):
    """Parts are cut by size: a note's JSON and HTML twin may lie in different parts. The HTML
    is no note then; when the part with the JSON goes, the HTML is the note again."""
    t = Takeout()
    t.note(Note("Split", "one note", created=at(0), edited=at(1)))
    files = t.files()
    html = {k: v for k, v in files.items() if k.endswith(".html") and "Keep" in k}
    for name, chosen in (
        ("takeout-x-001.zip", html),
        ("takeout-x-002.zip", {k: v for k, v in files.items() if k not in html}),
    ):
        with zipfile.ZipFile(tmp_path / name, "w") as zf:
            for path, data in chosen.items():
                zf.writestr(path, data)
    docs, _, _, state = run(tmp_path)
    assert [d.native_id for d in docs] == [f"keep/{usec(at(0))}"]
    docs, _, seen, state = run(tmp_path, state)
    assert docs == [] and seen == [f"keep/{usec(at(0))}"]
    (tmp_path / "takeout-x-002.zip").unlink()
    docs, _, seen, _ = run(tmp_path, state)
    assert [d.native_id for d in docs] == ["keep/html/Keep/Split"] and seen == []


def test_a_tgz_export(tmp_path):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for name, data in sorted(export().files().items()):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    (tmp_path / "takeout-20240305T093000Z-001.tgz").write_bytes(buf.getvalue())
    docs, errors, _, _ = run(tmp_path)
    assert sorted(by_id(docs)) == sorted(by_id(run(write(tmp_path / "x", export().files()))[0]))
    assert len(errors) == 4


@pytest.fixture
def utc_zone(monkeypatch):
    """The machine's zone set to UTC: an HTML note's date is local time without a zone."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.delenv("TZ")
    time.tzset()


def test_html_only_notes_read_like_their_json(tmp_path, utc_zone):
    """Exports made before Keep wrote JSON hold the HTML alone: it gives the same note."""
    t = export()
    root = write(tmp_path / "json", t.files())
    html_only = write(
        tmp_path / "html", {k: v for k, v in t.files().items() if not k.endswith(".json") or "Keep" not in k}
    )
    from_json = {d.title: d for d in run(root)[0] if d.metadata["kind"] == "keep"}
    from_html = {d.title: d for d in run(html_only)[0] if d.metadata["kind"] == "keep"}
    assert sorted(from_html) == sorted(from_json) == ["Groceries", "Trip ideas"]  # the trashed one is not
    for title, doc in from_html.items():
        assert doc.native_id == f"keep/html/Keep/{title}" and doc.uri.endswith(f"Keep/{title}.html")
        assert doc.text == from_json[title].text
        assert doc.updated_at == from_json[title].updated_at
        same = ("labels", "pinned", "archived", "color", "links", "attachments")
        assert {k: doc.metadata[k] for k in same} == {k: from_json[title].metadata[k] for k in same}


def test_the_html_twins_of_real_exports_read_like_their_json(tmp_path, utc_zone):
    """NotallyX's exports (real Takeout zips, their JSON edited by hand in places: "Child1" for
    the HTML's "Child 1", the attachments renamed): each note read from its HTML alone has the
    JSON's title, labels, pin, archive, links, checklist marks and text lines."""
    for zip_path in sorted((PUBLIC / "notallyx").glob("*.zip")):
        with zipfile.ZipFile(zip_path) as zf:
            members = {i.filename: zf.read(i) for i in zf.infolist() if not i.is_dir()}
        html_zip = tmp_path / f"html-{zip_path.name}"
        with zipfile.ZipFile(html_zip, "w") as zf:
            for name, data in members.items():
                if not name.endswith(".json"):
                    zf.writestr(name, data)
        from_json = {d.title: d for d in run(zip_path)[0]}
        from_html = {d.title: d for d in run(html_zip)[0]}
        assert sorted(from_html) == sorted(from_json) and len(from_json) == 7
        for title, doc in from_html.items():
            other = from_json[title]
            same = ("labels", "pinned", "archived", "color", "links")
            assert {k: doc.metadata[k] for k in same} == {k: other.metadata[k] for k in same}, title
            marks = lambda d: [line[:3] for line in d.text.splitlines() if line[:3] in ("[x]", "[ ]")]  # noqa: E731
            assert marks(doc) == marks(other)
            if not marks(other):
                assert doc.text.split("\n\nAttachment")[0] == other.text.split("\n\nAttachment")[0]


def test_incremental_refresh(tmp_path):
    t = export()
    root = write(tmp_path, t.files())
    docs, errors, _, state = run(root)
    again, errors2, seen, state = run(root, state)
    assert again == [] and sorted(seen) == sorted(d.native_id for d in docs)
    assert sorted(e.error for e in errors2) == sorted(e.error for e in errors)  # reports repeat
    # A note edited, a visit appended: those are read again, the rest is Seen.
    t.notes[0].items.append(("Eggs", False))
    t.notes[0].edited = at(100)
    t.visit(at(200), "https://example.com/a", "Page A again")
    write(root, t.files())
    changed, _, seen, state = run(root, state)
    got = by_id(changed)
    assert "[ ] Eggs" in got[f"keep/{usec(at(-600))}"].text
    assert got["chrome/takeout/https://example.com/a"].metadata["visit_count"] == 4
    assert f"keep/{usec(at(-500))}" in seen and "bookmark/https://docs.python.org/3/" in seen
    # A note deleted in Keep is gone from the next export: neither read nor Seen.
    (root / "Takeout/Keep/Trip ideas.json").unlink()
    (root / "Takeout/Keep/Trip ideas.html").unlink()
    docs, errors, seen, state = run(root, state)
    assert f"keep/{usec(at(-500))}" not in seen + [d.native_id for d in docs]
    # Its picture is now a stray file in a notes folder: still not reported.
    assert sorted(e.uri.rsplit("#", 1)[1] for e in errors) == [
        "Calendar",
        "Chrome",
        "Mail",
        "YouTube and YouTube Music",
    ]


def test_an_unchanged_zip_is_not_opened(tmp_path, monkeypatch):
    write(tmp_path, export().zips(parts=2))
    docs, errors, _, state = run(tmp_path)
    opened = []
    real = zipfile.ZipFile
    monkeypatch.setattr(zipfile, "ZipFile", lambda *a, **k: opened.append(a) or real(*a, **k))
    again, errors2, seen, _ = run(tmp_path, state)
    assert opened == [] and again == [] and sorted(seen) == sorted(d.native_id for d in docs)
    assert sorted(e.error for e in errors2) == sorted(e.error for e in errors)


def test_the_newest_copy_of_a_note_wins_across_exports(tmp_path):
    old, new = Takeout(), Takeout()
    old.note(Note("Plan", "first draft", created=at(0), edited=at(1)))
    new.note(Note("Plan", "final version", created=at(0), edited=at(50)))
    write(tmp_path, {"takeout-20240101T000000Z-001.zip": new.zips()["takeout-20260115T090000Z-001.zip"]})
    write(tmp_path, {"takeout-20240601T000000Z-001.zip": old.zips()["takeout-20260115T090000Z-001.zip"]})
    docs, _, _, _ = run(tmp_path)
    assert len(docs) == 1 and "final version" in docs[0].text


def test_times_in_strings_and_in_chrome_epoch(tmp_path):
    when = at(0)
    webkit = usec(when) + 11_644_473_600_000_000
    history = {
        "Browser History": [
            {"url": "https://a.example/", "title": "A", "time_usec": str(usec(when))},
            {"url": "https://b.example/", "title": "B", "time_usec": webkit},
        ]
    }
    note = {"title": "N", "textContent": "t", "createdTimestampUsec": str(usec(when)), "isTrashed": False}
    write(tmp_path, {"Takeout/Chrome/History.json": json.dumps(history).encode()})
    write(tmp_path, {"Takeout/Keep/N.json": json.dumps(note).encode()})
    docs = by_id(run(tmp_path)[0])
    assert docs["chrome/takeout/https://a.example/"].created_at == when
    assert docs["chrome/takeout/https://b.example/"].created_at == when
    assert docs[f"keep/{usec(when)}"].created_at == when == docs[f"keep/{usec(when)}"].updated_at


def test_bad_input_is_reported_and_the_rest_read(tmp_path):
    history = {
        "Browser History": [
            {"url": "https://ok.example/", "title": "OK", "time_usec": usec(at(0))},
            {"title": "no url", "time_usec": usec(at(1))},
            {"url": "https://late.example/", "title": "no time"},
            "not a visit",
        ]
    }
    good = Note("Fine", "still read", created=at(0))
    write(
        tmp_path / "t",
        {
            "Takeout/Chrome/History.json": json.dumps(history).encode(),
            "Takeout/Keep/Broken.json": b'{"title": "Broken", "textContent": "x",',
            "Takeout/Keep/Fine.json": good.json(),
            "Takeout/Keep/Odd.json": b'{"title": "Odd", "textContent": ["not", "text"]}',
        },
    )
    (tmp_path / "t/takeout-20240101T000000Z-001.zip").write_bytes(
        export().zips()["takeout-20260115T090000Z-001.zip"][:500]
    )
    docs, errors, _, _ = run(tmp_path / "t")
    assert sorted(by_id(docs)) == ["chrome/takeout/https://ok.example/", f"keep/{usec(at(0))}"]
    why = {e.uri.rsplit("/", 1)[-1]: e.error for e in errors}
    assert why["History.json#1"] == "visit without a URL"
    assert why["History.json#2"].startswith("visit of https://late.example/ without a usable time_usec")
    assert why["History.json#3"] == "not a visit object (str)"
    assert why["Broken.json"].startswith("invalid JSON")
    assert why["Odd.json"] == "textContent is a list, not text"
    assert why["takeout-20240101T000000Z-001.zip"].startswith("unreadable zip")


def test_files_that_are_no_takeout(tmp_path):
    (tmp_path / "data.json").write_text('{"something": "else"}')
    docs, errors, _, _ = run(tmp_path / "data.json")
    assert docs == [] and len(errors) == 1 and errors[0].error.startswith("not a Google Takeout file: expected")
    zf = zipfile.ZipFile(tmp_path / "other.zip", "w")
    zf.writestr("photos/cat.jpg", b"\xff\xd8")
    zf.writestr("readme.txt", b"hello")
    zf.close()
    docs, errors, _, _ = run(tmp_path / "other.zip")
    assert docs == [] and [e.error for e in errors] == [
        "not a Google Takeout archive: no Takeout/ folder and nothing readable in it"
    ]
    (tmp_path / "empty").mkdir()
    docs, errors, _, _ = run(tmp_path / "empty")
    assert docs == [] and len(errors) == 1 and errors[0].error.startswith("no files in this folder")
    docs, errors, _, _ = run(tmp_path / "missing")
    assert docs == [] and [e.error for e in errors] == ["no such file or directory"]


def test_a_source_that_is_the_takeout_folder_or_a_product_folder(tmp_path):
    root = write(tmp_path, export().files())
    whole = sorted(by_id(run(root)[0]))
    docs, errors, _, _ = run(root / "Takeout")
    assert sorted(by_id(docs)) == whole and len(errors) == 4  # the index page is still no data
    docs, errors, _, _ = run(root / "Takeout" / "Keep")
    assert len(docs) == 2 and errors == []  # the notes' picture and labels are theirs


def test_bookmarks_without_any_web_page_are_reported(tmp_path):
    (tmp_path / "Bookmarks.html").write_text(
        '<!DOCTYPE NETSCAPE-Bookmark-file-1>\n<DL><p>\n<DT><A HREF="javascript:void(0)">Tool</A>\n</DL><p>\n'
    )
    docs, errors, _, _ = run(tmp_path / "Bookmarks.html")
    assert docs == [] and len(errors) == 1 and "none of them a web page" in errors[0].error


def test_spans_fit_the_budget(tmp_path):
    count = token_counter()
    t = Takeout()
    t.note(Note("Long", "\n\n".join(f"Paragraph {i}: " + "words " * 80 for i in range(40)), created=at(0)))
    docs = run(write(tmp_path, t.files()))[0]
    spans = takeout.spans(docs[0], count, 128)
    assert len(spans) > 5 and all(count(docs[0].text[s.start : s.end]) <= 128 for s in spans)


def test_history_documents_read_like_the_browser_connectors(tmp_path):
    """The same page from Takeout and from a Chrome profile: same text and metadata shape."""
    t = Takeout()
    t.visit(at(0), "https://example.com/x", "X")
    page = run(write(tmp_path, t.files()))[0][0]
    made = browser.page_document(
        "s", "browser", "https://example.com/x", "X", 1, at(0), at(0), "chrome", "takeout", "here"
    )
    assert set(page.metadata) - set(made.metadata) == {"kind", "file"}
    assert page.text.replace("Chrome (synced history, Google Takeout)", "here") == made.text


def test_the_evalsets_writer_round_trips(tmp_path):
    t = export()
    files = t.zips(parts=2)
    write(tmp_path, files)
    docs = by_id(run(tmp_path)[0])
    notes = [n for n in t.notes if not n.trashed]
    assert {f"keep/{usec(n.created)}" for n in notes} <= set(docs)
    pages = {v["url"] for v in t.visits if v["url"].startswith("http") and v["page_transition"] != "AUTO_SUBFRAME"}
    assert {f"chrome/takeout/{u}" for u in pages} <= set(docs)
    assert {f"bookmark/{u}" for _, u, _, _ in t.bookmarks if u.startswith("http")} <= set(docs)


def test_links_leaving_the_folder_are_not_followed(tmp_path):
    outside = write(tmp_path / "outside", {"Keep/Secret.json": Note("Secret", "s", created=at(0)).json()})
    root = write(tmp_path / "src", {"Takeout/Keep/Mine.json": Note("Mine", "m", created=at(1)).json()})
    os.symlink(outside / "Keep" / "Secret.json", root / "Takeout" / "Keep" / "Secret.json")
    docs, errors, _, _ = run(root)
    assert [d.title for d in docs] == ["Mine"] and any("outside the source folder" in e.error for e in errors)
    docs, _, _, _ = run(root, options={"follow_links_outside": True})
    assert sorted(d.title for d in docs) == ["Mine", "Secret"]
    shutil.rmtree(outside)
