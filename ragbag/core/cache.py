"""The one in-memory LRU cache: query vectors, recomputed passage vectors, reranker encodings and
document texts all keep their most recently used entries here, bounded by count.

One implementation so that eviction, the size bound and thread safety are decided once; the
MCP server calls tools from several threads, so every operation takes the cache's own lock.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, Generic, TypeVar

import numpy as np

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class LRU(Generic[K, V]):
    """At most ``size`` entries; a hit makes an entry the most recent, an insert evicts the least."""

    def __init__(self, size: int):
        self.size = max(int(size), 1)
        self._d: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def __contains__(self, key: object) -> bool:
        with self._lock:
            return key in self._d

    def __len__(self) -> int:
        with self._lock:
            return len(self._d)

    def get(self, key: K) -> V | None:
        with self._lock:
            value = self._d.get(key)
            if value is not None:
                self._d.move_to_end(key)
            return value

    def put(self, key: K, value: V) -> None:
        with self._lock:
            self._d[key] = value
            self._d.move_to_end(key)
            while len(self._d) > self.size:
                self._d.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._d.clear()


class RowCache:
    """Per-item encodings keyed by content (recomputed exact vectors, the reranker's vectors,
    sparse rows), fetched a batch at a time: only the missing keys are computed, and the rows
    come back stacked in the order asked. ``stack`` joins rows into one matrix (default: dense
    float32 vectors, ``np.stack``)."""

    def __init__(self, size: int = 4096, stack: Callable[[list], Any] | None = None):
        self._lru: LRU[str, Any] = LRU(size)
        self._stack = stack

    def get_many(self, keys: list[str], compute: Callable[[list[int]], Any]) -> Any:
        """The rows of ``keys`` stacked in order; ``compute(positions)`` encodes the missing ones
        (the rows of a matrix, one per position, in order)."""
        found: dict[str, Any] = {key: self._lru.get(key) for key in dict.fromkeys(keys)}
        missing = [i for i, key in enumerate(keys) if found.get(key) is None]
        if missing:
            rows = compute(missing)
            for n, i in enumerate(missing):
                row = rows[n] if self._stack else np.asarray(rows[n], np.float32)
                found[keys[i]] = row
                self._lru.put(keys[i], row)
        out = [found[key] for key in keys]
        if self._stack:
            return self._stack(out)
        return np.stack(out) if out else np.zeros((0, 0), np.float32)
