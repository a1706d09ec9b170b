"""An incremental connector's read cursor for a source: written by the read stage after a read,
read by the next, deleted with the source (``pipeline/retention``). One owner for the file.

A cursor holds for the source as it was read: another path, or other exclusion rules (a record
the rules kept out must be read again once a rule goes, and one they name now must be found),
reads everything again.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ragbag.core import exclusions
from ragbag.core.home import Home, Source
from ragbag.core.private import write_private


def path(home: Home, source: Source) -> Path:
    """Where an incremental connector's read cursor for the source is kept."""
    return home.state_dir / f"{source.name}.cursor.json"


def load(file: Path, source: Source) -> dict[str, Any] | None:
    """The saved cursor, unless the source now points elsewhere or excludes other things (then
    read everything again)."""
    if not file.exists():
        return None
    saved = json.loads(file.read_text())
    if saved.get("connector") != source.connector or saved.get("path") != source.path:
        return None
    if saved.get("exclude", []) != _rules(source):
        return None
    return saved.get("state")


def save(file: Path, source: Source, state: dict[str, Any]) -> None:
    body = {"connector": source.connector, "path": source.path, "exclude": _rules(source), "state": state}
    write_private(file, json.dumps(body, default=str))


def _rules(source: Source) -> list[str]:
    return sorted(str(r) for r in exclusions.of_source(source.options))
