"""A persona's data folder, read: the clock its times are on, its people and the documents its
records carry; and the set being laid down from it (files with their times, judged queries),
written out as an evaluation home.

A persona is data (``personas/<x>/*.json``) so that a person's mail, chats and judgements can be
read and reviewed as what they are, and so that every persona is laid down by the same code
(:mod:`ragbag_evalsets.sources`) through the same writers (:mod:`ragbag_evalsets.formats`). What
is the persona's own and cannot be data (how its calendar app derives an event's UID, a time zone
its calendars are rewritten to) is a hook its module hands over.
"""

from __future__ import annotations

import json
import os
import random
import shutil
from collections.abc import Callable
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from ragbag_evalsets.formats.office import docx_file, odt_file, xlsx_file
from ragbag_evalsets.formats.pdf import make_pdf
from ragbag_evalsets.formats.pictures import photo, scan_pdf, screenshot

# Every persona's home has the same sources, one per connector (every connector ragbag ships), and
# the same query kinds, so ragbag.apps.eval.homes scores any of them unchanged.
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
    ("whatsapp", "whatsapp"),
    ("telegram", "telegram"),
    ("signal", "signal"),
    ("obsidian", "obsidian"),
    ("slack", "slack"),
    ("takeout", "takeout"),
    ("contacts", "contacts"),
]
KINDS = (
    *("identifier", "paraphrase", "crosslingual", "cjk", "person", "filtered", "negative"),
    *("attachment", "scanned", "screenshot", "photo"),  # about what lies inside records
)
# The time of a file whose format keeps its own times (a database, an mbox, an export).
DEFAULT_MTIME = datetime(2026, 2, 1, 12, 0, tzinfo=UTC)
MIME = {
    "pdf": "application/pdf",
    "scan": "application/pdf",
    "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "odt": "application/vnd.oasis.opendocument.text",
    "png": "image/png",
    "jpg": "image/jpeg",
}


class HomeSet:
    """Everything being generated: files (relative path -> bytes, mtime), queries, and the options
    a source is read with (by source name: what its files cannot say, such as who the persona is
    in a WhatsApp export and the phone's time zone)."""

    def __init__(self) -> None:
        self.files: dict[str, tuple[bytes, datetime]] = {}
        self.queries: list[dict] = []
        self.options: dict[str, dict[str, Any]] = {}

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


def text(value: str | list[str]) -> str:
    """A text in the data: one string, or a list of lines (easier to read and review)."""
    return "\n".join(value) if isinstance(value, list) else value


class Persona:
    """``folder``'s JSON files, and the set laid down from them (:attr:`s`). ``event_uid`` gives an
    event its UID as the persona's calendar app would (unless the event names one); ``ics`` is
    applied to every calendar file written."""

    def __init__(
        self,
        folder: Path,
        event_uid: Callable[[Persona, dict, dict], str],
        ics: Callable[[bytes], bytes] = lambda data: data,
    ) -> None:
        self.folder, self.event_uid, self.ics = folder, event_uid, ics
        self.meta = self.load("persona")
        self.tz = ZoneInfo(self.meta["timezone"])
        self.layout: dict[str, Any] = self.meta["layout"]
        self.people = {k: (v[0], v[1]) for k, v in self.meta["people"].items()}
        self.phones: dict[str, str] = self.meta.get("phones", {})
        self.s = HomeSet()
        self.pictures = random.Random(self.meta["pictures_seed"])  # scans and photos draw from it
        # documents.json: documents kept apart from the records that carry them (persona A's, what
        # lies inside its mail and notes), drawn first and in their order: the pictures' stream follows it.
        self.documents: dict[str, tuple[str, bytes]] = {}
        self.notes_documents: list[tuple[str, bytes, datetime]] = []
        listed = self.load("documents")["documents"] if (folder / "documents.json").exists() else []
        for d in listed:
            data = self.draw(d)
            if "path" in d:
                self.notes_documents.append((d["path"], data, self.time(d["mtime"])))
            else:
                assert d["name"] not in self.documents, d["name"]
                self.documents[d["name"]] = (MIME[d["type"]], data)

    def load(self, name: str) -> Any:
        return json.loads((self.folder / f"{name}.json").read_text(encoding="utf-8"))

    def time(self, value: str) -> datetime:
        """``2025-06-12 08:00`` is the persona's wall clock; an explicit offset (``Z``, ``+09:00``) is kept."""
        when = datetime.fromisoformat(value)
        return when.replace(tzinfo=self.tz) if when.tzinfo is None else when

    def cal_time(self, value: str) -> date | datetime:
        """An event's start or end: a date (all day), or a time shown on the persona's clock."""
        if len(value) == 10:
            return date.fromisoformat(value)
        return self.time(value).astimezone(self.tz)

    def who(self, ref: str | list[str]) -> tuple[str, str]:
        """A person: a key of persona.json's people, or [name, address] given in place."""
        return self.people[ref] if isinstance(ref, str) else (ref[0], ref[1])

    def handle(self, ref: str | None) -> str | None:
        """A chat handle: a key of persona.json's phones, a raw handle, or None for the persona."""
        return None if ref is None else self.phones.get(ref, ref)

    def draw(self, a: dict) -> bytes:
        """A document's bytes, by its type."""
        kind = a["type"]
        if kind == "pdf":
            return make_pdf(a["pages"], a.get("title", ""), a.get("author", ""))
        if kind == "scan":
            return scan_pdf(a["pages"], a.get("title", ""), self.pictures)
        if kind == "docx":
            return docx_file([(k, v) for k, v in a["blocks"]], a.get("title", ""), a.get("author", ""))
        if kind == "xlsx":
            return xlsx_file([(n, rows) for n, rows in a["sheets"]], a.get("author", ""))
        if kind == "odt":
            return odt_file([(k, v) for k, v in a["blocks"]], a.get("title", ""))
        if kind == "png":
            rows = [(st, t) for st, t in a["rows"]]
            return screenshot(rows, a.get("width", 720), dark=a.get("dark", False), bar=a.get("bar", ""))
        if kind == "jpg":
            make, model = a["camera"]
            return photo(self.pictures, a["taken"], a["offset"], a["lat"], a["lon"], make, model, a["look"])
        raise ValueError(f"unknown document type {kind!r}")

    def attachment(self, a: dict) -> tuple[str, str, bytes]:
        """A mail's attachment: one of documents.json by name, or drawn from its own description."""
        if "document" in a:
            mime, data = self.documents[a["document"]]
            return a["document"], mime, data
        return a["name"], MIME[a["type"]], self.draw(a)


def write_set(out: Path, s: HomeSet, name: str, prefix: str) -> Path:
    """The set written under ``out``: its files with their times under ``data/`` (replaced),
    ``home.json`` (a source's ``options`` where it has some) and ``queries.jsonl`` with ids
    ``<prefix>-001``…; nothing else is touched."""
    data = out / "data"
    if data.exists():
        shutil.rmtree(data)
    for rel, (content, mtime) in sorted(s.files.items()):
        path = data / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
        stamp = mtime.timestamp()
        os.utime(path, (stamp, stamp))
    sources = [
        {"name": n, "connector": c, "path": f"data/{n}", **({"options": s.options[n]} if n in s.options else {})}
        for n, c in SOURCES
    ]
    home = {"name": name, "sources": sources}
    (out / "home.json").write_text(json.dumps(home, indent=2) + "\n", encoding="utf-8")
    lines = [
        json.dumps({"_id": f"{prefix}-{n:03d}", **item}, ensure_ascii=False) for n, item in enumerate(s.queries, 1)
    ]
    (out / "queries.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out
