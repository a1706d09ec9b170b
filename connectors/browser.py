"""Browser history: one document per visited page per browser profile.

Formats: Chromium-family ``History`` databases (Chrome, Chromium, Brave, Edge, Vivaldi, Opera:
tables ``urls`` + ``visits``, times in µs since 1601-01-01 UTC), Firefox-family
``places.sqlite`` (``moz_places`` + ``moz_historyvisits``, times in µs since 1970-01-01 UTC) and
Safari's ``History.db`` (``history_items`` + ``history_visits``, times in seconds since
2001-01-01 UTC, titles kept per visit: a page's title is that of its latest visit with one).
A path may be one database file (recognised by its tables, whatever its name) or a folder, in
which every file named ``History``, ``places.sqlite`` or ``History.db`` is read (cache folders
pruned); no path means the browsers' default profile folders on Linux (incl. snap/flatpak) and
macOS, and Safari's ``~/Library/Safari/History.db`` (and Safari Technology Preview's).

A document is a page (URL) of one profile: native id ``browser/profile/url``; text = title, URL
(percent-escapes decoded), domain and the visit facts (count, first and last visit date), plus
Firefox's page description when it kept one; the page content itself is not in the history.
``created_at`` = first visit, ``updated_at`` = last visit. Metadata: ``url``, ``domain``
(host without ``www.``), ``title``, ``visit_count``, ``first_visit``, ``last_visit`` (ISO UTC
strings), ``browser``, ``profile`` (the profile folder's name). The browser is told by the path
(``google-chrome``, ``BraveSoftware``, ``Microsoft Edge``, ``.mozilla``...), else by the schema
(``chromium`` / ``firefox`` / ``safari``).

Traps handled:
- browsers keep these databases open, Chrome with an exclusive lock, Firefox in WAL mode:
  :func:`connectors._sqlite.snapshot` opens them ``immutable`` (no lock, nothing written) or, when a ``-wal`` or a
  non-empty ``-journal`` sits beside them (recent rows live there and an immutable open would
  miss them or see half a transaction), reads a private temporary copy of both;
- noise is left out: every scheme but ``http``/``https`` (``chrome://``, ``edge://``,
  ``about:``, ``file:``, ``data:``, ``blob:``, ``javascript:``, ``view-source:``, extension
  pages, Firefox ``place:`` queries), rows the browser hides itself (``hidden = 1``: subframes,
  redirect sources, embeds), Safari pages whose every visit is synthesized or a redirect source
  (the same rule: Safari has no hidden column) and places never visited (Firefox
  bookmarks-only rows);
- isolation (:mod:`connectors._isolate`): any failure inside one database is a ReadError for
  that file, any failure making one page a ReadError for that row (``<file>#<id>``), never a
  list of expected exception types; a garbage file (or a SQLite file of another app, or a
  history database lacking a column it needs) is a ReadError naming why; in a damaged
  database each damaged stretch of the URL table is one ReadError (``<file>#<first lost id>``)
  and reading resumes at the next readable row (a damaged visits table: pages keep the URL
  table's own count and last visit); an undecodable URL or title is a ReadError for its row;
  when no history file at all can be read after an earlier build (a cursor exists), the build
  fails (RagbagError) rather than dropping the indexed pages; a first read reports the errors.

Incremental: the cursor keeps, per history file, the newest visit time, the highest visit id
and the visit count (one written by another ``VERSION`` of the rendering is ignored). A refresh
aggregates only the visits of URLs visited past either mark (a revisit changes visit_count and
last_visit, so revisited old URLs are re-read too), then makes one pass over the URL table (id,
url, title: cheap, its timing is in benchmarks/README.md) that builds those pages and vouches for
every other URL still there with ``Seen``. Neither format keeps a log of deletions: a URL row
that is gone is simply not vouched for, which is how "clear history" propagates. When fewer old visits remain than the
cursor counted (part of the history was cleared, or Chrome expired visits older than 90 days)
the file is read in full, so counts and first visits stay right. A damaged file keeps no cursor
(read in full next time). Left out: a title that changes without a new visit (browsers retitle
on a visit), per-visit documents, downloads, search terms, bookmarks, Safari's older
``History.plist`` (before Safari 8).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import NamedTuple

from ragbag.connectors._browser_places import (
    BROWSER_DIRS,
    CHROMIUM_ROOTS,
    FAMILY,
    FIREFOX_ROOTS,
    LABELS,
    PRUNE,
    SAFARI_FILES,
)
from ragbag.connectors._isolate import each_record
from ragbag.connectors._pages import page_document, web_url
from ragbag.connectors._sqlite import read_databases
from ragbag.connectors._walk import follows_outside
from ragbag.core.records import Cursor, Document, ReadError, Seen, Span
from ragbag.text.chunking import TokenCounter, prose_spans
from ragbag.text.unreadable import Unreadable, one_line

NAME = "browser"
SCHEDULE = "0 * * * *"
FILE_NAMES = ("History", "places.sqlite", "History.db")
VERSION = 1  # of the documents' rendering: a cursor of another version reads everything again
_EPOCHS = {
    "chromium": datetime(1601, 1, 1, tzinfo=UTC),
    "firefox": datetime(1970, 1, 1, tzinfo=UTC),
    "safari": datetime(2001, 1, 1, tzinfo=UTC),
}


class _Schema(NamedTuple):
    """The table and column names of one history format."""

    urls: str
    visits: str
    visit_url: str  # the visit's URL id column
    visit_time: str
    last: str  # the URL's last visit time column
    unit: int = 1  # microseconds per unit of its times
    title: str = "u.title"  # SQL for the page's title (u: the URL table)
    shown: str = ""  # SQL condition for a page the browser shows in its history ("": the hidden column)


_SCHEMAS = {
    "chromium": _Schema("urls", "visits", "url", "visit_time", "last_visit_time"),
    "firefox": _Schema("moz_places", "moz_historyvisits", "place_id", "visit_date", "last_visit_date"),
    # Safari keeps titles per visit (the page's is its latest non-empty one) and has no hidden
    # column: a page shown in its history has a visit that is neither synthesized nor a redirect
    # source (a visit with a redirect_destination), as Chrome hides redirect sources.
    "safari": _Schema(
        "history_items",
        "history_visits",
        "history_item",
        "visit_time",
        "",
        unit=1_000_000,
        title=(
            "(SELECT v.title FROM history_visits v WHERE v.history_item = u.id AND COALESCE(v.title, '') != ''"
            " ORDER BY v.visit_time DESC LIMIT 1)"
        ),
        shown=(
            "EXISTS (SELECT 1 FROM history_visits v WHERE v.history_item = u.id AND v.synthesized = 0"
            " AND v.redirect_destination IS NULL) AND "
        ),
    ),
}


def discover() -> tuple[list[Path], list[str]]:
    """Every profile's history database in the default places (``$HOME`` honoured), and Safari's."""
    home = Path.home()
    found, looked = [], []
    for roots, name in ((CHROMIUM_ROOTS, "History"), (FIREFOX_ROOTS, "places.sqlite")):
        for rel in roots:
            root = home / rel
            looked.append(str(root / "*" / name))
            if root.is_dir():
                found += sorted(p for p in root.glob(f"*/{name}") if p.is_file())
    for rel in SAFARI_FILES:
        looked.append(str(home / rel))
        if (home / rel).is_file():
            found.append(home / rel)
    return found, looked


def read(
    path: Path | None, source: str, cursor: dict | None = None, options: dict | None = None
) -> Iterator[Document | ReadError | Seen | Cursor]:
    """Every visited page of every history database under ``path`` (see the module doc).
    ``options``: the source's options (None: those in ``sources.yaml``), see :mod:`connectors._walk`."""
    return read_databases(
        path,
        source,
        cursor,
        what="browser history",
        names=FILE_NAMES,
        discover=discover,
        read_db=_read_history,
        prune=frozenset(PRUNE),
        follow_outside=follows_outside(options),
    )


def spans(doc: Document, count: TokenCounter, max_tokens: int) -> list[Span]:
    """A page's text is a few lines: prose chunking keeps it whole, splitting only a giant URL."""
    return prose_spans(doc.text, count, max_tokens)


def _kind(conn: sqlite3.Connection) -> str:
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    for kind, schema in _SCHEMAS.items():
        if {schema.urls, schema.visits} <= tables:
            lacking = [
                f"{table}.{col}"
                for table, cols in (
                    (schema.urls, ("id", "url")),
                    (schema.visits, ("id", schema.visit_url, schema.visit_time)),
                )
                for col in cols
                if col not in {r[1] for r in conn.execute(f"PRAGMA table_info({table})")}
            ]
            if lacking:
                raise Unreadable(f"{LABELS.get(kind, kind)} history database without {', '.join(lacking)}")
            return kind
    raise Unreadable("not a browser history database (no urls/visits, moz_places or history_items tables)")


def browser_for(path: Path, kind: str) -> str:
    """The browser named by the nearest path component that names one, if it fits the schema."""
    for part in reversed(path.absolute().parts[:-1]):
        low = part.lower()
        browser = BROWSER_DIRS.get(low) or BROWSER_DIRS.get(low.rsplit("-", 1)[0])
        if browser and FAMILY[browser] == kind:
            return browser
    return kind


def _read_history(
    conn: sqlite3.Connection, file: Path, source: str, previous: dict | None, state: dict[str, dict], key: str
) -> Iterator[Document | ReadError | Seen]:
    """One database: visit facts first (all of them, or those of URLs visited past the cursor),
    then one pass over the URL table that builds those pages and vouches for the rest."""
    kind = _kind(conn)
    s = _SCHEMAS[kind]
    browser, profile = browser_for(file, kind), file.absolute().parent.name
    columns = {r[1] for r in conn.execute(f"PRAGMA table_info({s.urls})")}
    desc = "u.description" if "description" in columns else "NULL"
    damaged = False
    stats: dict[int, tuple[int, int, int]] = {}  # url id -> (visits, first, last)
    since = None
    try:
        mark = conn.execute(
            f"SELECT COALESCE(MAX({s.visit_time}), 0), COALESCE(MAX(id), 0), COUNT(*) FROM {s.visits}"
        ).fetchone()
        if previous and previous.get("kind") == kind and previous.get("version") == VERSION:
            kept = conn.execute(
                f"SELECT COUNT(*) FROM {s.visits} WHERE {s.visit_time} <= ? AND id <= ?",
                (previous["time"], previous["id"]),
            ).fetchone()[0]
            if kept == previous["visits"]:  # no old visit went away: only newer ones matter
                since = (previous["time"], previous["id"])
        changed = (
            ""
            if since is None
            else (f" WHERE {s.visit_url} IN (SELECT {s.visit_url} FROM {s.visits} WHERE {s.visit_time} > ? OR id > ?)")
        )
        for uid, n, first, last in conn.execute(
            f"SELECT {s.visit_url}, COUNT(*), MIN({s.visit_time}), MAX({s.visit_time})"
            f" FROM {s.visits}{changed} GROUP BY {s.visit_url}",
            since or (),
        ):
            stats[uid] = (n, first, last)
    except sqlite3.DatabaseError as exc:  # pages are still read, with the URL table's facts
        damaged, since, stats = True, None, {}
        yield ReadError(key, f"damaged visits table: {one_line(exc)}")
    conn.text_factory = bytes  # decode per row: one bad value must not stop the file
    # Older schemas (Firefox before 4: no moz_places.last_visit_date) keep visit times only in
    # the visits table: the last visit is derived from it.
    last = (
        f"u.{s.last}"
        if s.last and s.last in columns
        else (f"(SELECT MAX(v.{s.visit_time}) FROM {s.visits} v WHERE v.{s.visit_url} = u.id)")
    )
    shown = s.shown or ("u.hidden = 0 AND " if "hidden" in columns else "")
    count = "u.visit_count" if "visit_count" in columns else "NULL"
    title = s.title if s.title != "u.title" or "title" in columns else "NULL"
    sql = (
        f"SELECT u.id, u.url, {title}, {count}, {last}, {desc} FROM {s.urls} u"
        f" WHERE {shown}COALESCE({last}, 0) > 0 AND u.id > ? ORDER BY u.id"
    )
    for row in _scan(conn, sql, key):
        if isinstance(row, ReadError):
            damaged = True
            yield row
        elif since is None or row[0] in stats:
            # The isolation boundary: whatever one row holds fails that row alone.
            item = each_record(f"{key}#{row[0]}", _page, row, stats.get(row[0]), key, source, kind, browser, profile)
            if item is not None:
                yield item
        elif (url := _text(row[1])) and web_url(url) and _text(row[2]) is not None:
            yield Seen(f"{browser}/{profile}/{url}")  # deletions leave no trace but a missing row
    if not damaged:  # a damaged file is read in full again next time
        state[key] = {"version": VERSION, "kind": kind, "time": mark[0], "id": mark[1], "visits": mark[2]}


def _scan(conn: sqlite3.Connection, sql: str, uri: str, probes: int = 40) -> Iterator[tuple | ReadError]:
    """The rows of ``sql`` (id first, ``id > ?`` as its one parameter, in id order), stepping
    over damaged stretches of the table: each is one ReadError naming the first lost id, and
    reading resumes at the first id past it (probed at growing distances) that reads again."""
    after = 0
    while True:
        try:
            for row in conn.execute(sql, (after,)):
                after = row[0]
                yield row
            return
        except sqlite3.DatabaseError as exc:
            yield ReadError(
                f"{uri}#{after + 1}",
                f"damaged database from row {after + 1} on, skipped to the next readable row: {one_line(exc)}",
            )
        for k in range(probes):
            try:
                found = conn.execute(sql, (after + 2**k,)).fetchone()
            except sqlite3.DatabaseError:
                continue
            if found is None:
                return
            after = found[0] - 1
            break
        else:
            return


def _page(
    row: tuple, stats: tuple | None, file: str, source: str, kind: str, browser: str, profile: str
) -> Document | ReadError | None:
    uid, raw_url, raw_title, visit_count, last, raw_desc = row
    n_visits, first_v, last_v = stats or (0, None, None)
    url, title, desc = _text(raw_url), _text(raw_title), _text(raw_desc)
    if url is None:
        return ReadError(f"{file}#{uid}", "undecodable URL (not UTF-8)")
    if not web_url(url):
        return None
    if title is None or desc is None:
        return ReadError(f"{file}#{uid}", f"undecodable {'title' if title is None else 'description'} of {url}")
    epoch, unit = _EPOCHS[kind], _SCHEMAS[kind].unit
    last_at = _time(max(last or 0, last_v or 0), epoch, unit)
    if last_at is None:
        return None
    first_at = _time(first_v, epoch, unit) or last_at
    count = int(visit_count or 0) or int(n_visits or 0)
    where = f"{LABELS.get(browser, browser)} ({profile} profile)"
    return page_document(source, NAME, url, title, count, first_at, last_at, browser, profile, where, desc)


def _text(value) -> str | None:
    """A TEXT column read as bytes: '' for NULL, None when it is not UTF-8."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)):
        return str(value)
    try:
        return bytes(value).decode("utf-8")
    except UnicodeDecodeError:
        return None


def _time(value, epoch: datetime, unit: int = 1) -> datetime | None:
    """``value`` units (``unit`` µs each) after ``epoch``; None for no time or one out of range."""
    if not isinstance(value, (int, float)) or value != value or value <= 0:
        return None
    try:
        return epoch + timedelta(microseconds=int(value * unit))
    except (OverflowError, ValueError):
        return None
