"""The records every connector emits and every stage consumes.

Ids are derived, never random, so that a rebuild of unchanged data produces the same rows and
the diff against the previous build is empty.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

# The sender name every chat connector gives the exporting user's own messages: the owner is
# "Me" in every source, whatever name each app knows them by (search.mentions names no one by it).
ME = "Me"


def stable_hash(*parts: str, length: int = 32) -> str:
    """A short, stable hex digest of the parts (NUL-separated so ("ab","c") != ("a","bc"))."""
    h = hashlib.blake2b(digest_size=length // 2)
    for part in parts:
        h.update(part.encode("utf-8", "surrogatepass"))
        h.update(b"\0")
    return h.hexdigest()


def doc_id_for(source: str, native_id: str) -> str:
    """Stable document id from the source name and the record's own id (path, message-id...)."""
    return stable_hash(source, native_id)


def utc(dt: datetime | None) -> datetime | None:
    """Normalise to an aware UTC datetime (naive values are taken as UTC)."""
    if dt is None:
        return None
    if dt.tzinfo is None:
        return dt.replace(tzinfo=UTC)
    return dt.astimezone(UTC)


@dataclass
class Document:
    """One record of a source: a file, a mail, a chat window... normalised."""

    source: str
    connector: str
    native_id: str
    uri: str
    title: str
    text: str
    created_at: datetime | None = None
    updated_at: datetime | None = None
    authors: list[str] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def doc_id(self) -> str:
        return doc_id_for(self.source, self.native_id)

    @property
    def content_hash(self) -> str:
        """Hash of everything a chunk or an index derives from, so metadata edits propagate too."""
        meta = json.dumps(self.metadata, sort_keys=True, default=str)
        return stable_hash(self.title, self.text, meta, ",".join(self.authors))

    @property
    def date(self) -> datetime | None:
        """The time filters (--after/--before) apply to: when the record was made, else edited."""
        return utc(self.created_at) or utc(self.updated_at)


@dataclass
class ReadError:
    """A record that could not be read: reported with where and why, then skipped."""

    uri: str
    error: str

    def as_dict(self) -> dict[str, str]:
        return {"uri": self.uri, "error": self.error}


@dataclass
class Seen:
    """A record the connector knows still exists unchanged but did not re-read (it lies before
    the cursor). Without it, a record missing from an incremental read counts as deleted."""

    native_id: str


@dataclass
class Cursor:
    """Where an incremental read got to (ROWID, visit time, mbox offset...). The connector
    yields it last; it is stored only after the documents it covers are written."""

    state: dict[str, Any]


@dataclass
class Span:
    """A chunk's place in its document's text, plus chunk-level metadata (symbol, lines, page)."""

    start: int
    end: int
    metadata: dict[str, Any] = field(default_factory=dict)


def citation_for(chunk_id: str) -> str:
    """The short id shown inline as [c:xxxxxx]; derived from chunk_id so it is stable."""
    return chunk_id[:6]
