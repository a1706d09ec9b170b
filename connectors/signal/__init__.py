"""Documents from Signal Desktop's own database: one conversation window of one chat per document.

Format: the folder Signal Desktop keeps its data in (``~/.config/Signal``,
``~/Library/Application Support/Signal``, ``%APPDATA%\\Signal``; Flatpak and Snap places on
Linux; "Signal Beta" beside each), holding ``config.json`` and ``sql/db.sqlite``: a SQLite
database encrypted with SQLCipher 4 under a raw 256-bit key. A path is that folder, a folder
holding such folders, or the ``db.sqlite`` itself (its key found two levels up, or given). The
key is the one the user's own session opens the database with, read the way Signal reads it
(:mod:`.keys`): ``config.json``'s plain ``key``, or its ``encryptedKey`` unwrapped in-process
where that needs no OS keyring (Linux's basic store, ``v10``); where it does (GNOME keyring,
KWallet, the macOS Keychain, Windows DPAPI) the user gives the key or the keyring's password
(``options: {key: …}`` / ``$RAGBAG_SIGNAL_KEY``, ``options: {safe_storage_password: …}`` /
``$RAGBAG_SIGNAL_PASSWORD``) and one line says which keychain item holds it. No
encryption is broken: nothing is read that the user's session could not read. A database already
decrypted (a plain SQLite ``db.sqlite``, as sigtop's ``export-database`` writes) needs no key.
Tables (:mod:`.database`, every schema version from 20 on): ``conversations``, ``messages``
(``type``, ``body``, ``json``, ``sent_at``, the sender's ``sourceServiceId``/``sourceUuid``/
``source``), ``message_attachments``; ``items`` names the account's own ACI.

Traps handled:

- **What a message is**: only ``incoming`` and ``outgoing`` rows; every other type (calls,
  group updates, safety-number changes, timers, stories) is an event, not conversation. Dropped
  too: messages deleted for everyone (``deletedForEveryone``), view-once media and their erased
  remains, replies to a group's stories (shown with the story), and disappearing messages
  (``expireTimer``), which the people in the chat chose not to keep: ``options: {disappearing:
  true}`` reads them (they still leave the index at the next read after Signal deletes them).
- **Edits**: ``body`` holds the latest version (Signal sets it with every edit and keeps the
  older ones, newest first, in the JSON's ``editHistory``, which is used only if ``body`` is
  empty). A long message's text is its ``body`` (Signal puts the whole text there once the
  long-text attachment is downloaded), and that attachment is not listed as a file.
- **Attachments** are named in their message's line, ``[attachment: name]`` (content type when
  the file has no name), from ``message_attachments`` (schema 1360 on) or the JSON's
  ``attachments``; stickers ``[sticker: emoji]``, shared contacts ``[contact: name]``. The files
  themselves (encrypted on disk too) are not read.
- **Names** as Signal titles a chat (``ts/util/getTitle``): nickname, system contact name,
  profile name, phone number, username; groups by their name; the account's own conversation is
  "Note to Self". An incoming message's sender is the contact its ACI names (its phone number in
  old databases), in a direct chat the chat's contact; outgoing ones are ``Me``.
- **Times**: ``sent_at`` (ms since 1970 UTC; ``received_at`` counts rather than dates in current
  versions and is never a time).
- **A live database**: Signal keeps ``db.sqlite`` open in WAL mode; it is read through
  :func:`connectors._sqlite.snapshot` (a private copy with its ``-wal`` while one exists), never
  written.
- **Bad input**, isolated (:mod:`connectors._isolate`): a wrong or missing key, a foreign
  ``db.sqlite``, a missing or broken ``config.json`` is one ReadError for that database naming
  what was expected; a message whose JSON or time is unusable a ReadError
  (``<db>#<message id>``), the rest of its chat still read; when no database can be read after
  an earlier build the build fails rather than dropping the indexed windows.

Windows: a chat's messages are cut into conversation windows at silences of more than an hour
and at 200 messages / 20,000 characters (cuts depend only on earlier messages, so new messages
never move old windows). Each window is a document: one line per message,
``YYYY-MM-DD HH:MM sender: text`` in UTC like the imessage connector, continuation lines
indented; ``created_at``/``updated_at`` are the first and last message. Chunks are whole
messages. ``native_id`` = conversation id + ``/`` + the window's first message id (Signal's
UUIDs: two windows never share one).

Metadata: ``chat`` (its title), ``chat_id`` (Signal's conversation id), ``is_group``, ``sender``
(the senders in the window; chunks carry their own), ``is_from_me``, ``date`` (UTC day of the
first message), ``messages``.

Incremental: the cursor keeps, per database, the size and modification time of ``db.sqlite``
and its ``-wal``; while both are unchanged nothing is opened (no key is needed) and the windows
of the last read come back as ``Seen``. A changed database is read whole (message ids and times
are Signal's own, but edits, deletions and reactions rewrite old rows in place, so no id or
``received_at`` cursor tells what changed): windows are rebuilt and unchanged ones keep their
content hash, so only new or edited windows are embedded again, and deleted messages leave
with their windows.

Left out: attachment contents, quoted messages (a reply shows its own text), reactions, calls,
group events and stories, and Signal's phone apps (their databases and backups are other
formats).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import nullcontext
from functools import partial
from pathlib import Path
from typing import Any

from ragbag.connectors._chat import window_spans
from ragbag.connectors._sqlite import read_databases
from ragbag.connectors._walk import follows_outside
from ragbag.connectors.signal.database import opened
from ragbag.connectors.signal.keys import database_key
from ragbag.connectors.signal.messages import documents
from ragbag.core.records import Cursor, Document, ReadError, Seen, Span
from ragbag.text.chunking import TokenCounter

NAME = "signal"
SCHEDULE = "40 * * * *"  # a live database like chat.db: hourly, off imessage's minute
OPTIONS = {  # ragbag add signal … --option KEY=VALUE (the key: rather $RAGBAG_SIGNAL_KEY, kept out of sources.yaml)
    "key": "the database key (64 hex digits) when config.json's is wrapped by a keyring",
    "safe_storage_password": "the keyring's 'Signal Safe Storage' password that unwraps config.json's key",
    "disappearing": "true: also index disappearing messages (left out by default)",
}
DATABASE = "db.sqlite"
VERSION = 1  # of the windows' cutting and rendering: another version's cursor reads everything
APPS = ("Signal", "Signal Beta")
# Signal's folders that never hold the database: not walked (attachments.noindex holds thousands).
PRUNE = frozenset(
    {
        "attachments.noindex",
        "avatars.noindex",
        "badges.noindex",
        "drafts.noindex",
        "downloads.noindex",
        "stickers.noindex",
        "temp",
        "logs",
        "Cache",
        "Code Cache",
        "GPUCache",
        "Crashpad",
    }
)


def discover() -> tuple[list[Path], list[str]]:
    """The databases of Signal Desktop (and Signal Beta) in this platform's default places
    (``$HOME``, ``$XDG_CONFIG_HOME`` and ``%APPDATA%`` honoured)."""
    folders = places(sys.platform, dict(os.environ), Path.home())
    files = [f / "sql" / DATABASE for f in folders]
    return [f for f in files if f.is_file()], [str(f) for f in folders]


def places(platform: str, env: dict[str, str], home: Path) -> list[Path]:
    """Where Signal Desktop keeps its folder: Electron's ``appData`` + the app's name, and on
    Linux the Flatpak and Snap sandboxes' own."""
    if platform == "darwin":
        bases = [home / "Library" / "Application Support"]
    elif platform.startswith("win"):
        bases = [Path(env["APPDATA"]) if env.get("APPDATA") else home / "AppData" / "Roaming"]
    else:
        bases = [Path(env["XDG_CONFIG_HOME"]) if env.get("XDG_CONFIG_HOME") else home / ".config"]
    folders = [base / app for base in bases for app in APPS]
    if not platform.startswith(("win", "darwin")):
        folders += [
            home / ".var" / "app" / "org.signal.Signal" / "config" / "Signal",
            home / "snap" / "signal-desktop" / "current" / ".config" / "Signal",
        ]
    return folders


def read(
    path: Path | None, source: str, cursor: dict | None = None, options: dict | None = None
) -> Iterator[Document | ReadError | Seen | Cursor]:
    """Every conversation window of every Signal Desktop database under ``path`` (None: the
    default places). ``options``: the source's options (``key``, ``safe_storage_password``,
    ``disappearing``, and those of :mod:`connectors._walk`)."""
    opts = dict(options or {})
    return read_databases(
        path,
        source,
        cursor,
        what="Signal Desktop database",
        names=(DATABASE,),
        discover=discover,
        read_db=partial(_read_db, options=opts),
        prune=PRUNE,
        denied_hint="the folder belongs to another user, or macOS needs Full Disk Access for the app running ragbag",
        follow_outside=follows_outside(options),
        open_db=nullcontext,
    )


def spans(doc: Document, count: TokenCounter, max_tokens: int) -> list[Span]:
    return window_spans(doc.text, count, max_tokens)


def folder_of(db_file: Path) -> Path:
    """The Signal folder of a database: two levels up from ``sql/db.sqlite``, else beside it."""
    parent = db_file.parent
    return parent.parent if parent.name == "sql" else parent


def _read_db(
    db_file: Path,
    file: Path,
    source: str,
    previous: dict | None,
    state: dict[str, dict],
    key: str,
    options: dict[str, Any],
) -> Iterator[Document | ReadError | Seen]:
    """One database (``db_file`` is ``file``: read_databases opens nothing for this connector)."""
    stamp = _stamp(file)
    settings = {"disappearing": bool(options.get("disappearing"))}
    if (
        previous
        and previous.get("version") == VERSION
        and [previous.get("stamp"), previous.get("settings")]
        == [
            stamp,
            settings,
        ]
    ):
        yield from (Seen(i) for i in previous.get("ids", ()))
        yield from (ReadError(u, e) for u, e in previous.get("errors", ()))
        state[key] = previous
        return
    ids: list[str] = []
    errors: list[list[str]] = []
    with opened(file, lambda: database_key(folder_of(file), options)) as conn:
        for item in documents(conn, key, source, NAME, settings["disappearing"]):
            if isinstance(item, Document):
                ids.append(item.native_id)
            else:
                errors.append([item.uri, item.error])
            yield item
    state[key] = {"version": VERSION, "stamp": stamp, "settings": settings, "ids": ids, "errors": errors}


def _stamp(file: Path) -> list[list[int] | None]:
    """Size and modification time of the database and its WAL: what changes when Signal writes."""
    out: list[list[int] | None] = []
    for side in (file, file.with_name(file.name + "-wal")):
        try:
            st = side.stat()
            out.append([st.st_size, st.st_mtime_ns])
        except FileNotFoundError:
            out.append(None)
    return out
