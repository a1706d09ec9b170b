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
        store_module, "_scan", lambda t, where, cols, **kw: scans.append((where, cols)) or real(t, where, cols, **kw)
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
    monkeypatch.setattr(
        store_module, "_scan", lambda t, where, cols, **kw: scans.append((cols, kw)) or real(t, where, cols, **kw)
    )
    store = Store(tmp_path / "lance")
    store.add("embeddings", _vectors("mail", ["a", "b", "c"]))
    for _ in range(2):
        assert store.rows("embeddings", "mail", ["chunk_id"]).column_names == ["chunk_id"]
    # One read of at most one row more than is held tells it is too many (once a version);
    # after that nothing is held and nothing more is read than asked.
    assert scans == [(None, {"limit": 3}), (["chunk_id"], {}), (["chunk_id"], {})]


def test_a_writers_store_opens_each_table_once_and_sees_its_own_writes(tmp_path, monkeypatch):
    opened: list[str] = []
    real = Store._open
    monkeypatch.setattr(Store, "_open", lambda self, name: opened.append(name) or real(self, name))
    writer = Store(tmp_path / "lance", writer=True)
    writer.add("embeddings", _vectors("mail", ["a"]))
    v1 = writer.publish("mail")["embeddings"]
    writer.add("embeddings", _vectors("mail", ["b"]))
    writer.delete_keys("embeddings", "chunk_id", ["a"], source="mail")
    assert writer.rows("embeddings", "mail").column("chunk_id").to_pylist() == ["b"]
    # Time travel opens a table of its own: the held one stays at the newest version.
    assert writer.published_rows("embeddings", "mail", v1, ["chunk_id"]).column(0).to_pylist() == ["a"]
    writer.add("embeddings", _vectors("mail", ["c"]))
    assert sorted(writer.rows("embeddings", "mail").column("chunk_id").to_pylist()) == ["b", "c"]
    assert opened.count("embeddings") == 2  # the held one, and the one checked out at v1
    # Any other store opens the table at each use, so it sees what the writer wrote.
    reader = Store(tmp_path / "lance")
    assert sorted(reader.rows("embeddings", "mail").column("chunk_id").to_pylist()) == ["b", "c"]
    writer.add("embeddings", _vectors("mail", ["d"]))
    assert sorted(reader.rows("embeddings", "mail").column("chunk_id").to_pylist()) == ["b", "c", "d"]
