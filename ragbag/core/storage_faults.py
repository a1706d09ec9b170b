"""A full disk or a read-only home, told apart from every other failure, in one line that names
the cause and the way out.

Each writer fails in its own words when the disk is full or read-only: Python's ``OSError``
(errno 28, 30, 122), SQLite under Dagster (``database or disk is full``, ``attempt to write a
readonly database``, or a bare ``disk I/O error`` when it cannot grow a ``-shm`` file), LanceDB's
Rust IO errors (``No space left on device (os error 28)``), each wrapped by Dagster or
SQLAlchemy in errors of their own. None of them says "free space". So no writer catches its own:
the two places where failures reach the user, the CLI's error handler and the build's report of
a failed step, ask :func:`explain` (an exception and its chain) or :func:`explain_texts` (the
messages Dagster kept of a step's error chain). Where the words do not say which (SQLite's
``disk I/O error``), the file system is asked: read-only, or nearly full.
"""

from __future__ import annotations

import errno
import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

from ragbag.core.errors import StorageFault
from ragbag.core.home import Home

SPACE, QUOTA, READ_ONLY, IO = "space", "quota", "read-only", "io"
# Errors that say what happened by their number.
_BY_ERRNO = {errno.ENOSPC: SPACE, errno.EDQUOT: QUOTA, errno.EROFS: READ_ONLY}
# ... or in words: the C library's (any wrapper's message), Rust's "(os error N)", SQLite's.
_BY_WORDS = [
    (re.compile(r"no space left on device|database or disk is full|\(os error 28\)|\[errno 28\]", re.I), SPACE),
    (re.compile(r"disk quota exceeded|\(os error 122\)|\[errno 122\]", re.I), QUOTA),
    (
        re.compile(r"read-only file system|\(os error 30\)|\[errno 30\]|attempt to write a readonly database", re.I),
        READ_ONLY,
    ),
]
# Words that may mean either or neither: the file system decides.
_AMBIGUOUS = re.compile(r"disk I/O error|unable to open database file", re.I)
_IO_ERROR = re.compile(r"disk I/O error", re.I)
_DENIED = {errno.EACCES, errno.EPERM}
# Free space below which an ambiguous write error is taken for a full disk: a build writes more
# than this, and a disk this full fails the next write anyway.
NEARLY_FULL = 64 << 20


def explain(error: BaseException, home: Home, command: str) -> StorageFault | None:
    """The one-line fault behind ``error`` (or any exception in its cause/context chain), for a
    user who ran ``ragbag COMMAND``; None when it is not a full or read-only disk."""
    chain = list(_chain(error))
    errnos = [e.errno for e in chain if isinstance(e, OSError) and e.errno is not None]
    return _explain(errnos, [str(e) for e in chain], home, command)


def explain_texts(texts: Iterable[str], home: Home, command: str) -> StorageFault | None:
    """The same for an error known only by its messages (a failed Dagster step's error chain)."""
    return _explain([], list(texts), home, command)


def _explain(errnos: list[int], texts: list[str], home: Home, command: str) -> StorageFault | None:
    kinds = {_BY_ERRNO[n] for n in errnos if n in _BY_ERRNO}
    kinds |= {kind for text in texts for pattern, kind in _BY_WORDS if pattern.search(text)}
    places = _places(home)
    kind = next((k for k in (READ_ONLY, SPACE, QUOTA) if k in kinds), None)
    if kind is None and any(_AMBIGUOUS.search(t) for t in texts):
        kind = _probe(places, io=any(_IO_ERROR.search(t) for t in texts))
    if kind is None and _DENIED & set(errnos) and any(not os.access(p, os.W_OK) for p, _ in places):
        kind = READ_ONLY  # a home its owner made read-only (chmod), for anyone but root
    if kind is None:
        return None
    return StorageFault(kind, _message(kind, _where(kind, places), command))


def _chain(error: BaseException) -> Iterator[BaseException]:
    """The exception and those it was raised from or during, each once."""
    seen: set[int] = set()
    todo: list[BaseException | None] = [error]
    while todo:
        e = todo.pop()
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        yield e
        todo += [e.__cause__, e.__context__]


def _places(home: Home) -> list[tuple[Path, str]]:
    """Where ragbag writes, each with the name the user set it by: the home, and the tables'
    folder when ``storage.lance_uri`` puts it elsewhere on this machine."""
    places = [(home.root, "$RAGBAG_HOME")]
    try:
        lance = home.lance_dir if home.lance_is_local else None
    except Exception:  # an unreadable config: the home is what there is to name
        lance = None
    if lance is not None and not lance.is_relative_to(home.root):
        places.append((lance, "storage.lance_uri"))
    return places


def _statvfs(path: Path) -> os.statvfs_result | None:
    """The file system holding ``path`` (or its nearest existing parent)."""
    for p in (path, *path.parents):
        try:
            return os.statvfs(p)
        except OSError:
            continue
    return None


def _free(st: os.statvfs_result) -> int:
    blocks = st.f_bfree if os.geteuid() == 0 else st.f_bavail  # root may use the reserved blocks
    return blocks * st.f_frsize


def _probe(places: list[tuple[Path, str]], io: bool) -> str | None:
    stats = [st for st in (_statvfs(p) for p, _ in places) if st is not None]
    if any(st.f_flag & os.ST_RDONLY for st in stats):
        return READ_ONLY
    if any(_free(st) < NEARLY_FULL for st in stats):
        return SPACE
    return IO if io else None


def _where(kind: str, places: list[tuple[Path, str]]) -> tuple[Path, str]:
    """The place the fault is in: the read-only or fullest one."""
    if kind == READ_ONLY:
        for path, name in places:
            st = _statvfs(path)
            if (st is not None and st.f_flag & os.ST_RDONLY) or not os.access(path, os.W_OK):
                return path, name
        return places[0]
    stats = [(st, place) for place in places if (st := _statvfs(place[0])) is not None]
    return min(stats, key=lambda s: _free(s[0]))[1] if stats else places[0]


def _message(kind: str, where: tuple[Path, str], command: str) -> str:
    path, name = where
    again = f"run `ragbag {command}` again" if command else "try again"
    st = _statvfs(path)
    free = f", {_size(_free(st))} free" if st is not None else ""
    if kind == READ_ONLY:
        setting = name.removeprefix("$")
        return f"{setting} {path} is read-only: make it writable (or point {setting} at a writable folder) and {again}"
    if kind == QUOTA:
        return f"disk quota exceeded under {name} ({path}{free}): free space or raise the quota and {again}"
    if kind == IO:
        return f"disk I/O error under {name} ({path}{free}): check the disk and its free space and {again}"
    return f"no space left on device under {name} ({path}{free}): free space and {again}"


def _size(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024:
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TB"
