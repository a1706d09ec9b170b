"""Walking a source folder: the one walker behind every connector that reads a user's folders
(files, code, mail, the export connectors, browser and Messages databases under a folder).

A source folder is what the user chose to index, so a symbolic link must not quietly widen it:
``passwd.txt -> /etc/passwd`` in a notes folder would put the password file in the index, in
answers and in citations. A link whose target (fully resolved) lies outside the source folder is
therefore not followed but reported as a ``ReadError`` (the build report says which link and
why) unless the source sets ``options: {follow_links_outside: true}`` in ``sources.yaml``.
Some things are never opened, whatever the option: anything under ``/proc`` or ``/sys`` (a
link to ``/proc/self/environ`` would index the build's own environment, secrets included) and
anything that is not a regular file or a folder: opening a FIFO blocks until a writer comes,
which would hang the build, and a device yields endless or sensitive bytes.

Links to files inside the source folder are read like the files they name. A link to a folder
inside it is not walked: that folder is walked where it lies, and walking it again would index
it twice (and a link to an ancestor would never end). A followed outside folder is walked
once, however many links lead to it, so link cycles end too. The source path itself may be a
link: naming it was the user's explicit choice.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ragbag.core.exclusions import path_excluded, path_globs
from ragbag.core.records import ReadError

FOLLOW_LINKS_OUTSIDE = "follow_links_outside"  # the sources.yaml option; `ragbag add --follow-links-outside`
SYSTEM_FOLDERS = ("/proc", "/sys")
_NOT_FOLLOWED = f"outside the source folder: skipped (set option {FOLLOW_LINKS_OUTSIDE} to index it)"


@dataclass(frozen=True)
class Entry:
    """One name met in the walk. ``path`` is as reached from the root (through a followed link:
    the link's path); ``is_dir`` describes what a link points to."""

    path: Path
    rel: str  # relative posix path from the root: the record's key
    name: str
    is_dir: bool
    is_link: bool


Keep = Callable[[Entry], bool]


def excluded_paths(options: dict | None = None) -> tuple[str, ...]:
    """The path globs of a source's exclusion rules (``ragbag.core.exclusions``): what its
    walker must not open."""
    return path_globs(options)


def follows_outside(options: dict | None = None) -> bool:
    """Whether a source's ``options`` opt in to links leaving its folder."""
    value = (options or {}).get(FOLLOW_LINKS_OUTSIDE, False)
    return value is True or str(value).strip().lower() in ("true", "yes", "on", "1")


def walk(
    root: Path,
    errors: list[ReadError] | None = None,
    *,
    keep: Keep | None = None,
    follow_outside: bool = False,
    exclude: Sequence[str] = (),
) -> list[tuple[Path, str]]:
    """(file, relative posix path) of every regular file under ``root`` that ``keep`` accepts
    and no ``exclude`` glob names (:func:`ragbag.core.exclusions.path_excluded`: never opened,
    never reported), sorted by path. ``keep`` sees folders too (False prunes one) and is asked before any link
    or special file is judged, so a hidden or ignored entry is never reported. What cannot be
    listed or is not followed goes to ``errors`` with the reason (see the module doc)."""
    root = Path(root)
    errors = [] if errors is None else errors
    try:
        top_st = root.stat()
        top = os.path.realpath(root)
    except OSError as exc:
        errors.append(ReadError(str(root.absolute()), f"unreadable: {exc.strerror or exc}"))
        return []
    system = _system_folder(top)
    if system:
        errors.append(ReadError(str(root.absolute()), f"in {system}, a system folder: never read"))
        return []
    read_at = {(top_st.st_dev, top_st.st_ino)}  # folders walked (a followed link enters each once)
    found: list[tuple[Path, str]] = []
    stack: list[tuple[Path, str]] = [(root, "")]
    while stack:
        folder, base = stack.pop()
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            errors.append(ReadError(str(folder.absolute()), f"unreadable: {exc.strerror or exc}"))
            continue
        subdirs: list[tuple[Path, str]] = []
        for e in entries:
            path, rel = Path(e.path), f"{base}/{e.name}" if base else e.name
            if exclude and path_excluded(exclude, rel):
                continue
            uri = str(path.absolute())
            try:
                is_link = e.is_symlink()
                st = os.stat(path) if is_link else e.stat(follow_symlinks=False)
            except OSError as exc:  # a dangling link, a cycle of links, a vanished entry
                if keep is None or keep(Entry(path, rel, e.name, False, True)):
                    errors.append(ReadError(uri, _broken(path, exc)))
                continue
            is_dir = stat.S_ISDIR(st.st_mode)
            if keep is not None and not keep(Entry(path, rel, e.name, is_dir, is_link)):
                continue
            if is_link:
                target = os.path.realpath(path)
                reason = refusal(target, st, top, follow_outside)
                if reason:
                    errors.append(ReadError(uri, f"symlink to {target}, {reason}"))
                    continue
                if is_dir and _inside(target, top):
                    continue  # walked where it lies
            elif not is_dir and not stat.S_ISREG(st.st_mode):
                errors.append(ReadError(uri, f"{_special(st.st_mode)}, not a regular file: skipped"))
                continue
            if not is_dir:
                found.append((path, rel))
            elif (st.st_dev, st.st_ino) in read_at:
                if is_link:
                    errors.append(
                        ReadError(
                            uri, f"symlink to {os.path.realpath(path)}, a folder this source already reads: skipped"
                        )
                    )
            else:
                read_at.add((st.st_dev, st.st_ino))
                subdirs.append((path, rel))
        stack.extend(reversed(subdirs))
    return sorted(found, key=lambda pair: pair[1])


def visible_files(
    root: Path,
    errors: list[ReadError] | None = None,
    wanted: Callable[[str], bool] | None = None,
    follow_outside: bool = False,
    exclude: Sequence[str] = (),
) -> list[tuple[Path, str]]:
    """:func:`walk` as the files connector and the export connectors see a folder: every
    non-hidden file whose name ``wanted`` accepts, hidden folders pruned."""

    def keep(entry: Entry) -> bool:
        return not entry.name.startswith(".") and (entry.is_dir or wanted is None or wanted(entry.name))

    return walk(root, errors, keep=keep, follow_outside=follow_outside, exclude=exclude)


def refusal(target: str, st: os.stat_result, top: str, follow_outside: bool) -> str | None:
    """Why a link to ``target`` (resolved; ``st`` its stat) is not followed from the source
    folder ``top`` (resolved), or None. Special files and system folders come first: for them
    the option would change nothing, so the message must not suggest it."""
    system = _system_folder(target)
    if system:
        return f"in {system}, a system folder: never read"
    if not stat.S_ISDIR(st.st_mode) and not stat.S_ISREG(st.st_mode):
        return f"{_special(st.st_mode)}: skipped"
    if not follow_outside and not _inside(target, top):
        return _NOT_FOLLOWED
    return None


def safe_to_open(path: Path, root: Path, follow_outside: bool) -> bool:
    """Whether a file a connector opens beside the walk (a ``.gitignore``) is a regular file the
    walk itself would read."""
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):
            return False
        if not os.path.islink(path):
            return True
        return refusal(os.path.realpath(path), st, os.path.realpath(root), follow_outside) is None
    except OSError:
        return False


def _inside(target: str, top: str) -> bool:
    return target == top or target.startswith(top.rstrip("/") + "/")


def _system_folder(path: str) -> str | None:
    return next((s for s in SYSTEM_FOLDERS if path == s or path.startswith(s + "/")), None)


def _special(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _broken(path: Path, exc: OSError) -> str:
    try:
        target = os.readlink(path)
    except OSError:
        return f"unreadable: {exc.strerror or exc}"
    if exc.errno == errno.ELOOP:
        return f"unreadable: symlink to {target}, a cycle of links"
    if exc.errno == errno.ENOENT:
        return f"unreadable: dangling symlink to {target}"
    return f"unreadable: symlink to {target}: {exc.strerror or exc}"
