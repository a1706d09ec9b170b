"""A snapshot's rows as dicts, each built when first asked for, and its timestamp columns as
NumPy datetimes read straight from Arrow's buffers: what a cold search reads of a large home is
a few dozen rows, not all of them."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from datetime import UTC
from typing import Any, overload

import numpy as np
import pyarrow as pa


class Records(Sequence[dict[str, Any]]):
    """The rows of a snapshot as dicts (metadata fields on top, as filters and citations read
    them), each built when first asked for. A search reads a few dozen rows; building all of
    them at load time was most of a cold search on a large home."""

    def __init__(self, rows: pa.Table, stamps: dict[str, np.ndarray]) -> None:
        self._rows = rows.select([n for n in rows.column_names if n not in stamps])
        self._stamps = stamps
        self._built: dict[int, dict[str, Any]] = {}
        self._all: list[dict[str, Any]] | None = None

    def __len__(self) -> int:
        return self._rows.num_rows

    @overload
    def __getitem__(self, j: int) -> dict[str, Any]: ...
    @overload
    def __getitem__(self, j: slice) -> list[dict[str, Any]]: ...
    def __getitem__(self, j: int | slice) -> dict[str, Any] | list[dict[str, Any]]:
        if isinstance(j, slice):
            return [self[x] for x in range(*j.indices(len(self)))]
        if self._all is not None:
            return self._all[j]
        if j < 0:
            j += len(self)
        if not 0 <= j < len(self):
            raise IndexError(j)
        rec = self._built.get(j)
        if rec is None:
            (row,) = self._rows.slice(j, 1).to_pylist()
            rec = self._built[j] = self._record(row, j)
        return rec

    def __iter__(self) -> Iterator[dict[str, Any]]:
        if self._all is None:
            self._all = [self._built.get(j) or self._record(r, j) for j, r in enumerate(self._rows.to_pylist())]
        return iter(self._all)

    def _record(self, row: dict[str, Any], j: int) -> dict[str, Any]:
        meta = json.loads(row["metadata"] or "{}")
        row["metadata"] = meta
        for name, values in self._stamps.items():
            d = values[j]
            row[name] = None if np.isnat(d) else d.astype(object).replace(tzinfo=UTC)
        return {**meta, **row}


def datetimes(column: pa.ChunkedArray) -> np.ndarray:
    """A timestamp column as datetime64[us] (UTC where it has a zone), NaT where null. Read from
    its buffers: pyarrow converts a zoned timestamp through pandas, which would cost a cold
    search a third of its imports."""
    parts = []
    for c in column.chunks:
        validity, data = c.buffers()[:2]
        raw = np.frombuffer(data, np.int64, count=len(c), offset=c.offset * 8) if len(c) else np.zeros(0, np.int64)
        values = raw.astype(f"datetime64[{c.type.unit}]").astype("datetime64[us]")
        if validity is not None and c.null_count:
            bits = np.unpackbits(np.frombuffer(validity, np.uint8), bitorder="little")
            values = np.where(bits[c.offset : c.offset + len(c)].astype(bool), values, np.datetime64("NaT"))
        parts.append(values)
    return np.concatenate(parts) if parts else np.zeros(0, "datetime64[us]")
