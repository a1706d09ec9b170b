"""The pending file: a compact source's new vectors, from the embed stage until the graph stage
takes them into its graph (a compact source stores no vectors in its tables). One owner for the
file, which both stages read.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from ragbag.core.home import Home, Source
from ragbag.pipeline.graph_config import graph_profile

_PENDING = "pending_vectors.npz"


def pending_path(home: Home, source: Source) -> Path | None:
    """Where a compact source's new vectors wait for the graph stage (None for fast sources)."""
    if graph_profile(home, source) != "compact":
        return None
    return home.index_dir(source.connector, source.name) / _PENDING


def add_pending(path: Path, pairs: list[tuple[str, str]], vectors: list[Any]) -> None:
    """Merge vectors into the pending file (a killed build's vectors are kept, not re-embedded)."""
    held = read_pending(path)
    held.update(zip(pairs, vectors))
    if not held:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp.npz")
    keys = np.array(["\x1f".join(p) for p in held])
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        np.savez(f, keys=keys, vectors=np.asarray(list(held.values()), dtype=np.float32))
    os.replace(tmp, path)


def read_pending(path: Path | None) -> dict[tuple[str, str], Any]:
    """The vectors waiting in the pending file, by (chunk id, content hash); {} when none."""
    if path is None or not path.exists():
        return {}
    data = np.load(path)
    out: dict[tuple[str, str], Any] = {}
    for k, v in zip(data["keys"], data["vectors"]):
        chunk_id, content_hash = str(k).split("\x1f")
        out[(chunk_id, content_hash)] = v
    return out
