"""The embed stage: a vector for every chunk, computed only for texts never embedded before.

Vectors are keyed by (model, content hash): a text already embedded for any source comes from
the shared cache. A compact source keeps no vectors in LanceDB (its graph holds what search
needs), so its new vectors wait in a pending file, owned here, until the graph stage takes them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from itertools import accumulate
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from ragbag.core import progress
from ragbag.core.home import Source
from ragbag.index.store import Store
from ragbag.models import embedding
from ragbag.pipeline import shards
from ragbag.pipeline.pending import add_pending, read_pending
from ragbag.pipeline.preview import ROWS as PREVIEW_ROWS
from ragbag.pipeline.preview import preview


def embed(
    store: Store,
    source: Source,
    model: str,
    batch_size: int = 128,
    pending: Path | None = None,
    restore: bool = False,
    in_graph: set[str] | None = None,
    early: Callable[[int, int, Callable[[str], Any], list[int] | None], None] | None = None,
    cluster: str = "",
) -> dict[str, Any]:
    """Embed chunks that have no vector for (model, content hash); reuse the cache first.

    A compact source (``pending`` set) never stores a vector in LanceDB: its rows record that a
    chunk is embedded (vector null), its new vectors wait in the ``pending`` file for the graph
    stage, and they stay out of the shared cache. A new chunk whose text already has a node in
    its graph (``in_graph``: content hashes) is not embedded at all: it will share that node.
    ``restore``: the source was compact and is fast now, so rows without a vector are embedded
    again (from the cache where it can). ``early``: told (embedded, to embed, a content hash's
    vector so far) before the texts are counted, before the first batch (with the tokens to
    encode, cumulative in encoding order) and after each batch, to publish search early
    (``ragbag.pipeline.early``). ``cluster``: the home's ``build.embed_cluster``, to encode the
    texts in shards on a Dask cluster (``ragbag.pipeline.shards``); "" encodes here.
    """
    in_graph = in_graph if pending is not None and in_graph else set()
    chunks = store.rows("chunks", source.name, ["chunk_id", "content_hash"]).to_pydict()
    stored = store.rows("embeddings", source.name, ["chunk_id", "content_hash", "model"]).to_pydict()
    have: dict[str, tuple[str, str] | None] = {
        c: (h, m) for c, h, m in zip(stored["chunk_id"], stored["content_hash"], stored["model"])
    }
    if restore:
        for c in store.without_vectors(source.name):
            have[c] = None
    todo = [(cid, h) for cid, h in zip(chunks["chunk_id"], chunks["content_hash"]) if have.get(cid) != (h, model)]
    live = set(chunks["chunk_id"])
    stale = [c for c in have if c not in live] + [cid for cid, _ in todo if cid in have]

    keys = sorted({_cache_key(model, h) for _, h in todo})
    cached_tbl = store.lookup("embedding_cache", "key", keys, ["key", "vector"]).to_pydict()
    cache: dict[str, Any] = dict(zip(cached_tbl["key"], cached_tbl["vector"]))
    # A compact source's vectors stay out of the shared cache; those a killed build of it left
    # in its pending file are as good as cached.
    for (_, h), v in read_pending(pending).items():
        cache.setdefault(_cache_key(model, h), v)
    first: dict[str, str] = {}  # a chunk of each text to embed: only those texts are fetched
    for cid, h in todo:
        if _cache_key(model, h) not in cache and h not in in_graph:
            first.setdefault(h, cid)
    shown = [cid for cid, _ in todo[:PREVIEW_ROWS]]
    fetched = store.lookup("chunks", "chunk_id", sorted(set(first.values()) | set(shown)), ["chunk_id", "index_text"])
    text_of = dict(zip(fetched.column("chunk_id").to_pylist(), fetched.column("index_text").to_pylist()))
    need = {h: text_of[cid] for h, cid in first.items()}
    fresh: dict[str, Any] = {}  # float32 rows: a list of Python floats would take 8× the memory

    def vector_of(h: str) -> Any:
        return fresh[h] if h in fresh else cache.get(_cache_key(model, h))

    if early is not None:  # keyword search first: before the texts are even counted
        early(0, len(need), vector_of, None)
    # Longest first by token count, so each batch holds texts of similar length: the encoder pads
    # a batch to its longest text, and token order wastes the least padding (character order
    # is a loose proxy; benchmarks/README.md, benchmarks/embed_order_probe.py).
    count = embedding.token_counter(model)
    tokens = {h: count(text) for h, text in need.items()}
    order = sorted(need, key=lambda h: -tokens[h])
    hashes, texts = order, [need[h] for h in order]
    total = sum(tokens.values())
    if early is not None:  # from here encoding starts, longest first: its ETA is paced in tokens
        early(0, len(texts), vector_of, list(accumulate(tokens[h] for h in order)))
    # On a cluster the workers load the engine (``shards.encode``), not this process.
    encoder = embedding.prepare_passage_encoder(model, total_tokens=total) if texts and not cluster else ""
    progress.report("embed", source.name, 0, len(texts))
    flush_at = batch_size
    workers: set[str] = set()
    engines: set[str] = set()
    for start, vecs, worker, engine in _encoded(texts, model, batch_size, total, cluster):
        workers.add(worker)
        engines.add(engine)
        batch = dict(zip(hashes[start : start + len(vecs)], vecs))
        fresh.update(batch)
        if pending is None:
            store.add(
                "embedding_cache",
                pa.table({"key": [_cache_key(model, h) for h in batch], "vector": vecs.tolist()}),
            )
        elif len(fresh) >= flush_at:  # kept for a build that is killed: doubling, so linear in all
            kept = [(c, h) for c, h in todo if h in fresh]
            add_pending(pending, kept, [fresh[h] for _, h in kept])
            flush_at = 2 * len(fresh)
        progress.report("embed", source.name, len(fresh), len(texts))
        if early is not None:
            early(len(fresh), len(texts), vector_of, None)
    for h, v in fresh.items():
        cache[_cache_key(model, h)] = v

    vectors = [None if h in in_graph else cache[_cache_key(model, h)] for _, h in todo]
    if pending is not None:
        add_pending(
            pending,
            [(c, h) for (c, h), v in zip(todo, vectors) if v is not None],
            [v for v in vectors if v is not None],
        )
        vectors = [None] * len(todo)
    store.delete_keys("embeddings", "chunk_id", stale, source.name)
    store.add(
        "embeddings",
        pa.table(
            {
                "chunk_id": [c for c, _ in todo],
                "source": [source.name] * len(todo),
                "content_hash": [h for _, h in todo],
                "model": [model] * len(todo),
                "vector": pa.array(vectors, type=pa.list_(pa.float32())),
            }
        ),
    )
    return {
        "chunks": len(chunks["chunk_id"]),
        "chunks_embedded": len(texts),
        "from_cache": sum(1 for _, h in todo if h not in fresh and h not in in_graph),
        "in_graph": sum(1 for _, h in todo if h in in_graph),
        "removed": len(stale),
        "model": model,
        "dim": embedding.spec(model).dim,
        "encoder": encoder or "; ".join(sorted(engines - {""})),
        "embed_workers": len(workers - {""}),
        "preview": preview([("", cid, text_of.get(cid, "")) for cid in shown]),
        "table_version": store.table("embeddings").version,
    }


def _encoded(
    texts: list[str], model: str, batch_size: int, total: int, cluster: str
) -> Iterator[tuple[int, np.ndarray, str, str]]:
    """(start, vectors, worker, engine) per batch of ``texts``: here in order ("" for the worker
    and the engine, which this process prepared), or on the cluster in shards as they finish."""
    if not cluster or not texts:
        for start in range(0, len(texts), batch_size):
            vecs = embedding.encode_passages(texts[start : start + batch_size], model, total_tokens=total)
            yield start, vecs, "", ""
        return
    with shards.client(cluster) as client:
        yield from shards.encode(texts, model, client, total)


def _cache_key(model: str, content_hash: str) -> str:
    return f"{model}:{content_hash}"
