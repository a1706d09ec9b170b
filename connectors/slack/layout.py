"""Where an export's parts are: its files by path inside the export (a folder on disk, or a zip
read in memory), which of them are workspace files and which are conversations' day files,
the export root a day file belongs to, and a thread's first message in another day file.

An export root is the folder holding the workspace files (``users.json``, ``channels.json``…);
each folder inside it is a conversation, each ``*.json`` there one day of it. A day file's root
is the folder above its conversation folder when that holds workspace files, else its own
folder when that does (files copied flat beside ``users.json``), else the folder above (an
export without workspace files: names stay ids).
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from datetime import timedelta
from pathlib import Path

from ragbag.connectors._chat import parse_time
from ragbag.connectors._exports import Record, load_json, zip_members
from ragbag.connectors._isolate import each_file
from ragbag.connectors.slack.documents import documents
from ragbag.connectors.slack.messages import Post, posts
from ragbag.connectors.slack.workspace import META, Chat, Workspace, load_workspace, scalar
from ragbag.core.records import ReadError

NOT_DAY = (
    "not a Slack export's day file: expected a list of messages with a ts "
    "(YYYY-MM-DD.json in a conversation's folder of an export, or a slackdump dump's "
    '{"channel_id", "messages": [...]})'
)


@dataclass
class Tree:
    """One export's files by path inside it: on disk (``Path``) or read from a zip (bytes)."""

    files: dict[str, Path | bytes]
    zip_uri: str = ""  # the zip's own uri when the files are its members
    me: str = ""
    workspaces: dict[str, tuple[Workspace, list[ReadError]]] = field(default_factory=dict)
    channel_posts: dict[str, dict[str, Post]] = field(default_factory=dict)  # day file → posts by ts

    def uri(self, rel: str) -> str:
        where = self.files[rel]
        return str(where.absolute()) if isinstance(where, Path) else f"{self.zip_uri}!/{rel}"

    def read(self, rel: str) -> bytes:
        where = self.files[rel]
        return where.read_bytes() if isinstance(where, Path) else where

    def stamp(self, rel: str) -> str:
        """A workspace or day file's size and mtime ("-" when absent): what a day file's
        documents depend on besides the file itself."""
        where = self.files.get(rel)
        if not isinstance(where, Path):
            return "-" if where is None else "zip"
        try:
            st = where.stat()
        except OSError:
            return "-"
        return f"{st.st_size}:{st.st_mtime_ns}"


def is_day(rel: str) -> bool:
    return rel.lower().endswith(".json") and posixpath.basename(rel) not in META


def root_of(tree: Tree, rel: str) -> str:
    folder = posixpath.dirname(rel)
    above = posixpath.dirname(folder)
    if _has_meta(tree, above) or not _has_meta(tree, folder):
        return above
    return folder


def _has_meta(tree: Tree, folder: str) -> bool:
    return any(posixpath.join(folder, name) in tree.files for name in META)


def meta_stamp(tree: Tree, root: str) -> str:
    return ",".join(
        f"{name}={tree.stamp(posixpath.join(root, name))}"
        for name in sorted(META)
        if posixpath.join(root, name) in tree.files
    )


def workspace(tree: Tree, root: str) -> tuple[Workspace, list[ReadError]]:
    """The root's workspace (loaded once per tree) and the errors its files gave."""
    if root not in tree.workspaces:
        read = {}
        for name in META:
            rel = posixpath.join(root, name)
            if rel in tree.files:
                read[name] = (tree.uri(rel), lambda rel=rel: tree.read(rel))
        tree.workspaces[root] = load_workspace(read, tree.me)
    return tree.workspaces[root]


def day_records(
    tree: Tree, rel: str, key: str, source: str, connector: str, consulted: list[str] | None = None
) -> Iterator[Record | ReadError]:
    """The documents of one day file (and ReadErrors for its bad messages). ``consulted``
    collects the other day files read for threads' first messages."""
    uri = tree.uri(rel)
    records = load_json(tree.read(rel))  # a failure is this file's alone (each_file)
    ws, _ = workspace(tree, root_of(tree, rel))
    folder = posixpath.dirname(rel)
    chat = ws.chat(posixpath.basename(folder) or Path(uri.split("!/")[0]).stem)
    if isinstance(records, dict) and isinstance(records.get("messages"), list):
        chat = _dump_chat(ws, records)  # slackdump's own dump: one file a conversation
        records = records["messages"]
    if not isinstance(records, list) or not (
        not records or any(isinstance(r, dict) and "ts" in r for r in records[:50])
    ):
        yield ReadError(uri, NOT_DAY)
        return
    found, errors = posts(records, uri, ws)
    yield from errors
    tree.channel_posts[rel] = {p.ts: p for p in found if p.thread_ts is None}

    def parent_of(thread_ts: str) -> Post | None:
        """A thread's first message from the day file of its date, or of the day before or
        after (an exporter may cut days in another zone than UTC)."""
        when = parse_time(thread_ts)
        if when is None:
            return None
        for shift in (0, -1, 1):
            other = posixpath.join(folder, f"{(when + timedelta(days=shift)):%Y-%m-%d}.json")
            if consulted is not None and other != rel and other not in consulted:
                consulted.append(other)
            if other == rel or other not in tree.files:
                continue
            if other not in tree.channel_posts:
                try:
                    data = load_json(tree.read(other))
                    tree.channel_posts[other] = {
                        p.ts: p
                        for p in posts(data if isinstance(data, list) else [], uri, ws)[0]
                        if p.thread_ts is None
                    }
                except Exception:  # noqa: BLE001 — that file reports its own failure when it is read
                    tree.channel_posts[other] = {}
            if thread_ts in tree.channel_posts[other]:
                return tree.channel_posts[other][thread_ts]
        return None

    yield from documents(found, chat, parent_of, uri, key, source, connector)


def _dump_chat(ws: Workspace, dump: dict) -> Chat:
    """The chat of a slackdump dump file (``{channel_id, name, messages}``): as the workspace
    files know it, else named like a folder of that name (or id) would be."""
    cid, name = scalar(dump.get("channel_id")), scalar(dump.get("name"))
    known = next((c for c in ws.chats.values() if cid and c.chat_id == cid), None)
    return known or replace(ws.chat(name or cid), chat_id=cid or name)


def zip_tree(file: Path, me: str) -> tuple[Tree, list[ReadError]]:
    """An export zip's JSON members (read in memory, never extracted) as a tree."""
    tree = Tree({}, zip_uri=str(file.absolute()), me=me)
    errors: list[ReadError] = []
    for item in zip_members(file, lambda name: name.lower().endswith(".json")):
        if isinstance(item, ReadError):
            errors.append(item)
        else:
            tree.files[item[0].split("!/", 1)[1]] = item[1]
    return tree, errors


def zip_records(file: Path, key: str, source: str, connector: str, me: str) -> Iterator[Record | ReadError]:
    """Every day file of an export zip; one ReadError when the zip holds no Slack export."""
    tree, errors = zip_tree(file, me)
    yield from errors
    days = sorted(rel for rel in tree.files if is_day(rel))
    if not days and not any(posixpath.basename(rel) in META for rel in tree.files):
        if not errors:
            yield ReadError(
                tree.zip_uri, "not a Slack export: no users.json/channels.json and no conversation day files"
            )
        return
    for root in sorted({posixpath.dirname(rel) for rel in tree.files if not is_day(rel)}):
        yield from workspace(tree, root)[1]
    for rel in days:
        # The isolation boundary: whatever one day file holds fails that file alone.
        yield from each_file(tree.uri(rel), lambda rel=rel: day_records(tree, rel, key, source, connector))
