"""Exclusion rules: what a source must never read, as its owner wrote it (``ragbag add
--exclude``, ``ragbag exclude``; the source option ``exclude`` in ``sources.yaml``).

A rule is ``FIELD:PATTERN`` (no field: ``path``), the pattern a shell glob compared without
regard to case — a rule is there to keep things out, so ``*.PDF`` and ``*.pdf`` both do:

- ``path:GLOB`` — files and folders under the source's path. A glob without ``/`` matches any
  one name at any depth (``*.key``, ``private``: that folder and all under it); one with ``/``
  matches the path from the source's root, or a folder above the file (``work/clients/*``,
  ``/private``: only the folder at the top).
  The walker never opens what a path rule names (``connectors._walk``).
- ``sender:GLOB`` — a record's sender or author, by address or name (``*@spam.example``, ``Anna*``).
- ``domain:NAME`` — a sender's mail domain or a page's host, subdomains included
  (``example.com`` also matches ``news.example.com``).
- ``chat:GLOB`` — a chat, channel or group by name or id (messengers, WeChat, Slack, …).
- ``label:GLOB`` — a mail label or folder, a note's tag or label (Gmail's ``Spam``, ``#private``).

Record rules apply to each record as its connector yields it, before it is screened, stored,
chunked or embedded; the fields they read are the metadata the connectors write (their
``README`` table), so a connector of another package is covered when it uses the same keys.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from ragbag.core.errors import RagbagError

OPTION = "exclude"  # the source option holding the rules
FIELDS = ("path", "sender", "domain", "chat", "label")

# Where each field is read in a record: its metadata keys (a string or a list of strings).
_KEYS: dict[str, tuple[str, ...]] = {
    "path": ("path", "file", "rel_path"),
    "sender": ("from", "from_name", "sender", "author", "organizer"),
    "domain": ("domain", "host"),
    "chat": ("chat", "chat_id", "channel", "conversation_id"),
    "label": ("labels", "label", "tags", "folder"),
}


@dataclass(frozen=True)
class Rule:
    field: str
    pattern: str  # lower case

    def __str__(self) -> str:
        return f"{self.field}:{self.pattern}"


def parse(text: str) -> Rule:
    """One rule from its written form; a one-line error for a field that does not exist or an
    empty pattern."""
    raw = str(text).strip()
    field, sep, pattern = raw.partition(":")
    if not sep or field.strip().lower() not in FIELDS:
        field, pattern = "path", raw  # "C:…" or "a:b.txt" are paths too
    field, pattern = field.strip().lower(), pattern.strip().lower()
    if not pattern:
        fields = ", ".join(FIELDS)
        raise RagbagError(f"exclusion rule {raw!r} has no pattern: write FIELD:PATTERN, FIELD one of {fields}")
    if field == "path":
        pattern = pattern.replace("\\", "/").rstrip("/") or pattern
    if field == "domain":
        pattern = pattern.lstrip("@.")
    if field == "label":
        pattern = pattern.lstrip("#") or pattern
    return Rule(field, pattern)


def of_source(options: Mapping[str, Any] | None) -> tuple[Rule, ...]:
    """The rules a source's options hold (a string or a list); a malformed one is an error the
    build reports before it reads anything."""
    value = (options or {}).get(OPTION) or ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, Iterable):
        raise RagbagError(f"option {OPTION!r} must be a list of rules, not {type(value).__name__}")
    return tuple(dict.fromkeys(parse(str(v)) for v in value))


def path_globs(options: Mapping[str, Any] | None) -> tuple[str, ...]:
    """The path patterns of a source's rules: what its walker must not open."""
    return tuple(r.pattern for r in of_source(options) if r.field == "path")


def path_excluded(globs: Sequence[str], rel: str) -> bool:
    """Whether the relative path ``rel`` (posix) is, or lies under, what a path glob names."""
    if not globs or not rel:
        return False
    parts = rel.lower().strip("/").split("/")
    for glob in globs:
        if "/" in glob:
            anchored = glob.lstrip("/")
            if any(fnmatch.fnmatchcase("/".join(parts[:n]), anchored) for n in range(1, len(parts) + 1)):
                return True
        elif any(fnmatch.fnmatchcase(part, glob) for part in parts):
            return True
    return False


def matching(
    rules: Sequence[Rule], metadata: Mapping[str, Any], authors: Sequence[str] = (), uri: str = ""
) -> Rule | None:
    """The first rule a record matches (None: it is read), from its metadata, authors and uri."""
    for rule in rules:
        values = _values(rule.field, metadata, authors, uri)
        if rule.field == "path":
            if any(path_excluded((rule.pattern,), v) for v in values):
                return rule
        elif rule.field == "domain":
            if any(_in_domain(v, rule.pattern) for v in values):
                return rule
        elif any(fnmatch.fnmatchcase(v, rule.pattern) for v in values):
            return rule
    return None


def _values(field: str, metadata: Mapping[str, Any], authors: Sequence[str], uri: str) -> list[str]:
    out: list[str] = []
    for key in _KEYS[field]:
        out += _strings(metadata.get(key))
    if field == "sender":
        out += [str(a) for a in authors]
    elif field == "label":
        out = [v.lstrip("#") for v in out]
    elif field == "domain":
        senders = _strings(metadata.get("from")) + _strings(metadata.get("sender")) + [str(a) for a in authors]
        out += [s.rsplit("@", 1)[1] for s in senders if "@" in s]
        for link in (*_strings(metadata.get("url")), uri):
            if "://" in link:
                out.append(urlsplit(link).hostname or "")
    return [v.strip().lower() for v in out if v and v.strip()]


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list | tuple):
        return [str(v) for v in value if isinstance(v, str | int)]
    return []


def _in_domain(host: str, pattern: str) -> bool:
    host = host.rstrip(".").strip("<>")
    return fnmatch.fnmatchcase(host, pattern) or host.endswith("." + pattern)
