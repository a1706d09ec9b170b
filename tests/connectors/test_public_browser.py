"""Regression tests of issue 31 for the browser and imessage connectors, on public files
(tests/fixtures/public/browser, SOURCES.tsv there names origin, commit and licence).

- Safari's ``History.db`` was "not a browser history database" (and failed a source of its own):
  plaso's and artemis's Safari files now read as pages, times in seconds since 2001 UTC.
- One row that makes a page fail (a minimal mutation of plaso's Chrome History: a visit_count
  that is not a number) failed the whole source with a ValueError; now it is one ReadError for
  that row and every other page is read.
- One message that fails (a minimal mutation of plaso's iMessage chat.db: an attributedBody
  that is a REAL, not a blob) failed the whole source with a TypeError; now it is one ReadError.
"""

from __future__ import annotations

import shutil
import sqlite3
from datetime import UTC, datetime

from conftest import FIXTURES

from ragbag.connectors import browser, imessage
from ragbag.core.records import Document, ReadError

FIXTURES = FIXTURES
PUBLIC = FIXTURES / "public" / "browser"
PLASO_SAFARI = PUBLIC / "plaso" / "test_data__safari__History.db"
ARTEMIS_SAFARI = PUBLIC / "artemis" / "forensics__tests__test_data__browser__safari__History.db"
PLASO_CHROME = PUBLIC / "plaso" / "test_data__chrome__History"
PLASO_CHAT = FIXTURES / "realworld" / "imessage" / "plaso" / "imessage_chat.db"


def read(module, path, cursor=None):
    docs, errors = [], []
    for item in module.read(path, "s", cursor):
        if isinstance(item, Document):
            docs.append(item)
        elif isinstance(item, ReadError):
            errors.append(item)
    return docs, errors


def test_safari_history_is_read_as_pages():
    docs, errors = read(browser, PLASO_SAFARI)
    assert not errors and len(docs) == 13
    by_url = {d.metadata["url"]: d for d in docs}
    fb = by_url["https://www.facebook.com/"]
    assert fb.metadata["browser"] == "safari" and fb.title == "Facebook - Log In or Sign Up"
    # visit_time 531955468.829831 s since 2001-01-01 UTC
    assert fb.created_at == datetime(2017, 11, 9, 21, 24, 28, 829831, tzinfo=UTC)
    assert "in Safari" in fb.text
    # http://facebook.com/ was a redirect source once, then visited with a title: shown, 2 visits
    assert by_url["http://facebook.com/"].metadata["visit_count"] == 2
    docs, errors = read(browser, ARTEMIS_SAFARI)
    assert not errors and len(docs) == 17
    assert any(d.title == "DuckDuckGo — Privacy, simplified." for d in docs)


def test_safari_broken_schema_is_a_read_error_naming_the_column():
    bad = PUBLIC / "artemis" / "forensics__tests__test_data__browser__safari__BadHistory.db"
    docs, errors = read(browser, bad)
    assert not docs and len(errors) == 1 and "history_items.url" in errors[0].error


def test_safari_is_found_in_its_default_place(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    safari = tmp_path / "Library" / "Safari" / "History.db"
    safari.parent.mkdir(parents=True)
    shutil.copyfile(PLASO_SAFARI, safari)
    found, looked = browser.discover()
    assert found == [safari] and str(safari) in looked
    docs, errors = read(browser, None)
    assert len(docs) == 13 and not errors
    assert {d.metadata["profile"] for d in docs} == {"Safari"}


def test_one_bad_row_fails_only_that_row(tmp_path):
    copy = tmp_path / "History"
    shutil.copyfile(PLASO_CHROME, copy)
    conn = sqlite3.connect(copy)
    (uid,) = conn.execute("SELECT id FROM urls WHERE url LIKE 'http%' AND hidden = 0 ORDER BY id LIMIT 1").fetchone()
    conn.execute("UPDATE urls SET visit_count = 'many' WHERE id = ?", (uid,))
    conn.commit()
    conn.close()
    docs, errors = read(browser, copy)
    assert len(docs) == 29  # 30 pages in the file, one lost
    assert [e.uri for e in errors] == [f"{copy.absolute()}#{uid}"]
    assert errors[0].error.startswith("ValueError")


def test_one_bad_message_fails_only_that_message(tmp_path):
    copy = tmp_path / "chat.db"
    shutil.copyfile(PLASO_CHAT, copy)
    conn = sqlite3.connect(copy)
    (rowid,) = conn.execute("SELECT ROWID FROM message WHERE text IS NOT NULL ORDER BY ROWID LIMIT 1").fetchone()
    conn.execute("UPDATE message SET text = NULL, attributedBody = 1.5 WHERE ROWID = ?", (rowid,))
    conn.commit()
    conn.close()
    before, _ = read(imessage, PLASO_CHAT)
    docs, errors = read(imessage, copy)
    assert [e.uri for e in errors] == [f"{copy.absolute()}#{rowid}"] and "TypeError" in errors[0].error
    lines = lambda ds: sum(d.metadata["messages"] for d in ds)  # noqa: E731
    assert lines(docs) == lines(before) - 1


def test_a_first_read_of_nothing_readable_reports_instead_of_failing(tmp_path):
    webview = PUBLIC / "plaso" / "test_data__android__webview.db"
    docs, errors = read(browser, webview)
    assert not docs and "not a browser history database" in errors[0].error
