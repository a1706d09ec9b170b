"""A personal-data evaluation set: one made-up person's home, in the real on-disk formats.

Why it exists: public retrieval benchmarks (BEIR, SQuAD) are clean English paragraphs searched
with well-formed questions. A person searches their own data differently: they paste an
identifier (a parcel tracking number, an invoice number, an error code, a flight number, a
function name), they ask in English about a German bill or a Chinese chat, they remember who
said something rather than what, they narrow by sender, domain, file type or date, and they
often look for things that are not there at all. This set measures exactly that, through every
connector's real reading path (mbox and Maildir, Chrome ``History`` and Firefox
``places.sqlite``, ``.ics`` with VTIMEZONE, ``chat.db``, WeChat JSON exports, ChatGPT and
Claude ``conversations.json``, a git repository, a notes folder with HTML and PDF).

What it contains (all invented; deterministic: a seeded ``random.Random`` and fixed dates in
2024–2026, so the same bytes every time): Jan Hoffmann, a backend developer in Berlin-Neukölln,
with a landlady, a mother and a brother writing in German, a friend in Lyon (French), one in
Valencia (Spanish), friends and a language partner in China (WeChat, Chinese mail), a
colleague writing in English, and a few Japanese and Korean messages:

- ``data/mail``: a Gmail Takeout ``.mbox`` and a work Maildir++ (140 messages: multipart/alternative,
  HTML-only newsletters and confirmations, quoted replies in four languages, RFC 2047 subjects,
  utf-8 / iso-8859-1 / gb2312 bodies, attachments: PDFs, office files, scans, screenshots, photos);
- ``data/browser``: a Chrome profile and a Firefox profile (300 pages: tracking numbers, order ids,
  GitHub issues, error-code searches, work tickets);
- ``data/calendar``: three calendars (personal, work, public holidays; 43 events), timed and
  all-day, German titles with what to bring in the notes, recurring series with a cancelled
  occurrence;
- ``data/imessage/chat.db`` (19 conversation windows, some bodies only in ``attributedBody``,
  tapbacks, an SMS chat) and ``data/wechat/*.json`` (16 windows, mostly Chinese, a group chat);
- ``data/chatgpt/conversations.json`` (16, one with an abandoned branch) and
  ``data/claude/conversations.json`` (10, with an attachment and tool use);
- ``data/code``: a small Python + TypeScript repository whose ``.gitignore`` hides an export, a
  ``.env`` and ``node_modules``;
- ``data/notes``: 53 files: markdown, two saved HTML pages, a cp1252 text file, three PDFs (a
  lease, two invoices; standard Type1 fonts, WinAnsi text, so the text extracts), and scans,
  screenshots and EXIF photos (:mod:`ragbag.apps.eval.personal_inside`, which also writes the mails
  with attachments).

``home.json`` names the nine sources; ``queries.jsonl`` holds the judged queries, each
``{"_id", "text", "kind", "relevant": [{"source", "contains"}], ...}``: a document is relevant
when it belongs to that source and its text contains the string. Kinds: ``identifier``,
``paraphrase``, ``crosslingual`` (with ``lang``, e.g. ``en>de``), ``cjk``, ``person``,
``filtered`` (``where`` / ``after`` / ``before`` / ``connectors``; ``distractors`` names the
records the filter must keep out), ``negative`` (``relevant`` empty; ``absent`` lists strings
that occur in no document), and, about what lies inside records, ``attachment``, ``scanned``,
``screenshot`` and ``photo``. About 300 queries, at least 20 of each kind.

Usage: ``python -m ragbag.apps.eval.personal OUT`` (or ``personal.generate(Path(OUT))``), which
assembles this set with ``personal_inside``.

Long because it is data: the invented mail, chats, pages, notes and the judged queries are
written out here, next to the few functions that lay them down in each format, so that the
set's bytes and its judgements change together in one reviewed file.
"""

from __future__ import annotations

import base64
import email.quoprimime
import email.utils
import hashlib
import json
import os
import quopri
import random
import shutil
import sqlite3
import sys
import uuid
from collections.abc import Callable, Sequence
from datetime import UTC, date, datetime, timedelta
from html import escape
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

BERLIN = ZoneInfo("Europe/Berlin")
UTC = UTC
SEED = 20250417
ME = ("Jan Hoffmann", "jan.hoffmann@posteo.de")
ME_WORK = ("Jan Hoffmann", "jan.hoffmann@fernwerk.io")
SOURCES = [
    ("mail", "mail"),
    ("browser", "browser"),
    ("calendar", "calendar"),
    ("imessage", "imessage"),
    ("wechat", "wechat"),
    ("chatgpt", "chatgpt"),
    ("claude", "claude"),
    ("code", "code"),
    ("notes", "files"),
]
KINDS = (
    *("identifier", "paraphrase", "crosslingual", "cjk", "person", "filtered", "negative"),
    *("attachment", "scanned", "screenshot", "photo"),  # inside records: ragbag.apps.eval.personal_inside
)
DEFAULT_MTIME = datetime(2026, 2, 1, 12, 0, tzinfo=UTC)


def _h(*parts: object, n: int = 16) -> str:
    return hashlib.blake2b("\0".join(map(str, parts)).encode(), digest_size=n).hexdigest()


def berlin(y: int, mo: int, d: int, h: int = 12, mi: int = 0) -> datetime:
    return datetime(y, mo, d, h, mi, tzinfo=BERLIN)


# ============================================================================ the set


class _Set:
    """Everything being generated: files (relative path -> bytes, mtime) and queries."""

    def __init__(self) -> None:
        self.rng = random.Random(SEED)
        self.files: dict[str, tuple[bytes, datetime]] = {}
        self.queries: list[dict] = []

    def file(self, rel: str, data: bytes | str, mtime: datetime | None = None) -> None:
        if isinstance(data, str):
            data = data.encode("utf-8")
        assert rel not in self.files, rel
        self.files[rel] = (data, mtime or DEFAULT_MTIME)

    def q(self, kind: str, text: str, relevant=(), **extra) -> None:
        assert kind in KINDS, kind
        item = {"text": text, "kind": kind, "relevant": [{"source": s, "contains": c} for s, c in relevant]}
        for key in ("lang", "where", "after", "before", "connectors", "distractors", "absent"):
            if key in extra:
                value = extra.pop(key)
                if key == "distractors":
                    value = [{"source": s, "contains": c} for s, c in value]
                item[key] = value
        assert not extra, extra
        self.queries.append(item)


# ============================================================================ mail


class Mail:
    """One message, rendered to RFC 822 bytes by :func:`_render_mail`."""

    def __init__(
        self,
        when: datetime,
        frm: tuple[str, str],
        to: list[tuple[str, str]],
        subject: str,
        body: str = "",
        *,
        html: str | None = None,
        html_only: bool = False,
        charset: str = "utf-8",
        cte: str = "quoted-printable",
        labels=("Inbox",),
        reply_to: Mail | None = None,
        quote: str | None = None,
        attachments=(),
        cc=(),
        mid: str | None = None,
        extra_headers=(),
    ) -> None:
        self.when, self.frm, self.to, self.subject, self.body = when, frm, to, subject, body
        self.html, self.html_only, self.charset, self.cte = html, html_only, charset, cte
        self.labels, self.reply_to, self.quote = list(labels), reply_to, quote
        self.attachments, self.cc, self.extra_headers = list(attachments), list(cc), list(extra_headers)
        domain = frm[1].split("@", 1)[1]
        self.mid = mid or f"{_h(when.isoformat(), frm[1], subject, n=10)}@{domain}"

    @property
    def refs(self) -> list[str]:
        if self.reply_to is None:
            return []
        return self.reply_to.refs + [self.reply_to.mid]


def _fits(text: str, charset: str) -> str:
    """The charset if it can hold the text, else utf-8 (mailers do the same per header)."""
    try:
        text.encode(charset)
        return charset
    except UnicodeEncodeError:
        return "utf-8"


def _encoded_words(text: str, charset: str) -> str:
    """RFC 2047 encoded words as mailers write them (``=?gb2312?B?…?=``, ``=?iso-8859-1?Q?…?=``),
    at most ~75 characters each, folded onto continuation lines; characters are never split."""
    charset = _fits(text, charset)
    q = charset.lower().startswith("iso-8859")
    words, chunk = [], ""
    for ch in text:
        raw = (chunk + ch).encode(charset)
        size = len(email.quoprimime.header_encode(raw, charset)) if q else 4 * ((len(raw) + 2) // 3) + len(charset) + 7
        if chunk and size > 75:
            words.append(chunk)
            chunk = ""
        chunk += ch
    words.append(chunk)
    label = charset.upper() if charset.lower() == "gb2312" else charset
    out = []
    for w in words:
        raw = w.encode(charset)
        if q:
            out.append(email.quoprimime.header_encode(raw, label).replace("?q?", "?Q?"))
        else:
            out.append(f"=?{label}?B?{base64.b64encode(raw).decode('ascii')}?=")
    return "\n ".join(out)


def _header(text: str, charset: str, name: str) -> str:
    if all(ord(c) < 128 for c in text):
        return text
    return _encoded_words(text, charset)


def _addr(pair: tuple[str, str], charset: str) -> str:
    name, addr = pair
    if not name:
        return addr
    if all(ord(c) < 128 for c in name):
        return email.utils.formataddr((name, addr))
    return f"{_encoded_words(name, charset)} <{addr}>"


def _encode_part(text: str, ctype: str, charset: str, cte: str) -> str:
    raw = text.replace("\r\n", "\n").encode(charset)
    if cte == "base64":
        body = base64.encodebytes(raw).decode("ascii")
    elif cte == "quoted-printable":
        body = quopri.encodestring(raw).decode("ascii")
    else:
        body = raw.decode(charset)
    return (
        f'Content-Type: {ctype}; charset="{charset}"\nContent-Transfer-Encoding: {cte}\n\n' + body.rstrip("\n") + "\n"
    )


def _html_of(text: str, charset: str = "utf-8") -> str:
    paras = [p for p in text.split("\n\n") if p.strip()]
    inner = "".join("<p>" + "<br>\n".join(escape(line) for line in p.split("\n")) + "</p>\n" for p in paras)
    return (
        f'<html><head><meta charset="{charset}"><style>p{{margin:0 0 1em}}</style></head>'
        f'<body><div dir="ltr">\n{inner}</div></body></html>'
    )


def _render_mail(m: Mail, gmail: bool = True) -> bytes:
    """RFC 822 bytes; ``gmail`` adds the headers a Takeout export carries (thread id, labels)."""
    cs = m.charset
    body = m.body
    if m.quote is not None and m.reply_to is not None:
        r = m.reply_to
        stamp = f"{r.when:%a, %d %b %Y at %H:%M}"
        head = {
            "de": f"Am {r.when:%d.%m.%Y} um {r.when:%H:%M} schrieb {r.frm[0]} <{r.frm[1]}>:",
            "fr": f"Le {r.when:%d/%m/%Y} à {r.when:%H:%M}, {r.frm[0]} <{r.frm[1]}> a écrit :",
            "es": f"El {r.when:%d/%m/%Y} a las {r.when:%H:%M}, {r.frm[0]} <{r.frm[1]}> escribió:",
            "zh": f"在 {r.when:%Y年%m月%d日} {r.when:%H:%M}，{r.frm[0]} <{r.frm[1]}> 写道：",
        }.get(m.quote, f"On {stamp}, {r.frm[0]} <{r.frm[1]}> wrote:")
        quoted = "\n".join("> " + line if line else ">" for line in r.body.split("\n"))
        body = body.rstrip("\n") + "\n\n" + head + "\n" + quoted + "\n"
    lines = (
        [
            f"X-GM-THRID: {int(_h(m.refs[0] if m.refs else m.mid, n=8), 16) >> 2}",
            "X-Gmail-Labels: " + ",".join(m.labels),
        ]
        if gmail
        else [f"Return-Path: <{m.frm[1]}>"]
    )
    lines += [
        "MIME-Version: 1.0",
        f"Date: {email.utils.format_datetime(m.when)}",
        f"From: {_addr(m.frm, cs)}",
        "To: " + ", ".join(_addr(t, cs) for t in m.to),
    ]
    if m.cc:
        lines.append("Cc: " + ", ".join(_addr(t, cs) for t in m.cc))
    lines.append(f"Subject: {_header(m.subject, cs, 'Subject')}")
    lines.append(f"Message-ID: <{m.mid}>")
    if m.reply_to is not None:
        lines.append(f"In-Reply-To: <{m.reply_to.mid}>")
        lines.append("References: " + " ".join(f"<{r}>" for r in m.refs))
    lines += list(m.extra_headers)
    if m.html_only:
        content = _encode_part(m.html or _html_of(body, cs), "text/html", cs, m.cte)
    else:
        boundary = "000000000000" + _h(m.mid, "alt", n=7)
        html = m.html or _html_of(body, cs)
        content = (
            f'Content-Type: multipart/alternative; boundary="{boundary}"\n\n'
            f"--{boundary}\n"
            + _encode_part(body, "text/plain", cs, m.cte)
            + f"\n--{boundary}\n"
            + _encode_part(html, "text/html", cs, m.cte)
            + f"\n--{boundary}--\n"
        )
    if m.attachments:
        outer = "000000000000" + _h(m.mid, "mixed", n=7)
        parts = [content]
        for name, ctype, data in m.attachments:
            b64 = base64.encodebytes(data).decode("ascii")
            fname = _header(name, "utf-8", "Content-Disposition") if any(ord(c) > 127 for c in name) else name
            parts.append(
                f'Content-Type: {ctype}; name="{fname}"\n'
                f'Content-Disposition: attachment; filename="{fname}"\n'
                f"Content-Transfer-Encoding: base64\n\n{b64}"
            )
        content = (
            f'Content-Type: multipart/mixed; boundary="{outer}"\n\n'
            + "".join(f"--{outer}\n{p.rstrip(chr(10))}\n" for p in parts)
            + f"--{outer}--\n"
        )
    text = "\n".join(lines) + "\n" + content
    return text.encode("ascii", "strict") if all(ord(c) < 128 for c in text) else text.encode("utf-8")


def _mbox(mails: list[Mail]) -> bytes:
    out = bytearray()
    for m in sorted(mails, key=lambda m: m.when):
        raw = _render_mail(m)
        stamp = m.when.astimezone(UTC)
        gid = int(_h(m.mid, n=8), 16) >> 1
        out += f"From {gid}@xxx {stamp:%a %b %d %H:%M:%S} +0000 {stamp:%Y}\n".encode()
        for line in raw.rstrip(b"\n").split(b"\n"):
            stripped = line.lstrip(b">")
            if stripped.startswith(b"From "):
                line = b">" + line
            out += line + b"\n"
        out += b"\n"
    return bytes(out)


# ============================================================================ PDF


def _pdf_text(s: str) -> str:
    out = []
    for b in s.encode("cp1252"):
        c = chr(b)
        if c in "()\\":
            out.append("\\" + c)
        elif 32 <= b < 127:
            out.append(c)
        else:
            out.append(f"\\{b:03o}")
    return "".join(out)


def make_pdf(pages: list[list[str]], title: str = "", author: str = "") -> bytes:
    """A minimal PDF: standard Type1 fonts (Helvetica, Helvetica-Bold) in WinAnsiEncoding, one
    text stream per page; a line starting with "# " is set in bold, "" is a blank line."""
    objs: list[bytes | None] = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        None,
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold /Encoding /WinAnsiEncoding >>",
    ]
    kids = []
    for lines in pages:
        ops = ["BT", "/F1 10 Tf", "14 TL", "56 790 Td"]
        for line in lines:
            if line.startswith("# "):
                ops += ["/F2 13 Tf", f"({_pdf_text(line[2:])}) Tj", "T*", "/F1 10 Tf"]
            else:
                ops += [f"({_pdf_text(line)}) Tj", "T*"]
        ops.append("ET")
        stream = "\n".join(ops).encode("ascii")
        objs.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
        objs.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font"
            f" << /F1 3 0 R /F2 4 0 R >> >> /Contents {len(objs)} 0 R >>".encode()
        )
        kids.append(len(objs))
    objs[1] = f"<< /Type /Pages /Kids [{' '.join(f'{k} 0 R' for k in kids)}] /Count {len(kids)} >>".encode()
    info = ""
    if title or author:
        objs.append(
            f"<< /Title ({_pdf_text(title)}) /Author ({_pdf_text(author)}) /Producer (ragbag personal_eval) >>".encode(
                "ascii"
            )
        )
        info = f" /Info {len(objs)} 0 R"
    filled = [o for o in objs if o is not None]
    assert len(filled) == len(objs), "every PDF object is written before the file"
    return pdf_file(filled, info)


def pdf_file(objs: list[bytes], info: str = "") -> bytes:
    """Numbered objects (the first the catalog) as a PDF file with a byte-exact xref table;
    ``info`` is the trailer's `` /Info N 0 R`` when there is one. The file tests write theirs
    through it too."""
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for k, body in enumerate(objs, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % k + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1)
    out += b"".join(b"%010d 00000 n \n" % off for off in offsets)
    out += f"trailer\n<< /Size {len(objs) + 1} /Root 1 0 R{info} >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


# ============================================================================ SQLite


def _sqlite_bytes(schema: str, fill) -> bytes:
    """A database built in memory and serialised: the same bytes on every run."""
    conn = sqlite3.connect(":memory:")
    conn.executescript(schema)
    fill(conn)
    conn.commit()
    data = conn.serialize()
    conn.close()
    return bytes(data)


# The schemas below are the one copy of each format's tables in the project: the connector
# tests build their fixtures from them too.
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
CHROME_EPOCH = datetime(1601, 1, 1, tzinfo=UTC)
UNIX_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
APPLE_EPOCH = datetime(2001, 1, 1, tzinfo=UTC)


def _us(dt: datetime, epoch: datetime) -> int:
    return (dt - epoch) // timedelta(microseconds=1)


def _chrome_db(pages: list[tuple[str, str, list[datetime]]]) -> bytes:
    def fill(db: sqlite3.Connection) -> None:
        for url, title, visits in pages:
            visits = sorted(visits)
            cur = db.execute(
                "INSERT INTO urls (url, title, visit_count, typed_count, last_visit_time,"
                " hidden) VALUES (?, ?, ?, ?, ?, 0)",
                (url, title, len(visits), 1 if len(visits) > 2 else 0, _us(visits[-1], CHROME_EPOCH)),
            )
            for n, v in enumerate(visits):
                db.execute(
                    "INSERT INTO visits (url, visit_time, from_visit, transition, segment_id,"
                    " visit_duration) VALUES (?, ?, 0, ?, 0, ?)",
                    (
                        cur.lastrowid,
                        _us(v, CHROME_EPOCH),
                        0x30000001 if n else 0x30000000,
                        (len(url) * 7919 + n * 104729) % 600_000_000,
                    ),
                )

    return _sqlite_bytes(CHROME_SCHEMA, fill)


def _firefox_db(pages: list[tuple[str, str, list[datetime], str | None]]) -> bytes:
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
            guid = base64.urlsafe_b64encode(bytes.fromhex(_h(url, n=9))).decode()[:12]
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
                    _us(visits[-1], UNIX_EPOCH),
                    guid,
                    int(_h(url, n=6), 16),
                    desc,
                    origins[key],
                ),
            )
            for v in visits:
                db.execute(
                    "INSERT INTO moz_historyvisits (from_visit, place_id, visit_date,"
                    " visit_type, session, source) VALUES (0, ?, ?, 1, 0, 0)",
                    (cur.lastrowid, _us(v, UNIX_EPOCH)),
                )

    return _sqlite_bytes(FIREFOX_SCHEMA, fill)


CHAT_DB_SCHEMA = """

CREATE TABLE _SqliteDatabaseProperties (key TEXT, value TEXT, UNIQUE(key));
CREATE TABLE handle (ROWID INTEGER PRIMARY KEY AUTOINCREMENT UNIQUE, id TEXT NOT NULL, country TEXT, service TEXT NOT NULL, uncanonicalized_id TEXT, person_centric_id TEXT, UNIQUE (id, service) );
CREATE TABLE chat (ROWID INTEGER PRIMARY KEY AUTOINCREMENT, guid TEXT UNIQUE NOT NULL, style INTEGER, state INTEGER, account_id TEXT, properties BLOB, chat_identifier TEXT, service_name TEXT, room_name TEXT, account_login TEXT, is_archived INTEGER DEFAULT 0, last_addressed_handle TEXT, display_name TEXT, group_id TEXT, is_filtered INTEGER DEFAULT 0, successful_query INTEGER, engram_id TEXT, server_change_token TEXT, ck_sync_state INTEGER DEFAULT 0, original_group_id TEXT, last_read_message_timestamp INTEGER DEFAULT 0, cloudkit_record_id TEXT, last_addressed_sim_id TEXT, is_blackholed INTEGER DEFAULT 0, syndication_date INTEGER DEFAULT 0, syndication_type INTEGER DEFAULT 0, is_recovered INTEGER DEFAULT 0, is_deleting_incoming_messages INTEGER DEFAULT 0);
CREATE TABLE message (ROWID INTEGER PRIMARY KEY AUTOINCREMENT, guid TEXT UNIQUE NOT NULL, text TEXT, replace INTEGER DEFAULT 0, service_center TEXT, handle_id INTEGER DEFAULT 0, subject TEXT, country TEXT, attributedBody BLOB, version INTEGER DEFAULT 0, type INTEGER DEFAULT 0, service TEXT, account TEXT, account_guid TEXT, error INTEGER DEFAULT 0, date INTEGER, date_read INTEGER, date_delivered INTEGER, is_delivered INTEGER DEFAULT 0, is_finished INTEGER DEFAULT 0, is_emote INTEGER DEFAULT 0, is_from_me INTEGER DEFAULT 0, is_empty INTEGER DEFAULT 0, is_delayed INTEGER DEFAULT 0, is_auto_reply INTEGER DEFAULT 0, is_prepared INTEGER DEFAULT 0, is_read INTEGER DEFAULT 0, is_system_message INTEGER DEFAULT 0, is_sent INTEGER DEFAULT 0, has_dd_results INTEGER DEFAULT 0, is_service_message INTEGER DEFAULT 0, is_forward INTEGER DEFAULT 0, was_downgraded INTEGER DEFAULT 0, is_archive INTEGER DEFAULT 0, cache_has_attachments INTEGER DEFAULT 0, cache_roomnames TEXT, was_data_detected INTEGER DEFAULT 0, was_deduplicated INTEGER DEFAULT 0, is_audio_message INTEGER DEFAULT 0, is_played INTEGER DEFAULT 0, date_played INTEGER, item_type INTEGER DEFAULT 0, other_handle INTEGER DEFAULT 0, group_title TEXT, group_action_type INTEGER DEFAULT 0, share_status INTEGER DEFAULT 0, share_direction INTEGER DEFAULT 0, is_expirable INTEGER DEFAULT 0, expire_state INTEGER DEFAULT 0, message_action_type INTEGER DEFAULT 0, message_source INTEGER DEFAULT 0, associated_message_guid TEXT, associated_message_type INTEGER DEFAULT 0, balloon_bundle_id TEXT, payload_data BLOB, expressive_send_style_id TEXT, associated_message_range_location INTEGER DEFAULT 0, associated_message_range_length INTEGER DEFAULT 0, time_expressive_send_played INTEGER, message_summary_info BLOB, ck_sync_state INTEGER DEFAULT 0, ck_record_id TEXT, ck_record_change_tag TEXT, destination_caller_id TEXT, is_corrupt INTEGER DEFAULT 0, reply_to_guid TEXT, sort_id INTEGER, is_spam INTEGER DEFAULT 0, has_unseen_mention INTEGER DEFAULT 0, thread_originator_guid TEXT, thread_originator_part TEXT, syndication_ranges TEXT, synced_syndication_ranges TEXT, was_delivered_quietly INTEGER DEFAULT 0, did_notify_recipient INTEGER DEFAULT 0, date_retracted INTEGER DEFAULT 0, date_edited INTEGER DEFAULT 0, was_detonated INTEGER DEFAULT 0, part_count INTEGER, is_stewie INTEGER DEFAULT 0, is_kt_verified INTEGER DEFAULT 0, is_sos INTEGER DEFAULT 0, is_critical INTEGER DEFAULT 0, bia_reference_id TEXT DEFAULT NULL, fallback_hash TEXT DEFAULT NULL);
CREATE TABLE attachment (ROWID INTEGER PRIMARY KEY AUTOINCREMENT, guid TEXT UNIQUE NOT NULL, created_date INTEGER DEFAULT 0, start_date INTEGER DEFAULT 0, filename TEXT, uti TEXT, mime_type TEXT, transfer_state INTEGER DEFAULT 0, is_outgoing INTEGER DEFAULT 0, user_info BLOB, transfer_name TEXT, total_bytes INTEGER DEFAULT 0, is_sticker INTEGER DEFAULT 0, sticker_user_info BLOB, attribution_info BLOB, hide_attachment INTEGER DEFAULT 0, ck_sync_state INTEGER DEFAULT 0, ck_server_change_token_blob BLOB, ck_record_id TEXT, original_guid TEXT UNIQUE NOT NULL, is_commsafety_sensitive INTEGER DEFAULT 0);
CREATE TABLE chat_handle_join (chat_id INTEGER REFERENCES chat (ROWID) ON DELETE CASCADE, handle_id INTEGER REFERENCES handle (ROWID) ON DELETE CASCADE, UNIQUE(chat_id, handle_id));
CREATE TABLE chat_message_join (chat_id INTEGER REFERENCES chat (ROWID) ON DELETE CASCADE, message_id INTEGER REFERENCES message (ROWID) ON DELETE CASCADE, message_date INTEGER DEFAULT 0, PRIMARY KEY (chat_id, message_id));
CREATE TABLE message_attachment_join (message_id INTEGER REFERENCES message (ROWID) ON DELETE CASCADE, attachment_id INTEGER REFERENCES attachment (ROWID) ON DELETE CASCADE, UNIQUE(message_id, attachment_id));
CREATE TABLE deleted_messages (ROWID INTEGER PRIMARY KEY AUTOINCREMENT UNIQUE, guid TEXT NOT NULL);
CREATE INDEX chat_message_join_idx_message_date_id_chat_id ON chat_message_join(chat_id, message_date, message_id);
CREATE INDEX message_idx_handle ON message(handle_id, date);
CREATE INDEX message_idx_date ON message(date);
CREATE INDEX message_idx_associated_message2 ON message(associated_message_guid) WHERE associated_message_guid IS NOT NULL;
CREATE INDEX chat_idx_chat_identifier ON chat(chat_identifier);
INSERT INTO _SqliteDatabaseProperties VALUES ('_ClientVersion', '17000'), ('counter_last_all_messages', '0');
"""


def ts_length(n: int) -> bytes:
    """A typedstream integer as used for byte-string lengths (the chat.db tests share it)."""
    if n < 0x80:
        return bytes([n])
    if n < 0x10000:
        return b"\x81" + n.to_bytes(2, "little")
    return b"\x82" + n.to_bytes(4, "little")


def ts_class(name: bytes, version: int) -> bytes:
    """A new typedstream class (84) named by a new shared string, with its version."""
    return b"\x84\x84" + bytes([len(name)]) + name + bytes([version])


def typedstream(text: str) -> bytes:
    """An ``attributedBody`` as Messages writes it (NSArchiver typedstream of an
    NSAttributedString; the text as a length-prefixed UTF-8 byte string)."""
    data = text.encode("utf-8")
    out = b"\x04\x0bstreamtyped\x81\xe8\x03\x84\x01@\x84"
    out += ts_class(b"NSAttributedString", 0) + ts_class(b"NSObject", 0) + b"\x85"
    out += b"\x92\x84" + ts_class(b"NSString", 1) + b"\x94"
    out += b"\x84\x01+" + ts_length(len(data)) + data + b"\x86"
    out += b"\x84\x02iI\x01" + ts_length(len(text.encode("utf-16-le")) // 2)
    out += (
        b"\x92\x84\x84\x84\x0cNSDictionary\x00\x94\x84\x01i\x01\x92\x84\x96\x96\x1d"
        b"__kIMMessagePartAttributeName\x86\x92\x84\x84\x84\x08NSNumber\x00\x84\x84\x07"
        b"NSValue\x00\x94\x84\x01*\x84\x99\x99\x00\x86\x86\x86"
    )
    return out


class _ChatDB:
    """chat.db rows the way Messages writes them: a handle per address, a chat per
    conversation, each message joined to its chat with its date copied into the join."""

    def __init__(self) -> None:
        self.handles: dict[tuple[str, str], int] = {}
        self.rows: list = []  # deferred inserts, replayed into the database
        self.chats: list[tuple] = []
        self.n = 0

    def handle(self, ident: str, service: str) -> int:
        if (ident, service) not in self.handles:
            self.handles[(ident, service)] = len(self.handles) + 1
        return self.handles[(ident, service)]

    def chat(self, identifier: str, members: list[str], name: str = "", service: str = "iMessage") -> int:
        group = len(members) > 1
        guid = f"{service};{'+' if group else '-'};{identifier}"
        rowid = len(self.chats) + 1
        self.chats.append(
            (rowid, guid, 43 if group else 45, identifier, service, name, [self.handle(m, service) for m in members])
        )
        return rowid

    def say(
        self,
        chat: int,
        when: datetime,
        sender: str | None,
        text: str,
        *,
        blob: bool = False,
        tapback: int = 0,
        item_type: int = 0,
    ) -> None:
        self.n += 1
        service = self.chats[chat - 1][4]
        guid = str(uuid.UUID(bytes=bytes.fromhex(_h("msg", self.n)))).upper()
        date = _us(when, APPLE_EPOCH) * 1000
        handle = self.handle(sender, service) if sender else 0
        body = typedstream(text) if (blob or tapback) and text else None
        self.rows.append(
            (
                self.n,
                guid,
                None if blob else text,
                handle,
                body,
                service,
                date,
                int(sender is None),
                item_type,
                tapback,
                chat,
            )
        )

    def bytes(self) -> bytes:
        def fill(db: sqlite3.Connection) -> None:
            for (ident, service), rowid in sorted(self.handles.items(), key=lambda kv: kv[1]):
                db.execute(
                    "INSERT INTO handle (ROWID, id, country, service) VALUES (?, ?, ?, ?)",
                    (rowid, ident, "de" if ident.startswith("+49") else "us", service),
                )
            for rowid, guid, style, ident, service, name, members in self.chats:
                db.execute(
                    "INSERT INTO chat (ROWID, guid, style, state, account_id, chat_identifier,"
                    " service_name, room_name, display_name, group_id) VALUES"
                    " (?, ?, ?, 3, 'A1', ?, ?, ?, ?, ?)",
                    (
                        rowid,
                        guid,
                        style,
                        ident,
                        service,
                        ident if style == 43 else None,
                        name,
                        str(uuid.UUID(bytes=bytes.fromhex(_h("group", guid)))).upper(),
                    ),
                )
                for h in members:
                    db.execute("INSERT INTO chat_handle_join VALUES (?, ?)", (rowid, h))
            for n, guid, text, handle, body, service, when, mine, item_type, tapback, chat in self.rows:
                db.execute(
                    "INSERT INTO message (ROWID, guid, text, handle_id, attributedBody, service,"
                    " account, date, date_read, date_delivered, is_delivered, is_finished,"
                    " is_from_me, is_read, is_sent, item_type, associated_message_guid,"
                    " associated_message_type) VALUES"
                    " (?, ?, ?, ?, ?, ?, 'e:jan.hoffmann@posteo.de', ?, ?, ?, 1, 1, ?, 1, ?, ?, ?, ?)",
                    (
                        n,
                        guid,
                        text,
                        handle,
                        body,
                        service,
                        when,
                        when + 4_000_000_000,
                        when,
                        mine,
                        mine,
                        item_type,
                        f"p:0/{self.rows[n - 2][1]}" if tapback else None,
                        tapback,
                    ),
                )
                db.execute("INSERT INTO chat_message_join VALUES (?, ?, ?)", (chat, n, when))

        return _sqlite_bytes(CHAT_DB_SCHEMA, fill)


# ============================================================================ iCalendar

VTIMEZONE_BERLIN = """BEGIN:VTIMEZONE
TZID:Europe/Berlin
X-LIC-LOCATION:Europe/Berlin
BEGIN:DAYLIGHT
TZOFFSETFROM:+0100
TZOFFSETTO:+0200
TZNAME:CEST
DTSTART:19700329T020000
RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU
END:DAYLIGHT
BEGIN:STANDARD
TZOFFSETFROM:+0200
TZOFFSETTO:+0100
TZNAME:CET
DTSTART:19701025T030000
RRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=-1SU
END:STANDARD
END:VTIMEZONE"""


def _ical_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace(";", "\\;").replace(",", "\\,").replace("\n", "\\n")


def _fold(line: str) -> str:
    """RFC 5545 folding: lines of at most 75 octets, never splitting a UTF-8 sequence."""
    out: list[str] = []
    cur, size = "", 0
    for ch in line:
        n = len(ch.encode("utf-8"))
        if size + n > (75 if not out else 74):
            out.append(cur)
            cur, size = "", 0
        cur += ch
        size += n
    out.append(cur)
    return "\r\n ".join(out)


def _ical_time(value: date | datetime) -> str:
    if isinstance(value, datetime):
        return f";TZID=Europe/Berlin:{value:%Y%m%dT%H%M%S}"
    return f";VALUE=DATE:{value:%Y%m%d}"


class Event:
    def __init__(
        self,
        summary: str,
        start: date | datetime,
        end: date | datetime | None = None,
        *,
        location: str = "",
        description: str = "",
        organizer: tuple[str, str] | None = None,
        attendees=(),
        rrule: str = "",
        status: str = "CONFIRMED",
        categories=(),
        recurrence_id: datetime | None = None,
        uid: str | None = None,
        modified: datetime | None = None,
    ) -> None:
        self.summary, self.start, self.location, self.description = summary, start, location, description
        if end is None:
            end = start + timedelta(days=1) if not isinstance(start, datetime) else start + timedelta(hours=1)
        self.end, self.organizer, self.attendees, self.rrule = end, organizer, list(attendees), rrule
        self.status, self.categories, self.recurrence_id = status, list(categories), recurrence_id
        self.uid = uid or f"{_h(summary, start.isoformat(), n=12)}@jan-hoffmann.de"
        begin = start if isinstance(start, datetime) else datetime(start.year, start.month, start.day, 9, tzinfo=BERLIN)
        self.modified = modified or min(begin - timedelta(days=9, hours=3), datetime(2026, 1, 30, tzinfo=UTC))

    def lines(self) -> list[str]:
        out = [
            "BEGIN:VEVENT",
            f"UID:{self.uid}",
            "DTSTAMP:20260201T120000Z",
            f"CREATED:{self.modified.astimezone(UTC):%Y%m%dT%H%M%SZ}",
            f"LAST-MODIFIED:{self.modified.astimezone(UTC):%Y%m%dT%H%M%SZ}",
        ]
        if self.recurrence_id is not None:
            out.append("RECURRENCE-ID" + _ical_time(self.recurrence_id))
        out += [
            "DTSTART" + _ical_time(self.start),
            "DTEND" + _ical_time(self.end),
            f"SUMMARY:{_ical_escape(self.summary)}",
        ]
        if self.rrule:
            out.append(f"RRULE:{self.rrule}")
        if self.location:
            out.append(f"LOCATION:{_ical_escape(self.location)}")
        if self.description:
            out.append(f"DESCRIPTION:{_ical_escape(self.description)}")
        if self.organizer:
            out.append(f"ORGANIZER;CN={self.organizer[0]}:mailto:{self.organizer[1]}")
        for name, addr in self.attendees:
            out.append(f"ATTENDEE;CN={name};CUTYPE=INDIVIDUAL;ROLE=REQ-PARTICIPANT;PARTSTAT=ACCEPTED:mailto:{addr}")
        if self.categories:
            out.append("CATEGORIES:" + ",".join(_ical_escape(c) for c in self.categories))
        out += [f"STATUS:{self.status}", "TRANSP:OPAQUE", "SEQUENCE:0", "END:VEVENT"]
        return out


def _calendar(name: str, events: list[Event], prodid: str) -> bytes:
    lines = [
        "BEGIN:VCALENDAR",
        f"PRODID:{prodid}",
        "VERSION:2.0",
        "CALSCALE:GREGORIAN",
        "METHOD:PUBLISH",
        f"X-WR-CALNAME:{name}",
        "X-WR-TIMEZONE:Europe/Berlin",
    ]
    lines += VTIMEZONE_BERLIN.split("\n")
    for ev in events:
        lines += ev.lines()
    lines.append("END:VCALENDAR")
    return ("\r\n".join(_fold(line) for line in lines) + "\r\n").encode("utf-8")


# ============================================================================ WeChat, ChatGPT, Claude

WX_ME = "wxid_jh4ff2m0nn21"


class _WeChat:
    """One export file: messages as the exporters write them (``createTime`` in seconds)."""

    def __init__(self, name: str, talker: str, members: dict[str, str] | None = None) -> None:
        self.name, self.talker, self.members = name, talker, members or {}
        self.records: list[dict] = []

    def say(self, when: datetime, sender: str | None, content: str, kind: int = 1) -> None:
        """``sender``: a wxid, None for me."""
        group = self.talker.endswith("@chatroom")
        mine = sender is None
        if group and not mine:
            content = f"{sender}:\n{content}"
        rec = {
            "localId": len(self.records) + 1,
            "talker": self.talker,
            "type": kind,
            "subType": 0 if kind != 49 else 5,
            "content": content,
            "createTime": int(when.timestamp()),
            "isSentFromSelf": mine,
            "fromUser": WX_ME if mine else self.talker,
            "toUser": self.talker if mine else WX_ME,
            "status": 2 if mine else 3,
            "msgSvrId": str(int(_h(self.talker, len(self.records), n=8), 16) >> 1),
        }
        if group and not mine and sender in self.members:
            rec["displayName"] = self.members[sender]
        self.records.append(rec)

    def link(self, when: datetime, sender: str | None, title: str, url: str) -> None:
        xml = (
            f'<?xml version="1.0"?>\n<msg><appmsg appid="" sdkver="0"><title>{escape(title)}'
            f"</title><des></des><type>5</type><url>{escape(url)}</url></appmsg>"
            f"<fromusername>{sender or WX_ME}</fromusername></msg>"
        )
        self.say(when, sender, xml, 49)

    def image(self, when: datetime, sender: str | None) -> None:
        self.say(
            when,
            sender,
            f'<?xml version="1.0"?>\n<msg><img aeskey="{_h(when, n=16)}" length="{int(when.timestamp()) % 900000 + 40000}" md5="{_h(when, "img")}" /></msg>',
            3,
        )

    def sticker(self, when: datetime, sender: str | None) -> None:
        self.say(
            when,
            sender,
            f'<msg><emoji fromusername="{sender or WX_ME}" type="2" md5="{_h(when, "e")}" len="40522" /></msg>',
            47,
        )

    def recall(self, when: datetime, who: str) -> None:
        rec_count = len(self.records)
        self.records.append(
            {
                "localId": rec_count + 1,
                "talker": self.talker,
                "type": 10000,
                "content": f'"{who}" 撤回了一条消息',
                "createTime": int(when.timestamp()),
                "isSentFromSelf": False,
                "fromUser": self.talker,
                "toUser": WX_ME,
            }
        )

    def bytes(self) -> bytes:
        return json.dumps(self.records, ensure_ascii=False, indent=1).encode("utf-8")


def _chatgpt_conv(
    title: str,
    start: datetime,
    turns: list[tuple[str, str]],
    model: str = "gpt-4o",
    dead_branch: tuple[int, str] | None = None,
) -> dict:
    """A conversation as ChatGPT exports it: a ``mapping`` tree from a root node, a hidden
    system message, then the turns; ``dead_branch=(i, text)`` adds an abandoned regenerated
    answer beside turn i (not on the ``current_node`` path)."""
    cid = str(uuid.UUID(bytes=bytes.fromhex(_h("chatgpt", title))))
    t0 = start.timestamp()
    mapping: dict[str, dict] = {}

    def node(
        nid: str, parent: str | None, role: str | None, text, t: float, kind: str = "text", hidden: bool = False
    ) -> None:
        msg: dict | None = None
        if role is not None:
            content = (
                {"content_type": "code", "language": "python", "text": text}
                if kind == "code"
                else {"content_type": "text", "parts": [text]}
            )
            msg = {
                "id": nid,
                "author": {"role": role, "name": None, "metadata": {}},
                "create_time": t if role != "system" else None,
                "update_time": None,
                "content": content,
                "status": "finished_successfully",
                "end_turn": True if role == "assistant" else None,
                "weight": 0.0 if hidden else 1.0,
                "metadata": (
                    {"is_visually_hidden_from_conversation": True}
                    if hidden
                    else {"model_slug": model}
                    if role == "assistant"
                    else {}
                ),
                "recipient": "all",
                "channel": None,
            }
        mapping[nid] = {"id": nid, "message": msg, "parent": parent, "children": []}
        if parent is not None:
            mapping[parent]["children"].append(nid)

    root = str(uuid.UUID(bytes=bytes.fromhex(_h(cid, "root"))))
    node(root, None, None, None, t0)
    sys_id = str(uuid.UUID(bytes=bytes.fromhex(_h(cid, "sys"))))
    node(sys_id, root, "system", "", t0, hidden=True)
    parent, t = sys_id, t0
    for i, (role, text) in enumerate(turns):
        t += 20 + (len(text) % 40) * 3
        nid = str(uuid.UUID(bytes=bytes.fromhex(_h(cid, i))))
        if dead_branch and dead_branch[0] == i:
            dead = str(uuid.UUID(bytes=bytes.fromhex(_h(cid, i, "dead"))))
            node(dead, parent, role, dead_branch[1], t - 5)
        kind = "text"
        if role == "assistant-code":
            role, kind = "assistant", "code"
        node(nid, parent, role, text, t, kind)
        parent = nid
    return {
        "title": title,
        "create_time": t0,
        "update_time": t,
        "mapping": mapping,
        "moderation_results": [],
        "current_node": parent,
        "plugin_ids": None,
        "conversation_id": cid,
        "conversation_template_id": None,
        "gizmo_id": None,
        "gizmo_type": None,
        "is_archived": False,
        "safe_urls": [],
        "blocked_urls": [],
        "default_model_slug": model,
        "disabled_tool_ids": [],
        "id": cid,
    }


def _iso(dt: datetime) -> str:
    return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond:06d}Z"


def _claude_conv(name: str, start: datetime, turns: list, summary: str = "") -> dict:
    """A conversation as Claude exports it; a turn is (sender, text) or (sender, text,
    {"attachments": [...], "blocks": [...]})."""
    cid = str(uuid.UUID(bytes=bytes.fromhex(_h("claude", name))))
    msgs, t = [], start
    for i, turn in enumerate(turns):
        sender, text = turn[0], turn[1]
        extra = turn[2] if len(turn) > 2 else {}
        t = t + timedelta(seconds=15 + (len(text) % 50) * 2)
        blocks = extra.get("blocks") or [{"type": "text", "text": text}]
        content = [
            dict(b, start_timestamp=_iso(t), stop_timestamp=_iso(t + timedelta(seconds=4)), citations=[])
            if b.get("type") == "text"
            else dict(b, start_timestamp=_iso(t), stop_timestamp=_iso(t))
            for b in blocks
        ]
        msgs.append(
            {
                "uuid": str(uuid.UUID(bytes=bytes.fromhex(_h(cid, i)))),
                "text": text,
                "content": content,
                "sender": sender,
                "created_at": _iso(t),
                "updated_at": _iso(t),
                "attachments": extra.get("attachments", []),
                "files": extra.get("files", []),
            }
        )
    return {
        "uuid": cid,
        "name": name,
        "summary": summary,
        "created_at": _iso(start),
        "updated_at": _iso(t),
        "account": {"uuid": "5f0c2a4e-8d1b-4c7a-9e3f-1a2b3c4d5e6f"},
        "chat_messages": msgs,
    }


# ============================================================================ people

INGRID = ("Ingrid Baumann", "i.baumann@hausverwaltung-baumann.de")
MUM = ("Sabine Hoffmann", "sabine.hoffmann@t-online.de")
FELIX = ("Felix Hoffmann", "felix.hoffmann@gmx.de")
CAMILLE = ("Camille Durand", "camille.durand@orange.fr")
LUCIA = ("Lucía Fernández", "lucia.fernandez@gmail.com")
WEI = ("Wei Zhang", "zhangwei1988@qq.com")
LINA = ("李娜", "lina_berlin@163.com")
CHENJING = ("陈静", "chenjing_hz@126.com")
YUKI = ("Yuki Tanaka", "yuki.tanaka@docomo.ne.jp")
MINJI = ("Minji Park", "minji.park@naver.com")
PRIYA = ("Priya Nair", "priya.nair@fernwerk.io")
TOM = ("Tom Becker", "tom.becker@fernwerk.io")
JULIEN = ("Julien Moreau", "julien.moreau@factoria.fr")
SOPHIE = ("Sophie Kwiatkowski", "sophie.kwiatkowski@icloud.com")


# ============================================================================ mail content


def _mails(s: _Set, more_home: list[Mail], more_work: list[Mail]) -> None:
    q = s.q
    home: list[Mail] = list(more_home)  # the mails that carry attachments, scans, screenshots, photos
    work: list[Mail] = list(more_work)

    # --- German: electricity, landlady, family, authorities -------------------------------
    vf = ("Vattenfall Kundenservice", "kundenservice@vattenfall-rechnung.de")
    home.append(
        Mail(
            berlin(2024, 2, 19, 7, 12),
            vf,
            [ME],
            "Ihre Jahresabrechnung Strom 2023 – Rechnung RE-2024-07311",
            "Sehr geehrter Herr Hoffmann,\n\nanbei erhalten Sie Ihre Jahresabrechnung für den Zeitraum "
            "01.01.2023 bis 31.12.2023 (Vertragskonto 8200 4417 93).\n\nRechnungsnummer: RE-2024-07311\n"
            "Verbrauch: 1.702 kWh\nGesamtbetrag: 531,88 EUR\nBereits gezahlte Abschläge: 570,00 EUR\n"
            "Guthaben: 38,12 EUR\n\nDas Guthaben überweisen wir innerhalb von 14 Tagen auf Ihr Konto. "
            "Ihr monatlicher Abschlag beträgt ab März 2024 47,50 EUR.\n\nMit freundlichen Grüßen\n"
            "Ihr Vattenfall Kundenservice",
            charset="iso-8859-1",
            labels=("Inbox", "Rechnungen"),
        )
    )
    home.append(
        Mail(
            berlin(2025, 2, 21, 7, 4),
            vf,
            [ME],
            "Ihre Jahresabrechnung Strom 2024 – Rechnung RE-2025-08817",
            "Sehr geehrter Herr Hoffmann,\n\nanbei erhalten Sie Ihre Jahresabrechnung für den Zeitraum "
            "01.01.2024 bis 31.12.2024 (Vertragskonto 8200 4417 93).\n\nRechnungsnummer: RE-2025-08817\n"
            "Verbrauch: 1.874 kWh\nGesamtbetrag: 712,37 EUR\nBereits gezahlte Abschläge: 570,00 EUR\n"
            "Nachzahlung: 142,37 EUR\n\nDen Betrag buchen wir am 14.03.2025 per SEPA-Lastschrift von "
            "Ihrem Konto ab. Ihr monatlicher Abschlag beträgt ab April 2025 59,00 EUR.\n\n"
            "Mit freundlichen Grüßen\nIhr Vattenfall Kundenservice",
            charset="iso-8859-1",
            labels=("Inbox", "Rechnungen"),
        )
    )
    home.append(
        Mail(
            berlin(2025, 9, 8, 8, 30),
            vf,
            [ME],
            "Anpassung Ihres Abschlags ab Oktober 2025",
            "Sehr geehrter Herr Hoffmann,\n\nzum 1. Oktober 2025 steigen die Netzentgelte in Berlin. "
            "Damit Sie am Jahresende keine hohe Nachforderung erwartet, passen wir Ihren monatlichen "
            "Abschlag von 59,00 EUR auf 64,00 EUR an.\n\nSie können den Abschlag jederzeit im Kundenportal "
            "ändern.\n\nMit freundlichen Grüßen\nIhr Vattenfall Kundenservice",
            charset="iso-8859-1",
            labels=("Inbox", "Rechnungen"),
        )
    )
    q("identifier", "RE-2025-08817", [("mail", "RE-2025-08817")])
    q("identifier", "invoice RE-2025-08817", [("mail", "RE-2025-08817")])
    q(
        "crosslingual",
        "how much extra did I have to pay for electricity for 2024?",
        [("mail", "Nachzahlung: 142,37 EUR")],
        lang="en>de",
    )
    q(
        "crosslingual",
        "why did my monthly power payment go up in autumn 2025?",
        [("mail", "steigen die Netzentgelte")],
        lang="en>de",
    )
    q(
        "filtered",
        "Vattenfall Jahresabrechnung Strom",
        [("mail", "RE-2025-08817")],
        after="2025-01-01",
        before="2026-01-01",
        distractors=[("mail", "RE-2024-07311")],
    )

    nk23 = Mail(
        berlin(2024, 6, 12, 16, 40),
        INGRID,
        [ME],
        "Nebenkostenabrechnung 2023 – Weserstraße 41",
        "Sehr geehrter Herr Hoffmann,\n\nanbei die Betriebskostenabrechnung für 2023. Nach Abzug Ihrer "
        "Vorauszahlungen ergibt sich ein Guthaben von 41,80 €, das ich mit der Julimiete verrechne.\n\n"
        "Die Belege können Sie nach Absprache in meinem Büro einsehen.\n\nMit freundlichen Grüßen\n"
        "Ingrid Baumann\nHausverwaltung Baumann",
        labels=("Inbox", "Wohnung"),
    )
    nk24 = Mail(
        berlin(2025, 6, 16, 10, 5),
        INGRID,
        [ME],
        "Nebenkostenabrechnung 2024 – Weserstraße 41",
        "Sehr geehrter Herr Hoffmann,\n\nanbei die Betriebskostenabrechnung für 2024. Gestiegen sind "
        "vor allem Grundsteuer und Hausmeisterdienst. Es ergibt sich eine Nachzahlung von 118,45 €, "
        "bitte überweisen Sie den Betrag bis zum 31.07.2025 auf das bekannte Konto.\n\n"
        "Mit freundlichen Grüßen\nIngrid Baumann\nHausverwaltung Baumann",
        labels=("Inbox", "Wohnung"),
    )
    heat = Mail(
        berlin(2025, 10, 6, 9, 12),
        INGRID,
        [ME],
        "Heizungswartung am 14.10.",
        "Sehr geehrter Herr Hoffmann,\n\ndie jährliche Wartung der Gastherme übernimmt dieses Jahr "
        "die Firma Wärme-Service Krause. Der Techniker kommt am Dienstag, 14.10.2025, zwischen 8 und "
        "12 Uhr. Bitte sorgen Sie dafür, dass der Thermenschrank im Bad frei zugänglich ist.\n\n"
        "Mit freundlichen Grüßen\nIngrid Baumann",
        labels=("Inbox", "Wohnung"),
    )
    heat_re = Mail(
        berlin(2025, 10, 6, 20, 41),
        ME,
        [INGRID],
        "Re: Heizungswartung am 14.10.",
        "Hallo Frau Baumann,\n\ndanke für die Info. Ich bin ab 9 Uhr im Homeoffice, der Techniker "
        "kann einfach klingeln. Könnte er sich bei der Gelegenheit auch das tropfende Ventil am "
        "Badheizkörper ansehen?\n\nViele Grüße\nJan Hoffmann",
        labels=("Sent",),
        reply_to=heat,
        quote="de",
    )
    rent = Mail(
        berlin(2025, 11, 20, 11, 0),
        INGRID,
        [ME],
        "Anpassung der Indexmiete zum 01.01.2026",
        "Sehr geehrter Herr Hoffmann,\n\ngemäß § 4 Ihres Mietvertrags (Indexmiete, § 557b BGB) passe "
        "ich die Nettokaltmiete an die Entwicklung des Verbraucherpreisindex an. Ab dem 01.01.2026 "
        "beträgt die Nettokaltmiete 1.184,00 € (bisher 1.120,00 €). Die Vorauszahlungen für "
        "Betriebskosten bleiben unverändert.\n\nMit freundlichen Grüßen\nIngrid Baumann",
        labels=("Inbox", "Wohnung"),
    )
    home += [nk23, nk24, heat, heat_re, rent]
    q(
        "person",
        "Ingrid Baumann mail about the boiler maintenance – what do I have to do?",
        [("mail", "Thermenschrank im Bad frei zugänglich")],
    )
    q(
        "person",
        "Ingrid Baumann utility statement for 2024, do I owe her money?",
        [("mail", "Nachzahlung von 118,45 €")],
    )
    q("person", "what did Ingrid Baumann write about the rent increase?", [("mail", "Nettokaltmiete 1.184,00 €")])
    q(
        "filtered",
        "Nebenkostenabrechnung Frau Baumann Guthaben",
        [("mail", "Guthaben von 41,80 €")],
        before="2025-01-01",
        distractors=[("mail", "Nachzahlung von 118,45 €")],
    )
    q(
        "filtered",
        "Heizungswartung Techniker",
        [("mail", "tropfende Ventil am Badheizkörper")],
        where={"labels": {"in": ["Sent"]}},
        distractors=[("mail", "Thermenschrank im Bad")],
    )

    oma = Mail(
        berlin(2025, 4, 22, 19, 30),
        MUM,
        [ME],
        "Omas 85. Geburtstag",
        "Hallo Jan,\n\nOma wird 85! Wir feiern am Samstag, 17. Mai, ab 12 Uhr im Gasthaus Zur Linde in "
        "Celle. Kannst du die alten Dias digitalisieren und als Diashow auf dem Laptop mitbringen? "
        "Oma würde sich riesig freuen.\n\nFelix bringt Torte mit.\n\nLiebe Grüße, Mama",
        cte="8bit",
    )
    xmas = Mail(
        berlin(2025, 11, 30, 18, 2),
        MUM,
        [ME, SOPHIE],
        "Weihnachten",
        "Hallo ihr beiden,\n\nHeiligabend bei uns in Hannover, wie immer. Felix kommt am 23., ihr könnt "
        "im Gästezimmer schlafen. Bring bitte deinen Kartoffelsalat mit, Papa besteht darauf.\n\n"
        "Bussi, Mama",
        cte="8bit",
    )
    garden = Mail(
        berlin(2024, 8, 4, 17, 45),
        MUM,
        [ME],
        "Fotos vom Garten",
        "Hallo Jan,\n\ndie Tomaten sind dieses Jahr der Wahnsinn, ich schicke dir ein paar Fotos. "
        "Papa hat den Zaun neu gestrichen.\n\nLiebe Grüße, Mama",
        cte="8bit",
    )
    home += [oma, xmas, garden]
    q("person", "what did mum write about grandma's 85th birthday party?", [("mail", "Gasthaus Zur Linde")])
    q("person", "mum's plan for Christmas Eve", [("mail", "Heiligabend bei uns in Hannover")])

    felix_addr = Mail(
        berlin(2025, 9, 1, 21, 13),
        FELIX,
        [ME],
        "Danke + neue Adresse",
        "Hey Jan,\n\ndanke fürs Schleppen am Samstag, ohne dich hätte ich das nicht geschafft! "
        "Meine neue Adresse für eure Adressbücher:\n\nFelix Hoffmann\nLenaustraße 9\n12047 Berlin\n\n"
        "3. OG ohne Aufzug, sorry nochmal.\n\nFelix",
        cte="8bit",
    )
    felix_foot = Mail(
        berlin(2024, 10, 17, 12, 20),
        FELIX,
        [ME],
        "Hertha am Samstag?",
        "Hab zwei Karten für Hertha gegen Paderborn, Ostkurve. Bist du dabei? Anstoß 13 Uhr.",
        cte="8bit",
    )
    home += [felix_addr, felix_foot]
    q("person", "Felix's new address after the move", [("mail", "Lenaustraße 9"), ("calendar", "Lenaustraße 9")])

    db = ("DB Fernverkehr", "buchungsbestaetigung@bahn.de")
    home.append(
        Mail(
            berlin(2025, 6, 2, 22, 14),
            db,
            [ME],
            "Buchungsbestätigung (Auftrag 734109825521)",
            "Vielen Dank für Ihre Buchung!\n\nAuftragsnummer: 734109825521\nHinfahrt am 21.06.2025\n"
            "Berlin Hbf ab 09:29 – München Hbf an 13:31, ICE 1007\nReservierung: Wagen 12, Platz 64, "
            "Fenster, Großraum\nPreis: 67,99 € (Super Sparpreis, BahnCard 25)\n\nIhr Ticket finden Sie in "
            "der App DB Navigator.",
            labels=("Inbox", "Reisen"),
        )
    )
    home.append(
        Mail(
            berlin(2025, 12, 2, 20, 31),
            db,
            [ME],
            "Buchungsbestätigung (Auftrag 736620914487)",
            "Vielen Dank für Ihre Buchung!\n\nAuftragsnummer: 736620914487\nHinfahrt am 23.12.2025\n"
            "Berlin Hbf ab 15:36 – Hannover Hbf an 17:20, ICE 545\nReservierung: Wagen 7, Platz 21, "
            "Gang\nPreis: 39,99 € (Sparpreis, BahnCard 25)\n\nIhr Ticket finden Sie in der App DB Navigator.",
            labels=("Inbox", "Reisen"),
        )
    )
    q("identifier", "734109825521", [("mail", "734109825521")])
    q(
        "crosslingual",
        "which seat did I reserve on the train to Munich?",
        [("mail", "Wagen 12, Platz 64")],
        lang="en>de",
    )
    q(
        "filtered",
        "Bahn Buchungsbestätigung Sitzplatz",
        [("mail", "Wagen 7, Platz 21")],
        after="2025-12-01",
        distractors=[("mail", "Wagen 12, Platz 64")],
    )

    home.append(
        Mail(
            berlin(2024, 4, 3, 10, 2),
            ("Bezirksamt Neukölln – Bürgeramt", "noreply@berlin.de"),
            [ME],
            "Terminbestätigung: Anmeldung einer Wohnung",
            "Sehr geehrte/r Jan Hoffmann,\n\nhiermit bestätigen wir Ihren Termin:\n\nDienstleistung: "
            "Anmeldung einer Wohnung\nDatum: 18.04.2024, 09:40 Uhr\nStandort: Bürgeramt Rathaus Neukölln, "
            "Karl-Marx-Straße 83, 12040 Berlin\nVorgangsnummer: 2024-0417-3382\n\nBitte bringen Sie die "
            "Vorgangsnummer mit. Eine Absage ist bis 24 Stunden vorher online möglich.",
            charset="iso-8859-1",
        )
    )
    q("identifier", "Vorgangsnummer 2024-0417-3382", [("mail", "2024-0417-3382")])

    home.append(
        Mail(
            berlin(2025, 8, 27, 8, 0),
            ("Zahnarztpraxis Dr. Yilmaz", "praxis@zahnarzt-yilmaz.de"),
            [ME],
            "Terminerinnerung",
            "Sehr geehrter Herr Hoffmann,\n\nwir erinnern Sie an Ihren Termin zur professionellen "
            "Zahnreinigung am Mittwoch, 03.09.2025 um 08:30 Uhr. Die Behandlung dauert etwa 60 Minuten und "
            "kostet 95 EUR.\n\nBitte bringen Sie Ihre Versichertenkarte mit.\n\nIhr Praxisteam Dr. Yilmaz\n"
            "Sonnenallee 112, 12045 Berlin",
            charset="iso-8859-1",
        )
    )
    q(
        "crosslingual",
        "when is my teeth cleaning appointment?",
        [("mail", "Zahnreinigung am Mittwoch, 03.09.2025"), ("notes", "Professionelle Zahnreinigung")],
        lang="en>de",
    )

    home.append(
        Mail(
            berlin(2025, 5, 6, 15, 48),
            ("Radwerk Kreuzberg", "werkstatt@radwerk-kreuzberg.de"),
            [ME],
            "Ihr Fahrrad ist abholbereit",
            "Hallo Herr Hoffmann,\n\nIhr Rad ist fertig. Gemacht haben wir: neuer Schaltzug, Bremsbeläge "
            "vorne und hinten, Kette gereinigt und geölt. Gesamt: 89,50 €.\n\nAbholung heute bis 19 Uhr "
            "oder morgen ab 10 Uhr.\n\nGruß aus der Werkstatt",
            cte="8bit",
        )
    )
    q(
        "crosslingual",
        "what did the shop fix on my bicycle and how much was it?",
        [("mail", "Bremsbeläge vorne und hinten")],
        lang="en>de",
    )

    home.append(
        Mail(
            berlin(2024, 12, 1, 6, 0),
            ("HUK24", "service@huk24.de"),
            [ME],
            "Ihr Versicherungsschein Hausratversicherung",
            "Sehr geehrter Herr Hoffmann,\n\nvielen Dank für Ihr Vertrauen. Anbei Ihr Versicherungsschein.\n\n"
            "Versicherungsschein-Nr.: HR-2291-4470-18\nVersicherungsort: Weserstraße 41, 12045 Berlin\n"
            "Versicherungssumme: 52.000 €\nFahrraddiebstahl bis 1.500 € mitversichert (Nachtzeitklausel "
            "entfällt)\nJahresbeitrag: 87,12 €\n\nIhre HUK24",
            cte="quoted-printable",
        )
    )
    q("identifier", "HR-2291-4470-18", [("mail", "HR-2291-4470-18")])
    q(
        "crosslingual",
        "is theft of my bike covered by my home contents insurance?",
        [("mail", "Fahrraddiebstahl bis 1.500 € mitversichert")],
        lang="en>de",
    )

    home.append(
        Mail(
            berlin(2025, 7, 14, 9, 3),
            ("ELSTER", "noreply@elster.de"),
            [ME],
            "Neue Nachricht in Ihrem ELSTER-Postfach",
            "Sehr geehrte Nutzerin, sehr geehrter Nutzer,\n\nin Ihrem Postfach liegt ein neuer "
            "Steuerbescheid zur Einkommensteuer 2024 (Finanzamt Neukölln, Steuernummer 16/347/01234).\n\n"
            "Bitte melden Sie sich unter www.elster.de an, um ihn abzurufen.\n\nIhr ELSTER-Team",
        )
    )
    q("identifier", "Steuernummer 16/347/01234", [("mail", "16/347/01234")])

    # --- French ------------------------------------------------------------------------------
    wedding = Mail(
        berlin(2025, 5, 28, 21, 40),
        CAMILLE,
        [ME],
        "Mariage – infos pratiques 💍",
        "Cher Jan,\n\nvoici les infos pour le 12 juillet : la cérémonie a lieu à 15h30 au Domaine des "
        "Tilleuls à Chaponost. La navette partira de la gare de Lyon Part-Dieu à 14h (sortie rue "
        "Villette). Dress code : champêtre chic, pas de talons aiguilles sur la pelouse !\n\n"
        "On t'a réservé une chambre à l'Hôtel du Parc, code de réservation PARC-7712.\n\n"
        "Bisous,\nCamille",
        labels=("Inbox", "Reisen"),
    )
    tatin = Mail(
        berlin(2024, 11, 3, 14, 10),
        CAMILLE,
        [ME],
        "La recette de mamie",
        "Coucou Jan,\n\ncomme promis, la tarte Tatin de ma grand-mère : 6 pommes Reine des Reinettes, "
        "150 g de sucre, 80 g de beurre demi-sel et une pâte brisée. On fait caraméliser le sucre et le "
        "beurre directement dans le moule, on serre bien les pommes, on pose la pâte par-dessus et "
        "45 minutes à 190 °C. On retourne tiède, pas froide !\n\nBises,\nCamille",
    )
    visit = Mail(
        berlin(2025, 3, 10, 12, 31),
        CAMILLE,
        [ME],
        "Ma visite à Berlin",
        "Salut Jan !\n\nC'est confirmé : j'arrive le jeudi 3 avril à 18h12 à Berlin Hbf et je repars "
        "le dimanche. Petit détail important : je suis devenue intolérante au gluten, donc attention "
        "aux restos et aux boulangeries 😅\n\nJ'ai hâte !\nCamille",
    )
    visit_re = Mail(
        berlin(2025, 3, 10, 19, 2),
        ME,
        [CAMILLE],
        "Re: Ma visite à Berlin",
        "Super ! Je viendrai te chercher à la gare. On pourra aller au Café Lenz, ils font des "
        "gâteaux sans gluten.\n\nÀ bientôt,\nJan",
        labels=("Sent",),
        reply_to=visit,
        quote="fr",
    )
    bday_c = Mail(
        berlin(2025, 6, 9, 8, 15),
        CAMILLE,
        [ME],
        "Joyeux anniversaire… à Felix !",
        "Dis à ton frère que je lui souhaite un joyeux anniversaire. Trente-trois ans, ça se fête !",
    )
    home += [wedding, tatin, visit, visit_re, bday_c]
    q(
        "crosslingual",
        "what time does the shuttle bus to Camille's wedding leave?",
        [("mail", "La navette partira de la gare de Lyon Part-Dieu à 14h")],
        lang="en>fr",
    )
    q("crosslingual", "is there any food Camille can't eat?", [("mail", "intolérante au gluten")], lang="en>fr")
    q("person", "Camille's grandmother's upside-down apple tart recipe", [("mail", "Reine des Reinettes")])
    q("person", "when does Camille arrive for her Berlin visit?", [("mail", "jeudi 3 avril à 18h12")])
    q(
        "filtered",
        "gluten",
        [("mail", "intolérante au gluten")],
        where={"from": CAMILLE[1]},
        distractors=[("mail", "gâteaux sans gluten")],
    )

    home.append(
        Mail(
            berlin(2025, 7, 1, 13, 5),
            ("OUIGO", "confirmation@ouigo.com"),
            [ME],
            "Confirmation de votre réservation QXWZPL",
            "",
            html=(
                "<html><head><style>td{font-family:Arial}</style></head><body>"
                '<table width="600"><tr><td><img src="https://www.ouigo.com/logo.png" alt="OUIGO"></td></tr>'
                "<tr><td><h1>Votre voyage est confirmé</h1></td></tr>"
                "<tr><td><p>Référence de réservation : <b>QXWZPL</b></p></td></tr>"
                "<tr><td><p>Paris Gare de Lyon → Lyon Part-Dieu, vendredi 11 juillet 2025, départ 16:04, "
                "arrivée 18:02</p><p>Passager : Jan Hoffmann – voiture 5 place 112</p>"
                "<p>Bagages : 1 bagage cabine + 1 accessoire inclus</p></td></tr>"
                "<tr><td><footer><p>OUIGO – SNCF Voyageurs. Se désabonner</p></footer></td></tr>"
                "</table></body></html>"
            ),
            html_only=True,
            labels=("Inbox", "Reisen"),
        )
    )
    q("identifier", "QXWZPL", [("mail", "QXWZPL")])
    q(
        "crosslingual",
        "which coach and seat do I have on the train to Lyon?",
        [("mail", "voiture 5 place 112")],
        lang="en>fr",
    )

    home.append(
        Mail(
            berlin(2024, 9, 12, 11, 47),
            ("Hélène (Airbnb)", "express@airbnb.com"),
            [ME],
            "Arrivée au Panier – infos",
            "Bonjour Jan,\n\npour votre arrivée vendredi : le code de la boîte à clés est 4827, elle est "
            "accrochée à la grille verte à gauche de la porte. L'appartement est au 2e étage. Le wifi : "
            "réseau « Panier-Helene », mot de passe Calanques2024.\n\nBon séjour à Marseille !\nHélène",
            charset="iso-8859-1",
        )
    )
    q(
        "crosslingual",
        "how do I get the key for the Marseille apartment?",
        [("mail", "code de la boîte à clés est 4827")],
        lang="en>fr",
    )

    work.append(
        Mail(
            berlin(2025, 2, 4, 17, 20),
            JULIEN,
            [ME_WORK, PRIYA],
            "Compte rendu – intégration API de facturation",
            "Bonjour à tous,\n\nvoici le compte rendu de la réunion de ce matin :\n\n- l'intégration de "
            "l'API de facturation côté Fernwerk doit être terminée avant la date limite, fixée au 28 février ;\n"
            "- le format d'export sera du CSV UTF-8 avec séparateur point-virgule, une ligne par facture ;\n"
            "- les montants sont en centimes, sans séparateur de milliers.\n\nBonne journée,\nJulien Moreau\n"
            "Factoria SAS",
        )
    )
    q(
        "crosslingual",
        "which column separator do they want in the billing export file?",
        [("mail", "séparateur point-virgule")],
        lang="en>fr",
    )
    q(
        "person",
        "Julien Moreau's meeting notes – what is the deadline for the billing API?",
        [("mail", "la date limite, fixée au 28 février")],
    )

    # --- Spanish ------------------------------------------------------------------------------
    fallas = Mail(
        berlin(2025, 2, 20, 22, 8),
        LUCIA,
        [ME],
        "¡Fallas 2025! 🔥",
        "¡Hola Jan!\n\n¡Te esperamos el 15 de marzo! La mascletà es a las 14:00 en la Plaza del "
        "Ayuntamiento, hay que llegar una hora antes para coger sitio. Trae tapones para los oídos y "
        "ropa que se pueda manchar. Puedes dormir en el sofá cama del salón.\n\nUn abrazo,\nLucía",
        cte="8bit",
    )
    paella = Mail(
        berlin(2024, 7, 22, 20, 50),
        LUCIA,
        [ME],
        "Re: paella",
        "Jajaja, lo que hiciste no era paella 😂 El secreto de la paella valenciana: garrofó y judía "
        "ferraura, azafrán de verdad, nada de chorizo, y dejar que se haga el socarrat los últimos dos "
        "minutos sin remover.\n\nLucía",
        cte="8bit",
    )
    tent = Mail(
        berlin(2025, 7, 3, 18, 25),
        LUCIA,
        [ME],
        "Una pregunta",
        "Oye, ¿me prestas tu tienda de campaña para los Picos de Europa del 8 al 15 de agosto? Te la "
        "devuelvo limpia y seca, prometido.\n\nBesos,\nLucía",
        cte="8bit",
    )
    xmas_l = Mail(
        berlin(2024, 12, 24, 11, 2),
        LUCIA,
        [ME],
        "¡Feliz Navidad!",
        "¡Feliz Navidad a ti y a Sophie! Aquí hace 18 grados, lo siento 😎",
        cte="8bit",
    )
    home += [fallas, paella, tent, xmas_l]
    q(
        "crosslingual",
        "what should I bring to the Fallas in Valencia?",
        [("mail", "Trae tapones para los oídos")],
        lang="en>es",
    )
    q("crosslingual", "what goes into a proper Valencian paella?", [("mail", "garrofó y judía ferraura")], lang="en>es")
    q(
        "crosslingual",
        "who wanted to borrow my tent, and for which trip?",
        [("mail", "tienda de campaña para los Picos de Europa")],
        lang="en>es",
    )
    q(
        "person",
        "Lucía's tip about the crispy rice at the bottom of the paella",
        [("mail", "dejar que se haga el socarrat")],
    )
    q("person", "what time did Lucía say the mascletà starts?", [("mail", "La mascletà es a las 14:00")])
    q(
        "filtered",
        "Valencia Fallas plan",
        [("mail", "Trae tapones para los oídos")],
        where={"from": LUCIA[1]},
        distractors=[("chatgpt", "La Cremà"), ("notes", "La Cremà")],
    )

    home.append(
        Mail(
            berlin(2025, 4, 10, 10, 30),
            ("Instituto Cervantes Berlín", "examenes.berlin@cervantes.es"),
            [ME],
            "Convocatoria DELE B2 – mayo 2025",
            "Estimado candidato:\n\nle confirmamos su inscripción al examen DELE B2. El examen escrito es "
            "el sábado 17 de mayo de 2025 a las 9:00 en el Instituto Cervantes de Berlín, Rosenstraße 18. "
            "La prueba oral se le comunicará por separado.\n\nTraiga su pasaporte o documento de identidad "
            "y un bolígrafo de tinta negra.\n\nAtentamente,\nDepartamento de Exámenes",
            charset="iso-8859-1",
        )
    )
    q(
        "crosslingual",
        "when and where is my Spanish language certificate exam?",
        [("mail", "El examen escrito es el sábado 17 de mayo"), ("calendar", "DELE B2")],
        lang="en>es",
    )

    home.append(
        Mail(
            berlin(2025, 3, 1, 9, 44),
            ("Hostal La Alameda", "reservas@hostal-laalameda.es"),
            [ME],
            "Reserva confirmada – localizador 58XK2L",
            "",
            html=(
                '<html><body><div class="header"><nav><a href="#">Inicio</a> | <a href="#">Habitaciones</a></nav></div>'
                "<h2>¡Gracias por su reserva!</h2><p>Localizador: 58XK2L</p>"
                "<p>Hostal La Alameda, Valencia · del 14 al 18 de marzo de 2025 · habitación doble de uso individual</p>"
                "<p>Recepción abierta de 8:00 a 22:00. Si llega más tarde, llámenos al +34 963 55 01 77.</p>"
                "<footer>Hostal La Alameda · Política de privacidad</footer></body></html>"
            ),
            html_only=True,
            charset="iso-8859-1",
            labels=("Inbox", "Reisen"),
        )
    )
    home.append(
        Mail(
            berlin(2025, 1, 26, 19, 3),
            ("Vueling", "no-reply@vueling.com"),
            [ME],
            "Tu reserva K7WQ3M está confirmada",
            "",
            html=(
                "<html><body><table><tr><td><h1>¡Buen viaje, Jan!</h1></td></tr>"
                "<tr><td>Código de reserva: <strong>K7WQ3M</strong></td></tr>"
                "<tr><td><p>Vuelo VY1887 Berlín (BER) – Valencia (VLC), viernes 14 de marzo de 2025, sale a las "
                "06:55 y llega a las 09:55.</p><p>Vuelta: VY1888 Valencia – Berlín, martes 18 de marzo, 20:40.</p></td></tr>"
                "<tr><td><small>Vueling Airlines S.A. · Darse de baja</small></td></tr></table></body></html>"
            ),
            html_only=True,
            labels=("Inbox", "Reisen"),
        )
    )
    q("identifier", "58XK2L", [("mail", "58XK2L")])
    q("identifier", "VY1887", [("mail", "VY1887")])
    q("crosslingual", "what time does my flight to Valencia leave?", [("mail", "sale a las 06:55")], lang="en>es")

    # --- Chinese, Japanese, Korean ------------------------------------------------------------
    visa_ask = Mail(
        berlin(2025, 7, 12, 21, 5),
        ME,
        [WEI],
        "签证邀请函",
        "伟哥好！\n\n我十月想去黄山，申请签证需要一份邀请函，你能帮我写一份吗？谢谢！\n\nJan",
        labels=("Sent",),
        cte="base64",
    )
    visa = Mail(
        berlin(2025, 7, 15, 15, 58),
        WEI,
        [ME],
        "回复：签证邀请函",
        "Jan，\n\n邀请函我已经写好了，附件是扫描件，原件我下周寄给你。你申请签证的时候还需要：护照原件、"
        "近六个月的银行流水、往返机票预订单和酒店订单。\n\n有问题随时微信问我。\n\n张伟",
        reply_to=visa_ask,
        quote="zh",
        cte="base64",
        attachments=[
            (
                "邀请函_Jan_Hoffmann.pdf",
                "application/pdf",
                make_pdf([["Invitation letter", "Zhang Wei, Shanghai"]], "Invitation"),
            )
        ],
    )
    mooncake = Mail(
        berlin(2025, 9, 10, 13, 30),
        WEI,
        [ME],
        "中秋节月饼",
        "Jan：\n\n月饼已经寄出，顺丰单号 SF1402871639520，大概两周到柏林。有蛋黄莲蓉和五仁的，"
        "五仁的你可能不喜欢哈哈。\n\n中秋快乐！\n张伟",
        cte="base64",
    )
    home += [visa_ask, visa, mooncake]
    q(
        "crosslingual",
        "which documents do I need for the Chinese visa besides the invitation letter?",
        [("mail", "近六个月的银行流水")],
        lang="en>zh",
    )
    q("cjk", "签证 需要 护照原件吗", [("mail", "护照原件")])
    q(
        "filtered",
        "邀请函",
        [("mail", "近六个月的银行流水")],
        where={"has_attachments": True},
        distractors=[("mail", "你能帮我写一份吗")],
    )
    q("identifier", "SF1402871639520", [("mail", "SF1402871639520")])
    q("person", "Wei's mail about the mooncake parcel", [("mail", "顺丰单号 SF1402871639520")])
    q("cjk", "月饼 快递 几天到", [("mail", "大概两周到柏林")])

    essay = Mail(
        berlin(2025, 3, 18, 22, 40),
        LINA,
        [ME],
        "作文修改",
        "Jan，你好！\n\n你的作文《我的柏林》写得很好！有几个小问题：\n1. “我住柏林三年” 不太自然，"
        "应该说 “我在柏林住了三年了”。\n2. “地铁” 不要写成 “地跌”。\n3. “非常很好” 里 “非常” 和 “很” "
        "只用一个就行。\n\n下周见！\n李娜",
        charset="gb2312",
        cte="base64",
    )
    tandem = Mail(
        berlin(2024, 10, 5, 10, 12),
        LINA,
        [ME],
        "语伴时间",
        "Jan：\n\n从下个月开始，我们的语伴交换时间改成每周三晚上七点，可以吗？地点还是 Weserstrasse "
        "那家咖啡馆。\n\n李娜",
        charset="gb2312",
        cte="base64",
    )
    hz = Mail(
        berlin(2025, 8, 30, 9, 20),
        CHENJING,
        [ME],
        "杭州玩什么",
        "Jan，\n\n如果你十月来杭州，一定要去龙井村喝明前茶，从灵隐寺走过去大概一个小时，路上人很少。"
        "晚上可以去河坊街吃东西。\n\n陈静",
        cte="base64",
    )
    home += [essay, tandem, hz]
    q("crosslingual", "what did my Chinese tutor correct in my essay?", [("mail", "地跌")], lang="en>zh")
    q("cjk", "作文 哪里 说得不自然", [("mail", "我在柏林住了三年了")])
    q("cjk", "语伴 时间 改到 周三", [("mail", "每周三晚上七点")])
    q("crosslingual", "where should I go for tea in Hangzhou?", [("mail", "龙井村喝明前茶")], lang="en>zh")

    home.append(
        Mail(
            berlin(2025, 9, 20, 14, 2),
            ("携程旅行网", "noreply@ctrip.com"),
            [ME],
            "【携程】酒店预订确认单",
            "",
            html=(
                '<html><body><div class="nav"><a href="#">首页</a></div>'
                "<h2>您的酒店订单已确认</h2><p>订单号：1128834451029</p>"
                "<p>上海外滩英迪格酒店 · 高级大床房 1间</p>"
                "<p>入住 2025-09-29，离店 2025-10-01。入住时间14:00后，退房时间12:00前。</p>"
                "<p>总价：CNY 1,836（在线已付）</p><footer>携程旅行网 客服电话 95010</footer></body></html>"
            ),
            html_only=True,
            labels=("Inbox", "Reisen"),
        )
    )
    q("identifier", "1128834451029", [("mail", "1128834451029")])
    q(
        "crosslingual",
        "from what time can I check in at the Shanghai hotel?",
        [("mail", "入住时间14:00后")],
        lang="en>zh",
    )
    q("cjk", "上海 外滩 酒店 订单", [("mail", "上海外滩英迪格酒店")])

    home.append(
        Mail(
            berlin(2025, 10, 20, 16, 30),
            ("京东", "jd@jd.com"),
            [ME],
            "您的订单已发货",
            "",
            html=(
                "<html><body><p>尊敬的客户：</p><p>您在京东国际购买的 小米空气净化器 4 Lite 已发货，"
                "订单号 288716492035，收货人：张伟（上海）。</p><p>感谢您对京东的支持！</p></body></html>"
            ),
            html_only=True,
        )
    )
    q("cjk", "京东 空气净化器 发货", [("mail", "小米空气净化器")])

    home.append(
        Mail(
            berlin(2025, 4, 2, 13, 11),
            YUKI,
            [ME],
            "ベルリン訪問",
            "ヤンさん\n\nお久しぶりです！来月ベルリンに行きます。5月12日から16日まで滞在します。"
            "おすすめのレストランを教えてください。特にベトナム料理が好きです。\n\nゆき",
            cte="base64",
        )
    )
    home.append(
        Mail(
            berlin(2025, 5, 2, 8, 50),
            MINJI,
            [ME],
            "숙소 추천",
            "얀, 안녕! 다음 달에 베를린 가는데 숙소 추천해 줄 수 있어? 크로이츠베르크 근처면 좋겠어. "
            "예산은 1박에 100유로 정도야.\n\n민지",
            cte="base64",
        )
    )
    home.append(
        Mail(
            berlin(2025, 6, 18, 23, 14),
            MINJI,
            [ME],
            "고마워!",
            "베를린 여행 정말 고마웠어! 네가 추천해 준 커리부어스트 가게 이름이 뭐였지? 친구한테 알려주고 싶어.\n\n민지",
            cte="base64",
        )
    )
    q("cjk", "ゆき ベルリン 滞在 日程", [("mail", "5月12日から16日まで")])
    q("person", "when is Yuki Tanaka staying in Berlin?", [("mail", "5月12日から16日まで")])
    q("cjk", "크로이츠베르크 숙소 추천", [("mail", "크로이츠베르크 근처면 좋겠어")])
    q("cjk", "커리부어스트 가게 이름", [("mail", "커리부어스트 가게 이름이 뭐였지")])
    q("person", "what did Minji ask me after her Berlin trip?", [("mail", "커리부어스트")])

    # --- English ------------------------------------------------------------------------------
    work.append(
        Mail(
            berlin(2025, 3, 14, 18, 2),
            PRIYA,
            [("Backend", "backend@fernwerk.io")],
            "Postmortem: checkout outage on 12 March",
            "Hi all,\n\nsummary of Wednesday's incident (47 minutes of failed checkouts).\n\nRoot cause: "
            "after the 2.14 deploy the payments service opened a new database connection per request "
            "instead of using the pool. Under the lunch peak the pool maxed out and Postgres started "
            "refusing connections (SQLSTATE 53300, too_many_connections).\n\nFixes: reuse the pooled "
            "client (done), cap max_connections per pod at 20, and alert on connection count above 80 %.\n\n"
            "Review meeting is on Tuesday.\n\nPriya",
            cc=[TOM],
        )
    )
    work.append(
        Mail(
            berlin(2025, 4, 28, 11, 15),
            PRIYA,
            [("Backend", "backend@fernwerk.io")],
            "Team offsite in Lisbon, 16–18 June",
            "Hi team,\n\nthe offsite is confirmed: 16–18 June in Lisbon. We're staying at Hotel Lumen in "
            "Baixa, two people per room unless you ask otherwise. Flights are on you to book; expense "
            "them under cost centre 4410. Agenda follows.\n\nPriya",
        )
    )
    work.append(
        Mail(
            berlin(2025, 1, 10, 16, 55),
            TOM,
            [ME_WORK],
            "Übergabe Rufbereitschaft",
            "Hi Jan,\n\nkurze Übergabe für deine Woche:\n\n- DiskPressure-Alarm auf db-prod-3 (Volume zu 87 % "
            "voll), Ticket OPS-2291 ist offen.\n- Das Zertifikat für api.fernwerk.io läuft am 02.02. ab, "
            "Erneuerung ist angestoßen, bitte im Blick behalten.\n- Sonst ruhig.\n\nViel Glück,\nTom",
        )
    )
    q("paraphrase", "what took the checkout down in March?", [("mail", "the pool maxed out")])
    q(
        "paraphrase",
        "what limit did we put on database connections per pod after the incident?",
        [("mail", "cap max_connections per pod at 20")],
    )
    q("identifier", "SQLSTATE 53300", [("mail", "SQLSTATE 53300")])
    q(
        "crosslingual",
        "Ursache für den Ausfall beim Bezahlvorgang im März",
        [("mail", "Postgres started refusing connections")],
        lang="de>en",
    )
    q("paraphrase", "where are we staying for the team trip to Portugal?", [("mail", "Hotel Lumen")])
    q("crosslingual", "Wer bucht die Flüge zum Team-Offsite?", [("mail", "Flights are on you to book")], lang="de>en")
    q(
        "person",
        "Tom's on-call handover – which certificate is about to expire?",
        [("mail", "Zertifikat für api.fernwerk.io läuft am 02.02. ab")],
    )
    q(
        "filtered",
        "offsite hotel",
        [("mail", "Hotel Lumen")],
        where={"from": PRIYA[1]},
        distractors=[("calendar", "Offsite Lisbon")],
    )

    amz = ("Amazon.de", "auto-confirm@amazon.de")
    home.append(
        Mail(
            berlin(2025, 3, 2, 19, 40),
            amz,
            [ME],
            "Your Amazon.de order #302-5816634-2210744",
            "Hello Jan,\n\nThanks for your order. We'll let you know once your item has dispatched.\n\n"
            "Arriving Thursday, 6 March\n\nOrder #302-5816634-2210744\nSony WH-1000XM5 Wireless Noise "
            "Cancelling Headphones, Black – EUR 299.00\n\nDelivery address: Jan Hoffmann, Weserstraße 41, "
            "12045 Berlin",
            labels=("Inbox", "Category Updates"),
        )
    )
    q("identifier", "302-5816634-2210744", [("mail", "302-5816634-2210744"), ("browser", "302-5816634-2210744")])
    q("paraphrase", "when are my new headphones being delivered?", [("mail", "Arriving Thursday, 6 March")])
    q("crosslingual", "pedido de auriculares con cancelación de ruido", [("mail", "WH-1000XM5")], lang="es>en")

    home.append(
        Mail(
            berlin(2025, 3, 4, 7, 31),
            ("UPS", "mcinfo@ups.com"),
            [ME],
            "UPS Update: Package Scheduled for Delivery Today",
            "Hello Jan Hoffmann,\n\nYour package is scheduled for delivery today between 10:30 and 14:30.\n\n"
            "Tracking Number: 1Z4E75W80398216651\nShipper: Bergfreunde GmbH\nShip To: Weserstraße 41, "
            "12045 Berlin, DE\nNumber of Packages: 1\n\nDon't want to wait? Redirect to a UPS Access Point.",
            html=(
                '<html><body><table class="wrapper"><tr><td><nav>Tracking | Shipping | Locations</nav></td></tr>'
                "<tr><td><p>Hello Jan Hoffmann,</p><p>Your package is scheduled for delivery today between "
                "10:30 and 14:30.</p><p>Tracking Number: 1Z4E75W80398216651</p></td></tr></table></body></html>"
            ),
        )
    )
    q("identifier", "1Z4E75W80398216651", [("mail", "1Z4E75W80398216651"), ("browser", "1Z4E75W80398216651")])

    home.append(
        Mail(
            berlin(2025, 8, 19, 12, 48),
            ("Lufthansa", "booking-confirmation@lufthansa.com"),
            [ME],
            "Your booking confirmation 5XJ8PQ – Munich – Shanghai",
            "Dear Mr Hoffmann,\n\nthank you for booking with Lufthansa.\n\nBooking code: 5XJ8PQ\n\n"
            "Outbound: LH 728 Munich (MUC) – Shanghai Pudong (PVG), Sun 28 Sep 2025, departs 21:50, "
            "arrives 15:40 (+1)\nReturn: LH 729 Shanghai Pudong (PVG) – Munich (MUC), Tue 14 Oct 2025, "
            "departs 12:25, arrives 18:45\nConnecting flights Berlin – Munich: LH 1939 / LH 1946\n\n"
            "Seat: 44K (window), 1 checked bag of 23 kg\n\nHave a pleasant flight.",
            labels=("Inbox", "Reisen"),
        )
    )
    q("identifier", "LH 728", [("mail", "LH 728")])
    q("identifier", "booking 5XJ8PQ", [("mail", "5XJ8PQ")])
    q("crosslingual", "去上海的航班几点起飞？", [("mail", "departs 21:50")], lang="zh>en")

    home.append(
        Mail(
            berlin(2025, 2, 11, 15, 20),
            ("PyCon DE & PyData", "tickets@pycon.de"),
            [ME],
            "Your ticket for PyCon DE & PyData 2025",
            "Hi Jan,\n\nthis is your ticket for PyCon DE & PyData 2025 in Darmstadt, 23–25 April "
            "(darmstadtium, Schlossgraben 1).\n\nTicket ID: PCD25-8H4K-2231\nType: Business, 3 days\n\n"
            "Show the QR code at the registration desk. See you in Darmstadt!",
        )
    )
    q("identifier", "PCD25-8H4K-2231", [("mail", "PCD25-8H4K-2231")])
    q("paraphrase", "on which days is the Python conference I have a ticket for?", [("mail", "23–25 April")])
    q(
        "crosslingual",
        "billet pour la conférence Python à Darmstadt",
        [("mail", "PyCon DE & PyData 2025 in Darmstadt")],
        lang="fr>en",
    )

    gh = ("kassenbuch-dev/kassenbuch", "notifications@github.com")
    home.append(
        Mail(
            berlin(2025, 6, 5, 9, 14),
            gh,
            [ME],
            "[kassenbuch-dev/kassenbuch] CSV import fails on N26 exports with BOM (Issue #412)",
            "mkraus opened an issue (kassenbuch-dev/kassenbuch#412)\n\nImporting an N26 CSV export created "
            "after May 2025 raises KB-E021 unknown currency for every row. The file starts with a UTF-8 "
            "byte order mark, so the header is read as '\\ufeffDate'.\n\n—\nReply to this email directly, "
            "view it on GitHub: https://github.com/kassenbuch-dev/kassenbuch/issues/412",
            labels=("Inbox", "GitHub"),
        )
    )
    q("identifier", "kassenbuch issue 412", [("mail", "issues/412"), ("browser", "issues/412")])

    home.append(
        Mail(
            berlin(2025, 7, 1, 7, 2),
            ("N26", "no-reply@n26.com"),
            [ME],
            "You sent €1,120.00",
            "Hi Jan,\n\nyour standing order was executed: €1,120.00 to Ingrid Baumann, reference "
            '"Miete Juli 2025 Weserstr. 41 Hoffmann".\n\nYour N26 Team',
        )
    )

    # --- filler: notifications, newsletters, shop mails, small talk ---------------------------
    rng = s.rng
    dhl = ("DHL Paket", "noreply@dhl.de")
    used_dhl = set()
    for i in range(6):
        when = berlin(2024 + i // 4, 3 + (i % 4) * 3, 3 + i * 4, 7, 5 + i)
        while True:
            code = "JJD000390007" + "".join(rng.choice("0123456789") for _ in range(6))
            if code != "JJD000390007713245" and code not in used_dhl:
                break
        used_dhl.add(code)
        shop = ["Zalando", "Tchibo", "Thalia", "Otto", "MediaMarkt", "Decathlon"][i]
        home.append(
            Mail(
                when,
                dhl,
                [ME],
                "Ihre DHL Sendung kommt heute",
                f"Hallo Jan Hoffmann,\n\nIhre Sendung von {shop} kommt heute zwischen "
                f"{9 + i}:00 und {12 + i}:00 Uhr.\n\nSendungsnummer: {code}\n\nSie sind nicht zu Hause? "
                "Wählen Sie einen Wunschnachbarn oder eine Packstation.",
                labels=("Inbox", "Category Updates"),
            )
        )
    products = [
        "Anker USB-C Ladegerät 65W",
        "Brita Filterkartuschen 6er Pack",
        "Kindle Paperwhite Hülle",
        "Fjällräven Kånken Rucksack",
        "Bosch Akku-Bohrschrauber Ersatzakku",
        "Moleskine Notizbuch A5",
        "Logitech MX Keys Tastatur",
    ]
    for i, product in enumerate(products):
        oid = f"302-{rng.randrange(10**6, 10**7)}-{rng.randrange(10**6, 10**7)}"
        when = berlin(2024 + i % 2, 1 + (i * 5) % 12, 5 + i * 3, 20, 10 + i)
        home.append(
            Mail(
                when,
                amz,
                [ME],
                f"Your Amazon.de order #{oid}",
                f"Hello Jan,\n\nThanks for your order.\n\nOrder #{oid}\n{product} – EUR "
                f"{rng.randrange(9, 130)}.{rng.randrange(0, 99):02d}\n\nWe'll let you know once your item has dispatched.",
                labels=("Inbox", "Category Updates"),
            )
        )
    letters = [
        (
            ("Tagesspiegel Checkpoint", "checkpoint@tagesspiegel.de"),
            "de",
            [
                "Checkpoint: Neue Radwege in Neukölln",
                "Checkpoint: BVG-Streik am Freitag",
                "Checkpoint: Wohnungsmarkt – Mieten steigen weiter",
                "Checkpoint: Was Berlin am Wochenende macht",
            ],
            "Guten Morgen, Berlin! Heute im Checkpoint: {t}. Außerdem: Baustellen der Woche, ein "
            "Restaurant-Tipp in Schöneberg und das Wetter – wechselhaft, 14 Grad.",
        ),
        (
            ("heise Developer", "newsletter@heise.de"),
            "de",
            [
                "Python 3.14: Die Neuerungen im Überblick",
                "Kubernetes 1.33 ist da",
                "Rust im Linux-Kernel",
                "TypeScript 5.8 mit schnelleren Checks",
            ],
            "Die Themen der Woche: {t}. Dazu: Sicherheitslücken, die Sie kennen sollten, und neue "
            "Kurse der heise Academy.",
        ),
        (
            ("Le Monde", "lamatinale@lemonde.fr"),
            "fr",
            [
                "La Matinale : la réforme des retraites",
                "La Matinale : canicule dans le sud",
                "La Matinale : élections européennes",
            ],
            "Bonjour, voici l'essentiel de l'actualité ce matin : {t}. Bonne lecture.",
        ),
        (
            ("EL PAÍS", "newsletter@elpais.es"),
            "es",
            ["Lo más leído: la sequía en Andalucía", "Lo más leído: vivienda en Madrid"],
            "Buenos días. Estas son las noticias del día: {t}.",
        ),
        (
            ("知乎日报", "daily@zhihu.com"),
            "zh",
            ["为什么德国人喜欢用现金？", "如何高效学习一门外语？", "高铁为什么这么准时？"],
            "今日推荐：{t} 点击阅读全文。",
        ),
        (
            ("The Pragmatic Engineer", "gergely@pragmaticengineer.com"),
            "en",
            ["The state of on-call in 2025", "How Stripe does code review", "Inside a platform team"],
            "This week: {t}. Plus: what senior engineers do differently, and a reader question about switching teams.",
        ),
        (
            ("Strava", "no-reply@strava.com"),
            "en",
            [
                "Your weekly summary: 3 runs, 21.4 km",
                "Your weekly summary: 2 runs, 14.0 km",
                "Your weekly summary: 4 runs, 31.2 km",
            ],
            "{t}. Keep it up, Jan! Your longest activity this week was a run along the Landwehrkanal.",
        ),
        (
            ("Meetup", "info@meetup.com"),
            "en",
            ["Berlin Python User Group: DuckDB in practice", "Rust Berlin: async without tears"],
            "New event: {t}. Thursday, 19:00 at c-base. 48 members are going.",
        ),
        (
            ("BVG", "newsletter@bvg.de"),
            "de",
            ["U7: Bauarbeiten zwischen Hermannplatz und Rudow", "Deutschlandticket: Preis ab Januar"],
            "Liebe Fahrgäste, {t}. Alle Infos finden Sie in der BVG-App.",
        ),
    ]
    k = 0
    for frm, _lang, titles, template in letters:
        for t in titles:
            k += 1
            when = berlin(2024 + (k % 2), 1 + (k * 5) % 12, 1 + (k * 7) % 27, 6, 30)
            body = template.format(t=t)
            html = (
                f"<html><head><style>.x{{color:#333}}</style><script>track('{_h(t, n=4)}')</script></head>"
                f'<body><header><a href="#">{escape(frm[0])}</a></header><nav><a href="#">Home</a></nav>'
                f"<main><h1>{escape(t)}</h1><p>{escape(body)}</p></main>"
                f"<footer><p>Abbestellen / Unsubscribe</p></footer></body></html>"
            )
            home.append(
                Mail(when, frm, [ME], t, "", html=html, html_only=True, labels=("Inbox", "Category Promotions"))
            )
    for i in range(4):
        when = berlin(2024 + i // 2, 3 + i * 2, 14, 9, 0)
        home.append(
            Mail(
                when,
                ("Spotify", "no-reply@spotify.com"),
                [ME],
                "Your Spotify Premium receipt",
                f"Hi Jan,\n\nthanks for your payment of €10.99 for Spotify Premium Individual "
                f"({when:%B %Y}).\n\nOrder number: {rng.randrange(10**9, 10**10)}",
            )
        )
    issues = [
        (397, "Add categories for Deutschlandticket bookings"),
        (401, "Docs: explain tolerance_cents"),
        (405, "Web: budget chart shows NaN for empty months"),
        (409, "Support Sparkasse CAMT.053 files"),
        (418, "Strip UTF-8 BOM before sniffing CSV dialect"),
    ]
    for n, title in issues:
        when = berlin(2025, 4 + n % 5, 2 + n % 25, 10, n % 60)
        kind = "pull request" if n == 418 else "issue"
        home.append(
            Mail(
                when,
                gh,
                [ME],
                f"[kassenbuch-dev/kassenbuch] {title} (#{n})",
                f"mkraus opened a {kind} (kassenbuch-dev/kassenbuch#{n}): {title}.\n\n—\nReply to this "
                f"email directly or view it on GitHub.",
                labels=("Inbox", "GitHub"),
            )
        )
    for i in range(5):
        when = berlin(2025, 1 + i * 2, 28, 8, 0)
        work.append(
            Mail(
                when,
                ("Fernwerk Personal", "lohn@fernwerk.io"),
                [ME_WORK],
                f"Entgeltabrechnung {when:%m/%Y}",
                f"Hallo Jan,\n\nanbei deine Entgeltabrechnung für {when:%m/%Y}.\n\nViele Grüße\nPersonalabteilung",
                attachments=[
                    (
                        f"Entgeltabrechnung_{when:%Y_%m}.pdf",
                        "application/pdf",
                        make_pdf([[f"Entgeltabrechnung {when:%m/%Y}", "Fernwerk GmbH"]]),
                    )
                ],
            )
        )
    jira = [
        "OPS-2291 DiskPressure on db-prod-3",
        "BE-1180 Retry webhooks with backoff",
        "BE-1193 Remove legacy invoice endpoint",
        "BE-1201 Upgrade to Postgres 16",
        "BE-1210 Flaky test in payments suite",
        "OPS-2302 Rotate API certificates",
    ]
    for i, t in enumerate(jira):
        when = berlin(2025, 1 + i * 2, 6 + i, 11, 30)
        work.append(
            Mail(
                when,
                ("Jira", "jira@fernwerk.atlassian.net"),
                [ME_WORK],
                f"[JIRA] {t}",
                f"Priya Nair assigned {t.split()[0]} to you.\n\nSummary: {t.split(' ', 1)[1]}\nPriority: Medium",
            )
        )
    smalltalk = [
        (
            berlin(2024, 5, 11, 10, 0),
            SOPHIE,
            "Samstag Markt?",
            "Gehen wir morgen auf den Maybachufer-Markt? Ich brauch Erdbeeren für den Kuchen.",
        ),
        (
            berlin(2024, 9, 30, 18, 0),
            FELIX,
            "Umzugspläne",
            "Ich such jetzt ernsthaft was Eigenes. Neukölln oder Wedding, mal sehen, was bezahlbar ist.",
        ),
        (berlin(2025, 1, 29, 9, 0), WEI, "新年快乐", "Jan，新年快乐！蛇年大吉，身体健康！\n\n张伟"),
        (
            berlin(2024, 6, 20, 20, 0),
            CAMILLE,
            "Fête de la musique",
            "Tu étais où hier soir ? On t'a cherché partout au Mauerpark !",
        ),
    ]
    conf = Mail(
        berlin(2025, 10, 27, 16, 40),
        ME_WORK,
        [PRIYA],
        "Conference budget 2026",
        "Hi Priya,\n\nwould the team budget cover PyCon DE 2026 if my talk on reconciling bank exports gets "
        "accepted? The CfP closes on 21 December.\n\nThanks,\nJan",
        labels=("Sent",),
    )
    conf_re = Mail(
        berlin(2025, 10, 28, 9, 12),
        PRIYA,
        [ME_WORK],
        "Re: Conference budget 2026",
        "Yes, go ahead and submit the talk. The budget covers one conference per person next year, travel "
        "included; book through the travel portal once it is accepted.\n\nPriya",
        reply_to=conf,
        quote="en",
    )
    work += [conf, conf_re]
    q(
        "person",
        "what did Priya say about paying for a conference next year?",
        [("mail", "one conference per person next year")],
    )
    for when, frm, subject, body in smalltalk:
        target = work if frm == PRIYA else home
        target.append(
            Mail(when, frm, [ME_WORK if frm == PRIYA else ME], subject, body, cte="base64" if frm == WEI else "8bit")
        )

    s.file("mail/Takeout/Mail/All mail Including Spam and Trash.mbox", _mbox(home))
    for m in sorted(work, key=lambda m: m.when):  # a Maildir++ tree as mbsync/Dovecot keep it
        stamp = int(m.when.timestamp())
        raw = _render_mail(m, gmail=False)
        name = f"{stamp}.M{int(_h(m.mid, n=3), 16)}P{4000 + stamp % 997}.fernwerk-laptop,S={len(raw)}:2,S"
        folder = ".Sent/" if "Sent" in m.labels else ""
        s.file(f"mail/fernwerk/{folder}cur/{name}", raw, m.when)
    s.file("mail/fernwerk/new/.keep", b"")
    s.file("mail/fernwerk/tmp/.keep", b"")


# ============================================================================ browser


def _visits(rng: random.Random, first: datetime, n: int, spread_days: int = 20) -> list[datetime]:
    out = [first]
    for _ in range(n - 1):
        out.append(first + timedelta(days=rng.randrange(0, spread_days + 1), minutes=rng.randrange(1, 600)))
    return sorted(out)


_WIKI = [
    ("de", "Tempelhofer_Feld", "Tempelhofer Feld – Wikipedia"),
    ("de", "Neukölln", "Berlin-Neukölln – Wikipedia"),
    ("de", "Indexmiete", "Indexmiete – Wikipedia"),
    ("de", "Betriebskosten", "Betriebskosten – Wikipedia"),
    ("de", "Celle", "Celle – Wikipedia"),
    ("de", "Sauerteig", "Sauerteig – Wikipedia"),
    ("de", "Deutschlandticket", "Deutschlandticket – Wikipedia"),
    ("de", "Tocotronic", "Tocotronic – Wikipedia"),
    ("de", "Spätzle", "Spätzle – Wikipedia"),
    ("de", "Frühsommer-Meningoenzephalitis", "Frühsommer-Meningoenzephalitis – Wikipedia"),
    ("en", "Huangshan", "Huangshan - Wikipedia"),
    ("en", "Fallas", "Falles - Wikipedia"),
    ("en", "Paella", "Paella - Wikipedia"),
    ("en", "Tarte_Tatin", "Tarte Tatin - Wikipedia"),
    ("en", "Monstera_deliciosa", "Monstera deliciosa - Wikipedia"),
    ("en", "Half_marathon", "Half marathon - Wikipedia"),
    ("en", "Connection_pool", "Connection pool - Wikipedia"),
    ("en", "Byte_order_mark", "Byte order mark - Wikipedia"),
    ("en", "International_Bank_Account_Number", "International Bank Account Number - Wikipedia"),
    ("en", "Out_of_memory", "Out of memory - Wikipedia"),
    ("en", "Habit_stacking", "Habit formation - Wikipedia"),
    ("en", "Lisbon", "Lisbon - Wikipedia"),
    ("en", "Hangzhou", "Hangzhou - Wikipedia"),
    ("en", "Picos_de_Europa", "Picos de Europa - Wikipedia"),
    ("en", "Longjing_tea", "Longjing tea - Wikipedia"),
    ("fr", "Chaponost", "Chaponost — Wikipédia"),
    ("fr", "Lyon", "Lyon — Wikipédia"),
    ("fr", "Le_Panier_(Marseille)", "Le Panier — Wikipédia"),
    ("fr", "Bouchon_lyonnais", "Bouchon lyonnais — Wikipédia"),
    ("es", "Mascletà", "Mascletà - Wikipedia, la enciclopedia libre"),
    ("es", "Socarrat", "Socarrat - Wikipedia, la enciclopedia libre"),
    ("es", "Diploma_de_Español_como_Lengua_Extranjera", "Diploma de Español como Lengua Extranjera - Wikipedia"),
    ("zh", "黄山", "黄山 - 维基百科，自由的百科全书"),
    ("zh", "西湖", "西湖 - 维基百科，自由的百科全书"),
    ("zh", "中秋节", "中秋节 - 维基百科，自由的百科全书"),
    ("zh", "余华", "余华 - 维基百科，自由的百科全书"),
    ("zh", "声调", "声调 - 维基百科，自由的百科全书"),
    ("zh", "外滩", "外滩 - 维基百科，自由的百科全书"),
]
_SO = [
    "How do I parse a CSV file with a semicolon delimiter in pandas?",
    "What is the difference between asyncio.gather and asyncio.wait?",
    "TypeScript: how to type a React hook that returns a tuple",
    "Postgres: how to see open connections per database",
    "How to set a memory limit for a Kubernetes pod",
    "Python dataclass default factory for a list",
    "git: undo the last commit but keep the changes",
    "How to format a number as currency in JavaScript (Intl.NumberFormat)",
    "SQLAlchemy: pool_size vs max_overflow",
    "Why does Decimal('0.1') + Decimal('0.2') equal 0.3 but floats do not?",
    "How to read a UTF-16 file in Python",
    "Jest: mock a module only in one test",
    "What does the '??' operator do in TypeScript?",
    "How to detect the delimiter of a CSV file in Python (csv.Sniffer)",
    "Docker: container exits immediately with code 0",
    "Python: sort a list of dicts by a key",
    "How to validate an IBAN in JavaScript",
    "React: useEffect runs twice in development",
    "Go: how to read a file line by line",
    "Rust: how to convert a String to &str",
    "PostgreSQL: upsert with ON CONFLICT DO UPDATE",
    "How to make pytest show print output",
    "Vite: environment variables are undefined",
    "How to split a pandas DataFrame by month",
]
_GH = [
    ("astral-sh/uv", "GitHub - astral-sh/uv: An extremely fast Python package and project manager, written in Rust."),
    ("pola-rs/polars", "GitHub - pola-rs/polars: Dataframes powered by a multithreaded, vectorized query engine"),
    ("duckdb/duckdb", "GitHub - duckdb/duckdb: DuckDB is an analytical in-process SQL database management system"),
    ("tiangolo/fastapi", "GitHub - fastapi/fastapi: FastAPI framework, high performance, easy to learn"),
    ("vitejs/vite", "GitHub - vitejs/vite: Next generation frontend tooling. It's fast!"),
    ("kassenbuch-dev/kassenbuch", "GitHub - kassenbuch-dev/kassenbuch: Bank CSV imports and budgets for households"),
    ("pgbouncer/pgbouncer", "GitHub - pgbouncer/pgbouncer: lightweight connection pooler for PostgreSQL"),
    (
        "tree-sitter/tree-sitter",
        "GitHub - tree-sitter/tree-sitter: An incremental parsing system for programming tools",
    ),
    ("python-oracledb/python-oracledb", "GitHub - oracle/python-oracledb: Python driver for Oracle Database"),
    ("BurntSushi/ripgrep", "GitHub - BurntSushi/ripgrep: ripgrep recursively searches directories for a regex pattern"),
    ("mealie-recipes/mealie", "GitHub - mealie-recipes/mealie: Mealie is a self hosted recipe manager"),
    (
        "immich-app/immich",
        "GitHub - immich-app/immich: High performance self-hosted photo and video management solution",
    ),
]
_YT = [
    "How to shape a sourdough boule (step by step)",
    "Tocotronic – Hi Freaks (Live im Astra)",
    "Huangshan sunrise timelapse 4K",
    "Learn Chinese tones in 10 minutes",
    "DELE B2 – Prueba oral: consejos y ejemplo",
    "Valencia Fallas 2024 – Mascletà completa",
    "Kubernetes in 100 seconds",
    "PostgreSQL connection pooling explained",
    "Rust ownership explained for Python developers",
    "Käsespätzle wie bei Oma",
    "Tarte Tatin – la recette inratable",
    "Paella valenciana auténtica – receta paso a paso",
    "Half marathon training: the long run",
    "Monstera care: yellow leaves?",
    "Bike touring on the Elbe cycle route",
    "Berlin Neukölln walking tour",
    "Shanghai Bund at night 4K walk",
    "Lisbon in 3 days – travel guide",
    "TypeScript generics in 12 minutes",
    "Kubernetes resource limits explained",
    "How to change a bike chain",
    "Französisch lernen: 50 Sätze für den Alltag",
]
_SEARCH = [
    "wetter berlin wochenende",
    "bvg störung u7",
    "flug berlin valencia märz",
    "huangshan weather october",
    "tarte tatin rezept",
    "mietminderung heizung ausgefallen",
    "dele b2 modelo examen",
    "fsme impfung berlin hausarzt",
    "python csv sniffer bom",
    "postgres too many connections",
    "kubernetes pod memory limit",
    "lisbon baixa restaurants",
    "chaponost domaine des tilleuls",
    "lisbon alfama fado",
    "shanghai pudong airport to hongqiao",
    "黄山北站 到 汤口 大巴",
    "黄山 北海宾馆",
    "龙井村 怎么去",
    "sixt transporter karl-marx-straße",
    "tocotronic columbiahalle tickets",
    "babylon mitte programm",
    "gasthaus zur linde celle",
    "nebenkostenabrechnung prüfen hausmeister",
    "indexmiete vpi rechner",
    "spätzle ohne spätzlepresse",
    "socarrat paella",
    "monstera gelbe blätter",
    "halbmarathon berlin 2026 anmeldung",
    "typescript narrowing undefined",
    "python asyncio taskgroup example",
    "n26 csv export format",
    "sparkasse camt.053",
    "elbe radweg etappen",
    "vietnamesisch essen berlin neukölln",
    "currywurst kreuzberg",
    "ummeldung berlin termin",
    "wohnungsgeberbestätigung vorlage",
    "bahncard 25 preis",
]
_NEWS = [
    (
        "www.tagesschau.de",
        "inland",
        [
            "Bundestag beschließt Haushalt 2025",
            "Bahnstreik: Was Fahrgäste wissen müssen",
            "Mietpreisbremse wird verlängert",
            "Neue Regeln für Balkonkraftwerke",
        ],
    ),
    (
        "www.spiegel.de",
        "wirtschaft",
        [
            "Energiepreise: Netzentgelte steigen 2025",
            "Wie sicher ist das Deutschlandticket?",
            "Warum Wohnen in Berlin so teuer bleibt",
        ],
    ),
    (
        "www.theguardian.com",
        "world",
        [
            "China's high-speed rail network explained",
            "Valencia floods: one year on",
            "Lisbon's housing crisis",
            "The rise of remote work in Europe",
        ],
    ),
    ("www.lemonde.fr", "societe", ["Lyon : la Fête des lumières revient", "Marseille : le Panier face au tourisme"]),
    ("elpais.com", "espana", ["Las Fallas, patrimonio de la humanidad", "El precio del alquiler en Valencia"]),
    ("www.zeit.de", "kultur", ["Tocotronic: Die Band, die nicht alt wird", "Sauerteig – der Trend, der bleibt"]),
    ("netzpolitik.org", "2025", ["Digitale Verwaltung: Termine beim Bürgeramt", "Chatkontrolle: Der Stand der Dinge"]),
]
_SHOP = [
    ("www.amazon.de", "Sony WH-1000XM5 Kabellose Noise Cancelling Kopfhörer : Amazon.de: Elektronik"),
    ("www.amazon.de", "Ortlieb Back-Roller Classic Fahrradtaschen : Amazon.de: Sport & Freizeit"),
    ("www.amazon.de", "Brita Marella Wasserfilter : Amazon.de: Küche"),
    ("www.bergfreunde.de", "Therm-a-Rest NeoAir XLite NXT Isomatte | Bergfreunde.de"),
    ("www.bergfreunde.de", "MSR Hubba Hubba 2 Zelt | Bergfreunde.de"),
    ("www.rosebikes.de", "ROSE BACKROAD AL GRX RX610 | ROSE Bikes"),
    ("www.idealo.de", "Monstera Pflanzerde 10 l Preisvergleich | idealo"),
    ("www.decathlon.de", "Laufschuhe Kiprun KD900 Herren | Decathlon"),
    ("www.thalia.de", "Atomic Habits von James Clear – Buch | Thalia"),
    ("www.thalia.de", "Der Circle – Buch | Thalia"),
    ("www.mediamarkt.de", "FRITZ!Box 7590 AX | MediaMarkt"),
    ("www.otto.de", "Bosch Waschmaschine Serie 6 | OTTO"),
]
_RECIPES = [
    ("www.chefkoch.de", "Käsespätzle Rezept | Chefkoch"),
    ("www.chefkoch.de", "Kartoffelsalat mit Brühe | Chefkoch"),
    ("www.chefkoch.de", "Roggenmischbrot mit Sauerteig | Chefkoch"),
    ("www.marmiton.org", "Tarte Tatin facile : la recette | Marmiton"),
    ("www.recetasgratis.net", "Paella valenciana – Receta tradicional"),
    ("www.xiachufang.com", "红烧肉的做法 - 下厨房"),
    ("www.seriouseats.com", "Shakshuka Recipe | Serious Eats"),
    ("www.bbcgoodfood.com", "Halloumi couscous salad | BBC Good Food"),
]
_DOCS = [
    ("docs.python.org", "/3/library/csv.html", "csv — CSV File Reading and Writing — Python 3.13 documentation"),
    ("docs.python.org", "/3/library/asyncio-task.html", "Coroutines and Tasks — Python 3.13 documentation"),
    ("docs.python.org", "/3/library/decimal.html", "decimal — Decimal fixed-point and floating-point arithmetic"),
    ("docs.python.org", "/3/library/dataclasses.html", "dataclasses — Data Classes — Python 3.13 documentation"),
    ("docs.python.org", "/3/library/zoneinfo.html", "zoneinfo — IANA time zone support"),
    (
        "developer.mozilla.org",
        "/en-US/docs/Web/JavaScript/Reference/Global_Objects/Intl/NumberFormat",
        "Intl.NumberFormat - JavaScript | MDN",
    ),
    ("developer.mozilla.org", "/en-US/docs/Web/API/Fetch_API/Using_Fetch", "Using the Fetch API - Web APIs | MDN"),
    ("developer.mozilla.org", "/en-US/docs/Web/HTTP/Status/429", "429 Too Many Requests - HTTP | MDN"),
    ("www.typescriptlang.org", "/docs/handbook/2/narrowing.html", "TypeScript: Documentation - Narrowing"),
    ("www.typescriptlang.org", "/docs/handbook/2/generics.html", "TypeScript: Documentation - Generics"),
    ("react.dev", "/reference/react/useEffect", "useEffect – React"),
    (
        "doc.rust-lang.org",
        "/book/ch07-04-bringing-paths-into-scope-with-the-use-keyword.html",
        "Bringing Paths into Scope with the use Keyword - The Rust Programming Language",
    ),
    ("pandas.pydata.org", "/docs/reference/api/pandas.read_csv.html", "pandas.read_csv — pandas 2.2.3 documentation"),
]
_MISC = [
    ("www.bahn.de", "/buchung/fahrplan/suche", "DB Fahrplanauskunft – Berlin Hbf → München Hbf"),
    ("www.bvg.de", "/de/verbindungen/stoerungsmeldungen", "Störungsmeldungen | BVG"),
    ("service.berlin.de", "/dienstleistung/120686/", "Anmeldung einer Wohnung - Service Berlin"),
    ("www.elster.de", "/eportal/start", "Mein ELSTER – Start"),
    ("www.n26.com", "/de-de/online-banking", "N26 Online-Banking"),
    ("www.dwd.de", "/DE/wetter/wetterundklima_vorort/berlin_brandenburg/berlin/_node.html", "Wetter Berlin | DWD"),
    ("www.berliner-halbmarathon.de", "/anmeldung", "Anmeldung | GENERALI BERLINER HALBMARATHON"),
    ("www.columbiahalle.berlin", "/programm", "Programm | Columbiahalle"),
    ("www.babylonberlin.eu", "/programm", "Programm | Babylon"),
    ("www.lufthansa.com", "/de/de/meine-buchungen", "Meine Buchungen | Lufthansa"),
    ("www.vueling.com", "/es/gestiona-tu-reserva", "Gestiona tu reserva | Vueling"),
    ("www.ouigo.com", "/mes-reservations", "Mes réservations | OUIGO"),
    ("www.12306.cn", "/index/", "中国铁路12306"),
    ("www.ctrip.com", "/hotels/shanghai", "上海酒店预订 - 携程"),
    ("www.dianping.com", "/shanghai/ch10/g110", "上海火锅 - 大众点评网"),
    ("news.ycombinator.com", "/news", "Hacker News"),
    ("www.reddit.com", "/r/berlin/", "Berlin"),
    ("www.reddit.com", "/r/Sourdough/", "Sourdough"),
    ("www.reddit.com", "/r/ChineseLanguage/", "Chinese Language"),
    ("www.reddit.com", "/r/bikepacking/", "Bikepacking"),
    ("www.deepl.com", "/translator", "DeepL Translate: The world's most accurate translator"),
    ("www.pleco.com", "/", "Pleco Chinese Dictionary"),
    ("www.duolingo.com", "/learn", "Duolingo"),
    ("mail.google.com", "/mail/u/0/", "Posteingang – jan.hoffmann@posteo.de"),
    ("www.fritz.box", "/", "FRITZ!Box"),
    ("www.komoot.com", "/de-de/tour/1849271044", "Elberadweg Etappe Dresden – Meißen | komoot"),
]


def _browser(s: _Set) -> None:
    q, rng = s.q, s.rng
    chrome: list[tuple[str, str, list[datetime]]] = []
    firefox: list[tuple[str, str, list[datetime], str | None]] = []

    seen: set[tuple[str, str]] = set()

    def c(url: str, title: str, first: datetime, n: int = 1, spread: int = 3) -> None:
        visits = _visits(rng, first, n, spread)
        if ("c", url) not in seen:
            seen.add(("c", url))
            chrome.append((url, title, visits))

    # --- judged pages -------------------------------------------------------------------------
    c(
        "https://www.dhl.de/de/privatkunden/pakete-empfangen/verfolgen.html?piececode=JJD000390007713245",
        "Sendungsverfolgung | DHL",
        berlin(2025, 10, 14, 8, 12),
        2,
        1,
    )
    for code, when in (
        ("JJD000390007120884", berlin(2024, 6, 3)),
        ("JJD000390007559013", berlin(2024, 11, 20)),
        ("JJD000390007304471", berlin(2025, 4, 8)),
        ("JJD000390007987116", berlin(2025, 12, 9)),
    ):
        c(
            f"https://www.dhl.de/de/privatkunden/pakete-empfangen/verfolgen.html?piececode={code}",
            "Sendungsverfolgung | DHL",
            when,
            1,
        )
    q("identifier", "JJD000390007713245", [("browser", "JJD000390007713245"), ("imessage", "JJD000390007713245")])
    q(
        "filtered",
        "DHL Sendungsverfolgung",
        [("browser", "JJD000390007713245")],
        where={"domain": "dhl.de"},
        after="2025-10-01",
        before="2025-11-01",
        distractors=[("browser", "JJD000390007304471"), ("browser", "JJD000390007987116")],
    )
    c(
        "https://www.ups.com/track?loc=de_DE&tracknum=1Z4E75W80398216651&requester=ST/trackdetails",
        "Tracking | UPS - Germany",
        berlin(2025, 3, 3, 21, 40),
        3,
        1,
    )
    c(
        "https://www.amazon.de/gp/your-account/order-details?ie=UTF8&orderID=302-5816634-2210744",
        "Bestelldetails",
        berlin(2025, 3, 5, 12, 2),
        2,
        1,
    )
    c(
        "https://github.com/kassenbuch-dev/kassenbuch/issues/412",
        "CSV import fails on N26 exports with BOM · Issue #412 · kassenbuch-dev/kassenbuch",
        berlin(2025, 6, 5, 9, 20),
        3,
        2,
    )
    c(
        "https://github.com/kassenbuch-dev/kassenbuch/pull/418",
        "Strip UTF-8 BOM before sniffing CSV dialect by mkraus · Pull Request #418 · kassenbuch-dev/kassenbuch",
        berlin(2025, 6, 9, 18, 5),
        2,
        1,
    )
    c(
        "https://stackoverflow.com/questions/34399172/python-remove-bom-from-csv-file",
        "Python: remove the BOM (byte order mark) when reading a CSV file - Stack Overflow",
        berlin(2025, 6, 5, 9, 41),
        1,
    )
    q(
        "filtered",
        "pull request that strips the byte order mark in the CSV importer",
        [("browser", "pull/418")],
        where={"domain": "github.com"},
        distractors=[("browser", "python-remove-bom-from-csv-file")],
    )
    c(
        "https://www.google.com/search?q=rust+E0433+failed+to+resolve+use+of+undeclared+crate+or+module&oq=rust+E0433",
        "rust E0433 failed to resolve use of undeclared crate or module - Google Suche",
        berlin(2025, 1, 19, 22, 3),
        1,
    )
    c("https://doc.rust-lang.org/error_codes/E0433.html", "E0433 - Error codes index", berlin(2025, 1, 19, 22, 4), 2, 1)
    q("identifier", "E0433", [("browser", "E0433")])
    c(
        "https://stackoverflow.com/questions/25541081/ora-12154-tns-could-not-resolve-the-connect-identifier-specified",
        "ORA-12154: TNS:could not resolve the connect identifier specified - Stack Overflow",
        berlin(2024, 11, 6, 14, 30),
        2,
        1,
    )
    q("identifier", "ORA-12154", [("browser", "ORA-12154"), ("chatgpt", "ORA-12154")])
    c(
        "https://www.google.com/search?q=ERR_SSL_VERSION_OR_CIPHER_MISMATCH+chrome+fritzbox",
        "ERR_SSL_VERSION_OR_CIPHER_MISMATCH chrome fritzbox - Google Suche",
        berlin(2024, 8, 18, 20, 55),
        1,
    )
    q("identifier", "ERR_SSL_VERSION_OR_CIPHER_MISMATCH", [("browser", "ERR_SSL_VERSION_OR_CIPHER_MISMATCH")])
    c(
        "https://www.immobilienscout24.de/expose/148203317",
        "3-Zimmer-Wohnung mit Balkon in Friedrichshain, 82 m², 1.640 € warm | ImmoScout24",
        berlin(2024, 2, 11, 21, 0),
        3,
        6,
    )
    c(
        "https://www.immobilienscout24.de/expose/157730962",
        "2,5-Zimmer-Altbauwohnung mit Balkon in Neukölln, 64 m², 1.090 € warm | ImmoScout24",
        berlin(2025, 5, 2, 22, 10),
        2,
        4,
    )
    q(
        "filtered",
        "ImmoScout Wohnung mit Balkon",
        [("browser", "expose/157730962")],
        where={"domain": "immobilienscout24.de"},
        after="2025-01-01",
        distractors=[("browser", "expose/148203317")],
    )
    c(
        "https://www.google.com/maps/place/Domaine+des+Tilleuls,+Chaponost/@45.7102,4.7421,15z",
        "Domaine des Tilleuls · Chaponost – Google Maps",
        berlin(2025, 6, 30, 20, 0),
        2,
        5,
    )
    c(
        "https://github.com/kassenbuch-dev/kassenbuch/issues/405",
        "Web: budget chart shows NaN for empty months · Issue #405 · kassenbuch-dev/kassenbuch",
        berlin(2025, 5, 3, 10, 0),
        1,
    )

    # --- filler -------------------------------------------------------------------------------
    start = datetime(2024, 1, 8, 9, tzinfo=BERLIN)
    span = (datetime(2026, 1, 31, tzinfo=BERLIN) - start).days

    def filler_time() -> datetime:
        return start + timedelta(days=rng.randrange(span), minutes=rng.randrange(0, 14 * 60))

    def n() -> int:
        return rng.choice((1, 1, 1, 2, 2, 3, 5))

    for lang, slug, title in _WIKI:
        c(f"https://{lang}.wikipedia.org/wiki/{slug}", title, filler_time(), n(), 30)
    for _i, title in enumerate(_SO):
        slug = "-".join("".join(ch if ch.isalnum() else " " for ch in title.lower()).split())[:70].strip("-")
        c(
            f"https://stackoverflow.com/questions/{rng.randrange(2_000_000, 79_000_000)}/{slug}",
            f"{title} - Stack Overflow",
            filler_time(),
            n(),
            10,
        )
    for repo, title in _GH:
        c(f"https://github.com/{repo}", title, filler_time(), n(), 60)
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    for title in _YT:
        vid = "".join(rng.choice(alphabet) for _ in range(11))
        c(f"https://www.youtube.com/watch?v={vid}", f"{title} - YouTube", filler_time(), n(), 5)
    for term in _SEARCH:
        c("https://www.google.com/search?q=" + "+".join(term.split()), f"{term} - Google Suche", filler_time(), 1)
    for host, section, titles in _NEWS:
        for title in titles:
            slug = "-".join("".join(ch if ch.isalnum() else " " for ch in title.lower()).split())[:60]
            c(f"https://{host}/{section}/{slug}-{rng.randrange(100000, 999999)}", title, filler_time(), 1)
    for host, title in _SHOP:
        path = (
            f"/dp/B0{''.join(rng.choice('ABCDEFGHJKLMNPQRSTUVWXYZ0123456789') for _ in range(8))}"
            if "amazon" in host
            else f"/p/{rng.randrange(10**6, 10**7)}"
        )
        c(f"https://{host}{path}", title, filler_time(), n(), 7)
    for host, title in _RECIPES:
        c(f"https://{host}/rezept/{rng.randrange(10**5, 10**6)}", title, filler_time(), n(), 40)
    for host, path, title in _DOCS:
        c(f"https://{host}{path}", title, filler_time(), n(), 90)
    for host, path, title in _MISC:
        c(f"https://{host}{path}", title, filler_time(), rng.choice((1, 3, 6, 12)), 200)
    for _i in range(12):
        item = rng.randrange(38_000_000, 43_000_000)
        c(
            f"https://news.ycombinator.com/item?id={item}",
            rng.choice(
                [
                    "Show HN: A local-first budget app",
                    "Ask HN: How do you organise personal notes?",
                    "The case for boring technology",
                    "SQLite as an application file format",
                    "Why Postgres connection pooling matters",
                    "Show HN: I built a Chinese flashcard app",
                    "Launch HN: A CSV import API",
                    "Europe's night trains are back",
                ]
            )
            + " | Hacker News",
            filler_time(),
            1,
        )

    # --- Firefox: the work profile --------------------------------------------------------------
    def f(url: str, title: str, first: datetime, k: int = 1, desc: str | None = None, spread: int = 5) -> None:
        visits = _visits(rng, first, k, spread)
        if ("f", url) not in seen:
            seen.add(("f", url))
            firefox.append((url, title, visits, desc))

    f(
        "https://www.travelchinaguide.com/attraction/anhui/huangshan/cable-car.htm",
        "Huangshan Cable Cars: Yungu, Taiping, Yuping – Prices & Hours",
        berlin(2025, 9, 11, 13, 0),
        2,
        "Three cable cars serve the Yellow Mountain; queues are longest in Golden Week.",
    )
    f(
        "https://kubernetes.io/docs/concepts/configuration/manage-resources-containers/",
        "Resource Management for Pods and Containers | Kubernetes",
        berlin(2025, 2, 20, 10, 0),
        4,
        "When you specify a Pod, you can optionally specify how much of each resource a container needs.",
        60,
    )
    f(
        "https://www.postgresql.org/docs/16/runtime-config-connection.html",
        "PostgreSQL: Documentation: 16: 19.3. Connections and Authentication",
        berlin(2025, 3, 12, 13, 20),
        3,
        None,
        3,
    )
    f(
        "https://www.pgbouncer.org/config.html",
        "PgBouncer config",
        berlin(2025, 3, 13, 9, 0),
        2,
        "Lightweight connection pooler for PostgreSQL: pool_mode, default_pool_size, max_client_conn.",
        2,
    )
    f(
        "https://fernwerk.atlassian.net/wiki/spaces/BE/pages/PM-2025-03",
        "Postmortem 2025-03-12 Checkout outage - Backend - Confluence",
        berlin(2025, 3, 14, 16, 0),
        4,
        None,
        6,
    )
    f(
        "https://fernwerk.atlassian.net/browse/OPS-2291",
        "[OPS-2291] DiskPressure on db-prod-3 - Jira",
        berlin(2025, 1, 13, 9, 10),
        3,
    )
    f(
        "https://grafana.fernwerk.io/d/pg-overview/postgres-overview?orgId=1&var-instance=db-prod-3",
        "Postgres overview - Dashboards - Grafana",
        berlin(2025, 1, 13, 9, 30),
        6,
        None,
        60,
    )
    f(
        "https://python-oracledb.readthedocs.io/en/latest/user_guide/connection_handling.html",
        "4. Connecting to Oracle Database — python-oracledb documentation",
        berlin(2024, 11, 6, 14, 50),
        2,
        "Connection strings, tnsnames.ora and the config_dir parameter in Thin mode.",
        1,
    )
    for _i in range(40):
        ticket = rng.choice(["BE", "OPS"]) + f"-{rng.randrange(1000, 2400)}"
        f(
            f"https://fernwerk.atlassian.net/browse/{ticket}",
            f"[{ticket}] "
            + rng.choice(
                [
                    "Retry webhooks with backoff",
                    "Flaky test in payments suite",
                    "Upgrade to Postgres 16",
                    "Rotate API certificates",
                    "Remove legacy invoice endpoint",
                    "Add idempotency keys to refunds",
                    "Split billing worker",
                    "Update base images",
                    "Rate limit partner API",
                    "Fix N+1 query in invoice list",
                ]
            )
            + " - Jira",
            filler_time(),
            rng.choice((1, 2, 4)),
        )
    for _i, (path, title) in enumerate(
        [
            ("/docs/concepts/workloads/pods/pod-lifecycle/", "Pod Lifecycle | Kubernetes"),
            ("/docs/tasks/debug/debug-application/debug-running-pod/", "Debug Running Pods | Kubernetes"),
            ("/docs/concepts/services-networking/service/", "Service | Kubernetes"),
            ("/docs/reference/kubectl/quick-reference/", "kubectl Quick Reference | Kubernetes"),
        ]
    ):
        f(f"https://kubernetes.io{path}", title, filler_time(), 2)
    for host, path, title in [
        ("docs.sqlalchemy.org", "/en/20/core/pooling.html", "Connection Pooling — SQLAlchemy 2.0 Documentation"),
        (
            "www.postgresql.org",
            "/docs/16/monitoring-stats.html",
            "PostgreSQL: Documentation: 16: 27.2. The Cumulative Statistics System",
        ),
        ("docs.github.com", "/en/actions", "GitHub Actions documentation"),
        ("fernwerk.atlassian.net", "/wiki/spaces/BE/pages/oncall", "On-call handbook - Backend - Confluence"),
        ("fernwerk.atlassian.net", "/wiki/spaces/BE/pages/offsite-2025", "Offsite Lisbon 2025 - Backend - Confluence"),
        ("app.factorialhr.com", "/time-off", "Abwesenheiten – Factorial"),
        ("www.typescriptlang.org", "/tsconfig/", "TypeScript: TSConfig Reference"),
    ]:
        f(f"https://{host}{path}", title, filler_time(), rng.choice((1, 2, 3)))

    s.file("browser/Chrome/Default/History", _chrome_db(chrome))
    s.file("browser/Firefox/Profiles/k2x9v8qe.default-release/places.sqlite", _firefox_db(firefox))


# ============================================================================ calendar


def _calendars(s: _Set) -> None:
    q = s.q
    privat = [
        Event(
            "Umzug Felix – helfen",
            berlin(2025, 8, 30, 9),
            berlin(2025, 8, 30, 17),
            location="Hobrechtstraße 12 → Lenaustraße 9",
            description="Mitbringen: Akkuschrauber, Spanngurte, Arbeitshandschuhe.\n"
            "Felix besorgt Pizza und Getränke. Transporter holen wir um 8 Uhr ab.",
            attendees=[FELIX],
        ),
        Event(
            "Ummeldung Bürgeramt Neukölln",
            berlin(2024, 4, 18, 9, 40),
            berlin(2024, 4, 18, 10),
            location="Rathaus Neukölln, Karl-Marx-Straße 83",
            description="Mitbringen: Personalausweis, ausgefülltes Anmeldeformular, "
            "Wohnungsgeberbestätigung von Frau Baumann.",
        ),
        Event(
            "Impfung FSME (Hausarzt Dr. Lange)",
            berlin(2025, 3, 25, 17, 15),
            berlin(2025, 3, 25, 17, 35),
            location="Praxis Dr. Lange, Weichselstraße 3",
            description="Impfpass nicht vergessen! Zweite Dosis.",
        ),
        Event(
            "Grillen bei Tom",
            berlin(2025, 7, 19, 16),
            berlin(2025, 7, 19, 22),
            location="Tempelhofer Feld, Grillfläche Oderstraße",
            description="Ich bringe Halloumi und den Couscous-Salat mit. Tom hat Kohle und Grill.",
            organizer=TOM,
        ),
        Event(
            "Termin Steuerberaterin Albers",
            berlin(2025, 5, 6, 10),
            berlin(2025, 5, 6, 11),
            location="Kanzlei Albers, Hermannstraße 48",
            description="Unterlagen: Lohnsteuerbescheinigung 2024, Nachweise Arbeitszimmer, "
            "Fahrtkosten PyCon Darmstadt, Spendenquittungen.",
        ),
        Event(
            "Hochzeit Camille & Julien",
            date(2025, 7, 12),
            date(2025, 7, 13),
            location="Domaine des Tilleuls, Chaponost",
            categories=["Reise"],
        ),
        Event("Fallas Valencia", date(2025, 3, 14), date(2025, 3, 19), location="Valencia", categories=["Reise"]),
        Event(
            "China-Reise (Shanghai, Huangshan, Hangzhou)", date(2025, 9, 28), date(2025, 10, 15), categories=["Reise"]
        ),
        Event(
            "Friseur – Termin bei Aylin",
            berlin(2025, 2, 14, 10),
            berlin(2025, 2, 14, 10, 45),
            location="Salon Aylin, Sonnenallee 54",
            description="Waschen, schneiden, föhnen.",
        ),
        Event(
            "Friseur – Termin bei Aylin",
            berlin(2025, 9, 12, 17),
            berlin(2025, 9, 12, 17, 45),
            location="Salon Aylin, Sonnenallee 54",
            description="Nur Spitzen schneiden, vor der China-Reise.",
        ),
        Event(
            "Hausversammlung Weserstraße 41",
            berlin(2025, 3, 27, 19),
            berlin(2025, 3, 27, 20, 30),
            location="Hinterhof / bei Regen im Fahrradkeller",
            description="Tagesordnung: Fahrradkeller aufräumen, neue Mülltonnen, Begrünung Hinterhof. "
            "Protokoll führt Herr Demir.",
        ),
        Event("Heizungswartung", berlin(2025, 10, 14, 8), berlin(2025, 10, 14, 12), location="Zuhause"),
        Event("Omas 85. Geburtstag", berlin(2025, 5, 17, 12), berlin(2025, 5, 17, 18), location="Celle"),
        Event("Abgabe Steuererklärung 2024", date(2025, 7, 31)),
        Event(
            "DELE B2 – schriftliche Prüfung",
            berlin(2025, 5, 17, 9),
            berlin(2025, 5, 17, 13),
            location="Instituto Cervantes, Rosenstraße 18",
        ),
        Event(
            "Kino mit Sophie: Perfect Days",
            berlin(2024, 12, 6, 20, 15),
            berlin(2024, 12, 6, 22, 30),
            location="Babylon Mitte",
            attendees=[SOPHIE],
        ),
        Event(
            "Tocotronic",
            berlin(2025, 11, 14, 20),
            berlin(2025, 11, 14, 23),
            location="Columbiahalle",
            attendees=[SOPHIE],
        ),
        Event("Berliner Halbmarathon", date(2026, 4, 5), categories=["Sport"]),
        Event(
            "Yuki vom Flughafen abholen",
            berlin(2025, 5, 12, 18, 40),
            berlin(2025, 5, 12, 19, 30),
            location="BER Terminal 1",
        ),
        Event("Geburtstag Felix", date(2024, 6, 9), rrule="FREQ=YEARLY"),
        Event(
            "Spanischkurs B2",
            berlin(2024, 9, 3, 18, 30),
            berlin(2024, 9, 3, 20),
            location="Instituto Cervantes",
            rrule="FREQ=WEEKLY;BYDAY=TU;UNTIL=20250513T163000Z",
        ),
        Event(
            "Chinesisch-Tandem mit Li Na",
            berlin(2024, 11, 6, 19),
            berlin(2024, 11, 6, 20, 30),
            location="Café Lenz, Weserstraße",
            rrule="FREQ=WEEKLY;INTERVAL=2;BYDAY=WE",
        ),
    ]
    volley = Event(
        "Volleyball",
        berlin(2024, 9, 5, 19, 30),
        berlin(2024, 9, 5, 21, 30),
        location="Sporthalle Weserstraße",
        rrule="FREQ=WEEKLY;BYDAY=TH",
        categories=["Sport"],
    )
    privat += [
        volley,
        Event(
            "Volleyball",
            berlin(2025, 3, 6, 19, 30),
            berlin(2025, 3, 6, 21, 30),
            location="Sporthalle Weserstraße",
            status="CANCELLED",
            uid=volley.uid,
            recurrence_id=berlin(2025, 3, 6, 19, 30),
            modified=berlin(2025, 3, 2, 20),
        ),
    ]
    arbeit = [
        Event(
            "Sprint Planning",
            berlin(2025, 1, 6, 10),
            berlin(2025, 1, 6, 11, 30),
            location="Raum Spree",
            rrule="FREQ=WEEKLY;INTERVAL=2;BYDAY=MO",
            organizer=PRIYA,
        ),
        Event(
            "1:1 Priya / Jan",
            berlin(2025, 1, 10, 14),
            berlin(2025, 1, 10, 14, 30),
            organizer=PRIYA,
            attendees=[ME_WORK],
            rrule="FREQ=WEEKLY;BYDAY=FR",
        ),
        Event(
            "Postmortem Review: Checkout-Ausfall 12.03.",
            berlin(2025, 3, 18, 14),
            berlin(2025, 3, 18, 15),
            location="Raum Spree / Google Meet",
            organizer=PRIYA,
            attendees=[ME_WORK, TOM],
            description="Doc: https://fernwerk.atlassian.net/wiki/spaces/BE/pages/PM-2025-03",
        ),
        Event("Offsite Lisbon", date(2025, 6, 16), date(2025, 6, 19), location="Lisbon"),
        Event(
            "Performance Review mit Priya",
            berlin(2025, 11, 27, 15),
            berlin(2025, 11, 27, 16),
            organizer=PRIYA,
            attendees=[ME_WORK],
            description="Themen: Beförderung zum Senior Engineer, Budget Konferenzen 2026, Rufbereitschaft.",
        ),
        Event("Rufbereitschaft", date(2025, 1, 13), date(2025, 1, 20), categories=["On-call"]),
        Event("Rufbereitschaft", date(2025, 1, 27), date(2025, 2, 3), categories=["On-call"]),
        Event("Urlaubsplanung 2026 abstimmen", berlin(2025, 12, 3, 11), berlin(2025, 12, 3, 11, 30), organizer=PRIYA),
        Event(
            "API-Abstimmung mit Factoria",
            berlin(2025, 2, 4, 9, 30),
            berlin(2025, 2, 4, 10, 30),
            organizer=JULIEN,
            attendees=[ME_WORK, PRIYA],
        ),
    ]
    holidays = [
        (date(2025, 1, 1), "Neujahr"),
        (date(2025, 3, 8), "Internationaler Frauentag"),
        (date(2025, 4, 18), "Karfreitag"),
        (date(2025, 4, 21), "Ostermontag"),
        (date(2025, 5, 1), "Tag der Arbeit"),
        (date(2025, 5, 29), "Christi Himmelfahrt"),
        (date(2025, 6, 9), "Pfingstmontag"),
        (date(2025, 10, 3), "Tag der Deutschen Einheit"),
        (date(2025, 12, 25), "1. Weihnachtstag"),
        (date(2025, 12, 26), "2. Weihnachtstag"),
    ]
    feiertage = [
        Event(name, day, uid=f"{day:%Y%m%d}-feiertag@feiertage-api.de", categories=["Feiertag"])
        for day, name in holidays
    ]
    s.file("calendar/Privat.ics", _calendar("Privat", privat, "-//Apple Inc.//macOS 15.2//EN"))
    s.file("calendar/Arbeit.ics", _calendar("Arbeit", arbeit, "-//Google Inc//Google Calendar 70.9054//EN"))
    s.file("calendar/Feiertage Berlin.ics", _calendar("Feiertage Berlin", feiertage, "-//feiertage-api.de//DE"))

    q(
        "crosslingual",
        "what do I need to bring to help Felix move?",
        [("calendar", "Akkuschrauber, Spanngurte, Arbeitshandschuhe")],
        lang="en>de",
    )
    q(
        "crosslingual",
        "which papers do I need for registering my new address?",
        [("calendar", "Wohnungsgeberbestätigung"), ("claude", "Wohnungsgeberbestätigung")],
        lang="en>de",
    )
    q(
        "crosslingual",
        "what should I take to the tick vaccination?",
        [("calendar", "Impfpass nicht vergessen")],
        lang="en>de",
    )
    q(
        "crosslingual",
        "what am I bringing to Tom's barbecue?",
        [("calendar", "Halloumi und den Couscous-Salat")],
        lang="en>de",
    )
    q(
        "crosslingual",
        "which documents does the tax advisor want to see?",
        [("calendar", "Lohnsteuerbescheinigung 2024")],
        lang="en>de",
    )
    q(
        "crosslingual",
        "who takes the minutes at the tenants' meeting?",
        [("calendar", "Protokoll führt Herr Demir")],
        lang="en>de",
    )
    q(
        "person",
        "my performance review with Priya – what topics are on the list?",
        [("calendar", "Beförderung zum Senior Engineer")],
    )
    q("person", "appointment with the tax advisor Albers", [("calendar", "Termin Steuerberaterin Albers")])
    q(
        "filtered",
        "haircut appointment",
        [("calendar", "Nur Spitzen schneiden")],
        after="2025-09-01",
        before="2025-10-01",
        distractors=[("calendar", "Waschen, schneiden, föhnen")],
    )
    q(
        "filtered",
        "when am I on call?",
        [("calendar", "Rufbereitschaft\nWhen:")],
        where={"calendar": "Arbeit"},
        distractors=[("mail", "Übergabe Rufbereitschaft"), ("imessage", "Swap on-call?")],
    )


# ============================================================================ iMessage


def _imessage(s: _Set) -> None:
    q = s.q
    db = _ChatDB()
    felix, sophie, priya, mum = "+4917655501234", SOPHIE[1], "+447700900123", "+4917155509876"
    marco, jana, deniz = "+4915755501111", "+4915755502222", "+4916055503333"
    c_felix = db.chat(felix, [felix])
    c_sophie = db.chat(sophie, [sophie])
    c_priya = db.chat(priya, [priya])
    c_mum = db.chat(mum, [mum])
    c_volley = db.chat("chat483920174655201833", [marco, jana, deniz], name="Volleyball Do 🏐")
    c_dhl = db.chat("DHL", ["DHL"], service="SMS")

    def talk(chat: int, start: datetime, lines: list[tuple]) -> None:
        t = start
        for item in lines:
            gap, who, text = item[:3]
            opts = item[3] if len(item) > 3 else {}
            t = t + timedelta(minutes=gap)
            db.say(chat, t, who, text, **opts)

    talk(
        c_felix,
        berlin(2024, 10, 18, 12, 30),
        [
            (0, felix, "Hast du meine Mail wegen Hertha gesehen?"),
            (3, None, "Klar, bin dabei!"),
            (1, felix, "Top, Treffpunkt 12:15 am Eingang Ost"),
        ],
    )
    talk(
        c_felix,
        berlin(2025, 6, 9, 9, 2),
        [
            (0, None, "Alles Gute zum Geburtstag, Bruderherz! 🎉"),
            (38, felix, "Danke!! Heute Abend Späti-Runde?"),
            (1, None, "Bin dabei", {"blob": True}),
        ],
    )
    talk(
        c_felix,
        berlin(2025, 8, 20, 18, 10),
        [
            (0, felix, "Hab den Transporter bei Sixt in der Karl-Marx-Straße gebucht, Abholung Samstag um 8."),
            (4, None, "Perfekt. Ich fahr, du hast ja noch den Arm in der Schiene."),
            (2, felix, "Genau 😅 Kaution sind 500 €, zahl ich mit Kreditkarte."),
            (1, None, "Gefällt mir „Genau 😅 Kaution sind 500 €, zahl ich mit Kreditkarte.“", {"tapback": 2001}),
        ],
    )
    talk(c_felix, berlin(2025, 8, 30, 7, 31), [(0, None, "Bin in 10 min da"), (1, felix, "Kaffee steht bereit ☕️")])
    talk(
        c_felix,
        berlin(2025, 12, 20, 11, 0),
        [
            (0, felix, "Wann kommst du in Hannover an?"),
            (12, None, "ICE 545, 17:20 an. Sophie kommt erst am 24."),
            (2, felix, "Ich hol dich ab"),
        ],
    )

    talk(
        c_sophie,
        berlin(2024, 12, 6, 17, 30),
        [
            (0, sophie, "Got the tickets for Babylon, row 7, 20:15 🍿"),
            (5, None, "Perfect, see you at Rosa-Luxemburg-Platz at 8", {"blob": True}),
        ],
    )
    talk(
        c_sophie,
        berlin(2025, 4, 18, 17, 2),
        [
            (
                0,
                sophie,
                "For the long weekend: the wifi at my parents' place in Poznań is 'Lavendel2019!', network UPC-Kwiatkowski",
            ),
            (3, None, "Danke! Bringst du den Adapter mit?"),
            (1, sophie, "Yes, already packed", {"blob": True}),
        ],
    )
    talk(
        c_sophie,
        berlin(2025, 9, 26, 22, 10),
        [
            (0, sophie, "Don't forget the power bank for the flight tomorrow", {"blob": True}),
            (2, None, "Already in the backpack 🔋"),
        ],
    )
    talk(
        c_sophie,
        berlin(2025, 11, 14, 18, 0),
        [(0, sophie, "Doors open at 19:00, meet at Platz der Luftbrücke?"), (6, None, "👍 bis gleich")],
    )

    talk(
        c_priya,
        berlin(2025, 1, 8, 20, 14),
        [
            (
                0,
                priya,
                "Hi Jan, it's Priya (work phone). Swap on-call? I take 13–19 Jan, you take 27 Jan–2 Feb. "
                "My sister's wedding is on the 29th.",
            ),
            (9, None, "Sure, works for me. I'll update PagerDuty."),
            (1, priya, "You're a star 🙏"),
        ],
    )
    talk(
        c_priya,
        berlin(2025, 3, 12, 12, 31),
        [(0, priya, "Checkout is down, can you join the bridge?"), (1, None, "On it")],
    )
    talk(
        c_priya,
        berlin(2025, 6, 17, 22, 40),
        [(0, priya, "Dinner at Taberna da Rua das Flores was great – thanks for organising!", {"blob": True})],
    )

    talk(
        c_mum,
        berlin(2025, 4, 23, 19, 0),
        [
            (0, mum, "Hast du meine Mail wegen Oma gelesen?"),
            (20, None, "Ja! Ich digitalisiere die Dias am Wochenende."),
        ],
    )
    talk(
        c_mum,
        berlin(2025, 10, 26, 16, 0),
        [
            (0, mum, "Papa hat den neuen Router angeschlossen. Wie kommt man da in die Einstellungen?"),
            (15, None, "Im Browser fritz.box eingeben, das Kennwort steht auf der Unterseite vom Gerät."),
            (3, mum, "Hat geklappt, danke mein Schatz"),
        ],
    )

    talk(
        c_volley,
        berlin(2025, 3, 2, 20, 5),
        [
            (0, marco, "Leute, am Donnerstag 6.3. fällt die Halle aus – Abiturprüfungen in der Turnhalle."),
            (4, jana, "Schade! Dann eine Woche Pause."),
            (10, None, "Danke für die Info"),
        ],
    )
    talk(
        c_volley,
        berlin(2025, 5, 15, 17, 0),
        [
            (0, deniz, "Wer kommt heute? Wir brauchen mindestens 10."),
            (3, None, "Bin da"),
            (1, jana, "+1"),
            (1, deniz, "Gefällt mir „Bin da“", {"tapback": 2001}),
        ],
    )
    talk(
        c_volley,
        berlin(2025, 9, 11, 21, 45),
        [
            (0, marco, "Neuer Beitrag ab Oktober: 45 € pro Halbjahr aufs Kassenkonto, die Hallenmiete ist gestiegen."),
            (2, deniz, "ok 👍"),
            (30, None, "Überwiesen"),
        ],
    )
    talk(
        c_dhl,
        berlin(2025, 4, 8, 7, 50),
        [
            (
                0,
                "DHL",
                "DHL: Ihre Sendung JJD000390007304471 wird heute zwischen 10:00 und 13:00 zugestellt. Infos: dhl.de/live",
            )
        ],
    )
    talk(
        c_dhl,
        berlin(2025, 10, 14, 7, 58),
        [
            (
                0,
                "DHL",
                "DHL: Ihre Sendung JJD000390007713245 wird heute zwischen 11:00 und 14:00 zugestellt. Infos: dhl.de/live",
            )
        ],
    )
    s.file("imessage/chat.db", db.bytes())

    q(
        "crosslingual",
        "where do we pick up the moving van?",
        [("imessage", "Transporter bei Sixt in der Karl-Marx-Straße")],
        lang="en>de",
    )
    q("crosslingual", "why was volleyball cancelled in early March?", [("imessage", "Abiturprüfungen")], lang="en>de")
    q(
        "crosslingual",
        "how much is the volleyball membership fee now?",
        [("imessage", "45 € pro Halbjahr")],
        lang="en>de",
    )
    q(
        "paraphrase",
        "which week at the end of January am I on pager duty?",
        [("imessage", "you take 27 Jan–2 Feb"), ("calendar", "When: Mon 2025-01-27")],
    )
    q("paraphrase", "which row were our seats in at the cinema?", [("imessage", "row 7, 20:15")])
    q("person", "what did Sophie send me about her parents' wifi?", [("imessage", "Lavendel2019!")])
    q(
        "filtered",
        "Ihre Sendung wird heute zugestellt",
        [("imessage", "JJD000390007713245")],
        where={"service": "SMS"},
        after="2025-10-01",
        distractors=[("mail", "Ihre DHL Sendung kommt heute")],
    )


# ============================================================================ WeChat


def _wechat(s: _Set) -> None:
    q = s.q
    wei_id, lina_id, cj_id = "wxid_k3n9zw1988", "wxid_lina0612", "wxid_cj_hz2020"
    wang, liu = "wxid_wanglei_sh", "wxid_liuyang77"
    wei = _WeChat("Wei Zhang", wei_id)
    lina = _WeChat("李娜", lina_id)
    cj = _WeChat("陈静", cj_id)
    group = _WeChat("黄山小分队", "20931847362@chatroom", {wang: "王磊", liu: "刘洋"})

    def talk(chat: _WeChat, start: datetime, lines: list[tuple]) -> None:
        t = start
        for gap, who, what in lines:
            t = t + timedelta(minutes=gap)
            if what == "<image>":
                chat.image(t, who)
            elif what == "<sticker>":
                chat.sticker(t, who)
            elif isinstance(what, tuple):
                chat.link(t, who, *what)
            else:
                chat.say(t, who, what)

    talk(
        wei,
        berlin(2024, 11, 12, 13, 20),
        [
            (0, wei_id, "下次来上海我带你去吃海底捞"),
            (1, wei_id, "不对，去吃小龙坎，更辣，你肯定受不了哈哈"),
            (6, None, "我能吃辣！"),
            (1, wei_id, "<sticker>"),
        ],
    )
    talk(
        wei,
        berlin(2025, 1, 29, 2, 10),
        [(0, wei_id, "新年快乐！蛇年大吉！🐍"), (380, None, "新年快乐！给叔叔阿姨拜年"), (2, wei_id, "<image>")],
    )
    talk(
        wei,
        berlin(2025, 8, 25, 14, 5),
        [
            (0, wei_id, "高铁票买好了：9月30日 G7303 上海虹桥 07:42 开，11:05 到黄山北。"),
            (1, wei_id, "你的护照号我用的是上次发给我的那个"),
            (9, None, "太好了，谢谢伟哥！多少钱？"),
            (2, wei_id, "二等座 298元，回头一起算"),
        ],
    )
    talk(wei, berlin(2025, 9, 10, 13, 40), [(0, wei_id, "月饼寄了，单号在邮件里"), (25, None, "收到，谢谢！Thanks!!")])
    wei.recall(berlin(2025, 9, 10, 14, 20), "Wei Zhang")
    talk(
        wei,
        berlin(2025, 10, 20, 15, 0),
        [
            (0, wei_id, "照片我传到百度网盘了，提取码 8k2m"),
            (1, wei_id, ("黄山照片 2025.10", "https://pan.baidu.com/s/1hS9kQ2m")),
            (30, None, "太美了！尤其是日出那张"),
        ],
    )

    talk(
        lina,
        berlin(2025, 3, 19, 20, 15),
        [
            (0, lina_id, "昨天的作文我发你邮箱了"),
            (1, lina_id, "下次语伴我们练习第三声变调，你准备一段两分钟的自我介绍"),
            (14, None, "好的，没问题"),
        ],
    )
    talk(
        lina,
        berlin(2025, 6, 2, 21, 0),
        [
            (0, None, "有什么好看的中文小说推荐吗？"),
            (5, lina_id, "推荐你读余华的《活着》，比《三体》好读，词汇也不难"),
            (3, None, "好，我去买"),
        ],
    )
    talk(
        lina,
        berlin(2025, 11, 5, 12, 0),
        [
            (0, lina_id, ("德国租房避坑指南：押金、Schufa 和 Anmeldung", "https://mp.weixin.qq.com/s/Xk2m9QpLr0")),
            (50, None, "👍"),
        ],
    )

    talk(
        cj,
        berlin(2025, 9, 1, 14, 30),
        [
            (0, cj_id, "Jan！我们的婚礼定在11月8日，杭州西湖国宾馆，中午十二点开席，你要是能来就太好了"),
            (20, None, "恭喜恭喜！11月我可能来不了，太遗憾了"),
            (2, cj_id, "没关系，心意到了就好"),
        ],
    )
    talk(
        cj,
        berlin(2025, 10, 9, 11, 0),
        [(0, cj_id, "你在杭州那天下雨，不然带你去九溪十八涧走走"), (4, None, "下次一定！")],
    )
    cj.say(
        berlin(2025, 10, 9, 11, 6),
        cj_id,
        '<?xml version="1.0"?>\n<msg><location x="30.2083" y="120.1215" scale="16" label="浙江省杭州市西湖区九溪" poiname="九溪十八涧" /></msg>',
        48,
    )

    talk(
        group,
        berlin(2025, 9, 5, 20, 0),
        [
            (0, wei_id, "北海宾馆订好了，两间标准间，每晚680元，含早餐"),
            (2, liu, "好的"),
            (3, None, "👍 我跟Wei一间？"),
            (1, wei_id, "对"),
        ],
    )
    talk(
        group,
        berlin(2025, 9, 12, 21, 0),
        [
            (0, wei_id, "路线定了：上山坐云谷索道，下山走西海大峡谷，体力不行的可以坐太平索道"),
            (3, wang, "西海大峡谷要走多久？"),
            (2, wei_id, "大概四个小时，风景最好的一段"),
        ],
    )
    talk(
        group,
        berlin(2025, 9, 20, 19, 0),
        [(0, liu, "看了天气预报，山顶最低温度5度，一定要带羽绒服和头灯（看日出要用）"), (7, None, "收到")],
    )
    talk(
        group,
        berlin(2025, 9, 25, 22, 0),
        [(0, wang, "我带无人机，不过景区好像不让飞"), (4, wei_id, "别带了，会被没收的"), (1, wang, "<sticker>")],
    )
    talk(
        group,
        berlin(2025, 10, 5, 21, 30),
        [
            (0, wei_id, "黄山总共花了5,760元，每人1,440元，微信转我就行"),
            (6, liu, "已转"),
            (9, None, "已转，谢谢组织！"),
        ],
    )

    for chat in (wei, lina, cj, group):
        s.file(f"wechat/{chat.name}-{chat.talker}.json", chat.bytes())

    q("identifier", "G7303", [("wechat", "G7303")])
    q("person", "what did Wei say about the train tickets?", [("wechat", "G7303 上海虹桥 07:42 开")])
    q("person", "where did Wei upload the trip photos?", [("wechat", "百度网盘")])
    q("person", "Li Na's book recommendation", [("wechat", "余华的《活着》"), ("notes", "Li Na's recommendation")])
    q("person", "Chen Jing's wedding – what time does the banquet start?", [("wechat", "中午十二点开席")])
    q("person", "what did 王磊 say about the drone?", [("wechat", "我带无人机")])
    q("cjk", "黄山 上山 坐哪个缆车", [("wechat", "上山坐云谷索道")])
    q("cjk", "北海宾馆 含早餐吗", [("wechat", "两间标准间，每晚680元，含早餐")])
    q("cjk", "百度网盘 提取码", [("wechat", "提取码 8k2m")])
    q("cjk", "上海 火锅 推荐", [("wechat", "小龙坎")])
    q("cjk", "无人机 景区 能飞吗", [("wechat", "景区好像不让飞")])
    q("cjk", "杭州 下雨 九溪", [("wechat", "九溪十八涧走走")])
    q("cjk", "春节 拜年", [("wechat", "蛇年大吉"), ("mail", "蛇年大吉")])
    q("cjk", "黄山 总共 花了 多少钱", [("wechat", "总共花了5,760元")])
    q("cjk", "高铁 几点 到 黄山北", [("wechat", "11:05 到黄山北")])
    q("cjk", "陈静 婚礼 地点", [("wechat", "杭州西湖国宾馆")])
    q("cjk", "余华 小说 推荐", [("wechat", "余华的《活着》")])
    q("cjk", "西海大峡谷 要走多久", [("wechat", "大概四个小时")])
    q(
        "crosslingual",
        "what warm clothes should I pack for the Huangshan summit?",
        [("wechat", "带羽绒服和头灯")],
        lang="en>zh",
    )
    q("crosslingual", "how much did each person owe for the Huangshan trip?", [("wechat", "每人1,440元")], lang="en>zh")
    q(
        "crosslingual",
        "what should I prepare for the next language exchange?",
        [("wechat", "两分钟的自我介绍")],
        lang="en>zh",
    )
    q("crosslingual", "how much per night was the hotel on the mountain?", [("wechat", "每晚680元")], lang="en>zh")
    q(
        "filtered",
        "黄山 山顶 温度",
        [("wechat", "山顶最低温度5度")],
        connectors=["wechat"],
        distractors=[("notes", "Summit temperatures")],
    )
    q("filtered", "婚礼", [("wechat", "中午十二点开席")], where={"chat": "陈静"}, distractors=[("chatgpt", "百年好合")])


# ============================================================================ ChatGPT, Claude


def _chatgpt(s: _Set) -> None:
    q = s.q
    U, A, C = "user", "assistant", "assistant-code"
    convs = [
        _chatgpt_conv(
            "ORA-12154 with python-oracledb",
            berlin(2024, 11, 6, 14, 40),
            [
                (
                    U,
                    "I'm getting ORA-12154: TNS:could not resolve the connect identifier specified when I connect "
                    "with python-oracledb from my laptop. SQL Developer works fine with the same alias BILLDB_PROD.",
                ),
                (
                    A,
                    "SQL Developer reads your tnsnames.ora, but python-oracledb in Thin mode does not look at "
                    "ORACLE_HOME. Either pass the folder that holds tnsnames.ora as config_dir, set TNS_ADMIN before "
                    "starting Python, or skip the alias and use an Easy Connect string such as "
                    "dbhost.fernwerk.io:1521/billdb.",
                ),
                (
                    C,
                    'conn = oracledb.connect(user=user, password=pw, dsn="BILLDB_PROD",\n'
                    '                        config_dir="/opt/oracle/network/admin")',
                ),
                (U, "config_dir fixed it, thanks!"),
                (
                    A,
                    "Glad it works. If you deploy this in a container, mount the network/admin folder and keep "
                    "the same config_dir.",
                ),
            ],
        ),
        _chatgpt_conv(
            "Mietminderung bei Heizungsausfall",
            berlin(2025, 1, 16, 21, 5),
            [
                (
                    U,
                    "Unsere Gasheizung ist seit fünf Tagen komplett ausgefallen, draußen sind minus 4 Grad. Die "
                    "Hausverwaltung reagiert nicht. Wie viel darf ich die Miete mindern?",
                ),
                (
                    A,
                    "Bei einem vollständigen Heizungsausfall in der Heizperiode halten Gerichte häufig eine Minderung "
                    "von 50 bis 100 % der Bruttomiete für die Dauer des Ausfalls für angemessen. Wichtig: Zeigen Sie "
                    "den Mangel schriftlich an (§ 536c BGB), setzen Sie eine kurze Frist und zahlen Sie die Miete "
                    "danach unter Vorbehalt. Heizlüfter dürfen Sie auf Kosten der Vermieterin betreiben, bewahren Sie "
                    "die Stromrechnung auf.",
                ),
            ],
        ),
        _chatgpt_conv(
            "Dense sourdough",
            berlin(2024, 3, 10, 11, 20),
            [
                (
                    U,
                    "My sourdough starter doubles after feeding and then collapses, and my loaves come out dense and "
                    "gummy. What am I doing wrong?",
                ),
                (
                    A,
                    "A starter that peaks and collapses is healthy, but you are probably using it too late. Feed it at "
                    "a 1:5:5 ratio (starter:flour:water) so it peaks more slowly, use it right at the peak, and extend "
                    "the bulk fermentation until the dough has grown by about 50 %. A dense, gummy crumb is almost "
                    "always under-fermentation, not a weak starter.",
                ),
            ],
            dead_branch=(1, "Add a teaspoon of instant dry yeast to every loaf as insurance."),
        ),
        _chatgpt_conv(
            "Monstera yellow leaves",
            berlin(2025, 5, 20, 18, 30),
            [
                (
                    U,
                    "The lower leaves of my monstera are turning yellow one after another. It stands next to a north "
                    "facing window.",
                ),
                (
                    A,
                    "Yellowing lower leaves with damp soil usually mean overwatering, made worse by low light. Let the "
                    "top 5 cm of soil dry out before you water again, make sure the pot drains, and move the plant "
                    "closer to a brighter window. One yellow leaf now and then is normal ageing.",
                ),
            ],
        ),
        _chatgpt_conv(
            "CrashLoopBackOff exit code 137",
            berlin(2025, 2, 20, 9, 50),
            [
                (
                    U,
                    "our billing-worker pod is in CrashLoopBackOff, the logs show nothing, kubectl describe says Last "
                    "State: Terminated, Exit Code: 137",
                ),
                (
                    A,
                    "Exit code 137 means the container received SIGKILL (128 + 9). With nothing in the logs that is "
                    "almost always the kernel's OOM killer: kubectl describe should also show Reason: OOMKilled. "
                    "Either raise resources.limits.memory (and requests, so the scheduler places it sensibly) or find "
                    "what grows: the worker may be loading a whole invoice batch into memory.",
                ),
            ],
        ),
        _chatgpt_conv(
            "Huangshan 3-day itinerary",
            berlin(2025, 8, 28, 22, 15),
            [
                (
                    U,
                    "Plan 3 days on Huangshan in early October. We arrive at Huangshan North by train at 11:00 and "
                    "stay two nights at the Beihai Hotel on the summit.",
                ),
                (
                    A,
                    "Day 1 — bus to Tangkou, cable car up, check in at Beihai, short walk to Lion Peak. For sunset, "
                    "Paiyun Pavilion is the classic spot; be there 45 minutes early.\n\nDay 2 — sunrise at Shixin "
                    "Peak, then the West Sea Grand Canyon loop (4–5 hours, many stairs) and Bright Summit Peak in the "
                    "afternoon.\n\nDay 3 — Flying Rock early before the tour groups, then down and back to Tunxi for "
                    "the old street.\n\nEarly October is Golden Week: expect long queues, book everything ahead.",
                ),
            ],
        ),
        _chatgpt_conv(
            "Half marathon plan",
            berlin(2025, 11, 10, 7, 40),
            [
                (
                    U,
                    "Make me a plan for the Berlin half marathon on 5 April 2026. I run three times a week, about "
                    "25 km in total, and want to finish under 1:50.",
                ),
                (
                    A,
                    "Here is a 12-week plan starting on 12 January. Three runs a week: an easy run, a quality run "
                    "(intervals or tempo at about 5:05/km) and a long run. Long runs build from 12 km to 19 km in week "
                    "10, then taper: 14 km in week 11 and a 8 km shake-out in race week. Keep easy runs truly easy "
                    "(6:00/km or slower).",
                ),
            ],
        ),
        _chatgpt_conv(
            "Toast für Camilles Hochzeit",
            berlin(2025, 7, 5, 20, 0),
            [
                (
                    U,
                    "Kannst du meine Rede für Camilles Hochzeit ins Französische übersetzen? »Camille, ich erinnere "
                    "mich noch an den Tag, an dem wir uns 2016 kennengelernt haben, in diesem winzigen Bouchon, als du "
                    "Andouillette bestellt hast, ohne zu wissen, was das ist …«",
                ),
                (
                    A,
                    "Bien sûr ! Voici une proposition :\n\n« Camille, je me souviens encore du jour où nous nous "
                    "sommes rencontrés, en 2016, dans ce minuscule bouchon de la rue Mercière, quand tu as commandé une "
                    "andouillette sans savoir ce que c'était… Julien, prends soin d'elle. Levons nos verres aux "
                    "mariés ! »\n\nJ'ai ajouté la rue Mercière pour situer le bouchon à Lyon ; enlève-la si ce n'était "
                    "pas là.",
                ),
            ],
        ),
        _chatgpt_conv(
            "Fallas in Valencia",
            berlin(2025, 2, 25, 19, 10),
            [
                (U, "I'm in Valencia 14–18 March for the Fallas. What shouldn't I miss?"),
                (
                    A,
                    "The daily mascletà at 14:00 on Plaza del Ayuntamiento, the Ofrenda de Flores on 17 and 18 March, "
                    "the Nit del Foc fireworks on the night of the 18th, and La Cremà on 19 March when the fallas are "
                    "burned. If you fly out on the 18th you will miss La Cremà, so consider staying one more night.",
                ),
            ],
        ),
        _chatgpt_conv(
            "IBAN checksum in Python",
            berlin(2025, 5, 30, 10, 5),
            [
                (U, "How do I check an IBAN checksum in Python without a library?"),
                (
                    A,
                    "Move the first four characters to the end, replace every letter by two digits (A=10 … Z=35), and "
                    "the resulting number mod 97 must be 1:",
                ),
                (
                    C,
                    'def iban_is_valid(iban: str) -> bool:\n    s = iban.replace(" ", "").upper()\n'
                    '    s = s[4:] + s[:4]\n    digits = "".join(str(int(ch, 36)) for ch in s)\n'
                    "    return int(digits) % 97 == 1",
                ),
                (A, "Check the length per country too (22 characters for Germany)."),
            ],
        ),
        _chatgpt_conv(
            "Gearing for the Elbe cycle route",
            berlin(2025, 6, 20, 21, 30),
            [
                (
                    U,
                    "I'm riding the Elbe cycle route with four panniers (about 20 kg of luggage). My bike has 50/34 "
                    "chainrings and an 11-32 cassette. Is that enough?",
                ),
                (
                    A,
                    "On the flat Elbe itself, yes. For the climbs in Saxon Switzerland with 20 kg I would go lower: "
                    "either a 40t single chainring with an 11-42 cassette, or keep 50/34 and fit an 11-36 with a "
                    "longer cage derailleur. Aim for a lowest gear under 1:1.",
                ),
            ],
        ),
        _chatgpt_conv(
            "Steuerklassen",
            berlin(2024, 5, 2, 12, 0),
            [
                (U, "What does tax class I mean in Germany?"),
                (
                    A,
                    "Tax class I (Steuerklasse I) applies to single, divorced or separated employees. The employer "
                    "withholds wage tax based on it; married couples can choose III/V or IV/IV instead.",
                ),
            ],
        ),
        _chatgpt_conv(
            "asyncio task destroyed",
            berlin(2024, 9, 14, 16, 45),
            [
                (U, "I keep seeing 'Task was destroyed but it is pending!' when my script exits. What does it mean?"),
                (
                    A,
                    "A Task was garbage-collected while it was still running, usually because it was created with "
                    "asyncio.create_task() and nobody kept a reference or awaited it before the loop closed. Keep "
                    "the tasks in a set and await them before exit, or use asyncio.TaskGroup, which waits for its "
                    "tasks when the block ends.",
                ),
            ],
        ),
        _chatgpt_conv(
            "给陈静的婚礼祝福",
            berlin(2025, 9, 2, 22, 30),
            [
                (U, "我的朋友陈静要结婚了，我去不了。帮我写一段中文的祝福，不要太正式。"),
                (
                    A,
                    "当然！可以这样写：\n\n静静，恭喜你们！虽然这次不能去杭州现场见证，但我的祝福一点都不会少。祝你们新婚快乐，"
                    "百年好合，以后一起去更多地方旅行！下次我来杭州，一定要请我喝喜酒补上哈哈。——Jan",
                ),
            ],
        ),
        _chatgpt_conv(
            "Corrección DELE",
            berlin(2025, 4, 30, 19, 15),
            [
                (
                    U,
                    "Corrige mi redacción para el DELE B2: «Si tendría más tiempo, viajaría más por Latinoamérica. Ayer "
                    "fui a un concierto que me gustó mucho, pero había demasiadas personas.»",
                ),
                (
                    A,
                    "¡Muy bien en general! La corrección principal: en las condicionales irreales se usa el imperfecto "
                    "de subjuntivo, «Si tuviera más tiempo, viajaría más…», nunca «si tendría». El resto es correcto; "
                    "«había demasiada gente» suena más natural que «demasiadas personas».",
                ),
            ],
        ),
        _chatgpt_conv(
            "Anmeldung deadline",
            berlin(2024, 3, 28, 8, 20),
            [
                (U, "How long do I have to register my new address in Berlin after moving?"),
                (
                    A,
                    "Two weeks: the Bundesmeldegesetz requires you to register within 14 days of moving in. Book a "
                    "Bürgeramt appointment online early, slots go fast.",
                ),
            ],
        ),
    ]
    s.file("chatgpt/conversations.json", json.dumps(convs, ensure_ascii=False, indent=1).encode("utf-8"))

    q(
        "crosslingual",
        "how much rent reduction is fair when the heating fails in winter?",
        [("chatgpt", "50 bis 100 %")],
        lang="en>de",
    )
    q("paraphrase", "why is my homemade bread so dense and heavy?", [("chatgpt", "1:5:5")])
    q("crosslingual", "Monstera gelbe Blätter, was tun?", [("chatgpt", "top 5 cm of soil")], lang="de>en")
    q(
        "paraphrase",
        "my container keeps getting killed and restarted and the logs are empty",
        [("chatgpt", "OOMKilled")],
    )
    q("identifier", "exit code 137", [("chatgpt", "Exit code 137")])
    q("crosslingual", "黄山 看日落 最好的地方", [("chatgpt", "Paiyun Pavilion")], lang="zh>en")
    q(
        "filtered",
        "Huangshan three day plan",
        [("chatgpt", "sunrise at Shixin")],
        connectors=["chatgpt"],
        distractors=[("wechat", "上山坐云谷索道")],
    )
    q("paraphrase", "how long should my longest run be before the half marathon?", [("chatgpt", "19 km in week")])
    q("crosslingual", "plan de entrenamiento para la media maratón", [("chatgpt", "12-week plan")], lang="es>en")
    q(
        "crosslingual",
        "where did I first meet Camille, according to my wedding toast?",
        [("chatgpt", "minuscule bouchon de la rue Mercière")],
        lang="en>fr",
    )
    q("paraphrase", "how do I verify an IBAN's check digits in Python?", [("chatgpt", "mod 97 must be 1")])
    q("paraphrase", "what gearing should I use for a bike tour with heavy bags?", [("chatgpt", "11-42 cassette")])
    q("identifier", "Task was destroyed but it is pending", [("chatgpt", "Task was destroyed but it is pending")])
    q("cjk", "婚礼 祝福语 怎么写", [("chatgpt", "百年好合")])
    q(
        "crosslingual",
        "what was the grammar mistake in my Spanish exam essay?",
        [("chatgpt", "Si tuviera más tiempo")],
        lang="en>es",
    )


def _claude(s: _Set) -> None:
    q = s.q
    H, A = "human", "assistant"
    statement = (
        "Betriebskostenabrechnung 2024 – Weserstraße 41, Wohnung 3. OG links, 68 m²\n"
        "Grundsteuer 212,40 €\nHausmeister 188,00 €\nMüllabfuhr 96,30 €\nGebäudeversicherung 141,75 €\n"
        "Heizung und Warmwasser 864,10 €\nSumme 1.502,55 €\nVorauszahlungen 1.384,10 €\nNachzahlung 118,45 €"
    )
    convs = [
        _claude_conv(
            "Brief wegen Schimmel im Bad",
            berlin(2026, 1, 20, 20, 10),
            [
                (
                    H,
                    "Schreib mir einen höflichen, aber bestimmten Brief an meine Hausverwaltung (Frau Baumann) wegen "
                    "Schimmel im Bad an der Außenwand. Setz eine Frist.",
                ),
                (
                    A,
                    "Gern, hier ein Entwurf:\n\nSehr geehrte Frau Baumann,\n\nhiermit zeige ich Ihnen einen Mangel in "
                    "meiner Wohnung Weserstraße 41, 3. OG links, an: Im Badezimmer hat sich an der Außenwand hinter der "
                    "Dusche auf etwa 40 × 60 cm Schimmel gebildet. Ich lüfte mehrmals täglich stoß.\n\nIch bitte Sie, "
                    "bis zum 15.02.2026 einen Fachbetrieb mit der Prüfung der Ursache und der Beseitigung zu "
                    "beauftragen. Bis dahin behalte ich mir eine Minderung der Miete vor.\n\nMit freundlichen Grüßen\n"
                    "Jan Hoffmann",
                ),
            ],
        ),
        _claude_conv(
            "TS2345 in useBudget",
            berlin(2025, 6, 12, 15, 20),
            [
                (
                    H,
                    "In my useBudget hook I get: error TS2345: Argument of type 'string | undefined' is not assignable "
                    "to parameter of type 'string'. The line is fetchMonthlySummary(categoryId).",
                ),
                (
                    A,
                    "categoryId comes from useParams(), which types every route param as string | undefined. Narrow it "
                    "before the call, e.g. `if (!categoryId) return;` at the top of the effect, or make the function "
                    "accept undefined and return an empty summary. Avoid the non-null assertion `categoryId!`: it only "
                    "silences the compiler.",
                ),
            ],
        ),
        _claude_conv(
            "Postgres connection slots",
            berlin(2025, 3, 13, 10, 30),
            [
                (
                    H,
                    "Postgres keeps refusing new connections under load: 'FATAL: remaining connection slots are reserved "
                    "for non-replication superuser connections'. We run 12 pods with a pool size of 20 each. What is "
                    "the right fix?",
                ),
                (
                    A,
                    "12 pods × 20 = 240 possible connections against max_connections = 200, so the database runs out "
                    "before your pools do. Put pgbouncer in front in transaction pooling mode (pool_mode = transaction, "
                    "default_pool_size around 40), lower the per-pod pool to 5–10, and only then consider raising "
                    "max_connections, which costs memory per connection.",
                ),
            ],
        ),
        _claude_conv(
            "Hausmeisterkosten prüfen",
            berlin(2025, 6, 17, 21, 40),
            [
                (
                    H,
                    "Is the caretaker cost in this statement normal? My flat is 68 m².",
                    {
                        "attachments": [
                            {
                                "file_name": "Betriebskostenabrechnung_2024.pdf",
                                "file_size": 48213,
                                "file_type": "pdf",
                                "extracted_content": statement,
                            }
                        ]
                    },
                ),
                (
                    A,
                    "€188 a year for the caretaker service is €2.76 per m² per year, about €0.23 per m² per month. "
                    "That is within the usual Berlin range (roughly €0.15–0.35 per m² per month). What you can check: "
                    "whether the caretaker also does gardening or cleaning that is billed a second time, and whether "
                    "repairs are hidden in the position (they are not allowed as operating costs).",
                ),
            ],
        ),
        _claude_conv(
            "感谢张伟父母",
            berlin(2025, 10, 16, 9, 0),
            [
                (H, "帮我写一条微信，感谢张伟的父母在上海请我吃饭。我中文不太好，要简单自然。"),
                (
                    A,
                    "可以这样写：\n\n叔叔阿姨好！谢谢你们上周在上海的热情招待，红烧肉特别好吃，是我在中国吃过最好吃的一顿饭。"
                    "希望明年能在柏林招待你们！祝身体健康！——Jan",
                ),
            ],
        ),
        _claude_conv(
            "Nota de agradecimiento",
            berlin(2025, 3, 20, 22, 0),
            [
                (
                    H,
                    "Help me write a short thank-you note in Spanish to my friend Lucía for hosting me during the Fallas.",
                ),
                (
                    A,
                    "¡Claro! «Querida Lucía: ¡mil gracias por acogerme durante las Fallas! La mascletà me dejó sin "
                    "palabras (y casi sin oídos 😄). La próxima vez que vengas a Berlín, el sofá es tuyo. Un abrazo "
                    "enorme, Jan»",
                ),
            ],
        ),
        _claude_conv(
            "Data-driven booking categories",
            berlin(2025, 4, 14, 20, 45),
            [
                (
                    H,
                    "Here is my categorize_booking function. It is a long if/elif chain over the booking purpose "
                    "(Vattenfall → Strom, BVG → Mobilität, REWE → Lebensmittel …). How would you make it data-driven?",
                ),
                (
                    A,
                    "Move the rules into a list of (pattern, category) pairs, compile the patterns once, and return "
                    "the first match; the list can then live in a TOML file users can edit:\n\n```python\nRULES = "
                    '[(re.compile(r"vattenfall", re.I), "Strom"), (re.compile(r"\\bbvg\\b", re.I), "Mobilität")]\n'
                    "\ndef categorize_booking(purpose: str) -> str:\n    for pattern, category in RULES:\n        if "
                    'pattern.search(purpose):\n            return category\n    return "Sonstiges"\n```',
                ),
            ],
        ),
        _claude_conv(
            "Ummelden in Berlin",
            berlin(2024, 3, 29, 9, 15),
            [
                (H, "I moved within Berlin. What do I need to bring to the Bürgeramt to re-register?"),
                (
                    A,
                    "Your ID card or passport, the filled-in registration form (Anmeldung einer Wohnung) and the "
                    "Wohnungsgeberbestätigung, the confirmation signed by your landlord that you moved in. Registration "
                    "is free.",
                ),
            ],
        ),
        _claude_conv(
            "Vietnamese food in Berlin",
            berlin(2025, 5, 8, 18, 0),
            [
                (
                    H,
                    "A friend from Japan visits Berlin next week and loves Vietnamese food. We live in Neukölln. "
                    "Where should I take her?",
                ),
                (
                    A,
                    "Make a trip of it: the Dong Xuan Center in Lichtenberg is a huge Asian wholesale market with food "
                    "stalls where the Vietnamese community eats; have phở or bánh cuốn there. Closer to home, the "
                    "stretch of Kottbusser Damm and Sonnenallee has several small places for bún and summer rolls.",
                ),
            ],
        ),
        _claude_conv(
            "Berlin half marathon date",
            berlin(2025, 11, 3, 8, 30),
            [
                (H, "When is the Berlin half marathon in 2026 and when does registration close?"),
                (
                    A,
                    "Let me check.",
                    {
                        "blocks": [
                            {"type": "text", "text": "Let me check."},
                            {
                                "type": "tool_use",
                                "name": "web_search",
                                "input": {"query": "Berliner Halbmarathon 2026 Datum Anmeldung"},
                            },
                            {
                                "type": "tool_result",
                                "name": "web_search",
                                "content": [
                                    {
                                        "type": "text",
                                        "text": "GENERALI BERLINER HALBMARATHON 2026 – Sonntag, 5. April 2026. "
                                        "Anmeldung geöffnet, solange Startplätze verfügbar sind.",
                                    }
                                ],
                            },
                            {
                                "type": "text",
                                "text": "The 2026 Berlin half marathon is on Sunday, 5 April 2026. Registration "
                                "stays open until the places are gone, which usually happens in February.",
                            },
                        ]
                    },
                ),
            ],
        ),
    ]
    s.file("claude/conversations.json", json.dumps(convs, ensure_ascii=False, indent=1).encode("utf-8"))

    q(
        "crosslingual",
        "what deadline did I give the property management about the mould?",
        [("claude", "bis zum 15.02.2026")],
        lang="en>de",
    )
    q("identifier", "TS2345", [("claude", "TS2345")])
    q(
        "paraphrase",
        "how do I stop TypeScript complaining that a route parameter might be undefined?",
        [("claude", "if (!categoryId) return;"), ("code", "if (!categoryId) return;")],
    )
    q(
        "filtered",
        "Postgres refusing new connections",
        [("claude", "pgbouncer in front")],
        connectors=["claude"],
        distractors=[("mail", "Postgres started refusing connections")],
    )
    q("paraphrase", "is what I pay for the caretaker reasonable?", [("claude", "caretaker service")])
    q(
        "filtered",
        "Hausmeister Kosten",
        [("claude", "caretaker service")],
        where={"attachments": {"in": ["Betriebskostenabrechnung_2024.pdf"]}},
        distractors=[("mail", "Hausmeisterdienst")],
    )
    q("cjk", "感谢信 上海 招待", [("claude", "红烧肉特别好吃")])
    q("identifier", "categorize_booking", [("code", "categorize_booking"), ("claude", "categorize_booking")])
    q("paraphrase", "Vietnamese food places to show a visiting friend", [("claude", "Dong Xuan Center")])


# ============================================================================ code

_CODE = {
    "README.md": """# kassenbuch

Household bookkeeping from bank CSV exports (N26, Sparkasse, DKB): imports bookings, assigns
categories, matches them to invoices and shows monthly budgets in a small web UI.

## Usage

```
kassenbuch import exports/n26-2025-06.csv
kassenbuch reconcile --invoices ~/Notes/rechnungen
kassenbuch serve
```

## Error codes

| code | meaning |
|---|---|
| KB-E017 | duplicate booking (same date, amount, counterparty and reference) |
| KB-E021 | unknown currency in the amount column |
| KB-E030 | IBAN failed validation |
""",
    ".gitignore": "__pycache__/\n*.pyc\n.venv/\nnode_modules/\ndist/\nexports/\n*.sqlite\n.env\n",
    ".env": "KASSENBUCH_DB=kassenbuch.sqlite\nKASSENBUCH_SECRET=dev-only-7f3a\n",
    "exports/n26-2025-06.csv": "\ufeffDate,Payee,Account number,Amount (EUR),Payment reference\n"
    "2025-06-02,Ingrid Baumann,DE27100500000190441287,-1120.00,Miete Juni Ref. N26-TX-88231907\n"
    "2025-06-03,REWE Markt GmbH,,-43.17,Karte 4411\n",
    "node_modules/left-pad/index.js": "module.exports = function leftPad(s, n) { return String(s).padStart(n); };\n",
    "pyproject.toml": """[project]
name = "kassenbuch"
version = "0.4.0"
requires-python = ">=3.11"
dependencies = ["click>=8", "fastapi>=0.110", "uvicorn>=0.29"]

[project.scripts]
kassenbuch = "kassenbuch.cli:main"
""",
    "kassenbuch/__init__.py": "",
    "kassenbuch/errors.py": '''"""Error codes shown to the user; each has a stable code so support questions can quote it."""


class KassenbuchError(Exception):
    code = "KB-E000"

    def __str__(self) -> str:
        return f"{self.code}: {super().__str__()}"


class DuplicateBooking(KassenbuchError):
    """KB-E017: the same booking (date, amount, counterparty, reference) was imported twice."""

    code = "KB-E017"


class UnknownCurrency(KassenbuchError):
    """KB-E021: the amount column holds a currency we do not know."""

    code = "KB-E021"


class InvalidIban(KassenbuchError):
    """KB-E030: an IBAN whose check digits are wrong."""

    code = "KB-E030"
''',
    "kassenbuch/importer.py": '''"""Reading bank CSV exports into Booking records."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from kassenbuch.errors import DuplicateBooking, InvalidIban, UnknownCurrency

CURRENCIES = {"EUR", "€"}


@dataclass(frozen=True)
class Booking:
    day: date
    counterparty: str
    iban: str
    cents: int
    reference: str

    @property
    def key(self) -> tuple:
        return (self.day, self.cents, self.counterparty.lower(), self.reference)


def normalize_iban(raw: str) -> str:
    """Upper-case, without spaces; raises InvalidIban when the mod-97 check fails."""
    iban = raw.replace(" ", "").upper()
    if not iban:
        return ""
    digits = "".join(str(int(ch, 36)) for ch in iban[4:] + iban[:4])
    if int(digits) % 97 != 1:
        raise InvalidIban(raw)
    return iban


def _cents(amount: str, currency: str = "EUR") -> int:
    if currency not in CURRENCIES:
        raise UnknownCurrency(currency)
    amount = amount.replace(".", "").replace(",", ".") if "," in amount else amount
    return round(float(amount) * 100)


def parse_sepa_csv(path: Path) -> list[Booking]:
    """Bookings of an N26 or Sparkasse CSV export. The file is read as utf-8-sig so that the
    byte order mark some banks put first does not end up in the first column's name."""
    text = path.read_text(encoding="utf-8-sig")
    dialect = csv.Sniffer().sniff(text[:4096], delimiters=",;")
    seen: set[tuple] = set()
    out = []
    for row in csv.DictReader(io.StringIO(text), dialect=dialect):
        booking = Booking(
            day=date.fromisoformat(row.get("Date") or row["Buchungstag"]),
            counterparty=row.get("Payee") or row.get("Beguenstigter/Zahlungspflichtiger", ""),
            iban=normalize_iban(row.get("Account number") or row.get("Kontonummer/IBAN", "")),
            cents=_cents(row.get("Amount (EUR)") or row["Betrag"], row.get("Waehrung", "EUR")),
            reference=row.get("Payment reference") or row.get("Verwendungszweck", ""),
        )
        if booking.key in seen:
            raise DuplicateBooking(f"{booking.day} {booking.counterparty} {booking.cents}")
        seen.add(booking.key)
        out.append(booking)
    return out
''',
    "kassenbuch/categorize.py": '''"""Categories for bookings, from their counterparty and purpose."""

from __future__ import annotations

import re

from kassenbuch.importer import Booking

RULES = [
    (re.compile(r"vattenfall", re.I), "Strom"),
    (re.compile(r"\\bbvg\\b|deutschlandticket", re.I), "Mobilität"),
    (re.compile(r"rewe|edeka|lidl|bio company", re.I), "Lebensmittel"),
    (re.compile(r"baumann|miete", re.I), "Miete"),
    (re.compile(r"spotify|huk24", re.I), "Verträge"),
]


def categorize_booking(booking: Booking) -> str:
    """The first rule matching the counterparty or the reference, else "Sonstiges"."""
    text = f"{booking.counterparty} {booking.reference}"
    for pattern, category in RULES:
        if pattern.search(text):
            return category
    return "Sonstiges"
''',
    "kassenbuch/reconcile.py": '''"""Which booking paid which invoice."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta

from kassenbuch.importer import Booking


@dataclass(frozen=True)
class Invoice:
    number: str
    issuer: str
    day: date
    cents: int


def reconcile_invoices(bookings: list[Booking], invoices: list[Invoice], tolerance_cents: int = 50
                       ) -> dict[str, Booking | None]:
    """Match each invoice to the booking that paid it: the amount within ``tolerance_cents``, the
    counterparty's name containing the issuer's first word, the booking at most 45 days after the
    invoice date. Each booking pays at most one invoice; unmatched invoices map to None."""
    used: set[int] = set()
    out: dict[str, Booking | None] = {}
    for inv in sorted(invoices, key=lambda i: i.day):
        word = inv.issuer.split()[0].lower()
        match = None
        for n, b in enumerate(bookings):
            if n in used or not (inv.day <= b.day <= inv.day + timedelta(days=45)):
                continue
            if abs(-b.cents - inv.cents) <= tolerance_cents and word in b.counterparty.lower():
                match = n
                break
        if match is not None:
            used.add(match)
        out[inv.number] = bookings[match] if match is not None else None
    return out
''',
    "kassenbuch/report.py": '''"""Monthly sums per category, and money formatting for the CLI."""

from __future__ import annotations

from collections import defaultdict

from kassenbuch.categorize import categorize_booking
from kassenbuch.importer import Booking


def monthly_summary(bookings: list[Booking]) -> dict[str, dict[str, int]]:
    """{"2025-06": {"Miete": -112000, ...}} in cents."""
    out: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for b in bookings:
        out[f"{b.day:%Y-%m}"][categorize_booking(b)] += b.cents
    return {month: dict(cats) for month, cats in sorted(out.items())}


def format_euro(cents: int) -> str:
    """German style: 1.234,56 €."""
    sign = "-" if cents < 0 else ""
    euros, rest = divmod(abs(cents), 100)
    return f"{sign}{euros:,}".replace(",", ".") + f",{rest:02d} €"
''',
    "tests/test_importer.py": """from pathlib import Path

import pytest

from kassenbuch.errors import DuplicateBooking, InvalidIban
from kassenbuch.importer import normalize_iban, parse_sepa_csv


def test_normalize_iban_strips_spaces_and_checks_digits():
    assert normalize_iban("de27 1005 0000 0190 4412 87") == "DE27100500000190441287"
    with pytest.raises(InvalidIban):
        normalize_iban("DE27 1005 0000 0190 4412 88")


def test_duplicate_rows_raise(tmp_path: Path):
    f = tmp_path / "x.csv"
    row = "2025-06-03,REWE,,-43.17,Karte\\n"
    f.write_text("Date,Payee,Account number,Amount (EUR),Payment reference\\n" + row + row)
    with pytest.raises(DuplicateBooking):
        parse_sepa_csv(f)
""",
    "web/package.json": """{
  "name": "kassenbuch-web",
  "private": true,
  "version": "0.4.0",
  "type": "module",
  "scripts": {"dev": "vite", "build": "tsc -b && vite build"},
  "dependencies": {"react": "^18.3.1", "react-dom": "^18.3.1", "react-router-dom": "^6.26.0"},
  "devDependencies": {"typescript": "^5.5.4", "vite": "^5.4.0"}
}
""",
    "web/src/api.ts": """export interface MonthlySummary {
  month: string;
  categories: Record<string, number>;
}

const BASE = "/api";

export async function fetchMonthlySummary(month: string, categoryId?: string): Promise<MonthlySummary> {
  const params = new URLSearchParams({ month });
  if (categoryId) params.set("category", categoryId);
  const res = await fetch(`${BASE}/summary?${params}`);
  if (!res.ok) throw new Error(`summary failed: ${res.status}`);
  return res.json();
}

export async function fetchBookings(month: string): Promise<unknown[]> {
  const res = await fetch(`${BASE}/bookings?month=${encodeURIComponent(month)}`);
  return res.json();
}
""",
    "web/src/hooks/useBudget.ts": """import { useEffect, useState } from "react";
import { useParams } from "react-router-dom";
import { fetchMonthlySummary, MonthlySummary } from "../api";

export function useBudget(month: string) {
  const { categoryId } = useParams();
  const [summary, setSummary] = useState<MonthlySummary | null>(null);
  useEffect(() => {
    if (!categoryId) return;
    fetchMonthlySummary(month, categoryId).then(setSummary);
  }, [month, categoryId]);
  return summary;
}
""",
    "web/src/components/BudgetChart.tsx": """import { MonthlySummary } from "../api";
import { formatEuro } from "../format";

export function BudgetChart({ summary }: { summary: MonthlySummary }) {
  const rows = Object.entries(summary.categories).sort((a, b) => a[1] - b[1]);
  return (
    <table className="budget">
      <tbody>
        {rows.map(([name, cents]) => (
          <tr key={name}>
            <td>{name}</td>
            <td className="bar" style={{ width: `${Math.min(100, Math.abs(cents) / 1000)}%` }} />
            <td>{formatEuro(cents)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
""",
    "web/src/format.js": """const EURO = new Intl.NumberFormat("de-DE", { style: "currency", currency: "EUR" });

export function formatEuro(cents) {
  return EURO.format(cents / 100);
}
""",
}


def _code(s: _Set) -> None:
    q = s.q
    t = datetime(2025, 6, 10, 18, 0, tzinfo=UTC)
    for n, (rel, text) in enumerate(sorted(_CODE.items())):
        s.file(f"code/{rel}", text, t + timedelta(hours=n))
    q("identifier", "KB-E017", [("code", "KB-E017")])
    q("identifier", "normalize_iban", [("code", "normalize_iban")])
    q(
        "paraphrase",
        "where in the code are bank transactions matched against bills?",
        [("code", "def reconcile_invoices")],
    )
    q(
        "paraphrase",
        "how does the importer cope with the byte order mark at the start of bank exports?",
        [("code", "utf-8-sig")],
    )
    q(
        "filtered",
        "monthly summary",
        [("code", "export async function fetchMonthlySummary")],
        where={"ext": "ts"},
        distractors=[("code", "def monthly_summary")],
    )
    q(
        "filtered",
        "format an amount of money as a euro string",
        [("code", "def format_euro")],
        where={"language": "python"},
        distractors=[("code", "export function formatEuro")],
    )
    q("negative", "N26 transaction N26-TX-88231907", absent=["N26-TX-88231907"])


# ============================================================================ notes


def _lease_pdf() -> bytes:
    return make_pdf(
        [
            [
                "# Wohnraummietvertrag",
                "",
                "zwischen Frau Ingrid Baumann, Hausverwaltung Baumann, Karl-Marx-Straße 101, 12043 Berlin (Vermieterin)",
                "und Herrn Jan Hoffmann, geboren am 14.02.1991 (Mieter)",
                "",
                "# § 1 Mietsache",
                "Vermietet wird die Wohnung Weserstraße 41, 12045 Berlin, 3. OG links, bestehend aus 2 Zimmern,",
                "Küche, Bad und Balkon, Wohnfläche ca. 68 m². Mitvermietet ist das Kellerabteil Nr. 7.",
                "",
                "# § 2 Mietzeit",
                "Das Mietverhältnis beginnt am 01.05.2023 und läuft auf unbestimmte Zeit.",
                "",
                "# § 3 Miete",
                "Die Nettokaltmiete beträgt monatlich 1.120,00 €. Vorauszahlung Betriebskosten 180,00 €,",
                "Vorauszahlung Heizkosten 95,00 €. Gesamtmiete monatlich: 1.395,00 €.",
                "Die Miete ist bis zum dritten Werktag eines Monats auf das Konto der Vermieterin zu zahlen:",
                "IBAN DE27 1005 0000 0190 4412 87, Berliner Sparkasse.",
            ],
            [
                "# § 4 Indexmiete",
                "Die Nettokaltmiete ist an den Verbraucherpreisindex für Deutschland gekoppelt (§ 557b BGB).",
                "Eine Anpassung ist frühestens nach Ablauf eines Jahres und nur schriftlich möglich.",
                "",
                "# § 5 Kaution",
                "Der Mieter leistet eine Mietsicherheit in Höhe von 3.360,00 € (drei Nettokaltmieten).",
                "Sie kann in drei gleichen monatlichen Raten gezahlt werden.",
                "",
                "# § 6 Kündigung",
                "Die Kündigungsfrist für den Mieter beträgt drei Monate zum Monatsende.",
                "",
                "# § 9 Tierhaltung",
                "Kleintiere (Fische, Hamster, Wellensittiche) dürfen ohne Erlaubnis gehalten werden.",
                "Hunde und Katzen nur mit schriftlicher Zustimmung der Vermieterin.",
            ],
            [
                "# § 12 Schönheitsreparaturen",
                "Die Wohnung wurde renoviert übergeben. Schönheitsreparaturen trägt der Mieter nach Bedarf.",
                "",
                "# § 14 Hausordnung",
                "Die Hausordnung ist Bestandteil dieses Vertrags. Ruhezeiten: 22 bis 6 Uhr.",
                "",
                "Berlin, den 14.04.2023",
                "",
                "Ingrid Baumann (Vermieterin)        Jan Hoffmann (Mieter)",
            ],
        ],
        title="Mietvertrag Weserstraße 41",
        author="Hausverwaltung Baumann",
    )


def _invoice_pdf() -> bytes:
    return make_pdf(
        [
            [
                "# Elektro Schulz GmbH",
                "Meisterbetrieb · Hermannstraße 210 · 12049 Berlin · Tel. 030 6124 8810",
                "",
                "Herrn Jan Hoffmann",
                "Weserstraße 41",
                "12045 Berlin",
                "",
                "# Rechnung Nr. ES-2025-0412",
                "Rechnungsdatum: 14.04.2025     Leistungsdatum: 10.04.2025",
                "",
                "Pos. 1   Anschluss Waschmaschine inkl. Zulaufschlauch und Aquastop      1 Std.     68,00 €",
                "Pos. 2   Neue Schuko-Steckdose Bad, Aufputz, FI-Schutzschalter geprüft   1 Stk.     54,00 €",
                "Pos. 3   Anfahrt                                                          pauschal   35,00 €",
                "Pos. 4   Material                                                                   43,00 €",
                "",
                "Nettobetrag 200,00 €",
                "MwSt. 19 % 38,00 €",
                "Rechnungsbetrag 238,00 €",
                "",
                "Zahlbar innerhalb von 14 Tagen ohne Abzug.",
                "Bankverbindung: Berliner Volksbank, IBAN DE61 1009 0000 2288 1190 05",
            ]
        ],
        title="Rechnung ES-2025-0412",
        author="Elektro Schulz GmbH",
    )


def _dentist_pdf() -> bytes:
    return make_pdf(
        [
            [
                "# Zahnarztpraxis Dr. Aylin Yilmaz",
                "Sonnenallee 112 · 12045 Berlin",
                "",
                "Herrn Jan Hoffmann, Weserstraße 41, 12045 Berlin",
                "",
                "# Privatrechnung Nr. ZR-2025-1187",
                "Behandlungszeitraum: 03.09.2025",
                "",
                "03.09.2025   GOZ 1040   Professionelle Zahnreinigung, 28 Zähne                 82,30 €",
                "03.09.2025   GOZ 4050   Entfernung harter Beläge                                12,70 €",
                "",
                "Rechnungsbetrag 95,00 €",
                "Bitte überweisen Sie den Betrag innerhalb von 30 Tagen.",
            ]
        ],
        title="Privatrechnung ZR-2025-1187",
    )


_NOTES = {
    "china-packliste.md": (
        """# Packing list China (Sep/Oct 2025)

## Documents
- Passport with visa, copies in the cloud
- Printed hotel bookings: Shanghai, Huangshan, Hangzhou

## Phone
- Alipay linked to Visa card, tested with a 1 CNY payment
- VPN installed and tested before leaving
- 12306 account for train tickets, passport number entered
- Offline maps for Shanghai and Hangzhou

## Other
- Power adapter (type A/I)
- 2,000 CNY cash from the Reisebank
- Hiking shoes, rain jacket
- Gifts for Wei's parents: Lebkuchen and a Riesling
""",
        datetime(2025, 9, 20, 10, 0, tzinfo=UTC),
    ),
    "rezepte/kaesespaetzle.md": (
        """# Käsespätzle

Für 4 Personen:

- 500 g Mehl, 5 Eier, 1 TL Salz, etwa 150 ml Mineralwasser
- 200 g Bergkäse und 100 g Emmentaler, gerieben
- 3 Zwiebeln, in Ringen goldbraun gebraten

Teig schlagen, bis er Blasen wirft, 10 Minuten ruhen lassen. Portionsweise ins siedende Salzwasser
schaben, abschöpfen, lagenweise mit Käse in eine warme Form schichten. Zum Schluss die Röstzwiebeln
darüber. Dazu grüner Salat.
""",
        datetime(2024, 11, 24, 17, 0, tzinfo=UTC),
    ),
    "rezepte/shakshuka.md": (
        """# Shakshuka

Serves 2. Soften one onion and a red pepper in olive oil, add two cloves of garlic, cumin,
smoked paprika and a pinch of caraway. Add a tin of tomatoes, simmer 10 minutes, make four wells and crack
the eggs in. Lid on, 6–8 minutes until the whites are set. Feta and parsley on top, bread on the side.
""",
        datetime(2025, 2, 2, 11, 0, tzinfo=UTC),
    ),
    "rezepte/weizensauerteig-brot.md": (
        """# Weizenbrot mit Sauerteig

- Anstellgut 50 g (aktiv, 4 Stunden nach dem Füttern)
- 500 g Weizenmehl Typ 550, 350 g Wasser, 10 g Salz

Autolyse 1 Stunde, dann Anstellgut und Salz einarbeiten. Stockgare 5 Stunden bei 24 °C mit vier
Dehnen-und-Falten-Runden, formen, über Nacht in den Kühlschrank. Im Topf backen: 20 Minuten mit
Deckel bei 250 °C, 25 Minuten ohne bei 230 °C.
""",
        datetime(2024, 4, 7, 9, 0, tzinfo=UTC),
    ),
    "buecher/atomic-habits.md": (
        """# Atomic Habits – James Clear

Read: January 2025.

- Small improvements compound; focus on systems, not goals.
- Habit stacking: "After I pour my morning coffee, I do 10 minutes of Chinese flashcards."
- Make it obvious, attractive, easy, satisfying. Inverse for bad habits: phone stays in the hallway.
- Identity: "I am someone who runs" beats "I want to run a half marathon".
""",
        datetime(2025, 1, 30, 21, 0, tzinfo=UTC),
    ),
    "buecher/huozhe.md": (
        """# 活着 – 余华

Read in July 2025 (Li Na's recommendation). Took about five weeks with Pleco open.

New words: 地主 (landlord), 赌博 (gambling), 长工 (farmhand), 熬 (to endure).

The story of Fugui, who loses everything and everyone and still keeps living. Sad, but the language
is simple and very readable.
""",
        datetime(2025, 7, 28, 20, 0, tzinfo=UTC),
    ),
    "arbeit/2025-02-db-migration.md": (
        """# Billing DB migration – decision meeting 2025-02-19

Attendees: Priya, Tom, Jan, Mehmet

Decision: move the billing database from MySQL 5.7 to Postgres 16 in Q2. Cutover weekend 14–15 June.

- Rollback: keep binlog replication to the old primary for 7 days after cutover.
- Jan owns the data-diff job; Tom the infrastructure; Mehmet the ORM changes.
- Open question: do we keep the legacy invoice endpoint alive during cutover? (→ BE-1193)
""",
        datetime(2025, 2, 19, 15, 0, tzinfo=UTC),
    ),
    "arbeit/oncall-runbook.md": (
        """# On-call runbook (my notes)

## DiskPressure on a db-prod-* node
1. `df -h /var/lib/postgresql` – which volume?
2. Look for bloat: `vacuumdb --all --analyze-in-stages` during low traffic.
3. Old WAL piling up? Check the replication slots.
4. Escalate to #infra after 30 minutes if it keeps growing.

## Checkout errors
Check the payments dashboard in Grafana first, then the connection count on the primary.
""",
        datetime(2025, 1, 12, 19, 0, tzinfo=UTC),
    ),
    "wifi-router.md": (
        """# Home network

Router: FRITZ!Box 7590 AX. Admin page: http://fritz.box (password in Bitwarden, entry "FRITZ!Box admin").

- WiFi: Hoffmann-5G and Hoffmann-2G
- Guest network "Weser-Gast", switched on when people visit
- Printer has a fixed address: 192.168.178.40
""",
        datetime(2024, 8, 18, 21, 0, tzinfo=UTC),
    ),
    "ideen/geschenke.md": (
        """# Gift ideas

- Felix (birthday 9 June): bouldering 10-visit card for Berta Block, Tocotronic vinyl
- Mama: photo book of Oma's 85th, garden gloves
- Sophie: pottery course in Neukölln, the new Sally Rooney
- Camille & Julien: contribution to the honeymoon
""",
        datetime(2025, 5, 20, 8, 0, tzinfo=UTC),
    ),
    "steuer/steuer-2024.md": (
        """# Steuererklärung 2024

- [x] Lohnsteuerbescheinigung
- [x] Arbeitszimmer: 9 m², Nachweis Grundriss
- [x] Fahrtkosten PyCon Darmstadt (Bahn 2 × 29,90 €)
- [x] Spenden: Ärzte ohne Grenzen 120 €

Abgegeben am 28.06.2025 über ELSTER.
Erstattung laut Bescheid: 1.218,00 € (eingegangen am 29.07.2025).
""",
        datetime(2025, 7, 30, 9, 0, tzinfo=UTC),
    ),
    "sprachen/spanisch-vokabeln.md": (
        """# Spanisch – Vokabeln

- el socarrat – die knusprige Reisschicht am Pfannenboden
- la mascletà – Feuerwerk am Tag, nur Knall und Rauch
- el garrofó – große weiße Bohne aus Valencia
- tener ganas de – Lust haben auf
- aprobar el examen – die Prüfung bestehen
""",
        datetime(2025, 3, 22, 19, 0, tzinfo=UTC),
    ),
    "sprachen/chinesisch.md": (
        """# 中文笔记

## 第三声变调
两个第三声在一起的时候，第一个变成第二声，例如：你好 nǐ hǎo → ní hǎo，很好 hěn hǎo → hén hǎo。

## 量词
一本书、一张票、一杯茶、一家咖啡馆

## 常用句子
- 不好意思，请问地铁站怎么走？
- 这个多少钱？能便宜一点吗？
""",
        datetime(2025, 3, 20, 21, 0, tzinfo=UTC),
    ),
    "sprachen/francais.md": (
        """# Français – expressions

- avoir la flemme – keine Lust haben
- c'est pas la mer à boire – das ist nicht so schlimm
- poser un lapin à quelqu'un – jemanden versetzen
- bouchon (à Lyon) – typisches Lyoner Restaurant
""",
        datetime(2025, 6, 1, 10, 0, tzinfo=UTC),
    ),
    "fahrrad.md": (
        """# Fahrrad

Rose Backroad AL, Rahmenhöhe 57, gekauft 03/2023 bei Rose Berlin.

- Rahmennummer: WBK4471902
- Codiert bei der Polizei am 12.05.2023
- Schloss: Abus Granit X-Plus 540, Schlüsselnummer 14872
""",
        datetime(2023, 5, 12, 18, 0, tzinfo=UTC),
    ),
    "dokumente.md": (
        """# Dokumente

- Reisepass Nr. C4J7L9K21, gültig bis 11.2031
- Personalausweis gültig bis 03.2029
- Führerschein Klasse B (unbefristet)
- Steuer-ID: siehe ELSTER
- Krankenversicherung: Techniker Krankenkasse
""",
        datetime(2025, 7, 2, 12, 0, tzinfo=UTC),
    ),
    "reisen/valencia-2025.md": (
        """# Valencia, 14–18 March 2025

- Staying at Hostal La Alameda; dinner at Lucía's on Saturday
- Mascletà every day at 14:00 on Plaza del Ayuntamiento
- La Cremà is on the 19th – I fly back on the 18th, so I miss it
- Horchata and fartons at Santa Catalina
""",
        datetime(2025, 3, 12, 20, 0, tzinfo=UTC),
    ),
    "reisen/lyon-hochzeit.md": (
        """# Lyon – Hochzeit Camille & Julien (12.07.2025)

- Zug Paris → Lyon am 11.07., Hotel du Parc
- Geschenk: Beitrag zur Hochzeitsreise, 150 €
- Rede vorbereiten (Französisch!) – auf Deutsch schreiben und übersetzen lassen
- Anzug: der hellgraue, keine Krawatte
""",
        datetime(2025, 7, 6, 9, 0, tzinfo=UTC),
    ),
    "reisen/2025-10-huangshan.md": (
        """# Huangshan, 1–3 October 2025

Day 1: arrived at the Beihai Hotel around 15:00 with dead legs. Crowds everywhere (Golden Week).

Day 2: alarm at 4:50, sunrise at Shixin Peak at 5:48. Sea of clouds until the fog cleared around 7.
Wang Lei was sad about his drone, Liu Yang did the canyon loop twice as fast as the rest of us.

Day 3: Flying Rock before 8, down in the afternoon, bus to Tunxi old street for dinner.
""",
        datetime(2025, 10, 4, 22, 0, tzinfo=UTC),
    ),
    "wohnung/handwerker.md": (
        """# Handwerker & Wohnung

- Elektro Schulz kommt am 10.04. wegen Waschmaschinenanschluss und Steckdose im Bad
- Fenster im Schlafzimmer klemmt → Frau Baumann Bescheid gesagt (März)
- Schimmel im Bad hinter der Dusche → Brief an die Hausverwaltung (Januar 2026)
""",
        datetime(2026, 1, 21, 9, 0, tzinfo=UTC),
    ),
    "todo.md": (
        """# Todo

- [ ] Dias für Oma digitalisieren
- [ ] Zelt an Lucía verleihen (trocken zurück?)
- [ ] Steuererklärung 2025 vorbereiten
- [x] Fahrrad zur Inspektion
""",
        datetime(2025, 8, 1, 8, 0, tzinfo=UTC),
    ),
}

_SAUERTEIG_HTML = """<!DOCTYPE html>
<html lang="de"><head><meta charset="utf-8"><title>Roggensauerteig ansetzen und führen – Brotzeit Blog</title>
<script>window.dataLayer=window.dataLayer||[];function gtag(){dataLayer.push(arguments)}gtag('js',new Date());</script>
<style>body{font-family:Georgia}nav a{margin:0 1em}</style></head>
<body><header><a href="/">Brotzeit Blog</a></header>
<nav><a href="/rezepte">Rezepte</a><a href="/grundlagen">Grundlagen</a><a href="/shop">Shop</a></nav>
<article><h1>Roggensauerteig ansetzen</h1>
<p>Für ein Roggenmischbrot brauchst du Anstellgut 20 g, dazu 200 g Roggenmehl Type 1150 und 200 g Wasser
mit 40 °C. Alles verrühren und 16 Stunden bei Raumtemperatur reifen lassen.</p>
<h2>Woran erkenne ich einen reifen Sauerteig?</h2>
<p>Er hat sich verdoppelt, riecht mild säuerlich und zeigt an der Oberfläche Risse. Nimm vor dem Backen
wieder 20 g als Anstellgut für das nächste Mal ab und bewahre es im Kühlschrank auf.</p>
</article>
<aside><p>Newsletter abonnieren!</p></aside>
<footer><p>© 2024 Brotzeit Blog · Impressum · Datenschutz</p></footer>
</body></html>
"""
_HUANGSHAN_HTML = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Huangshan (Yellow Mountain) travel guide</title>
<script src="https://cdn.example-analytics.com/t.js"></script></head>
<body><nav><a href="/">Home</a> · <a href="/china">China</a> · <a href="/anhui">Anhui</a></nav>
<main><h1>Huangshan travel guide</h1>
<p>Entrance ticket: 190 CNY from March to November, 150 CNY in winter; show your passport at the gate.</p>
<p>Summit temperatures drop to around 5 °C at night even in October, and fog can close viewpoints for hours.</p>
<h2>Getting there</h2>
<p>High-speed trains from Shanghai Hongqiao reach Huangshan North in about three and a half hours. From the
station, buses go to Tangkou at the foot of the mountain.</p></main>
<footer>Copyright Travel Guides Ltd.</footer></body></html>
"""


def _notes(s: _Set) -> None:
    q = s.q
    for rel, (text, mtime) in _NOTES.items():
        s.file(f"notes/{rel}", text, mtime)
    s.file("notes/wohnung/Mietvertrag_Weserstrasse41.pdf", _lease_pdf(), datetime(2023, 4, 14, 12, tzinfo=UTC))
    s.file("notes/rechnungen/Rechnung_ES-2025-0412.pdf", _invoice_pdf(), datetime(2025, 4, 15, 8, tzinfo=UTC))
    s.file("notes/rechnungen/Zahnarzt_ZR-2025-1187.pdf", _dentist_pdf(), datetime(2025, 9, 10, 8, tzinfo=UTC))
    s.file("notes/web/Roggensauerteig ansetzen.html", _SAUERTEIG_HTML, datetime(2024, 3, 9, 10, tzinfo=UTC))
    s.file("notes/web/Huangshan travel guide.html", _HUANGSHAN_HTML, datetime(2025, 9, 11, 13, tzinfo=UTC))
    kasse = (
        "Kasse Volleyball Do – Stand 30.09.2025\r\n\r\nHallenmiete 2025: 1.260 € für 36 Termine\r\n"
        "Bälle (3 Stück Mikasa): 119,85 €\r\nKassenwart: Marco, Prüfer: Jan\r\n"
    )
    s.file("notes/volleyball-kasse.txt", kasse.encode("cp1252"), datetime(2025, 9, 30, 20, tzinfo=UTC))
    s.file(
        "notes/einkauf.txt",
        "Hafermilch\nZwiebeln\nBergkäse\nEier\nBrühe für Kartoffelsalat\n",
        datetime(2025, 12, 22, 9, tzinfo=UTC),
    )

    q("identifier", "ES-2025-0412", [("notes", "ES-2025-0412")])
    q("identifier", "ZR-2025-1187", [("notes", "ZR-2025-1187")])
    q("identifier", "IBAN DE27 1005 0000", [("notes", "DE27 1005 0000 0190 4412 87"), ("code", "DE27 1005 0000")])
    q("identifier", "WBK4471902", [("notes", "WBK4471902")])
    q(
        "crosslingual",
        "how much did the electrician charge in total?",
        [("notes", "Rechnungsbetrag 238,00 €")],
        lang="en>de",
    )
    q("crosslingual", "how big was the security deposit for my flat?", [("notes", "3.360,00 €")], lang="en>de")
    q(
        "crosslingual",
        "am I allowed to keep a dog in my apartment?",
        [("notes", "Hunde und Katzen nur mit schriftlicher Zustimmung")],
        lang="en>de",
    )
    q(
        "crosslingual",
        "what is my notice period if I want to move out?",
        [("notes", "Kündigungsfrist für den Mieter beträgt drei Monate")],
        lang="en>de",
    )
    q(
        "crosslingual",
        "how big was my 2024 tax refund?",
        [("notes", "Erstattung laut Bescheid: 1.218,00 €")],
        lang="en>de",
    )
    q("crosslingual", "when does my passport expire?", [("notes", "gültig bis 11.2031")], lang="en>de")
    q(
        "crosslingual",
        "how much cheese goes into the Swabian cheese noodles?",
        [("notes", "200 g Bergkäse")],
        lang="en>de",
    )
    q(
        "crosslingual",
        "how much starter culture do I need for the rye bread?",
        [("notes", "Anstellgut 20 g")],
        lang="en>de",
    )
    q(
        "crosslingual",
        "how much does the gym cost the volleyball group per year?",
        [("notes", "Hallenmiete 2025: 1.260")],
        lang="en>de",
    )
    q(
        "filtered",
        "Elektro Schulz Waschmaschine",
        [("notes", "ES-2025-0412")],
        where={"ext": {"in": ["pdf"]}},
        distractors=[("notes", "Elektro Schulz kommt am 10.04.")],
    )
    q(
        "filtered",
        "Sauerteig Anstellgut",
        [("notes", "Anstellgut 20 g")],
        where={"format": "html"},
        distractors=[("notes", "Anstellgut 50 g")],
    )
    q(
        "paraphrase",
        "what do I need to set up on my phone before travelling to China?",
        [("notes", "Alipay linked to Visa card")],
    )
    q(
        "paraphrase",
        "what's the trick of attaching a new routine to something I already do?",
        [("notes", "Habit stacking")],
    )
    q("paraphrase", "what did we decide about moving the billing database?", [("notes", "Postgres 16 in Q2")])
    q("paraphrase", "what to do when a database server runs out of disk space", [("notes", "vacuumdb")])
    q(
        "paraphrase",
        "how do I get into the router's admin page?",
        [("notes", "http://fritz.box"), ("imessage", "fritz.box eingeben")],
    )
    q("paraphrase", "present ideas for my brother", [("notes", "bouldering")])
    q("paraphrase", "how much is the entry ticket for the Yellow Mountain park?", [("notes", "190 CNY")])
    q(
        "paraphrase",
        "what time did the sun come up when we were on the mountain?",
        [("notes", "sunrise at Shixin Peak at 5:48")],
    )
    q("paraphrase", "which spices go into the egg and tomato skillet dish?", [("notes", "smoked paprika")])
    q("cjk", "第三声 变调 规则", [("notes", "第一个变成第二声")])


# ============================================================================ negatives, assembly


def _negatives(s: _Set) -> None:
    q = s.q
    q("negative", "my dentist appointment in Tokyo", absent=["Tokyo", "Tokio", "東京"])
    q("negative", "Netflix invoice", absent=["Netflix"])
    q("negative", "1Z999AA10123456784", absent=["1Z999AA10123456784"])
    q("negative", "JJD0001234567890", absent=["JJD0001234567890"])
    q("negative", "invoice RE-2025-08818", absent=["RE-2025-08818"])
    q("negative", "my flight to New York", absent=["New York", "JFK", "Newark"])
    q("negative", "car insurance renewal", absent=["Kfz-Versicherung", "car insurance", "Autoversicherung"])
    q("negative", "ORA-00942 table or view does not exist", absent=["ORA-00942"])
    q("negative", "ORA-12514", absent=["ORA-12514"])
    q("negative", "Kita-Platz Anmeldung für unser Kind", absent=["Kita-Platz", "Kindergarten"])
    q("negative", "Tesla Probefahrt", absent=["Tesla"])
    q("negative", "IKEA Küche Lieferung", absent=["IKEA"])
    q("negative", "京都 旅館 予約", absent=["京都", "旅館"])
    q("negative", "Paris marathon registration", absent=["Marathon de Paris", "Paris marathon"])
    q("negative", "piano lessons schedule", absent=["piano", "Klavier"])
    q("negative", "rust error E0599 no method named", absent=["E0599"])
    q("negative", "TS2322", absent=["TS2322"])
    q("negative", "¿cuándo es la boda de Lucía?", absent=["boda"])
    q("negative", "给张伟买什么生日礼物", absent=["生日"])
    q("negative", "Steuerbescheid 2019", absent=["Steuerbescheid 2019", "Einkommensteuer 2019"])
    q("negative", "Anwohnerparkausweis beantragen", absent=["Parkausweis", "parking permit"])
    q("negative", "vet appointment for the cat", absent=["Tierarzt", "vet appointment"])
    q("negative", "Lufthansa LH 400 Frankfurt", absent=["LH 400", "LH400"])
    q("negative", "SF1402871639521", absent=["SF1402871639521"])
    q("negative", "Camille's baby shower", absent=["baby shower"])


def assemble(inside: Any) -> _Set:
    """The set, with ``inside`` (``personal_inside.made()``: the attachments, scans, screenshots
    and photos, which this module's mails carry and its notes folder holds) laid in."""
    s = _Set()
    _mails(s, inside.home, inside.work)
    for part in (_browser, _calendars, _imessage, _wechat, _chatgpt, _claude, _code, _notes, _negatives):
        part(s)
    inside.add_to(s)  # its notes files and queries last: the older queries keep their ids
    return s


def write_set(out: Path, s: _Set, name: str, sources: list[tuple[str, str]], prefix: str) -> Path:
    """A generated home set written under ``out`` (what each persona's ``generate`` does): its
    files with their times under ``data/`` (replaced), ``home.json`` and ``queries.jsonl`` with
    ids ``<prefix>-001``…"""
    data = out / "data"
    if data.exists():
        shutil.rmtree(data)
    for rel, (content, mtime) in sorted(s.files.items()):
        path = data / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
        stamp = mtime.timestamp()
        os.utime(path, (stamp, stamp))
    home = {"name": name, "sources": [{"name": n, "connector": c, "path": f"data/{n}"} for n, c in sources]}
    (out / "home.json").write_text(json.dumps(home, indent=2) + "\n", encoding="utf-8")
    lines = [
        json.dumps({"_id": f"{prefix}-{n:03d}", **item}, ensure_ascii=False) for n, item in enumerate(s.queries, 1)
    ]
    (out / "queries.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


def main(
    argv: list[str] | None = None,
    module: str = __name__,
    make: Callable[[Path], Path] | None = None,
    kinds: Sequence[str] = KINDS,
) -> int:
    """``python -m MODULE OUT``: write a persona's set (``make``) and count its queries per kind."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or args[0].startswith("-"):
        print(f"usage: python -m {module} OUT", file=sys.stderr)
        return 2
    assert make is not None, "main(make=…): the persona's generate"
    out = make(Path(args[0]))
    queries = [json.loads(line) for line in (out / "queries.jsonl").read_text(encoding="utf-8").splitlines()]
    counts = {k: sum(1 for q in queries if q["kind"] == k) for k in kinds}
    print(f"wrote {out}: {len(queries)} queries ({', '.join(f'{k} {n}' for k, n in counts.items())})")
    return 0
