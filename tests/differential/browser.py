"""Browser history, differentially: ragbag's pages against direct SQL on each schema.

The reference reads the database with :mod:`sqlite3` only, one query per schema (Chromium
``urls``/``visits``, Firefox ``moz_places``/``moz_historyvisits``, Safari
``history_items``/``history_visits``), applies the history's own visibility rules (http(s)
URLs, not hidden by the browser, visited at least once) and converts times by the format's
epoch (Chromium µs since 1601, Firefox µs since 1970, Safari s since 2001, all UTC). It shares
no code with the connector.

Checks, per page the reference finds: ``count`` (ragbag has a page for the URL), ``times``
(first and last visit agree to the second), ``text`` (the title agrees, whitespace-normalised).
``people`` does not apply to a browser history.
"""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import quote

from tests.differential.common import FIXTURES, PUBLIC, Outcome, ragbag_read, rel

CONNECTOR = "browser"
_SKIP = {"SOURCES.tsv", "README.md"}

# No file disagrees today; the files that hold no page at all (a WebView database, artemis's
# broken Safari database) are noted in tests/fixtures/public/browser/README.md.
EXPLAINED: dict[str, str] = {}


def units() -> list[Path]:
    files = []
    for root in (PUBLIC / CONNECTOR, FIXTURES / "realworld" / CONNECTOR):
        files += [p for p in sorted(root.rglob("*")) if p.is_file() and p.name not in _SKIP]
    return files


_EPOCH = {
    "chromium": (datetime(1601, 1, 1, tzinfo=UTC), 1),
    "firefox": (datetime(1970, 1, 1, tzinfo=UTC), 1),
    "safari": (datetime(2001, 1, 1, tzinfo=UTC), 1_000_000),
}


def _when(value, kind: str) -> datetime | None:
    epoch, unit = _EPOCH[kind]
    if not isinstance(value, (int, float)) or value <= 0:
        return None
    try:
        return epoch + timedelta(microseconds=int(value * unit))
    except OverflowError:
        return None


def _columns(conn, table: str) -> set[str]:
    return {r[1] for r in conn.execute(f"PRAGMA table_info({table})")}


def reference(path: Path) -> dict[str, tuple[str, datetime, datetime]]:
    """url → (title, first visit, last visit) of every page the history shows."""
    conn = sqlite3.connect(f"file:{quote(str(path.absolute()))}?mode=ro&immutable=1", uri=True)
    try:
        try:
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        except sqlite3.DatabaseError:
            return {}  # not SQLite
        if {"urls", "visits"} <= tables and {"url", "title"} <= _columns(conn, "urls"):
            kind, cols = "chromium", _columns(conn, "urls")
            visits = "SELECT url, MIN(visit_time), MAX(visit_time) FROM visits GROUP BY url"
            pages = "SELECT id, url, title, {last}, {hidden} FROM urls".format(
                last="last_visit_time" if "last_visit_time" in cols else "0",
                hidden="hidden" if "hidden" in cols else "0",
            )
        elif {"moz_places", "moz_historyvisits"} <= tables:
            kind, cols = "firefox", _columns(conn, "moz_places")
            visits = "SELECT place_id, MIN(visit_date), MAX(visit_date) FROM moz_historyvisits GROUP BY place_id"
            pages = "SELECT id, url, title, {last}, hidden FROM moz_places".format(
                last="last_visit_date" if "last_visit_date" in cols else "0"
            )
        elif {"history_items", "history_visits"} <= tables and "url" in _columns(conn, "history_items"):
            kind = "safari"
            visits = "SELECT history_item, MIN(visit_time), MAX(visit_time) FROM history_visits GROUP BY history_item"
            # A page is shown when one visit is real (not synthesized) and not a redirect source;
            # its title is that of its latest visit that has one.
            pages = (
                "SELECT i.id, i.url, (SELECT title FROM history_visits WHERE history_item = i.id AND title != ''"
                " ORDER BY visit_time DESC LIMIT 1), 0,"
                " NOT EXISTS (SELECT 1 FROM history_visits WHERE history_item = i.id AND synthesized = 0"
                " AND redirect_destination IS NULL) FROM history_items i"
            )
        else:
            return {}
        span = {uid: (first, last) for uid, first, last in conn.execute(visits)}
        out = {}
        for uid, url, title, last, hidden in conn.execute(pages):
            if not isinstance(url, str) or url.split(":", 1)[0].lower() not in ("http", "https") or hidden:
                continue
            first_v, last_v = span.get(uid, (None, None))
            last_at = _when(max(last or 0, last_v or 0), kind)
            if last_at is None:
                continue  # never visited (a bookmark only)
            out[url] = (" ".join((title or "").split()), _when(first_v, kind) or last_at, last_at)
        return out
    finally:
        conn.close()


def compare(path: Path) -> Outcome:
    ref = reference(path)
    docs, errors = ragbag_read(CONNECTOR, path)
    mine = {d.metadata["url"]: d for d in docs}
    out = Outcome(rel(path), path.parent.name, len(ref), len(docs), len(errors))
    counted = timed = titled = 0
    for url, (title, first, last) in ref.items():
        doc = mine.get(url)
        if doc is None:
            out.disagreements.append(f"page missing in ragbag: {url}")
            continue
        counted += 1
        if abs((doc.created_at - first).total_seconds()) < 1 and abs((doc.updated_at - last).total_seconds()) < 1:
            timed += 1
        else:
            out.disagreements.append(
                f"times of {url}: ragbag {doc.created_at}–{doc.updated_at}, reference {first}–{last}"
            )
        if doc.metadata["title"] == title:
            titled += 1
        else:
            out.disagreements.append(f"title of {url}: ragbag {doc.metadata['title']!r}, reference {title!r}")
    out.disagreements += [f"page only in ragbag: {u}" for u in mine if u not in ref]
    n = len(ref)
    out.checks = {"count": (counted, max(n, len(mine))), "times": (timed, n), "text": (titled, n)}
    return out
