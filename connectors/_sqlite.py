"""Reading applications' live SQLite databases without disturbing them (browsers, Messages)."""

from __future__ import annotations

import shutil
import sqlite3
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator
from urllib.parse import quote

from connectors.files import Unreadable

SQLITE_MAGIC = b"SQLite format 3\x00"


@contextmanager
def snapshot(path: Path) -> Iterator[sqlite3.Connection]:
    """A read-only view of an application's live SQLite database that never touches its files.

    Without a side file the database is opened ``mode=ro&immutable=1``: no lock is taken (a
    browser's exclusive lock cannot block it) and no ``-shm``/``-journal`` is created. An
    immutable open ignores the WAL, though, and would read half a transaction where a hot
    rollback journal exists, so with a ``-wal`` or a non-empty ``-journal`` the database and its
    side file are copied into a private temporary folder (retried while they change under the
    copy) and the copy is opened: SQLite replays the WAL or rolls the journal back there.
    Raises :class:`Unreadable` for a file that is not a SQLite database at all.
    """
    with open(path, "rb") as f:
        if f.read(len(SQLITE_MAGIC)) != SQLITE_MAGIC:
            raise Unreadable("not a SQLite database")
    sides = [s for s in ("-wal", "-journal") if _size(_side(path, s)) > 0]
    if not sides:
        conn = sqlite3.connect(f"file:{quote(str(path.absolute()))}?mode=ro&immutable=1", uri=True)
        try:
            yield conn
        finally:
            conn.close()
        return
    with tempfile.TemporaryDirectory(prefix="ragbag-sqlite-") as tmp:
        copy = Path(tmp) / "copy.db"
        _copy_settled(path, sides, copy)
        conn = sqlite3.connect(copy)
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
        out = []
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
