"""Slack exports, differentially: ragbag's windows and threads against a plain walk of the JSON.

The reference reads each conversation file with :mod:`json` (an export zip with
:mod:`zipfile`): a list of messages (or slackdump's ``{"messages": [...]}``), the export's
``message_changed``/``message_deleted`` events applied, Slack's documented system subtypes
skipped (joins, leaves, topic/purpose/name changes, archiving, pins, integrations added,
deleted-message placeholders). A message's words are its ``text`` with Slack's angle-bracket
references replaced by their label (a user by ``users.json``'s real name) and HTML entities
unescaped (:func:`html.unescape`), or, with no ``text``, every ``text`` string of its blocks;
then its attachments' ``fallback`` when it has no words yet, and its files' titles. The sender
is ``users.json``'s real name (else the message's ``user_profile``), an app's bot profile name,
``username`` or bot id. It shares no code with the connector.

Loose corpus files were copied flat (``a/b/c.json`` → ``a__b__c.json``): each is read from a
temporary copy of its project's files at their paths in that project (``SOURCES.tsv``), so a
day file finds its export's ``users.json`` as it would in the export.

Checks, per reference message: ``count`` (a ragbag document of that file covers its time: a
thread's document for a reply, a channel window otherwise), ``times`` (that document has a line
of its UTC minute), ``people`` (its sender is among the document's senders), ``text`` (every
word of the reference's text is in the document).
"""

from __future__ import annotations

import csv
import html
import json
import re
import shutil
import tempfile
import zipfile
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from tests.differential.common import PUBLIC, Outcome, ragbag_read, rel

CONNECTOR = "slack"
_SLACKDUMP_NAMES = (
    "slackdump's fixtures are generated: every string of their users.json is random, so one user's"
    " top-level real_name ('kPVTqHcBWssWFAU') and profile.real_name ('WgO268Xc0KtFylJ') differ,"
    " which they never do in Slack's exports (the top-level field mirrors the profile's). ragbag"
    " names people by the profile, the same name their messages' user_profile carries in these"
    " files; the reference by the top-level field. Counts, times and text agree."
)
_SLACKDUMP = "public/slack/slackdump/internal__fixtures__assets__"
EXPLAINED: dict[str, str] = {
    f"{_SLACKDUMP}{name}": _SLACKDUMP_NAMES
    for name in (
        "source_export.zip",
        "source_export_dir__B75B4C7__2025-01-10.json",
        "source_export_dir__B75B4C7__2025-01-11.json",
        "source_export_dir__B75B4C7__2025-01-18.json",
        "source_export_dir__B75B4C7__2025-01-24.json",
    )
}

_WORKSPACE = {"users.json", "channels.json", "groups.json", "dms.json", "mpims.json", "integration_logs.json"}
# Slack's documented message subtypes that record an event rather than something said.
_EVENTS = {
    "channel_join",
    "channel_leave",
    "channel_topic",
    "channel_purpose",
    "channel_name",
    "channel_archive",
    "channel_unarchive",
    "group_join",
    "group_leave",
    "group_topic",
    "group_purpose",
    "group_name",
    "group_archive",
    "group_unarchive",
    "pinned_item",
    "unpinned_item",
    "bot_add",
    "bot_remove",
    "tombstone",
    "message_replied",
}
_REF = re.compile(r"<([^>]*)>")
_WORD = re.compile(r"\w+")


@dataclass
class RefMessage:
    file: str  # the uri ragbag gives the file's documents (before "#")
    ts: str
    when: datetime
    thread_ts: str | None
    sender: str
    words: set[str]


def units() -> list[Path]:
    root = PUBLIC / CONNECTOR
    return [
        p
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.suffix in (".zip", ".json") and p.name.rsplit("__", 1)[-1] not in _WORKSPACE
    ]


def _sources() -> dict[str, str]:
    """Corpus file (relative to the connector's folder) → its path in its project."""
    with open(PUBLIC / CONNECTOR / "SOURCES.tsv", encoding="utf-8") as f:
        return {row["file"]: row["path"] for row in csv.DictReader(f, delimiter="\t")}


def compare(path: Path) -> Outcome:
    if path.suffix == ".zip":
        return _compare(path, path, _zip_files(path), f"{path.absolute()}!/")
    sources = _sources()
    project = path.parent.name
    with tempfile.TemporaryDirectory() as tmp:
        for name, original in sources.items():
            if name.startswith(f"{project}/"):
                target = Path(tmp) / original
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(PUBLIC / CONNECTOR / name, target)
        copy = Path(tmp) / sources[f"{project}/{path.name}"]
        return _compare(path, copy, _loose_files(copy), "")


def _zip_files(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as zf:
        return {i.filename: zf.read(i) for i in zf.infolist() if i.filename.endswith(".json")}


def _loose_files(copy: Path) -> dict[str, bytes]:
    """The day file and the workspace files beside it or one folder up, by path relative to
    the folder above the day file's folder."""
    out = {f"{copy.parent.name}/{copy.name}": copy.read_bytes()}
    for name in _WORKSPACE:
        for key, where in ((f"{copy.parent.name}/{name}", copy.parent / name), (name, copy.parent.parent / name)):
            if where.is_file():
                out[key] = where.read_bytes()
    return out


def reference(files: dict[str, bytes], prefix: str, top: Path) -> list[RefMessage]:
    out: list[RefMessage] = []
    for name, data in sorted(files.items()):
        base = name.rsplit("/", 1)[-1]
        if base in _WORKSPACE:
            continue
        folder = name.rsplit("/", 1)[0] if "/" in name else ""
        users = _users(files, folder)
        messages = json.loads(data.decode("utf-8-sig"))
        if isinstance(messages, dict):
            messages = messages.get("messages")
        if not isinstance(messages, list):
            continue
        uri = f"{prefix}{name}" if prefix else str(top.absolute())
        out += _messages(messages, users, uri)
    return out


def _users(files: dict[str, bytes], folder: str) -> dict[str, str]:
    parent = folder.rsplit("/", 1)[0] if "/" in folder else ""
    for where in (f"{parent}/users.json" if parent else "users.json", f"{folder}/users.json"):
        if where in files:
            users = {}
            for u in json.loads(files[where]):
                profile = u.get("profile") or {}
                users[u["id"]] = (
                    u.get("real_name") or profile.get("real_name") or profile.get("display_name") or u.get("name")
                )
            return users
    return {}


def _messages(records: list, users: dict[str, str], uri: str) -> list[RefMessage]:
    by_ts: dict[str, dict] = {}
    for r in records:
        if not isinstance(r, dict):
            continue
        if r.get("subtype") == "message_changed":
            new = r.get("message") or {}
            by_ts[new.get("ts")] = {**by_ts.get(new.get("ts"), {}), **new}
        elif r.get("subtype") == "message_deleted":
            by_ts.pop(r.get("deleted_ts"), None)
        elif r.get("ts"):
            by_ts.setdefault(r["ts"], r)
    out = []
    for ts, r in by_ts.items():
        if r.get("subtype") in _EVENTS:
            continue
        profile_names = {
            m["user"]: (m.get("user_profile") or {}).get("real_name")
            for m in records
            if isinstance(m, dict) and m.get("user") and m.get("user_profile")
        }
        names = {**profile_names, **users}
        text = _render(r.get("text") or "", names)
        if not text.strip():
            text = " ".join(_strings(r.get("blocks"), names))
        if not text.strip():
            text = " ".join(_render(a.get("fallback") or "", names) for a in r.get("attachments") or [])
        files = r.get("files") or ([r["file"]] if r.get("file") else [])
        text += " " + " ".join(f.get("title") or f.get("name") or "" for f in files if f.get("mode") != "tombstone")
        words = set(_WORD.findall(text))
        if not words:
            continue
        bot = r.get("bot_profile") or {}
        user = r.get("user") or (r.get("comment") or {}).get("user")  # a legacy file_comment's commenter
        sender = names.get(user) or bot.get("name") or r.get("username") or user or r.get("bot_id")
        thread = r.get("thread_ts")
        out.append(
            RefMessage(
                uri,
                ts,
                datetime.fromtimestamp(float(ts), tz=UTC),
                thread if thread and thread != ts else None,
                str(sender),
                words,
            )
        )
    return out


def _render(text: str, names: dict[str, str]) -> str:
    def ref(m: re.Match) -> str:
        target, _, label = m.group(1).partition("|")
        if target[:1] == "@":
            return names.get(target[1:]) or label or target[1:]
        if target[:1] in "#!":
            return label or target[1:]
        return label or target.removeprefix("mailto:")

    return html.unescape(_REF.sub(ref, text))


def _strings(node, names: dict[str, str]) -> list[str]:
    """Every ``text`` string of a block tree, and the names of the users it mentions."""
    if isinstance(node, list):
        return [s for item in node for s in _strings(item, names)]
    if not isinstance(node, dict):
        return []
    out = []
    if isinstance(node.get("text"), str):
        out.append(node["text"])
    if node.get("type") == "user":
        out.append(names.get(node.get("user_id"), node.get("user_id") or ""))
    for value in node.values():
        if isinstance(value, (list, dict)):
            out += _strings(value, names)
    return out


def _compare(path: Path, read_path: Path, files: dict[str, bytes], prefix: str) -> Outcome:
    docs, errors = ragbag_read(CONNECTOR, read_path)
    ref = reference(files, prefix, read_path)
    out = Outcome(rel(path), path.parent.name, len(ref), len(docs), len(errors))
    slack = timedelta(milliseconds=1)
    counted = timed = people = texts = 0
    for m in ref:
        covering = [
            d
            for d in docs
            if d.uri.rsplit("#", 1)[0] == m.file
            and d.metadata.get("thread_ts") == m.thread_ts
            and d.created_at is not None
            and d.updated_at is not None
            and d.created_at - slack <= m.when <= d.updated_at + slack
        ]
        if not covering:
            out.disagreements.append(f"{m.ts}: no document covers it")
            continue
        doc = covering[0]
        counted += 1
        stamp = f"{m.when:%Y-%m-%d %H:%M} "
        if doc.text.startswith(stamp) or f"\n{stamp}" in doc.text:
            timed += 1
        else:
            out.disagreements.append(f"{m.ts}: no line at {stamp.strip()}")
        if m.sender in doc.metadata.get("sender", []):
            people += 1
        else:
            out.disagreements.append(f"{m.ts}: sender {m.sender!r} not in {doc.metadata.get('sender')}")
        missing = m.words - set(_WORD.findall(doc.text))
        if not missing:
            texts += 1
        else:
            out.disagreements.append(f"{m.ts}: words not in ragbag's text: {sorted(missing)[:8]}")
    out.checks = {
        "count": (counted, len(ref)),
        "times": (timed, len(ref)),
        "people": (people, len(ref)),
        "text": (texts, len(ref)),
    }
    return out
