"""The figures docs/reliability.md quotes: each fault test records what it survived.

Set ``RAGBAG_FAULT_FIGURES=path.json`` when running ``tests/faults`` to collect them; without
it, recording does nothing.
"""

from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path
from typing import Any


def record(key: str, values: dict[str, Any]) -> None:
    """Merge ``values`` under ``key`` into the figures file (safe across xdist workers)."""
    target = os.environ.get("RAGBAG_FAULT_FIGURES")
    if not target:
        return
    path = Path(target)
    with open(path.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        data = json.loads(path.read_text()) if path.exists() and path.stat().st_size else {}
        data[key] = {**data.get(key, {}), **values}
        path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
