"""Owner-only state: every file ragbag writes is readable by its owner alone, temporaries live
under the home, and what a dead process left behind is cleared.

The home holds people's mail and chats, so privacy is not left to each writer: the application
processes set a 077 umask and a private TMPDIR once (``private_process``), files are written
atomically with mode 0600 (``write_private``), and a home made by an older ragbag or another tool
is tightened once per process (``tighten``).
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import tempfile
from pathlib import Path

from ragbag.core.leases import alive

_tightened: set[Path] = set()


def first_time(root: Path) -> bool:
    """Whether this process meets ``root`` for the first time (then it tightens and clears it)."""
    if root in _tightened:
        return False
    _tightened.add(root)
    return True


def is_application() -> bool:
    """Whether ``private_process`` made this process one of ragbag's own."""
    return _application


_TEMPORARY = re.compile(r"^ragbag-[a-z]+-(\d+)-")  # ragbag-<what>-<pid>-…: whose it is


_application = False  # whether this process is ragbag's own (see private_process)


def private_process(tmp_dir: Path) -> None:
    """Make every file this process (and its children) creates owner-only, and put its
    temporaries under the home. For ragbag's own processes only — the CLI, the MCP server, the
    Dagster code location and its step processes call it before they write anything — since it
    changes the whole process; a library caller's umask and temporary folder stay its own.
    ``tmp_dir`` is the home's temporaries folder (``Home.tmp_dir``); a home that does not exist
    yet gets it when ``Home.ensure`` creates the home."""
    global _application
    _application = True
    os.umask(0o077)
    if tmp_dir.parent.is_dir():
        tmp_dir.mkdir(mode=0o700, exist_ok=True)
        os.environ["TMPDIR"] = str(tmp_dir)
        tempfile.tempdir = str(tmp_dir)


def temporary_prefix(what: str) -> str:
    """A prefix for a temporary file or folder that names its process, so a later process can
    tell a dead one's leftovers (a killed build's SQLite copy) from a live one's."""
    return f"ragbag-{what}-{os.getpid()}-"


def clear_stale_temporaries(folder: Path) -> list[str]:
    """Delete the temporaries of processes that are gone; returns their names."""
    gone = []
    for entry in folder.iterdir() if folder.is_dir() else ():
        m = _TEMPORARY.match(entry.name)
        if m and not alive(int(m[1])):
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry, ignore_errors=True)
            else:
                entry.unlink(missing_ok=True)
            gone.append(entry.name)
    return gone


def tighten(root: Path) -> int:
    """Take group and other permissions off everything under ``root`` (files 0600, folders
    0700) that an older ragbag, another tool or a process without our umask wrote; links are
    left alone (chmod would follow them out of the home). Returns how many were changed."""
    changed = 0
    for dirpath, dirnames, filenames in os.walk(root):
        for name in [*dirnames, *filenames]:
            path = os.path.join(dirpath, name)
            try:
                st = os.lstat(path)
                if stat.S_ISLNK(st.st_mode) or not st.st_mode & 0o077:
                    continue
                os.chmod(path, stat.S_IMODE(st.st_mode) & ~0o077)
                changed += 1
            except OSError:
                continue  # gone meanwhile, or not ours
    return changed


def owner_only_folder(path: Path) -> bool:
    """Whether ``path`` is a folder of this user's that no one else can read or write: what a
    cache kept there says (a check's verdict, a library's patterns) is only trusted there."""
    try:
        st = path.lstat()
    except OSError:
        return False
    return st.st_uid == os.getuid() and not st.st_mode & 0o077 and stat.S_ISDIR(st.st_mode)


def write_private(path: Path, text: str) -> None:
    """Write atomically with mode 0600."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
