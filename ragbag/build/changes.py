"""Cheap change detection for sources on disk, so sensors refresh only what changed."""

from __future__ import annotations

import os
from pathlib import Path

from ragbag.core.records import stable_hash

_SKIP_DIRS = {".git", ".hg", ".svn", "node_modules", "__pycache__"}


def tree_fingerprint(path: str | Path) -> str | None:
    """A hash of every file's relative path, size and mtime under ``path`` (a file or a folder);
    None when the path is gone. Reads no file contents: a stat per file."""
    root = Path(path)
    if not root.exists():
        return None
    if root.is_file():
        st = root.stat()
        return stable_hash(root.name, str(st.st_size), str(st.st_mtime_ns))
    parts: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS)
        for name in sorted(filenames):
            full = os.path.join(dirpath, name)
            try:
                st = os.stat(full)
            except OSError:
                continue
            parts.append(f"{os.path.relpath(full, root)}\t{st.st_size}\t{st.st_mtime_ns}")
    return stable_hash(*parts)
