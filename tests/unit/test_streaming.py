"""The read and chunk stages stream: a batch is written before the next is read, so memory
holds one batch whatever the source's size (benchmarks/memory_bench.py measures the peak)."""

from __future__ import annotations

from ragbag.core.records import Cursor, Document, ReadError, Seen, Span
from ragbag.index.store import Store
from ragbag.pipeline import chunk, ingest

KNOWN = ("files",)


def _doc(source: str, key: str, text: str) -> Document:
    return Document(source, "files", key, f"rec:{key}", key, text)


def test_the_read_stage_writes_each_batch_before_reading_on(home, tmp_path, monkeypatch):
    monkeypatch.setattr(ingest, "_BATCH_RECORDS", 3)
    src = home.add_source("big", "files", str(tmp_path), known=KNOWN)
    store = Store(home.lance_dir)
    stored_while_reading: list[int] = []
    texts = {str(i): f"record number {i}" for i in range(10)}

    def read(path, source, cursor, options=None):
        for key in sorted(texts, key=int):
            stored_while_reading.append(store.table("documents").count_rows())
            yield _doc(source, key, texts[key])
        yield _doc(source, "4", "a second record 4")  # a duplicate, batches after the first
        yield ReadError("rec:bad", "unreadable")
        yield Cursor({"n": len(texts)})

    first = ingest.ingest(store, home, src, read)
    assert (first["added"], first["documents"], len(first["errors"])) == (10, 10, 2)
    assert any("duplicate record id '4'" in e["error"] for e in first["errors"])
    # Records 0-2 were stored before record 3 was read, and so on: never all held at once.
    assert stored_while_reading == [0, 0, 0, 3, 3, 3, 6, 6, 6, 9]
    assert sorted(store.rows("documents", "big", ["text"]).column("text").to_pylist())[0] == "record number 0"

    texts["7"] = "record number 7, edited"  # a change in a later batch, a deletion, a vouched-for one
    del texts["2"]

    def again(path, source, cursor, options=None):
        yield Seen("9")
        for key in sorted(texts, key=int):
            if key != "9":
                yield _doc(source, key, texts[key])
        yield Cursor({"n": len(texts)})

    second = ingest.ingest(store, home, src, again)
    assert (second["added"], second["changed"], second["deleted"], second["documents"]) == (0, 1, 1, 9)
    rows = store.rows("documents", "big", ["native_id", "text"]).to_pydict()
    assert dict(zip(rows["native_id"], rows["text"]))["7"] == "record number 7, edited"
    assert sorted(rows["native_id"], key=int) == [k for k in sorted(texts, key=int)]


def test_the_chunk_stage_writes_each_batch_before_chunking_on(home, tmp_path, monkeypatch):
    monkeypatch.setattr(chunk, "_BATCH", 4)
    src = home.add_source("big", "files", str(tmp_path), known=KNOWN)
    store = Store(home.lance_dir)

    def read(path, source, cursor, options=None):
        for i in range(10):
            yield _doc(source, str(i), f"Paragraph one of record {i}.\n\nParagraph two of record {i}.")

    ingest.ingest(store, home, src, read)
    stored_while_chunking: list[int] = []

    def spans(doc, count, budget):
        stored_while_chunking.append(store.table("chunks").count_rows())
        cut = doc.text.index("\n\n")
        return [Span(0, cut), Span(cut + 2, len(doc.text))]

    report = chunk.chunk(store, src, spans, "multilingual-e5-small")
    assert (report["chunks"], report["new_chunks"], report["chunked_documents"]) == (20, 20, 10)
    assert stored_while_chunking == [0] * 4 + [8] * 4 + [16] * 2
    again = chunk.chunk(store, src, spans, "multilingual-e5-small")  # nothing changed: nothing done
    assert (again["chunks"], again["chunked_documents"]) == (20, 0)
