"""Documents from Slack workspace exports: one conversation window, or one thread's replies of a
day, per document.

Format: the zip Slack's "Export data" writes (or its unzipped folder; several exports in one
folder are read together): workspace files at the top (``users.json``, ``channels.json`` for
public channels, ``groups.json`` private ones, ``dms.json``, ``mpims.json`` group DMs, plus
``integration_logs.json``, ``canvases.json``, ``org_users.json``, which hold no conversation)
and one folder per conversation, named by channel name (``mpdm-…`` for group DMs, the ``D…`` id
for DMs), holding one ``YYYY-MM-DD.json`` per day: a list of messages ``{type, subtype?, ts,
user, user_profile, text, thread_ts, reply_count, files, attachments, blocks, edited, bot_id,
bot_profile, …}``. ``ts`` ("1700000000.000200", seconds since 1970 UTC) is the message's id in
its conversation. slackdump's ``-export`` output is the same format, and its own dump files
(``{"channel_id", "name", "messages": [...]}``, a conversation each) are read too. A single day
file can be added on its own (its export's workspace files beside it or a folder up still name
people).

Traps handled:

- **Names**: user ids become names (``users.json``: the profile's real name, else display
  name, else handle; a user it lacks, a guest of a shared channel, by the ``user_profile`` their
  messages carry; an old export's ``file_comment`` by its comment's author); apps and webhooks
  by their bot profile's name or ``username``, an app known only by its ``bot_id`` by that id.
- **mrkdwn** (:mod:`connectors.slack.mrkdwn`): ``<@U123>`` → ``@Name``, ``<#C123|general>``
  → ``#general``, ``<!here>`` → ``@here``, user groups and dates by their label, links as
  ``label (url)`` (the url alone when the label repeats it), ``&lt; &gt; &amp;`` unescaped
  after the tokens (a typed ``&lt;`` never becomes one). A message without ``text`` is read
  from its rich-text blocks (sections, lists, quotes, code; apps' section/header/context blocks).
- **Attachments and files**: a shared message ``[shared] author: text``, a link preview
  ``[link] title`` (not the page's text), an app's attachment its pretext/title/text/fields,
  a file ``[file] title (name)`` (old exports' single ``file`` too); deleted files left out.
- **System lines dropped** (:data:`connectors.slack.messages.SYSTEM`): joins and leaves, topic,
  purpose and name changes, archiving, pins, apps added, huddles, ``tombstone`` placeholders of
  deleted messages. Bot messages, file shares, ``/me`` lines and reminders are read.
- **Edits and deletions**: a message's ``text`` is its last version; where an export carries
  the events, ``message_changed`` replaces the message it names (or stands in for it) and
  ``message_deleted`` removes it.
- **Bad input**, isolated (:mod:`connectors._isolate`): a file that is not JSON or not a list of
  messages, a zip with no export in it, is one ``ReadError`` saying what was expected; a
  message that is no object, has no usable ``ts`` or fails in any other way is a
  ``ReadError("{file}#{ts or index}")``; a broken ``users.json`` is reported and names stay ids.

Threads (:mod:`connectors.slack.documents`): a thread's replies of a day are a document of
their own that opens with the thread's first message (found in its own day file when the
replies came on a later day), titled ``#channel · thread “first words…” · day``; the first
message stays in the channel's window, followed by ``[thread: N replies]``. A reply also sent
to the channel (``thread_broadcast``) is read once, in its thread. Why: a reply sits with the
question it answers instead of among unrelated channel lines, in search hits and chunks alike.

Windows: a day file's channel messages are cut into windows at silences of more than an hour
and at 200 messages / 20,000 characters; a thread's replies only at the size bounds (cuts depend
only on earlier messages, so new messages never move old windows). One line per message,
``YYYY-MM-DD HH:MM sender: text`` in UTC, continuation lines indented, the ``me`` user as
``Me``; ``created_at``/``updated_at`` are the window's first and last message (a thread
document's replies). Chunks are whole messages.

Metadata: ``chat`` (``#channel``, the other person of a DM, a group DM's members), ``chat_id``
(the channel, group or DM id; the folder name when no workspace file lists it), ``is_group``
(channels and group DMs), ``sender`` (the senders, in order; chunks carry their own),
``is_from_me`` (a message of the user named by the ``me`` option, a user id or any of their
names, ``options: {me: U012AB3CD}`` in ``sources.yaml``), ``date`` (UTC day of the first
message), ``messages`` (lines in the document), ``file`` (the day file or zip), and
``thread_ts`` on a thread's documents. ``native_id`` = ``chat_id@ts`` of the window's first
message (``chat_id@thread_ts/ts`` for a thread's), stable across exports and builds.

Incremental: per day file (per zip for a zip: it is one file). Unchanged files yield ``Seen``;
a changed one is re-read, edits propagate by content hash, deleted messages and removed files
disappear. A change to the export's workspace files (names) or to the ``me`` option re-reads
its day files, and so does a change to a day file that held the first message of a thread
replied to in another (its documents quote it). The same window in two exports is kept once:
the copy with the newest message or edit.

Left out: the files themselves (names and titles only), reactions, link previews' page text,
channel topics and purposes, canvases, huddle transcripts, and ``discover()`` (exports have no
default place).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragbag.connectors._chat import window_spans
from ragbag.connectors._exports import export_files, read_exports
from ragbag.connectors._walk import excluded_paths, follows_outside
from ragbag.connectors.slack.layout import Tree, day_records, is_day, meta_stamp, root_of, workspace, zip_records
from ragbag.connectors.slack.workspace import META
from ragbag.core.records import Cursor, Document, ReadError, Seen, Span
from ragbag.text.chunking import TokenCounter

NAME = "slack"
SCHEDULE = "0 4 * * *"  # exports change when the user exports again: daily is plenty
_VERSION = "slack-1"


@dataclass
class _Unit:
    """One file the cursor follows: an export zip (``tree`` None: it is its own tree) or a day
    file of a folder (``rel``: its path in ``tree``)."""

    file: Path
    tree: Tree | None = None
    rel: str = ""


OPTIONS = {"me": "your Slack name or user id (U123…): your messages are Me"}  # ragbag add slack … --option


def read(
    path: Path, source: str, cursor: dict | None = None, options: dict | None = None
) -> Iterator[Document | ReadError | Seen | Cursor]:
    """Every window and thread of every export under ``path`` (a zip, a folder, or one day
    file). ``options``: ``me`` (who "Me" is), and the walk's (links, exclusions: see
    :mod:`connectors._walk`)."""
    me = " ".join(str((options or {}).get("me") or "").split())
    units, errors = _units(Path(path), me, follows_outside(options), excluded_paths(options))
    yield from errors
    previous: dict[str, Any] = cursor if isinstance(cursor, dict) and "exports" in cursor else {}
    old_parents: dict[str, dict[str, str]] = previous.get("parents", {})
    exports = dict(previous.get("exports") or {})
    # A day file that quoted a thread's first message from another day file is read again when
    # that file changed (read_exports re-reads a file whose entry the cursor lacks).
    stale = {key for key, rels in old_parents.items() if key in units and _moved(units[key], rels)}
    if stale and isinstance(exports.get("files"), dict):
        exports["files"] = {k: v for k, v in exports["files"].items() if k not in stale}
    consulted: dict[str, list[str]] = {}

    def parse(file: Path, key: str) -> Iterator:
        unit = units[key]
        if unit.tree is None:
            yield from zip_records(file, key, source, NAME, me)
        else:
            consulted[key] = []
            yield from day_records(unit.tree, unit.rel, key, source, NAME, consulted[key])

    def depends(key: str) -> str:
        unit = units[key]
        return me if unit.tree is None else f"{me}|{meta_stamp(unit.tree, root_of(unit.tree, unit.rel))}"

    files = [(u.file, key) for key, u in units.items()]
    for item in read_exports(files, parse, exports or None, _VERSION, depends):
        if not isinstance(item, Cursor):
            yield item
            continue
        parents: dict[str, dict[str, str]] = {}
        for key, unit in units.items():
            if key in consulted and unit.tree is not None:
                parents[key] = {rel: unit.tree.stamp(rel) for rel in consulted[key]}
            elif key in old_parents:
                parents[key] = old_parents[key]
        yield Cursor({"exports": item.state, "parents": {k: v for k, v in parents.items() if v}})


def _moved(unit: _Unit, rels: dict[str, str]) -> bool:
    """Whether a day file read before from the other files in ``rels`` (with their stamps
    then) must be read again because one of them changed or went."""
    tree = unit.tree
    return tree is not None and any(tree.stamp(rel) != stamp for rel, stamp in rels.items())


def spans(doc: Document, count: TokenCounter, max_tokens: int) -> list[Span]:
    return window_spans(doc.text, count, max_tokens)


def _units(
    path: Path, me: str, follow_outside: bool, exclude: Sequence[str]
) -> tuple[dict[str, _Unit], list[ReadError]]:
    """The files to follow under ``path`` by cursor key, and what could not be listed."""
    if path.is_file():
        return _file_unit(path, me)
    wanted = lambda name: name.lower().endswith((".json", ".zip"))  # noqa: E731
    found, errors = export_files(path, wanted, follow_outside, exclude)
    tree = Tree({key: file for file, key in found if key.lower().endswith(".json")}, me=me)
    units: dict[str, _Unit] = {}
    for file, key in found:
        if key.lower().endswith(".zip"):
            units[key] = _Unit(file)
        elif is_day(key):
            units[key] = _Unit(file, tree, key)
    for root in sorted({k.rsplit("/", 1)[0] if "/" in k else "" for k in tree.files if not is_day(k)}):
        errors += workspace(tree, root)[1]
    return units, errors


def _file_unit(path: Path, me: str) -> tuple[dict[str, _Unit], list[ReadError]]:
    """A zip, or one day file read with its export's workspace files (beside it or a folder up)."""
    uri = str(path.absolute())
    name = path.name
    if name.lower().endswith(".zip"):
        return {name: _Unit(path)}, []
    if not name.lower().endswith(".json"):
        return {}, [ReadError(uri, "not a Slack export: expected its zip, its folder, or a day file (.json)")]
    if name in META:
        return {}, [ReadError(uri, f"a Slack export's {name}, not a conversation: add the export's folder or zip")]
    folder = path.parent.name
    files: dict[str, Path | bytes] = {f"{folder}/{name}": path}
    for meta in META:
        for rel, where in ((f"{folder}/{meta}", path.parent / meta), (meta, path.parent.parent / meta)):
            if where.is_file():
                files[rel] = where
    tree = Tree(files, me=me)
    return {name: _Unit(path, tree, f"{folder}/{name}")}, list(workspace(tree, root_of(tree, f"{folder}/{name}"))[1])
