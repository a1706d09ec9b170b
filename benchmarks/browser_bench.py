"""Browser connector benchmark: ``connectors.browser.read()`` over a large Chrome History.

    .venv/bin/python benchmarks/browser_bench.py [--urls 20000] [--visits 100000] [--repeat 3]

Data: a synthetic ``History`` with Chromium's real ``urls``/``visits`` schema and indexes,
written to ``benchmarks/.work/browser/google-chrome/Default/History`` (gitignored): 20,000 URLs
(5% noise the connector skips: ``chrome://`` pages and hidden subframes), 100,000 visits over
180 days, Zipf-like (a few URLs get most visits), times in µs since 1601. Seeded: every run
writes the same database.

Measures (best of ``--repeat``), each a full pass of the generator in this process:
1. first read, no cursor: the database opened ``immutable`` (no side file), pages/s and visits/s;
2. first read while the browser "runs" in WAL mode (a ``-wal`` beside the database): the copy
   path (database + WAL copied to a temp folder, WAL replayed there);
3. incremental re-read after 100 new visits (50 revisits of old URLs, 50 new URLs): documents
   re-read, ``Seen`` vouched, seconds.

Writes ``benchmarks/.work/browser_bench.json`` and prints a markdown table.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sqlite3
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORK = ROOT / "benchmarks" / ".work"
sys.path.insert(0, str(ROOT))

# Chromium's history schema (components/history/core/browser/url_database.cc, visit_database.cc).
SCHEMA = """
CREATE TABLE meta(key LONGVARCHAR NOT NULL UNIQUE PRIMARY KEY, value LONGVARCHAR);
CREATE TABLE urls(id INTEGER PRIMARY KEY AUTOINCREMENT,url LONGVARCHAR,title LONGVARCHAR,visit_count INTEGER DEFAULT 0 NOT NULL,typed_count INTEGER DEFAULT 0 NOT NULL,last_visit_time INTEGER NOT NULL,hidden INTEGER DEFAULT 0 NOT NULL);
CREATE TABLE visits(id INTEGER PRIMARY KEY AUTOINCREMENT,url INTEGER NOT NULL,visit_time INTEGER NOT NULL,from_visit INTEGER,external_referrer_url TEXT,transition INTEGER DEFAULT 0 NOT NULL,segment_id INTEGER,visit_duration INTEGER DEFAULT 0 NOT NULL,incremented_omnibox_typed_score BOOLEAN DEFAULT FALSE NOT NULL,opener_visit INTEGER,originator_cache_guid TEXT,originator_visit_id INTEGER,originator_from_visit INTEGER,originator_opener_visit INTEGER,is_known_to_sync BOOLEAN DEFAULT FALSE NOT NULL,consider_for_ntp_most_visited BOOLEAN DEFAULT FALSE NOT NULL,visited_link_id INTEGER DEFAULT 0 NOT NULL,app_id TEXT);
CREATE INDEX urls_url_index ON urls (url);
CREATE INDEX visits_url_index ON visits (url);
CREATE INDEX visits_from_index ON visits (from_visit);
CREATE INDEX visits_time_index ON visits (visit_time);
INSERT INTO meta VALUES ('version', '69'), ('last_compatible_version', '16');
"""
CHROME_EPOCH = datetime(1601, 1, 1, tzinfo=UTC)
START = datetime(2024, 1, 1, tzinfo=UTC)
WORDS = (
    "rust python sqlite garden recipe bread travel lisbon budget invoice kernel vector search "
    "climbing bike repair guitar chords tax return mortgage flight hotel museum opera jazz "
    "podcast review laptop battery camera lens hiking trail weather forecast"
).split()
SITES = [
    "github.com",
    "stackoverflow.com",
    "en.wikipedia.org",
    "docs.python.org",
    "news.ycombinator.com",
    "www.bbc.co.uk",
    "www.theguardian.com",
    "www.reddit.com",
    "developer.mozilla.org",
    "www.seriouseats.com",
    "arxiv.org",
    "www.youtube.com",
] + [f"blog{n}.example.com" for n in range(200)]


def chrome_time(dt: datetime) -> int:
    return (dt - CHROME_EPOCH) // timedelta(microseconds=1)


def generate(path: Path, n_urls: int, n_visits: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    if path.parent.exists():
        shutil.rmtree(path.parent)
    path.parent.mkdir(parents=True)
    db = sqlite3.connect(path)
    db.executescript(SCHEMA)
    urls = []
    for i in range(1, n_urls + 1):
        words = rng.sample(WORDS, 4)
        if i % 20 == 0:
            urls.append((i, f"chrome://settings/{words[0]}", "Settings", 0))
        elif i % 20 == 1:
            urls.append((i, f"https://ads.example.net/frame?slot={i}", "", 1))
        else:
            site = SITES[min(int(rng.paretovariate(1.2)) - 1, len(SITES) - 1)]
            urls.append(
                (
                    i,
                    f"https://{site}/{'/'.join(words[:2])}/{i}?ref={words[2]}",
                    f"{' '.join(w.capitalize() for w in words)} - {site}",
                    0,
                )
            )
    # Zipf-like: URL k gets weight 1/k, so a few URLs are visited thousands of times.
    weights = [1 / k for k in range(1, n_urls + 1)]
    order = list(range(1, n_urls + 1))
    rng.shuffle(order)
    chosen = rng.choices(order, weights=weights, k=n_visits - n_urls) + order  # every URL once
    span = timedelta(days=180) // timedelta(microseconds=1)
    times = sorted(chrome_time(START) + rng.randrange(span) for _ in chosen)
    rng.shuffle(chosen)
    visits = [(uid, t, 0x30000000) for uid, t in zip(chosen, times)]
    stats: dict[int, list[int]] = {}
    for uid, t, _ in visits:
        s = stats.setdefault(uid, [0, 0])
        s[0] += 1
        s[1] = max(s[1], t)
    db.executemany(
        "INSERT INTO urls (id, url, title, visit_count, typed_count, last_visit_time, hidden)"
        " VALUES (?, ?, ?, ?, 0, ?, ?)",
        [(i, u, t, stats[i][0], stats[i][1], h) for i, u, t, h in urls],
    )
    db.executemany(
        "INSERT INTO visits (url, visit_time, from_visit, transition, segment_id,"
        " visit_duration) VALUES (?, ?, 0, ?, 0, 0)",
        visits,
    )
    db.commit()
    db.close()


def add_visits(path: Path, n: int, db: sqlite3.Connection | None = None, seed: int = 11) -> None:
    """n new visits after everything else: half revisit old URLs, half are new URLs."""
    rng = random.Random(seed)
    own = db is None
    db = db or sqlite3.connect(path)
    t = db.execute("SELECT MAX(visit_time) FROM visits").fetchone()[0]
    max_id = db.execute("SELECT MAX(id) FROM urls").fetchone()[0]
    for k in range(n):
        t += 60_000_000
        if k % 2:
            uid = rng.randrange(2, max_id)
            while uid % 20 in (0, 1):
                uid += 2
        else:
            uid = db.execute(
                "INSERT INTO urls (url, title, last_visit_time) VALUES (?, ?, 0)",
                (f"https://new.example.org/page/{k}", f"New page {k}"),
            ).lastrowid
        db.execute("INSERT INTO visits (url, visit_time, transition) VALUES (?, ?, ?)", (uid, t, 0x30000000))
        db.execute("UPDATE urls SET visit_count = visit_count + 1, last_visit_time = ? WHERE id = ?", (t, uid))
    db.commit()
    if own:
        db.close()


def timed_read(path: Path, cursor: dict | None, repeat: int) -> dict:
    from ragbag.connectors import browser
    from ragbag.core.records import Cursor, Document, ReadError, Seen

    best = None
    for _ in range(repeat):
        counts = {"documents": 0, "seen": 0, "errors": 0}
        state = None
        t0 = time.perf_counter()
        for item in browser.read(path, "bench", cursor):
            if isinstance(item, Document):
                counts["documents"] += 1
            elif isinstance(item, Seen):
                counts["seen"] += 1
            elif isinstance(item, ReadError):
                counts["errors"] += 1
            elif isinstance(item, Cursor):
                state = item.state
        seconds = time.perf_counter() - t0
        if best is None or seconds < best["seconds"]:
            best = {**counts, "seconds": round(seconds, 4), "cursor": state}
    return best


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--urls", type=int, default=20_000)
    ap.add_argument("--visits", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    path = WORK / "browser" / "google-chrome" / "Default" / "History"
    t0 = time.perf_counter()
    generate(path, args.urls, args.visits)
    gen_s = time.perf_counter() - t0
    results: dict = {
        "urls": args.urls,
        "visits": args.visits,
        "db_bytes": path.stat().st_size,
        "generate_s": round(gen_s, 2),
    }

    first = timed_read(path, None, args.repeat)
    results["first_read"] = {k: v for k, v in first.items() if k != "cursor"}
    print("first read:", json.dumps(results["first_read"]), flush=True)

    add_visits(path, 100)
    inc = timed_read(path, first["cursor"], args.repeat)
    results["incremental_100"] = {k: v for k, v in inc.items() if k != "cursor"}
    print("incremental (+100 visits):", json.dumps(results["incremental_100"]), flush=True)

    # The browser running in WAL mode: new rows only in History-wal, read through a copy.
    writer = sqlite3.connect(path)
    writer.execute("PRAGMA journal_mode = WAL")
    writer.execute("PRAGMA wal_autocheckpoint = 0")
    add_visits(path, 100, writer, seed=13)
    wal = path.with_name("History-wal")
    results["wal_bytes"] = wal.stat().st_size
    copy = timed_read(path, None, args.repeat)
    results["first_read_wal_copy"] = {k: v for k, v in copy.items() if k != "cursor"}
    print("first read, WAL present (copy):", json.dumps(results["first_read_wal_copy"]), flush=True)
    writer.close()

    out = WORK / "browser_bench.json"
    out.write_text(json.dumps(results, indent=1))
    f, i, c = results["first_read"], results["incremental_100"], results["first_read_wal_copy"]
    print(
        f"\nHistory: {args.urls:,} URLs, {args.visits:,} visits, {results['db_bytes'] / 2**20:.1f} MiB"
        f" (generated in {results['generate_s']} s); best of {args.repeat}\n"
    )
    print("| read | seconds | pages read | Seen | pages/s | visits/s |\n|---|---|---|---|---|---|")
    print(
        f"| first read (immutable open) | {f['seconds']} | {f['documents']:,} | {f['seen']} |"
        f" {f['documents'] / f['seconds']:,.0f} | {args.visits / f['seconds']:,.0f} |"
    )
    print(
        f"| first read, `-wal` present (copy + replay) | {c['seconds']} | {c['documents']:,} |"
        f" {c['seen']} | {c['documents'] / c['seconds']:,.0f} | {(args.visits + 200) / c['seconds']:,.0f} |"
    )
    print(
        f"| incremental, +100 visits (50 revisits, 50 new URLs) | {i['seconds']} | {i['documents']} |"
        f" {i['seen']:,} | – | – |"
    )
    print(f"\nwrote {out}")


if __name__ == "__main__":
    main()
