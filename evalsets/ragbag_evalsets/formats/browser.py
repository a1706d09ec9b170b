"""Browser history as Chrome (``History``) and Firefox (``places.sqlite``) keep it: a row per
page with its visit count and last visit, a row per visit, Firefox's origins and hashed urls."""

from __future__ import annotations

import base64
import random
import sqlite3
from datetime import datetime, timedelta

from ragbag_evalsets.formats import h
from ragbag_evalsets.formats.sqlite import CHROME_EPOCH, UNIX_EPOCH, sqlite_bytes, us

# The one copy of each browser's tables in the project: the connector tests build their
# fixtures from them too.
CHROME_SCHEMA = """
CREATE TABLE meta(key LONGVARCHAR NOT NULL UNIQUE PRIMARY KEY, value LONGVARCHAR);
CREATE TABLE urls(id INTEGER PRIMARY KEY AUTOINCREMENT,url LONGVARCHAR,title LONGVARCHAR,visit_count INTEGER DEFAULT 0 NOT NULL,typed_count INTEGER DEFAULT 0 NOT NULL,last_visit_time INTEGER NOT NULL,hidden INTEGER DEFAULT 0 NOT NULL);
CREATE TABLE visits(id INTEGER PRIMARY KEY AUTOINCREMENT,url INTEGER NOT NULL,visit_time INTEGER NOT NULL,from_visit INTEGER,external_referrer_url TEXT,transition INTEGER DEFAULT 0 NOT NULL,segment_id INTEGER,visit_duration INTEGER DEFAULT 0 NOT NULL,incremented_omnibox_typed_score BOOLEAN DEFAULT FALSE NOT NULL,opener_visit INTEGER,originator_cache_guid TEXT,originator_visit_id INTEGER,originator_from_visit INTEGER,originator_opener_visit INTEGER,is_known_to_sync BOOLEAN DEFAULT FALSE NOT NULL,consider_for_ntp_most_visited BOOLEAN DEFAULT FALSE NOT NULL,visited_link_id INTEGER DEFAULT 0 NOT NULL,app_id TEXT);
CREATE TABLE visit_source(id INTEGER PRIMARY KEY,source INTEGER NOT NULL);
CREATE TABLE keyword_search_terms (keyword_id INTEGER NOT NULL,url_id INTEGER NOT NULL,term LONGVARCHAR NOT NULL,normalized_term LONGVARCHAR NOT NULL);
CREATE TABLE segments (id INTEGER PRIMARY KEY,name VARCHAR,url_id INTEGER NON NULL);
CREATE INDEX urls_url_index ON urls (url);
CREATE INDEX visits_url_index ON visits (url);
CREATE INDEX visits_from_index ON visits (from_visit);
CREATE INDEX visits_time_index ON visits (visit_time);
CREATE INDEX keyword_search_terms_index1 ON keyword_search_terms (keyword_id, normalized_term);
INSERT INTO meta VALUES ('version', '69'), ('last_compatible_version', '16');
"""
FIREFOX_SCHEMA = """
CREATE TABLE moz_origins ( id INTEGER PRIMARY KEY, prefix TEXT NOT NULL, host TEXT NOT NULL, frecency INTEGER NOT NULL, recalc_frecency INTEGER NOT NULL DEFAULT 0, alt_frecency INTEGER, recalc_alt_frecency INTEGER NOT NULL DEFAULT 0, UNIQUE (prefix, host) );
CREATE TABLE moz_places (   id INTEGER PRIMARY KEY, url LONGVARCHAR, title LONGVARCHAR, rev_host LONGVARCHAR, visit_count INTEGER DEFAULT 0, hidden INTEGER DEFAULT 0 NOT NULL, typed INTEGER DEFAULT 0 NOT NULL, frecency INTEGER DEFAULT -1 NOT NULL, last_visit_date INTEGER , guid TEXT, foreign_count INTEGER DEFAULT 0 NOT NULL, url_hash INTEGER DEFAULT 0 NOT NULL , description TEXT, preview_image_url TEXT, site_name TEXT, origin_id INTEGER REFERENCES moz_origins(id), recalc_frecency INTEGER NOT NULL DEFAULT 0, alt_frecency INTEGER, recalc_alt_frecency INTEGER NOT NULL DEFAULT 0);
CREATE TABLE moz_historyvisits (  id INTEGER PRIMARY KEY, from_visit INTEGER, place_id INTEGER, visit_date INTEGER, visit_type INTEGER, session INTEGER, source INTEGER DEFAULT 0 NOT NULL, triggeringPlaceId INTEGER);
CREATE TABLE moz_bookmarks (  id INTEGER PRIMARY KEY, type INTEGER, fk INTEGER DEFAULT NULL, parent INTEGER, position INTEGER, title LONGVARCHAR, keyword_id INTEGER, folder_type TEXT, dateAdded INTEGER, lastModified INTEGER, guid TEXT, syncStatus INTEGER NOT NULL DEFAULT 0, syncChangeCounter INTEGER NOT NULL DEFAULT 1);
CREATE TABLE moz_inputhistory (place_id INTEGER NOT NULL, input LONGVARCHAR NOT NULL, use_count INTEGER, PRIMARY KEY (place_id, input));
CREATE INDEX moz_places_url_hashindex ON moz_places (url_hash);
CREATE INDEX moz_places_hostindex ON moz_places (rev_host);
CREATE INDEX moz_places_visitcount ON moz_places (visit_count);
CREATE INDEX moz_places_frecencyindex ON moz_places (frecency);
CREATE INDEX moz_places_lastvisitdateindex ON moz_places (last_visit_date);
CREATE UNIQUE INDEX moz_places_guid_uniqueindex ON moz_places (guid);
CREATE INDEX moz_places_originidindex ON moz_places (origin_id);
CREATE INDEX moz_historyvisits_placedateindex ON moz_historyvisits (place_id, visit_date);
CREATE INDEX moz_historyvisits_fromindex ON moz_historyvisits (from_visit);
CREATE INDEX moz_historyvisits_dateindex ON moz_historyvisits (visit_date);
PRAGMA user_version = 77;
"""


def chrome_db(pages: list[tuple[str, str, list[datetime]]]) -> bytes:
    def fill(db: sqlite3.Connection) -> None:
        for url, title, visits in pages:
            visits = sorted(visits)
            cur = db.execute(
                "INSERT INTO urls (url, title, visit_count, typed_count, last_visit_time,"
                " hidden) VALUES (?, ?, ?, ?, ?, 0)",
                (url, title, len(visits), 1 if len(visits) > 2 else 0, us(visits[-1], CHROME_EPOCH)),
            )
            for n, v in enumerate(visits):
                db.execute(
                    "INSERT INTO visits (url, visit_time, from_visit, transition, segment_id,"
                    " visit_duration) VALUES (?, ?, 0, ?, 0, ?)",
                    (
                        cur.lastrowid,
                        us(v, CHROME_EPOCH),
                        0x30000001 if n else 0x30000000,
                        (len(url) * 7919 + n * 104729) % 600_000_000,
                    ),
                )

    return sqlite_bytes(CHROME_SCHEMA, fill)


def firefox_db(pages: list[tuple[str, str, list[datetime], str | None]]) -> bytes:
    def fill(db: sqlite3.Connection) -> None:
        origins: dict[tuple[str, str], int] = {}
        for url, title, visits, desc in pages:
            visits = sorted(visits)
            prefix, rest = url.split("://", 1)
            host = rest.split("/", 1)[0]
            key = (prefix + "://", host)
            if key not in origins:
                origins[key] = int(
                    db.execute("INSERT INTO moz_origins (prefix, host, frecency) VALUES (?, ?, 100)", key).lastrowid
                    or 0
                )
            guid = base64.urlsafe_b64encode(bytes.fromhex(h(url, n=9))).decode()[:12]
            cur = db.execute(
                "INSERT INTO moz_places (url, title, rev_host, visit_count, hidden, typed, frecency,"
                " last_visit_date, guid, url_hash, description, origin_id) VALUES"
                " (?, ?, ?, ?, 0, 0, ?, ?, ?, ?, ?, ?)",
                (
                    url,
                    title,
                    host[::-1] + ".",
                    len(visits),
                    100 * len(visits),
                    us(visits[-1], UNIX_EPOCH),
                    guid,
                    int(h(url, n=6), 16),
                    desc,
                    origins[key],
                ),
            )
            for v in visits:
                db.execute(
                    "INSERT INTO moz_historyvisits (from_visit, place_id, visit_date,"
                    " visit_type, session, source) VALUES (0, ?, ?, 1, 0, 0)",
                    (cur.lastrowid, us(v, UNIX_EPOCH)),
                )

    return sqlite_bytes(FIREFOX_SCHEMA, fill)


def draw_visits(rng: random.Random, first: datetime, n: int, spread_days: int = 20) -> list[datetime]:
    """``n`` visits, the first at ``first``, the others drawn within ``spread_days`` after it."""
    out = [first]
    for _ in range(n - 1):
        out.append(first + timedelta(days=rng.randrange(0, spread_days + 1), minutes=rng.randrange(1, 600)))
    return sorted(out)
