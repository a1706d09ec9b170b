"""Reading applications' live SQLite databases without disturbing them (browsers, Messages)."""

from __future__ import annotations

import shutil
import sqlite3
import tempfile
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote

from ragbag.connectors._isolate import each_file
from ragbag.connectors._walk import Entry, walk
from ragbag.core.errors import RagbagError
from ragbag.core.private import temporary_prefix
from ragbag.core.records import Cursor, Document, ReadError, Seen
from ragbag.text.unreadable import Unreadable

# read_db(conn, file, source, previous_state, state_out, key) yields the records of one database
DatabaseReader = Callable[..., Iterator["Document | ReadError | Seen"]]

SQLITE_MAGIC = b"SQLite format 3\x00"


@contextmanager
def snapshot(path: Path, connect: Callable[..., Any] | None = None) -> Iterator[Any]:
    """A read-only view of an application's live SQLite database that never touches its files.

    Without a side file the database is opened ``mode=ro&immutable=1``: no lock is taken (a
    browser's exclusive lock cannot block it) and no ``-shm``/``-journal`` is created. An
    immutable open ignores the WAL, though, and would read half a transaction where a hot
    rollback journal exists, so with a ``-wal`` or a non-empty ``-journal`` the database and its
    side file are copied into a private temporary folder (retried while they change under the
    copy) and the copy is opened: SQLite replays the WAL or rolls the journal back there. The
    folder is under the home and named for this process, so the next ragbag process deletes
    what a killed build left.
    Raises :class:`Unreadable` for a file that is not a SQLite database at all.

    ``connect`` opens the file (or its copy) instead of the stdlib's ``sqlite3.connect``, taking
    the same arguments: for a database SQLite's magic does not mark (SQLCipher's, encrypted from
    its first byte), whose caller has judged the file itself.
    """
    if connect is None:
        connect = sqlite3.connect
        with open(path, "rb") as f:
            if f.read(len(SQLITE_MAGIC)) != SQLITE_MAGIC:
                raise Unreadable("not a SQLite database")
    sides = [s for s in ("-wal", "-journal") if _size(_side(path, s)) > 0]
    if not sides:
        conn = connect(f"file:{quote(str(path.absolute()))}?mode=ro&immutable=1", uri=True)
        try:
            yield conn
        finally:
            conn.close()
        return
    with tempfile.TemporaryDirectory(prefix=temporary_prefix("sqlite")) as tmp:
        copy = Path(tmp) / "copy.db"
        _copy_settled(path, sides, copy)
        conn = connect(str(copy))
        try:
            yield conn
        finally:
            conn.close()


def _side(path: Path, suffix: str) -> Path:
    return path.with_name(path.name + suffix)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _copy_settled(path: Path, sides: list[str], copy: Path, tries: int = 5) -> None:
    """Copy the database and its side files until no copy saw them change (a write racing the
    copy would pair a database and a WAL from different moments); the last try stands."""

    def stamps() -> list[tuple[int, int] | None]:
        out: list[tuple[int, int] | None] = []
        for s in ["", *sides]:
            try:
                st = _side(path, s).stat()
                out.append((st.st_size, st.st_mtime_ns))
            except FileNotFoundError:
                out.append(None)
        return out

    for _ in range(tries):
        before = stamps()
        shutil.copyfile(path, copy)
        for s in sides:
            try:
                shutil.copyfile(_side(path, s), _side(copy, s))
            except FileNotFoundError:  # checkpointed and removed meanwhile: the main file has it
                _side(copy, s).unlink(missing_ok=True)
        if stamps() == before:
            return


def read_databases(
    path: Path | None,
    source: str,
    cursor: dict | None,
    *,
    what: str,
    names: tuple[str, ...],
    discover: Callable[[], tuple[list[Path], list[str]]],
    read_db: DatabaseReader,
    prune: frozenset[str] = frozenset(),
    denied_hint: str = "",
    follow_outside: bool = False,
    open_db: Callable[[Path], AbstractContextManager[Any]] = snapshot,
) -> Iterator[Document | ReadError | Seen | Cursor]:
    """Every database called one of ``names`` under ``path`` (or in the default places), each
    read by ``read_db`` through a :func:`snapshot`, with one cursor entry per file. Under a
    folder, links leaving it are followed only with ``follow_outside`` (see :mod:`connectors._walk`).
    ``open_db`` makes what ``read_db`` gets for a file: a connector that must learn a key before
    it opens the database (signal) passes ``contextlib.nullcontext`` and gets the file's path.

    A database that cannot be read, whatever the exception (:func:`connectors._isolate.each_file`),
    is a ``ReadError``. When none can and an earlier build of the source left a cursor, the build
    fails with a one-line reason instead of wiping the stored index as if everything had been
    deleted; a first read (``cursor`` None) has nothing stored to lose and reports the errors.
    """
    errors: list[ReadError] = []
    if path is None:
        files, looked = discover()
        if not files:
            raise RagbagError(f"no {what} found; looked in: {', '.join(looked)}")
    else:
        path = Path(path)
        if path.is_file():
            files = [path]
        elif path.is_dir():
            files = find(path, names, errors, prune, follow_outside)
            if not files and not errors:
                raise RagbagError(f"no {what} ({' or '.join(names)}) under {path}")
        else:
            raise RagbagError(f"path does not exist: {path}")
    previous = (cursor or {}).get("files", {})
    state: dict[str, dict] = {}
    readable = 0
    for file in files:
        key = str(file.absolute())
        done: list[bool] = []

        def one(file: Path = file, key: str = key, done: list[bool] = done) -> Iterator:
            with open_db(file) as conn:
                yield from read_db(conn, file, source, previous.get(key), state, key)
            done.append(True)

        # The isolation boundary: whatever one database holds fails that database alone; what
        # it yielded before failing is kept (and, with no cursor entry, it is read again next time).
        last: ReadError | None = None
        for item in each_file(key, one):
            if last is not None:
                yield last
            last = None
            if isinstance(item, ReadError) and item.uri == key:
                last = item  # the file's failure, if it is the last item
            else:
                yield item
        if done:
            readable += 1
            if last is not None:
                yield last
        elif last is not None:
            denied = last.error.startswith("PermissionError") and denied_hint
            errors.append(ReadError(key, last.error + (f" ({denied_hint})" if denied else "")))
    if not readable and errors and cursor is not None:
        # Pages indexed by an earlier build would be deleted as if cleared: fail instead. A first
        # read (no cursor) has nothing to lose, so its errors are reported like any other.
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        raise RagbagError(f"{errors[0].uri}: {errors[0].error}{more}")
    yield from errors
    yield Cursor({"files": state})


def find(
    root: Path,
    names: tuple[str, ...],
    errors: list[ReadError],
    prune: frozenset[str] = frozenset(),
    follow_outside: bool = False,
) -> list[Path]:
    """Files called one of ``names`` under ``root``, hidden folders included (``.mozilla``)."""

    def keep(entry: Entry) -> bool:
        return entry.name not in prune if entry.is_dir else entry.name in names

    return sorted(file for file, _ in walk(root, errors, keep=keep, follow_outside=follow_outside))
