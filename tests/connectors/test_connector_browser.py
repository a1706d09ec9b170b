"""The browser connector: Chrome-family History and Firefox places.sqlite, as the browsers write
them (real schemas, WAL, locks), read without disturbing them, incrementally."""

from __future__ import annotations

import hashlib
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from conftest import cli, cli_json, split_read

from ragbag.connectors import browser
from ragbag.core.errors import RagbagError
from ragbag.core.records import Document
from ragbag.models.embedding import token_counter
from ragbag_evalsets.formats.browser import CHROME_SCHEMA, FIREFOX_SCHEMA  # Chromium's and Firefox's own tables

UTC = UTC
CHROME_EPOCH = datetime(1601, 1, 1, tzinfo=UTC)
LINK, TYPED, RELOAD = 0x30000000, 0x30000001, 0x30000008  # core types with chain-start/end bits


def chrome_time(dt: datetime) -> int:
    return (dt - CHROME_EPOCH) // timedelta(microseconds=1)


def firefox_time(dt: datetime) -> int:
    return (dt - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(microseconds=1)


def at(day: int, hour: int = 12, minute: int = 0) -> datetime:
    return datetime(2024, 5, day, hour, minute, tzinfo=UTC)


class Chrome:
    """Writes a History database the way Chrome's HistoryBackend does: a urls row per URL
    (visit_count, last_visit_time kept in step) and a visits row per visit."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.db = sqlite3.connect(path)
        self.db.executescript(CHROME_SCHEMA)

    def url(self, url: str | bytes, title: str | bytes | None, visits: list[datetime], hidden: int = 0) -> int:
        cur = self.db.execute(
            "INSERT INTO urls (url, title, visit_count, typed_count, last_visit_time, hidden)"
            " VALUES (?, ?, 0, 0, 0, ?)",
            (url, title, hidden),
        )
        for v in visits:
            self.visit(cur.lastrowid, v)
        return cur.lastrowid

    def visit(self, url_id: int, when: datetime, transition: int = LINK) -> None:
        t = chrome_time(when)
        self.db.execute(
            "INSERT INTO visits (url, visit_time, from_visit, transition, segment_id,"
            " visit_duration) VALUES (?, ?, 0, ?, 0, 5000000)",
            (url_id, t, transition),
        )
        self.db.execute(
            "UPDATE urls SET visit_count = visit_count + 1, last_visit_time = MAX(last_visit_time, ?) WHERE id = ?",
            (t, url_id),
        )

    def delete_url(self, url_id: int) -> None:  # "remove from history" deletes the visits too
        self.db.execute("DELETE FROM visits WHERE url = ?", (url_id,))
        self.db.execute("DELETE FROM urls WHERE id = ?", (url_id,))

    def close(self) -> Path:
        self.db.commit()
        self.db.close()
        return self.path


class Firefox:
    """Writes places.sqlite like Places does: WAL journal, moz_places + moz_historyvisits."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.db = sqlite3.connect(path)
        self.db.execute("PRAGMA page_size = 32768")
        self.db.execute("PRAGMA journal_mode = WAL")
        self.db.execute("PRAGMA wal_autocheckpoint = 0")  # rows stay in -wal until closed
        self.db.executescript(FIREFOX_SCHEMA)
        self.n = 0

    def place(
        self, url: str, title: str | None, visits: list[datetime], hidden: int = 0, description: str | None = None
    ) -> int:
        self.n += 1
        host = url.split("/")[2] if "://" in url else ""
        cur = self.db.execute(
            "INSERT INTO moz_places (url, title, rev_host, visit_count, hidden, typed, frecency,"
            " last_visit_date, guid, url_hash, description) VALUES (?, ?, ?, ?, ?, 0, 100, ?, ?, ?, ?)",
            (
                url,
                title,
                host[::-1] + ".",
                len(visits),
                hidden,
                max((firefox_time(v) for v in visits), default=None),
                f"guid{self.n:08d}",
                hash(url) & 0xFFFFFFFF,
                description,
            ),
        )
        for v in visits:
            self.db.execute(
                "INSERT INTO moz_historyvisits (from_visit, place_id, visit_date,"
                " visit_type, session, source) VALUES (0, ?, ?, 1, 0, 0)",
                (cur.lastrowid, firefox_time(v)),
            )
        return cur.lastrowid

    def commit(self) -> None:
        self.db.commit()

    def close(self) -> Path:
        self.db.commit()
        self.db.close()
        return self.path


def run(path, cursor=None):
    return split_read(browser.read(path, "hist", cursor))


def chrome_profile(root: Path) -> tuple[Path, dict[str, int]]:
    c = Chrome(root / ".config" / "google-chrome" / "Default" / "History")
    ids = {
        "bread": c.url(
            "https://www.kingarthurbaking.com/recipes/sourdough-starter",
            "Sourdough Starter Recipe | King Arthur Baking",
            [at(1, 8), at(3, 9, 30), at(20, 18, 45)],
        ),
        "settings": c.url("chrome://settings/", "Settings", [at(2)]),
        "frame": c.url("https://ads.example.net/frame?id=1", "", [at(2)], hidden=1),
        "file": c.url("file:///home/me/notes.txt", "notes.txt", [at(2)]),
        "blank": c.url("about:blank", "", [at(2)]),
        "spaetzle": c.url(
            "https://de.wikipedia.org/wiki/K%C3%A4sesp%C3%A4tzle", "Käsespätzle – Wikipedia", [at(5, 19)]
        ),
        "garbled": c.url("https://garbled.example.com/", b"Caf\xe9 \xff menu", [at(6)]),
        "untitled": c.url("https://example.com/untitled", None, [at(7)]),
    }
    return c.close(), ids


def test_chrome_pages_field_by_field_with_1601_epoch(tmp_path):
    path, ids = chrome_profile(tmp_path)
    docs, seen, errors, cursor = run(path)
    assert set(docs) == {
        "chrome/Default/https://www.kingarthurbaking.com/recipes/sourdough-starter",
        "chrome/Default/https://de.wikipedia.org/wiki/K%C3%A4sesp%C3%A4tzle",
        "chrome/Default/https://example.com/untitled",
    }  # chrome://, about:, file:, hidden subframes are noise; the garbled title is an error
    assert not seen
    bread = docs["chrome/Default/https://www.kingarthurbaking.com/recipes/sourdough-starter"]
    assert bread.title == "Sourdough Starter Recipe | King Arthur Baking"
    assert bread.uri == "https://www.kingarthurbaking.com/recipes/sourdough-starter"
    assert bread.created_at == datetime(2024, 5, 1, 8, tzinfo=UTC)
    assert bread.updated_at == datetime(2024, 5, 20, 18, 45, tzinfo=UTC)
    assert bread.metadata == {
        "url": "https://www.kingarthurbaking.com/recipes/sourdough-starter",
        "domain": "kingarthurbaking.com",
        "title": "Sourdough Starter Recipe | King Arthur Baking",
        "visit_count": 3,
        "first_visit": "2024-05-01T08:00:00+00:00",
        "last_visit": "2024-05-20T18:45:00+00:00",
        "browser": "chrome",
        "profile": "Default",
    }
    assert bread.text == (
        "Sourdough Starter Recipe | King Arthur Baking\n"
        "https://www.kingarthurbaking.com/recipes/sourdough-starter\n"
        "kingarthurbaking.com: visited 3 times in Chrome (Default profile), first on 2024-05-01,"
        " last on 2024-05-20.\n"
    )
    spaetzle = docs["chrome/Default/https://de.wikipedia.org/wiki/K%C3%A4sesp%C3%A4tzle"]
    assert "https://de.wikipedia.org/wiki/Käsespätzle" in spaetzle.text  # escapes decoded for search
    assert spaetzle.metadata["domain"] == "de.wikipedia.org" and spaetzle.metadata["visit_count"] == 1
    untitled = docs["chrome/Default/https://example.com/untitled"]
    assert untitled.title == "https://example.com/untitled" and untitled.metadata["title"] == ""
    (err,) = errors
    assert err.uri == f"{path.absolute()}#{ids['garbled']}" and "undecodable title" in err.error
    # A literal check of the epoch: 13359038400000000 µs after 1601 is 2024-05-01 12:00 UTC.
    assert chrome_time(at(1)) == 13359038400000000
    key = str(path.absolute())
    assert cursor["files"][key]["kind"] == "chromium" and cursor["files"][key]["visits"] == 10


def test_firefox_wal_rows_are_seen_and_the_live_files_are_untouched(tmp_path):
    path = tmp_path / "mozilla" / "firefox" / "k3x9.default-release" / "places.sqlite"
    ff = Firefox(path)
    ff.place(
        "https://developer.mozilla.org/en-US/docs/Web/HTTP/Caching",
        "HTTP caching - HTTP | MDN",
        [at(2, 10), at(9, 16)],
        description="The HTTP cache stores a response associated with a request and reuses it.",
    )
    ff.place("place:sort=8&maxResults=10", "Recent Tags", [])
    ff.place("https://example.org/bookmarked-only", "Bookmarked", [])  # foreign_count, no visit
    ff.place("https://t.co/redirect", None, [at(2, 10)], hidden=1)
    ff.commit()  # committed, but only in places.sqlite-wal: the browser is "running"
    wal = path.with_name("places.sqlite-wal")
    assert wal.stat().st_size > 0
    before = snapshot_of(path.parent)

    docs, seen, errors, cursor = run(path.parent.parent)

    assert snapshot_of(path.parent) == before  # nothing written, nothing created beside the live database
    assert not errors and not seen
    (doc,) = docs.values()
    assert doc.native_id == "firefox/k3x9.default-release/https://developer.mozilla.org/en-US/docs/Web/HTTP/Caching"
    assert doc.created_at == datetime(2024, 5, 2, 10, tzinfo=UTC)  # µs since 1970
    assert doc.updated_at == datetime(2024, 5, 9, 16, tzinfo=UTC)
    assert doc.metadata["browser"] == "firefox" and doc.metadata["profile"] == "k3x9.default-release"
    assert doc.metadata["visit_count"] == 2 and doc.metadata["domain"] == "developer.mozilla.org"
    assert doc.text.endswith("reuses it.\n") and "visited 2 times in Firefox" in doc.text
    ff.close()


def snapshot_of(folder: Path) -> dict[str, tuple[str, int]]:
    return {p.name: (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns) for p in folder.iterdir()}


def test_chrome_holding_its_exclusive_lock_is_read_immutably(tmp_path):
    path, _ = chrome_profile(tmp_path)
    holder = sqlite3.connect(path)  # Chrome: exclusive locking, truncated rollback journal
    holder.execute("PRAGMA locking_mode = EXCLUSIVE")
    holder.execute("PRAGMA journal_mode = TRUNCATE")
    holder.execute("UPDATE meta SET value = '70' WHERE key = 'version'")
    holder.commit()  # exclusive locking mode keeps the lock after the first write
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        sqlite3.connect(path, timeout=0).execute("SELECT COUNT(*) FROM urls").fetchone()
    assert path.with_name("History-journal").stat().st_size == 0  # no hot journal: no copy
    before = snapshot_of(path.parent)
    docs, _, errors, _ = run(path)
    assert len(docs) == 3 and len(errors) == 1
    assert snapshot_of(path.parent) == before
    holder.close()


def test_hot_rollback_journal_is_rolled_back_in_a_copy(tmp_path):
    path, _ = chrome_profile(tmp_path)
    writer = sqlite3.connect(path)
    writer.execute("PRAGMA journal_mode = PERSIST")
    writer.execute("BEGIN IMMEDIATE")
    writer.execute("DELETE FROM urls")  # mid-transaction: the journal holds the old pages
    writer.execute("PRAGMA cache_spill = 1")
    writer.execute("PRAGMA cache_size = 1")
    for n in range(300):  # force pages out to the database file before commit
        writer.execute(
            "INSERT INTO urls (url, title, last_visit_time) VALUES (?, 'x', 1)",
            (f"https://uncommitted.example/{n}/" + "x" * 500,),
        )
    assert path.with_name("History-journal").stat().st_size > 0
    before = snapshot_of(path.parent)
    docs, _, _, _ = run(path)
    assert snapshot_of(path.parent) == before
    assert len(docs) == 3 and not any("uncommitted" in d for d in docs)
    writer.rollback()
    writer.close()


def test_browser_is_named_by_path_else_by_schema(tmp_path):
    cases = {
        ".config/BraveSoftware/Brave-Browser/Profile 1/History": ("brave", "Profile 1"),
        "Library/Application Support/Microsoft Edge/Default/History": ("edge", "Default"),
        "Library/Application Support/Google/Chrome/Profile 2/History": ("chrome", "Profile 2"),
        ".config/chromium/Default/History": ("chromium", "Default"),
        ".config/vivaldi-snapshot/Default/History": ("vivaldi", "Default"),
        "operator/Profile 3/History": ("chromium", "Profile 3"),  # a user "operator" is not Opera
        "copies/laptop/History": ("chromium", "laptop"),
    }
    for rel, (_name, _profile) in cases.items():
        c = Chrome(tmp_path / rel)
        c.url("https://example.com/", "Example", [at(1)])
        c.close()
    docs, _, errors, _ = run(tmp_path)
    assert not errors
    got = {d.metadata["browser"] + "|" + d.metadata["profile"] for d in docs.values()}
    assert "brave|Profile 1" in got and "edge|Default" in got and "chrome|Profile 2" in got
    assert "chromium|laptop" in got and "chromium|Default" in got and "vivaldi|Default" in got
    assert "chromium|Profile 3" in got and len(docs) == len(cases)
    assert browser.browser_for(Path("/x/.mozilla/firefox/a.default/places.sqlite"), "firefox") == "firefox"
    # a Firefox file in a Chrome-named folder is still Firefox: the schema decides the family
    assert browser.browser_for(Path("/x/google-chrome/p/places.sqlite"), "firefox") == "firefox"


def test_incremental_rereads_revisited_and_new_urls_and_vouches_for_the_rest(tmp_path):
    path, ids = chrome_profile(tmp_path)
    docs1, _, _, cursor1 = run(path)

    docs, seen, errors, cursor2 = run(path, cursor1)  # nothing happened since
    assert not docs and not errors and seen == set(docs1)
    assert cursor2 == cursor1

    c = Chrome.__new__(Chrome)
    c.path, c.db = path, sqlite3.connect(path)
    c.visit(ids["spaetzle"], at(25, 20), TYPED)  # a revisit of an old URL
    new = c.url("https://www.seriouseats.com/the-food-lab-pizza", "The Food Lab's Pizza", [at(26)])
    c.url("chrome://history/", "History", [at(26)])
    c.close()

    docs, seen, errors, cursor3 = run(path, cursor1)
    assert set(docs) == {
        "chrome/Default/https://de.wikipedia.org/wiki/K%C3%A4sesp%C3%A4tzle",
        "chrome/Default/https://www.seriouseats.com/the-food-lab-pizza",
    }
    spaetzle = docs["chrome/Default/https://de.wikipedia.org/wiki/K%C3%A4sesp%C3%A4tzle"]
    assert spaetzle.metadata["visit_count"] == 2 and spaetzle.updated_at == at(25, 20)
    assert spaetzle.created_at == at(5, 19) and "visited 2 times" in spaetzle.text
    assert seen == set(docs1) - set(docs)  # the untouched pages, vouched for without reading
    assert not errors  # the garbled row lies before the cursor: reported once, not every refresh
    key = str(path.absolute())
    assert cursor3["files"][key]["visits"] == cursor1["files"][key]["visits"] + 3
    assert new > max(ids.values())


def test_cleared_history_propagates_as_deletions(tmp_path):
    path, ids = chrome_profile(tmp_path)
    _, _, _, cursor = run(path)
    c = Chrome.__new__(Chrome)
    c.path, c.db = path, sqlite3.connect(path)
    c.delete_url(ids["bread"])  # "remove from history": the URL row and all its visits
    c.url("https://docs.python.org/3/library/sqlite3.html", "sqlite3 — DB-API 2.0 interface", [at(27)])
    c.close()
    docs, seen, errors, _ = run(path, cursor)
    alive = set(docs) | seen
    assert "chrome/Default/https://www.kingarthurbaking.com/recipes/sourdough-starter" not in alive
    assert "chrome/Default/https://docs.python.org/3/library/sqlite3.html" in docs
    assert "chrome/Default/https://de.wikipedia.org/wiki/K%C3%A4sesp%C3%A4tzle" in alive
    # old visits went missing, so the file was read in full: counts and first visits stay right
    assert "chrome/Default/https://example.com/untitled" in docs and len(errors) == 1

    # Chrome expiring visits older than 90 days: the URL stays with fewer visits
    _, _, _, cursor = run(path)
    db = sqlite3.connect(path)
    db.execute("DELETE FROM visits WHERE url = ? AND visit_time < ?", (ids["spaetzle"], chrome_time(at(6))))
    db.execute("INSERT INTO visits (url, visit_time) VALUES (?, ?)", (ids["spaetzle"], chrome_time(at(28))))
    db.commit()
    db.close()
    docs, _, _, _ = run(path, cursor)
    spaetzle = docs["chrome/Default/https://de.wikipedia.org/wiki/K%C3%A4sesp%C3%A4tzle"]
    assert spaetzle.created_at == at(28)  # the first visit the history still knows


def test_new_file_in_folder_and_vanished_file(tmp_path):
    chrome_path, _ = chrome_profile(tmp_path)
    _, _, _, cursor = run(tmp_path)
    ff = Firefox(tmp_path / ".mozilla" / "firefox" / "p.default" / "places.sqlite")
    ff.place("https://www.rust-lang.org/learn", "Learn Rust", [at(3)])
    ff.close()
    docs, seen, _, cursor2 = run(tmp_path, cursor)
    assert set(docs) == {"firefox/p.default/https://www.rust-lang.org/learn"} and len(seen) == 3
    chrome_path.unlink()
    docs, seen, _, _ = run(tmp_path, cursor2)
    assert not docs and seen == {"firefox/p.default/https://www.rust-lang.org/learn"}


def test_bad_input_is_reported_and_good_files_still_read(tmp_path):
    good = Firefox(tmp_path / "ff" / "good.default" / "places.sqlite")
    good.place("https://www.rust-lang.org/learn", "Learn Rust", [at(3)])
    good.close()
    garbage = tmp_path / "chrome" / "Default" / "History"
    garbage.parent.mkdir(parents=True)
    garbage.write_bytes(b"\x00\x01 definitely not sqlite" * 100)
    other = tmp_path / "chrome" / "Profile 1" / "History"  # a SQLite file of another app
    other.parent.mkdir(parents=True)
    sqlite3.connect(other).executescript("CREATE TABLE notes(id, body); INSERT INTO notes VALUES (1, 'x');")
    damaged = Chrome(tmp_path / "chrome" / "Profile 2" / "History")
    for n in range(400):
        damaged.url(f"https://example.com/page/{n}/" + "p" * 200, f"Page {n}", [at(1 + n % 20)])
    damaged.close()
    raw = bytearray(damaged.path.read_bytes())
    raw[4096 * 40 : 4096 * 42] = b"\xff" * 4096 * 2  # trash two leaf pages of the urls table
    damaged.path.write_bytes(bytes(raw))

    docs, _, errors, cursor = run(tmp_path)
    assert "firefox/good.default/https://www.rust-lang.org/learn" in docs
    reasons = {Path(e.uri.split("#")[0]).parent.name: e for e in errors}
    assert reasons["Default"].error == "not a SQLite database"
    assert "not a browser history database" in reasons["Profile 1"].error
    lost = reasons["Profile 2"]
    assert lost.error.startswith("damaged database from row") and "#" in lost.uri
    first_lost = int(lost.uri.rsplit("#", 1)[1])
    salvaged = sorted(int(d.split("/page/")[1].split("/")[0]) for d in docs if "/page/" in d)
    assert 300 < len(salvaged) < 400  # every row outside the damaged pages is still read
    # ids are 1-based: page n is row n + 1; the row before the first lost one was read
    assert salvaged[0] == 0 and salvaged[-1] == 399 and (first_lost - 1) - 1 in salvaged
    assert all("\n" not in e.error for e in errors)
    assert list(cursor["files"]) == [str(good.path.absolute())]  # a damaged file keeps no cursor

    # Nothing readable at all: a first read reports it (nothing stored to lose); after a build,
    # the build fails rather than delete what that build indexed.
    docs, _, errors, _ = run(garbage)
    assert not docs and [e.error for e in errors] == ["not a SQLite database"]
    with pytest.raises(RagbagError, match="not a SQLite database"):
        run(garbage, {"files": {}})
    (tmp_path / "empty").mkdir()
    with pytest.raises(RagbagError, match="no browser history"):
        run(tmp_path / "empty")


def test_damaged_visits_table_still_gives_every_page(tmp_path):
    c = Chrome(tmp_path / "Default" / "History")
    for n in range(400):
        c.url(f"https://example.com/page/{n}/" + "p" * 200, f"Page {n}", [at(1 + n % 20)])
    path = c.close()
    raw = bytearray(path.read_bytes())
    raw[4096 * 60 : 4096 * 62] = b"\xff" * 4096 * 2  # pages of the visits table and its indexes
    path.write_bytes(bytes(raw))
    docs, _, errors, cursor = run(path)
    (err,) = errors
    assert err.uri == str(path.absolute()) and err.error.startswith("damaged visits table")
    assert len(docs) == 400 and cursor["files"] == {}
    page = docs["chromium/Default/https://example.com/page/7/" + "p" * 200]
    assert page.metadata["visit_count"] == 1 and page.updated_at == at(8)  # the URL row's facts


def test_discover_and_read_default_places(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    found, looked = browser.discover()
    assert found == [] and any(".config/google-chrome/*/History" in p for p in looked)
    assert any("Library/Application Support/Firefox/Profiles/*/places.sqlite" in p for p in looked)
    with pytest.raises(RagbagError, match="no browser history found; looked in"):
        run(None)
    chrome_profile(tmp_path)
    ff = Firefox(tmp_path / "Library/Application Support/Firefox/Profiles/ab12.default/places.sqlite")
    ff.place("https://www.rust-lang.org/learn", "Learn Rust", [at(3)])
    ff.close()
    brave = Chrome(tmp_path / "Library/Application Support/BraveSoftware/Brave-Browser/Default/History")
    brave.url("https://search.brave.com/", "Brave Search", [at(4)])
    brave.close()
    found, _ = browser.discover()
    assert [p.relative_to(tmp_path).as_posix() for p in found] == [
        ".config/google-chrome/Default/History",
        "Library/Application Support/BraveSoftware/Brave-Browser/Default/History",
        "Library/Application Support/Firefox/Profiles/ab12.default/places.sqlite",
    ]
    docs, _, _, _ = run(None)
    assert {d.split("/")[0] for d in docs} == {"chrome", "brave", "firefox"}


def test_spans_fit_the_budget_even_for_a_giant_url():
    count = token_counter()
    url = "https://tracker.example.com/click?" + "&".join(f"utm_param{n}=value{n}" for n in range(300))
    doc = Document("s", "browser", "chrome/Default/" + url, url, "Ads", f"Ads\n{url}\nvisited 1 time.\n")
    spans = browser.spans(doc, count, 64)
    assert len(spans) > 1 and all(count(doc.text[s.start : s.end]) <= 64 for s in spans)
    short = Document("s", "browser", "x", "u", "T", "Title\nhttps://a.example/\nvisited 2 times.\n")
    assert [(s.start, s.end) for s in browser.spans(short, count, 64)] == [(0, len(short.text) - 1)]


@pytest.mark.slow
def test_end_to_end_build_search_filter_and_deletion(home, tmp_path):
    root = tmp_path / "browsers"
    chrome, ids = chrome_profile(root)
    ff = Firefox(root / ".mozilla" / "firefox" / "k3x9.default-release" / "places.sqlite")
    ff.place(
        "https://developer.mozilla.org/en-US/docs/Web/HTTP/Caching",
        "HTTP caching - HTTP | MDN",
        [at(2, 10), at(9, 16)],
        description="The HTTP cache stores a response associated with a request and reuses it.",
    )
    ff.place(
        "https://www.theguardian.com/world/2024/may/28/volcano-eruption-iceland",
        "Iceland volcano erupts again near Grindavík",
        [at(28, 7)],
    )
    ff.commit()  # Firefox still "running": its rows are in the WAL
    cli("add", "browser", "web", str(root))
    (rep,) = cli_json("build")
    assert rep["status"] == "success" and rep["documents"] == 5 and rep["added"] == 5
    assert [e["uri"].rsplit("#")[-1] for e in rep["errors"]] == [str(ids["garbled"])]

    hits = cli_json("search", "how do I feed the yeast culture for baking bread", "-k", "1")
    assert hits[0]["title"] == "Sourdough Starter Recipe | King Arthur Baking"
    assert hits[0]["metadata"]["browser"] == "chrome" and hits[0]["metadata"]["visit_count"] == 3
    hits = cli_json("search", "lava eruption", "-k", "3", "--where", '{"browser": {"==": "firefox"}}')
    assert hits[0]["title"] == "Iceland volcano erupts again near Grindavík"
    assert {h["metadata"]["browser"] for h in hits} == {"firefox"}
    hits = cli_json("search", "web page", "-k", "10", "--after", "2024-05-06")  # first visit
    assert {h["metadata"]["domain"] for h in hits} == {"example.com", "theguardian.com"}

    ff.close()
    c = Chrome.__new__(Chrome)
    c.path, c.db = chrome, sqlite3.connect(chrome)
    c.delete_url(ids["bread"])
    c.close()
    (rep,) = cli_json("build")
    assert rep["deleted"] == 1 and rep["added"] == 0 and rep["documents"] == 4
    hits = cli_json("search", "sourdough starter", "-k", "5")
    assert all("sourdough" not in h["metadata"]["url"] for h in hits)


def test_an_old_firefox_schema_without_last_visit_date_is_read_from_its_visits(tmp_path):
    """Firefox 3.x places.sqlite: moz_places has no last_visit_date; visits hold the times."""
    profile = tmp_path / "Mozilla" / "Firefox" / "Profiles" / "old.default"
    profile.mkdir(parents=True)
    db = sqlite3.connect(profile / "places.sqlite")
    db.executescript("""
        CREATE TABLE moz_places (id INTEGER PRIMARY KEY, url LONGVARCHAR, title LONGVARCHAR,
            rev_host LONGVARCHAR, visit_count INTEGER DEFAULT 0, hidden INTEGER DEFAULT 0 NOT NULL,
            typed INTEGER DEFAULT 0 NOT NULL, favicon_id INTEGER, frecency INTEGER DEFAULT -1 NOT NULL);
        CREATE TABLE moz_historyvisits (id INTEGER PRIMARY KEY, from_visit INTEGER, place_id INTEGER,
            visit_date INTEGER, visit_type INTEGER, session INTEGER);
    """)
    db.execute(
        "INSERT INTO moz_places VALUES (1, 'https://www.dhl.de/track?id=JJD0001234567890', 'DHL Sendung',"
        " 'ed.lhd.www.', 2, 0, 1, NULL, 100)"
    )
    db.execute(
        "INSERT INTO moz_places VALUES (2, 'https://example.org/never', 'never visited', 'gro.elpmaxe.', 0, 0, 0, NULL, 0)"
    )
    for vid, day in ((1, 3), (2, 5)):
        db.execute("INSERT INTO moz_historyvisits VALUES (?, 0, 1, ?, 1, 0)", (vid, firefox_time(at(day))))
    db.commit()
    db.close()
    docs, _, errors, _ = split_read(browser.read(profile / "places.sqlite", "hist", None))
    assert errors == [] and len(docs) == 1
    (doc,) = docs.values()
    assert doc.uri.endswith("JJD0001234567890") and doc.created_at == at(3) and doc.updated_at == at(5)
