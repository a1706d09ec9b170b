"""An incremental connector's read cursor for a source: written by the read stage after a read,
read by the next, deleted with the source (``pipeline/retention``). One owner for the file.

A cursor holds for the source as it was read: its path, and how the read stage turned records
into stored rows (``reads_as``: the exclusion rules, the secret screen's policy and rules). Any
other, and the next read starts over: a record a dropped rule kept out must be read again, one a
new rule names must be found, and a record stored before a new secret rule must be screened by
it — records a cursor vouches for (``Seen``) are never looked at.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ragbag.core.home import Home, Source
from ragbag.core.private import write_private


def path(home: Home, source: Source) -> Path:
    """Where an incremental connector's read cursor for the source is kept."""
    return home.state_dir / f"{source.name}.cursor.json"


def load(file: Path, source: Source, reads_as: str = "") -> dict[str, Any] | None:
    """The saved cursor, unless the source now points elsewhere or is read otherwise (then read
    everything again)."""
    if not file.exists():
        return None
    saved = json.loads(file.read_text())
    if saved.get("connector") != source.connector or saved.get("path") != source.path:
        return None
    if saved.get("reads_as", "") != reads_as:
        return None
    return saved.get("state")


def save(file: Path, source: Source, state: dict[str, Any], reads_as: str = "") -> None:
    body = {"connector": source.connector, "path": source.path, "reads_as": reads_as, "state": state}
    write_private(file, json.dumps(body, default=str))
