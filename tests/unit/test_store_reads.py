"""A source's rows read many times between two writes cost one scan (``Store.rows``)."""

from __future__ import annotations

import pyarrow as pa

from ragbag.index import store as store_module
from ragbag.index.store import Store


def _vectors(source: str, ids: list[str]) -> pa.Table:
    return pa.table(
        {
            "chunk_id": ids,
            "source": [source] * len(ids),
            "content_hash": [f"h-{i}" for i in ids],
            "model": ["m"] * len(ids),
            "vector": [[float(n), 1.0] for n in range(len(ids))],
        }
    )


def test_reads_at_one_version_scan_once_and_a_write_is_seen_at_once(tmp_path, monkeypatch):
    scans: list[tuple[str, object]] = []
    real = store_module._scan
    monkeypatch.setattr(
        store_module, "_scan", lambda t, where, cols: scans.append((where, cols)) or real(t, where, cols)
    )
    store = Store(tmp_path / "lance")
    store.add("embeddings", _vectors("mail", ["a", "b"]))
    store.add("embeddings", _vectors("notes", ["n"]))
    first = store.rows("embeddings", "mail", ["chunk_id"])
    again = Store(tmp_path / "lance").rows("embeddings", "mail", ["content_hash", "chunk_id"])  # a stage's own store
    assert sorted(first.column("chunk_id").to_pylist()) == ["a", "b"]
    assert again.column_names == ["content_hash", "chunk_id"] and again.num_rows == 2
    assert len(scans) == 1  # the whole rows, once
    store.add("embeddings", _vectors("mail", ["c"]))  # a new version: read again
    assert sorted(store.rows("embeddings", "mail", ["chunk_id"]).column(0).to_pylist()) == ["a", "b", "c"]
    assert store.rows("embeddings", "notes").column("chunk_id").to_pylist() == ["n"]
    assert len(scans) == 3


def test_a_source_of_many_rows_is_read_column_by_column_as_asked(tmp_path, monkeypatch):
    monkeypatch.setattr(store_module, "HELD_ROWS", 2)
    scans: list[object] = []
    real = store_module._scan
    monkeypatch.setattr(store_module, "_scan", lambda t, where, cols: scans.append(cols) or real(t, where, cols))
    store = Store(tmp_path / "lance")
    store.add("embeddings", _vectors("mail", ["a", "b", "c"]))
    for _ in range(2):
        assert store.rows("embeddings", "mail", ["chunk_id"]).column_names == ["chunk_id"]
    assert scans == [["chunk_id"], ["chunk_id"]]  # nothing held, nothing more read than asked
