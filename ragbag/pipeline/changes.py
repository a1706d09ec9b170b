"""Cheap change detection: whether a source's build would find nothing new, known before any
run starts, so an unchanged source costs a stat per file instead of a Dagster run.

A source's *fingerprint* covers what a build reads and how it builds: every file's relative path,
size and mtime under its path (a SQLite file's ``-wal`` and ``-journal`` beside it, where recent
writes wait), its registration (connector, path, options), the home's config and secret rules,
the model, and the versions of the chunker, graph format, keyword tokenizer, secret detectors and
the names a photo's place is given.
The read stage notes the fingerprint it started from (``note_reading``, taken *before* it reads,
so a file changed during the read makes the next build run); publish confirms it once that read
is what search serves (``note_published``). ``unchanged`` then holds only while the fingerprint, the published
index's content fingerprint and its pinned table versions on disk all still agree; a damaged,
replaced or half-built index always runs.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import ragbag
from ragbag.connectors import FOLLOW_LINKS_OUTSIDE
from ragbag.core.errors import DamagedIndex
from ragbag.core.home import Home, Source
from ragbag.core.private import write_private
from ragbag.core.records import stable_hash
from ragbag.index import bm25, graph, published
from ragbag.index.store import pins_on_disk
from ragbag.pipeline import row_aligned, row_languages, screen
from ragbag.text import place_names
from ragbag.text.chunking import CHUNKER_VERSION

_SKIP_DIRS = {".git", ".hg", ".svn", "__pycache__"}
# A SQLite database's recent writes sit in these until a checkpoint; -shm changes on mere reads.
_SIDECARS = ("-wal", "-journal")


def tree_fingerprint(path: str | Path) -> str | None:
    """A hash of every file's relative path, size and mtime under ``path`` (a file or a folder);
    None when the path is gone. Reads no file contents: a stat per file."""
    root = Path(path)
    if not root.exists():
        return None
    if root.is_file():
        parts = [_stat_line(root, root.name)]
        parts += [_stat_line(Path(f"{root}{s}"), f"{root.name}{s}") for s in _SIDECARS]
        return stable_hash(*parts)
    parts = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS)
        for name in sorted(filenames):
            full = os.path.join(dirpath, name)
            parts.append(_stat_line(Path(full), os.path.relpath(full, root)))
    return stable_hash(*parts)


def source_fingerprint(home: Home, source: Source) -> str | None:
    """What a build of ``source`` would read and how (see the module doc); None when that cannot
    be known cheaply: no path (the connector reads its default places), a path that is gone, or
    links followed outside the folder (their targets are not walked here)."""
    if not source.path or source.options.get(FOLLOW_LINKS_OUTSIDE):
        return None
    tree = tree_fingerprint(source.path)
    if tree is None:
        return None
    config = home.config_file.read_bytes().decode("utf-8", "replace") if home.config_file.exists() else ""
    registration = json.dumps(source.as_dict(), sort_keys=True, default=str)
    return stable_hash(
        tree,
        registration,
        config,
        published.home_model(home),
        CHUNKER_VERSION,
        graph.FORMAT_VERSION,
        bm25.TOKENIZER_VERSION,
        screen.rules_digest(home),
        f"place-names-{place_names.VERSION}",
        f"row-languages-{row_languages.VERSION}",
        f"row-aligned-{row_aligned.VERSION}",
        ragbag.__version__,
    )


def note_reading(home: Home, source: Source, fingerprint: str | None, errors: list[dict[str, str]]) -> None:
    """The read stage read the source as of ``fingerprint`` (taken before it read), reporting
    ``errors``; nothing counts as built from it until ``note_published``."""
    _path(home, source, "reading").unlink(missing_ok=True)
    if fingerprint is not None:
        write_private(_path(home, source, "reading"), json.dumps({"fingerprint": fingerprint, "errors": errors}))


def note_published(home: Home, source: Source, manifest: dict[str, Any]) -> None:
    """Search now serves what the last read stage read: that read's fingerprint is the built one."""
    reading = _read(_path(home, source, "reading"))
    if reading is None:
        _path(home, source, "built").unlink(missing_ok=True)
        return
    write_private(_path(home, source, "built"), json.dumps({**reading, "published": manifest.get("fingerprint")}))


def unchanged(home: Home, source: Source) -> dict[str, Any] | None:
    """The last build's record (``fingerprint``, ``errors``) and the published ``manifest`` when
    building ``source`` now would find nothing new; None when it must run. Never imports
    LanceDB: the pinned table versions are checked on disk."""
    built = _read(_path(home, source, "built"))
    if built is None or built.get("fingerprint") != source_fingerprint(home, source):
        return None
    base = home.index_dir(source.connector, source.name)
    try:
        key = published.current_version(base, source.name)
        if key is None:
            return None
        manifest, _ = published.check_version(base / key, source.name)
    except DamagedIndex:
        return None
    if manifest.get("fingerprint") != built.get("published") or manifest.get("model") != published.home_model(home):
        return None
    if not home.lance_is_local or pins_on_disk(home.lance_dir, source.name, manifest["versions"]) is not None:
        return None
    return {**built, "manifest": manifest}


def forget(home: Home, source: Source) -> None:
    """Drop the source's change records: it is removed, and a source added later under its name
    must not inherit them."""
    for state in ("reading", "built"):
        _path(home, source, state).unlink(missing_ok=True)


def _path(home: Home, source: Source, state: str) -> Path:
    return home.state_dir / f"{source.name}.{state}.json"


def _read(path: Path) -> dict[str, Any] | None:
    try:
        value = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def _stat_line(path: Path, rel: str) -> str:
    try:
        st = os.stat(path)
    except OSError:
        return f"{rel}\t-"
    return f"{rel}\t{st.st_size}\t{st.st_mtime_ns}"
