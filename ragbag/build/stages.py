"""The build stages of one source partition: read → chunk → embed → index (publish).

Each stage reconciles what is stored against its input (ids and content hashes), so it does
only the work a change needs, and a build killed half-way is completed by the next one. Search
never sees a half-built source: it reads the table versions that ``publish`` recorded.
Stages take plain callables for the connector-specific parts so the engine imports neither
connectors nor Dagster.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections import defaultdict
from datetime import datetime, timedelta, timezone
from pathlib import Path, PurePosixPath
from typing import Any, Callable, Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute  # noqa: F401  (pa.compute)

from ragbag.index import bm25, graph
from ragbag.models import embedding
from ragbag.core import progress
from ragbag.core.records import Cursor, Document, ReadError, Seen, Span, doc_id_for, stable_hash
from ragbag.core.errors import DamagedIndex, RagbagError
from ragbag.core.home import Home, Source, graph_budget, write_private
from ragbag.index.store import PUBLISHED as PUBLISHED_TABLES, SCHEMAS, Store, lit

Reader = Callable[..., Iterator["Document | ReadError | Seen | Cursor"]]  # read(path, source, cursor, options=)
Spanner = Callable[[Document, Callable[[str], int], int], list[Span]]

MANIFEST = "manifest.json"
# A version a publish superseded stays readable this long: a search that followed ``current``
# just before the swap is still reading its files (a big source's load takes seconds). A later
# publish deletes it after that; a reader slower still re-reads ``current`` (``query.load``).
SUPERSEDED_GRACE_S = 120.0
_SUPERSEDED = ".superseded"  # in a version directory: its mtime is when it was superseded
_SEAL = ".chunk_ids.sha256"  # in a version directory: chunk_ids.json's hash when it was published
# Bump when chunking changes what it produces for the same text: every document is re-chunked.
CHUNKER_VERSION = "1"
_MAX_TITLE_TOKENS = 32
_PREVIEW_ROWS = 5


def ingest(store: Store, home: Home, source: Source, read: Reader) -> dict[str, Any]:
    """Read the source's records and store what was added, changed or deleted.

    Incremental connectors read only past their cursor and vouch for older records with
    ``Seen``; everything else stored but not yielded is a deletion. The new cursor is saved only
    after the documents are written, so a killed build re-reads rather than skips.
    """
    root = Path(source.path) if source.path else None
    if root is not None and not root.exists():
        raise RagbagError(f"source {source.name!r}: path does not exist: {root}")
    cursor_file = home.state_dir / f"{source.name}.cursor.json"
    cursor = _load_cursor(cursor_file, source)
    docs: dict[str, Document] = {}
    seen: set[str] = set()
    errors: list[dict[str, str]] = []
    new_cursor: dict[str, Any] | None = None
    for item in read(root, source.name, cursor, options=source.options):
        if isinstance(item, ReadError):
            errors.append(item.as_dict())
        elif isinstance(item, Seen):
            seen.add(doc_id_for(source.name, item.native_id))
        elif isinstance(item, Cursor):
            new_cursor = item.state
        elif item.doc_id in docs:
            errors.append({"uri": item.uri, "error": f"duplicate record id {item.native_id!r}, kept the first"})
        elif not (item.text or "").strip():  # reported and skipped: one such file must not fail
            errors.append({"uri": item.uri, "error": "no text to index"})  # the whole source's check
        else:
            docs[item.doc_id] = item
            if len(docs) % 50 == 0:
                progress.report("read", source.name, len(docs))
    progress.report("read", source.name, len(docs), len(docs))

    stored = store.rows("documents", source.name, ["doc_id", "content_hash"]).to_pydict()
    old = dict(zip(stored["doc_id"], stored["content_hash"]))
    added = [d for i, d in docs.items() if i not in old]
    changed = [d for i, d in docs.items() if i in old and old[i] != d.content_hash]
    deleted = [i for i in old if i not in docs and i not in seen]
    store.delete_keys("documents", "doc_id", [d.doc_id for d in changed] + deleted, source.name)
    store.add("documents", _document_rows(added + changed))
    if new_cursor is not None:
        _save_cursor(cursor_file, source, new_cursor)
    return {
        "documents": len(docs) + len(seen - docs.keys()), "read": len(docs), "added": len(added),
        "changed": len(changed), "deleted": len(deleted), "errors": errors,
        "preview": _preview([(d.title, d.uri, d.text) for d in (added + changed)[:_PREVIEW_ROWS]]),
        "table_version": store.table("documents").version,
    }


def _load_cursor(path: Path, source: Source) -> dict[str, Any] | None:
    """The saved cursor, unless the source now points elsewhere (then read everything again)."""
    if not path.exists():
        return None
    saved = json.loads(path.read_text())
    if saved.get("connector") != source.connector or saved.get("path") != source.path:
        return None
    return saved.get("state")


def _save_cursor(path: Path, source: Source, state: dict[str, Any]) -> None:
    body = {"connector": source.connector, "path": source.path, "state": state}
    write_private(path, json.dumps(body, default=str))


def chunk(store: Store, source: Source, spans: Spanner, model: str) -> dict[str, Any]:
    """Re-chunk documents whose content hash changed; drop chunks of deleted documents."""
    docs = store.rows("documents", source.name).to_pylist()
    stored = store.rows("chunks", source.name, ["doc_id", "doc_hash"]).to_pydict()
    hashes: dict[str, set[str]] = defaultdict(set)
    for doc_id, doc_hash in zip(stored["doc_id"], stored["doc_hash"]):
        hashes[doc_id].add(doc_hash)
    # A document is re-chunked when its content, the model (its token budget) or the chunker
    # changed: the key of what produced its chunks is stored with them.
    keys = {d["doc_id"]: chunking_key(d["content_hash"], model) for d in docs}
    todo = [d for d in docs if hashes.get(d["doc_id"]) != {keys[d["doc_id"]]}]
    live = {d["doc_id"] for d in docs}
    gone = [i for i in hashes if i not in live]

    count = embedding.token_counter(model)
    budget = embedding.chunk_budget(model)
    rows: list[dict[str, Any]] = []
    progress.report("chunk", source.name, 0, len(todo))
    for n, row in enumerate(todo, 1):
        rows.extend(_chunk_rows(row, spans, count, budget, keys[row["doc_id"]]))
        if n % 20 == 0 or n == len(todo):
            progress.report("chunk", source.name, n, len(todo))
    store.delete_keys("chunks", "doc_id", [d["doc_id"] for d in todo] + gone, source.name)
    store.add("chunks", pa.Table.from_pylist(rows, schema=store.table("chunks").schema))
    total = store.table("chunks").count_rows(f"source = {lit(source.name)}")
    return {
        "chunks": total, "chunked_documents": len(todo), "new_chunks": len(rows),
        "removed_documents": len(gone),
        "preview": _preview([(r["title"], r["uri"], r["text"]) for r in rows[:_PREVIEW_ROWS]]),
        "table_version": store.table("chunks").version,
    }


def embed(store: Store, source: Source, model: str, batch_size: int = 128,
          pending: Path | None = None, restore: bool = False, in_graph: set[str] | None = None) -> dict[str, Any]:
    """Embed chunks that have no vector for (model, content hash); reuse the cache first.

    A compact source (``pending`` set) never stores a vector in LanceDB: its rows record that a
    chunk is embedded (vector null), its new vectors wait in the ``pending`` file for the graph
    stage, and they stay out of the shared cache. A new chunk whose text already has a node in
    its graph (``in_graph``: content hashes) is not embedded at all: it will share that node.
    ``restore``: the source was compact and is fast now, so rows without a vector are embedded
    again (from the cache where it can).
    """
    in_graph = in_graph if pending is not None and in_graph else set()
    chunks = store.rows("chunks", source.name, ["chunk_id", "content_hash", "index_text"]).to_pydict()
    stored = store.rows("embeddings", source.name, ["chunk_id", "content_hash", "model"]).to_pydict()
    have = {c: (h, m) for c, h, m in zip(stored["chunk_id"], stored["content_hash"], stored["model"])}
    if restore:
        for c in store.without_vectors(source.name):
            have[c] = None
    todo = [
        (cid, h, text)
        for cid, h, text in zip(chunks["chunk_id"], chunks["content_hash"], chunks["index_text"])
        if have.get(cid) != (h, model)
    ]
    live = set(chunks["chunk_id"])
    stale = [c for c in have if c not in live] + [cid for cid, _, _ in todo if cid in have]

    keys = sorted({_cache_key(model, h) for _, h, _ in todo})
    cached_tbl = store.lookup("embedding_cache", "key", keys, ["key", "vector"]).to_pydict()
    cache = dict(zip(cached_tbl["key"], cached_tbl["vector"]))
    need: dict[str, str] = {}
    for _, h, text in todo:
        if _cache_key(model, h) not in cache and h not in in_graph:
            need.setdefault(h, text)

    # Longest first by token count, so each batch holds texts of similar length: the encoder pads
    # a batch to its longest text (unsorted batches padded to 1.68x the real tokens, sorted by
    # characters 1.44x, by tokens 1.04x: benchmarks/embed_order_probe.py).
    count = embedding.token_counter(model)
    tokens = {h: count(text) for h, text in need.items()}
    order = sorted(need, key=lambda h: -tokens[h])
    hashes, texts = order, [need[h] for h in order]
    total = sum(tokens.values())
    fresh: dict[str, list[float]] = {}
    progress.report("embed", source.name, 0, len(texts))
    for start in range(0, len(texts), batch_size):
        vecs = embedding.encode_passages(texts[start : start + batch_size], model, total_tokens=total)
        batch = dict(zip(hashes[start : start + batch_size], vecs.tolist()))
        fresh.update(batch)
        if pending is None:
            store.add("embedding_cache", pa.table({
                "key": [_cache_key(model, h) for h in batch], "vector": list(batch.values()),
            }))
        progress.report("embed", source.name, min(start + batch_size, len(texts)), len(texts))
    for h, v in fresh.items():
        cache[_cache_key(model, h)] = v

    vectors = [None if h in in_graph else cache[_cache_key(model, h)] for _, h, _ in todo]
    if pending is not None:
        add_pending(pending, [(c, h) for (c, h, _), v in zip(todo, vectors) if v is not None],
                    [v for v in vectors if v is not None])
        vectors = [None] * len(todo)
    store.delete_keys("embeddings", "chunk_id", stale, source.name)
    store.add("embeddings", pa.table({
        "chunk_id": [c for c, _, _ in todo],
        "source": [source.name] * len(todo),
        "content_hash": [h for _, h, _ in todo],
        "model": [model] * len(todo),
        "vector": pa.array(vectors, type=pa.list_(pa.float32())),
    }))
    return {
        "chunks": len(chunks["chunk_id"]), "chunks_embedded": len(texts),
        "from_cache": sum(1 for _, h, _ in todo if h not in fresh and h not in in_graph),
        "in_graph": sum(1 for _, h, _ in todo if h in in_graph),
        "removed": len(stale), "model": model, "dim": embedding.spec(model).dim,
        "preview": _preview([("", cid, text) for cid, _, text in todo[:_PREVIEW_ROWS]]),
        "table_version": store.table("embeddings").version,
    }


_STAGED_GRAPH = "graph"
_NODES = "nodes.json"  # (chunk id, content hash) of each index row, in order (compact: node = distinct hash)
# A compact graph is edited in place until this share of its nodes has changed since its last
# full build; then it is rebuilt from freshly computed vectors (see docs/graph.md).
GRAPH_REBUILD_CHURN = 0.25
_RECALL_QUERIES = 200


def pending_path(home: Home, source: Source) -> Path | None:
    """Where a compact source's new vectors wait for the graph stage (None for fast sources)."""
    if graph_profile(home, source) != "compact":
        return None
    return home.index_dir(source.connector, source.name) / "pending_vectors.npz"


def add_pending(path: Path, pairs: list[tuple[str, str]], vectors: list) -> None:
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
    if path is None or not path.exists():
        return {}
    data = np.load(path)
    return {tuple(str(k).split("\x1f")): v for k, v in zip(data["keys"], data["vectors"])}


def graph_hashes(home: Home, source: Source, model: str) -> set[str]:
    """Texts (content hashes) the source's staged compact graph holds a node for, when an
    in-place update will keep them: a new chunk with one of these texts shares that node."""
    staged = staged_graph(home, source)
    if not staged or staged["profile"] != "compact" or graph_profile(home, source) != "compact" \
            or staged["model"] != model or staged.get("format") != graph.FORMAT_VERSION:
        return set()
    return {h for _, h in staged["pairs"]}


def was_compact(home: Home, source: Source) -> bool:
    """Whether the source's last graph was compact while it is fast now (its vectors return)."""
    staged = staged_graph_meta(home, source)
    return bool(staged) and staged["profile"] == "compact" and graph_profile(home, source) == "fast"


def graph_profile(home: Home, source: Source) -> str:
    """The source's graph profile: its own option, else the home's ``graph.profile``, else fast."""
    profile = source.options.get("profile") or home.get_config("graph.profile") or "fast"
    if profile not in graph.PROFILES:
        raise RagbagError(f"source {source.name!r}: unknown graph profile {profile!r}; use fast or compact")
    return profile


def graph_params(home: Home) -> graph.Params:
    """Build parameters: the defaults, with the home's ``graph.budget`` when it sets one."""
    budget = home.get_config("graph.budget")
    return graph.Params(budget=graph_budget(str(budget))) if budget is not None else graph.Params()


def graph_fingerprint(home: Home, source: Source, model: str, pairs: list[str]) -> str:
    profile = graph_profile(home, source)
    return stable_hash(model, profile, graph.FORMAT_VERSION, json.dumps(graph.params_dict(graph_params(home))), *pairs)


def staged_graph_meta(home: Home, source: Source) -> dict[str, Any] | None:
    path = home.index_dir(source.connector, source.name) / _STAGED_GRAPH / graph.META
    return json.loads(path.read_text()) if path.exists() else None


def staged_graph(home: Home, source: Source) -> dict[str, Any] | None:
    """Meta of the graph the last graph stage built (what the next publish will ship), with
    its nodes' (chunk id, content hash) pairs in node order."""
    meta = staged_graph_meta(home, source)
    if meta is None:
        return None
    pairs = json.loads((home.index_dir(source.connector, source.name) / _STAGED_GRAPH / _NODES).read_text())
    return {**meta, "pairs": pairs, "ids": [c for c, _ in pairs]}


def build_graph(store: Store, home: Home, source: Source, model: str) -> dict[str, Any]:
    """Build or update the source's proximity graph and stage it for publication.

    ``fast`` adds new chunks to its HNSW index, and rebuilds it over the stored vectors when
    chunks were deleted or edited (HNSW cannot remove a node).
    ``compact`` edits the previous graph in place — deletions repaired, new chunks inserted
    with the vectors just embedded — because a rebuild would need every vector again, which a
    compact source no longer stores; past ``GRAPH_REBUILD_CHURN`` it rebuilds from recomputed
    vectors. Either way the vectors of a compact source are then dropped from storage.
    """
    profile = graph_profile(home, source)
    spec = embedding.spec(model)
    keys = store.rows("chunks", source.name, ["chunk_id", "content_hash"]).to_pydict()
    pairs = _pairs(keys)
    fingerprint = graph_fingerprint(home, source, model, pairs)
    staged = staged_graph(home, source)
    base = home.index_dir(source.connector, source.name)
    pending = pending_path(home, source)
    if staged and staged["fingerprint"] == fingerprint:
        dropped = _drop_vectors(store, source) if profile == "compact" else 0
        if pending is not None:
            pending.unlink(missing_ok=True)
        return {**_graph_report(staged), "unchanged": True, "vectors_dropped": dropped}
    stored = _stored_vectors(store, source, model)
    waiting = read_pending(pending)
    stored.update({p: v for p, v in waiting.items() if p in stored})
    live = list(zip(keys["chunk_id"], keys["content_hash"]))
    missing = [p for p in live if p not in stored]
    if missing:
        raise RagbagError(f"source {source.name!r}: {len(missing)} chunks have no {model} embedding; run the embeddings stage")
    params = graph_params(home)
    raw_bytes = _raw_text_bytes(store, source)  # the compact plan's yardstick, and reported
    started = time.perf_counter()
    progress.report("graph", source.name, 0, 1)
    previous = None
    if staged and staged["profile"] == profile and staged["model"] == model \
            and staged["params"] == graph.params_dict(params) and staged.get("format") == graph.FORMAT_VERSION:
        previous = graph.load(base / _STAGED_GRAPH, model, spec.dim)[0]
    old_pairs = [tuple(p) for p in staged["pairs"]] if previous is not None else []
    live_set = set(live)
    keep = [i for i, p in enumerate(old_pairs) if p in live_set]
    kept = {old_pairs[i] for i in keep}
    new = [p for p in live if p not in kept]
    deleted = len(old_pairs) - len(keep)
    churn = (staged.get("churn", 0) + len(new) + deleted) if previous is not None else 0
    meta: dict[str, Any] = {"model": model, "dim": spec.dim, "params": graph.params_dict(params),
                            "fingerprint": fingerprint}
    if profile == "compact" and previous is not None \
            and churn <= GRAPH_REBUILD_CHURN * max(1, staged.get("full_build_n", 0)):
        order = [old_pairs[i] for i in keep] + new
        g, fresh, vectors = _update_compact_nodes(store, source, model, previous, old_pairs, order, stored, params)
        found = graph.findability(g, fresh, vectors, params)
        meta.update(mode="updated", churn=churn, full_build_n=staged["full_build_n"],
                    recall_at_10=staged["recall_at_10"], recall_queries=staged["recall_queries"],
                    inserted=len(new), deleted=deleted, inserted_found=found)
    elif profile == "fast" and previous is not None and not deleted:
        # Only additions (the common refresh of mail, chats, history): HNSW inserts them in
        # place; a deletion or an edit rebuilds, since HNSW cannot remove a node.
        order = [old_pairs[i] for i in keep] + new
        vectors = _all_vectors(store, source, model, order, stored)
        g = previous
        if new:
            graph.add_fast(g, vectors[len(keep):], [h for _, h in new], offset=len(keep),
                           present=frozenset(h for _, h in order[:len(keep)]))
        recall, queries = graph.self_recall(g, vectors, params, _RECALL_QUERIES)
        meta.update(mode="updated", churn=churn, full_build_n=staged["full_build_n"], recall_at_10=recall,
                    recall_queries=queries, inserted=len(new), deleted=0)
    else:
        order = live
        if profile == "compact":  # one node per distinct text (graph.row_nodes), sized to the text
            reps = graph.first_rows(graph.row_nodes([h for _, h in order]))
            vectors = _all_vectors(store, source, model, [order[r] for r in reps], stored)
            # Recall over distinct texts, so a returned copy of a true neighbour is never a miss.
            g, recall, queries = graph.build_within(vectors, raw_bytes, params, queries=_RECALL_QUERIES)
        else:
            vectors = _all_vectors(store, source, model, order, stored)
            g = graph.build_fast(vectors, [h for _, h in order], params)
            recall, queries = graph.self_recall(g, vectors, params, _RECALL_QUERIES)
        meta.update(mode="built", churn=0, full_build_n=len(order), recall_at_10=recall,
                    recall_queries=queries, inserted=len(order), deleted=len(old_pairs))
    meta["seconds"] = round(time.perf_counter() - started, 3)
    meta["nodes"] = len(order)
    meta["graph_nodes"] = g.n if profile == "compact" else len(order)
    if profile == "compact":
        meta.update(degree=int(g.meta.get("degree") or params.degree), pq_m=int(g.codes.shape[1]), pq_bits=g.bits,
                    rotated=g.rotation is not None,
                    budget_bytes=g.meta.get("budget_bytes", staged.get("budget_bytes") if staged else None))
    tmp = base / ".graph.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    graph.save(tmp, profile, g, meta)
    meta["bytes"] = dir_bytes(tmp)  # the index proper; node ids are the published chunk_ids.json
    (tmp / graph.META).write_text(json.dumps({**meta, "profile": profile, "format": graph.FORMAT_VERSION}))
    (tmp / _NODES).write_text(json.dumps([list(p) for p in order]))
    old = base / ".graph.old"
    shutil.rmtree(old, ignore_errors=True)
    if (base / _STAGED_GRAPH).exists():
        os.replace(base / _STAGED_GRAPH, old)
    os.replace(tmp, base / _STAGED_GRAPH)
    shutil.rmtree(old, ignore_errors=True)
    # Vectors stored before the source became compact are dropped now; new ones never were.
    dropped = _drop_vectors(store, source) if profile == "compact" else 0
    if pending is not None:
        pending.unlink(missing_ok=True)
    progress.report("graph", source.name, 1, 1)
    return {**_graph_report({**meta, "profile": profile}), "unchanged": False, "vectors_dropped": dropped,
            "vectors_held": len(waiting), "raw_text_bytes": raw_bytes}


def _raw_text_bytes(store: Store, source: Source) -> int:
    """UTF-8 bytes of the source's chunk texts: what a compact index is measured against."""
    return sum(len(t.encode()) for t in store.rows("chunks", source.name, ["text"]).column("text").to_pylist())


def _update_compact_nodes(store: Store, source: Source, model: str, previous: graph.Compact,
                          old_pairs: list[tuple[str, str]], order: list[tuple[str, str]],
                          stored: dict[tuple[str, str], Any], params: graph.Params,
                          ) -> tuple[graph.Compact, np.ndarray, np.ndarray]:
    """Edit a compact graph in place for the rows in ``order``: nodes are distinct texts, so a
    text that is still there (under any chunk id) keeps its node and only texts never seen are
    embedded and inserted. Returns the graph in ``order``'s node numbering, the inserted nodes
    and their vectors."""
    old_keys = [old_pairs[r][1] for r in graph.first_rows(graph.row_nodes([h for _, h in old_pairs]))]
    reps = graph.first_rows(graph.row_nodes([h for _, h in order]))
    keys = [order[r][1] for r in reps]  # node k of the new graph
    first = {order[r][1]: order[r] for r in reps}
    old_node = {h: k for k, h in enumerate(old_keys)}
    kept = [h for h in keys if h in old_node]
    fresh = [h for h in keys if h not in old_node]
    vectors = _all_vectors(store, source, model, [first[h] for h in fresh], stored)
    g = graph.update_compact(previous, np.array([old_node[h] for h in kept], np.int64), vectors, params)
    at = {h: i for i, h in enumerate(kept + fresh)}  # update_compact's numbering
    g = graph.permute(g, np.array([at[h] for h in keys], np.int64))
    final = {h: i for i, h in enumerate(keys)}
    return g, np.array([final[h] for h in fresh], np.int64), vectors


def _graph_report(meta: dict[str, Any]) -> dict[str, Any]:
    skip = {"pairs", "ids", "fingerprint", "params"}
    return {**{k: v for k, v in meta.items() if k not in skip}, "params": meta.get("params")}


def _pairs(keys: dict[str, list]) -> list[str]:
    return sorted(c + h for c, h in zip(keys["chunk_id"], keys["content_hash"]))


def _stored_vectors(store: Store, source: Source, model: str) -> dict[tuple[str, str], np.ndarray | None]:
    """(chunk id, content hash) → its stored vector (a row view), or None where it holds none."""
    emb = store.rows("embeddings", source.name, ["chunk_id", "content_hash", "model", "vector"])
    col = emb.column("vector").combine_chunks()
    valid = col.is_valid().to_numpy(zero_copy_only=False)
    dim = embedding.spec(model).dim
    flat = np.asarray(col.flatten().to_numpy(zero_copy_only=False), dtype=np.float32)
    if len(flat) != int(valid.sum()) * dim:
        raise RagbagError(f"source {source.name!r}: stored vectors are not {dim}-d; rebuild its embeddings")
    matrix = flat.reshape(-1, dim)
    rows = np.cumsum(valid) - 1
    out: dict[tuple[str, str], np.ndarray | None] = {}
    for i, (c, h, m) in enumerate(zip(emb.column("chunk_id").to_pylist(), emb.column("content_hash").to_pylist(),
                                      emb.column("model").to_pylist())):
        if m == model:
            out[(c, h)] = matrix[rows[i]] if valid[i] else None
    return out


def _all_vectors(store: Store, source: Source, model: str, order: list[tuple[str, str]],
                 stored: dict[tuple[str, str], Any]) -> np.ndarray:
    """Every chunk's vector in ``order``; those a compact source dropped are recomputed."""
    gone = [p for p in order if stored.get(p) is None]
    if gone:
        text = store.rows("chunks", source.name, ["chunk_id", "index_text"]).to_pydict()
        by_id = dict(zip(text["chunk_id"], text["index_text"]))
        fresh = embedding.encode_passages([by_id[c] for c, _ in gone], model)
        stored = {**stored, **dict(zip(gone, fresh))}
    dim = embedding.spec(model).dim
    return np.stack([stored[p] for p in order]).astype(np.float32) if order else np.zeros((0, dim), np.float32)


def _drop_vectors(store: Store, source: Source) -> int:
    """Replace vectors a source stored before it turned compact by nulls: the graph holds what
    search needs. (Older LanceDB versions keep those files until the table is cleaned up.)"""
    emb = store.rows("embeddings", source.name)
    held = pa.compute.invert(pa.compute.is_null(emb.column("vector")))
    rows = emb.filter(held)
    if not rows.num_rows:
        return 0
    store.delete_keys("embeddings", "chunk_id", rows.column("chunk_id").to_pylist(), source.name)
    store.add("embeddings", rows.set_column(rows.schema.get_field_index("vector"), "vector",
                                            pa.nulls(rows.num_rows, rows.schema.field("vector").type)))
    return rows.num_rows


def _link_tree(src: Path, dst: Path) -> None:
    """Hard-link a staged directory's files into a published version (copy across devices)."""
    dst.mkdir(parents=True, exist_ok=True)
    for f in src.iterdir():
        if f.name == _NODES:
            continue  # published as chunk_ids.json
        try:
            os.link(f, dst / f.name)
        except OSError:
            shutil.copy2(f, dst / f.name)


def publish(store: Store, home: Home, source: Source, model: str) -> dict[str, Any]:
    """Build the BM25 index and atomically make this build what search reads.

    When the source's chunks and embeddings are exactly what the current index was built from
    (same fingerprint), the published index stays as it is: a no-change rebuild costs a scan.
    """
    keys = store.rows("chunks", source.name, ["chunk_id", "content_hash"]).to_pydict()
    pairs = _pairs(keys)
    staged = staged_graph(home, source)
    if staged is None or staged["fingerprint"] != graph_fingerprint(home, source, model, pairs):
        raise RagbagError(f"source {source.name!r}: its graph index is missing or stale; run the graph stage")
    fingerprint = stable_hash(model, bm25.TOKENIZER_VERSION, staged["fingerprint"], *pairs)
    current = published_manifest(home, source)
    if current and current.get("fingerprint") == fingerprint:
        return {**current, "unchanged": True, "table_version": current["versions"]["chunks"],
                "bytes": dir_bytes(home.index_dir(source.connector, source.name))}
    store.compact()  # before the versions are pinned (see Store.compact)
    table = store.rows("chunks", source.name, ["chunk_id", "index_text"]).to_pydict()
    text_of = dict(zip(table["chunk_id"], table["index_text"]))
    ids = staged["ids"]  # graph node order: row i of the index is node i of the graph
    chunks = {"chunk_id": ids, "index_text": [text_of[c] for c in ids]}
    versions = store.versions()
    progress.report("index", source.name, 0, 1)
    base = home.index_dir(source.connector, source.name)
    name = f"v{int(time.time() * 1000)}"
    target = base / name
    if ids:
        bm25.save(bm25.build(chunks["index_text"]), target / "bm25")
    target.mkdir(parents=True, exist_ok=True)
    _link_tree(base / _STAGED_GRAPH, target / "graph")
    (target / "chunk_ids.json").write_text(json.dumps(ids))
    documents = store.table("documents").count_rows(f"source = {lit(source.name)}")
    manifest = {
        "source": source.name, "connector": source.connector, "model": model,
        "dim": embedding.spec(model).dim, "documents": documents, "chunks": len(ids),
        "store_bytes": _store_bytes(store, source.name), "versions": versions,
        "tokenizer": bm25.TOKENIZER_VERSION, "fingerprint": fingerprint,
        "graph": {k: staged[k] for k in ("profile", "recall_at_10", "bytes", "mode")},
        "built_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }
    (target / MANIFEST).write_text(json.dumps(manifest, indent=1))
    store.publish(source.name)
    _swap_current(base, name)
    retain(store, home, source)
    progress.report("index", source.name, 1, 1)
    preview = _preview([(c, "", t) for c, t in list(zip(ids, chunks["index_text"]))[:_PREVIEW_ROWS]])
    return {**manifest, "unchanged": False, "index_dir": str(target), "bytes": dir_bytes(base),
            "table_version": versions["chunks"], "preview": preview}


def remove(store: Store, home: Home, source: Source) -> None:
    """Delete a source's rows from every table, its index files and its read cursor."""
    store.delete_source(source.name)
    shutil.rmtree(home.index_dir(source.connector, source.name), ignore_errors=True)
    (home.state_dir / f"{source.name}.cursor.json").unlink(missing_ok=True)


def retain(store: Store, home: Home, published: Source) -> None:
    """After a publish: drop the table versions no index needs any more (``storage.keep_versions``).

    A source's publication pins the versions it was built from, and every version after the
    oldest pin must stay; so a source not rebuilt for longer than the retention is moved to
    the newest versions first, when its rows there are the ones it was built from.
    """
    keep = home.keep_versions
    stale = datetime.now(timezone.utc) - keep
    for name, other in home.sources().items():
        try:  # only the date here (republish checks the index before it touches it)
            manifest = json.loads((home.index_dir(other.connector, name) / "current" / MANIFEST).read_text())
            pinned = datetime.fromisoformat(manifest.get("pinned_at") or manifest["built_at"])
        except (OSError, ValueError, KeyError, TypeError):
            continue  # never built, or damaged: its next build publishes afresh
        if name != published.name and pinned < stale:
            republish(store, home, other)
    store.prune(keep)


def republish(store: Store, home: Home, source: Source) -> bool:
    """Publish a source's current index again, pinned to the newest table versions, when its
    rows there are exactly those it was built from (False, and nothing done, otherwise: a
    build of it is under way or was killed, and its next build publishes)."""
    manifest = published_manifest(home, source, store)
    if manifest is None or not store.unchanged_since(source.name, manifest["versions"]):
        return False
    base = home.index_dir(source.connector, source.name)
    name = f"v{int(time.time() * 1000)}"
    shutil.copytree(base / "current", base / name, copy_function=os.link)  # hard links: no copy
    (base / name / MANIFEST).unlink()  # a link to the old manifest: replaced, never edited
    versions = store.publish(source.name)
    pinned = {**manifest, "versions": versions,
              "pinned_at": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    (base / name / MANIFEST).write_text(json.dumps(pinned, indent=1))
    _swap_current(base, name)
    return True


def purge(store: Store, home: Home, source: Source) -> list[str]:
    """Remove a source so that none of its bytes stay on disk: its rows, the cached vectors of
    texts only it had, the data files and table versions that held them, its index files and
    cursor. Every other source is republished on the rewritten tables; those that cannot be
    (a build of them under way) are returned: their pinned versions still hold the removed
    text until their next build."""
    store.forget_vectors(source.name)
    remove(store, home, source)
    for name in (*PUBLISHED_TABLES, "embedding_cache"):
        store.rewrite(name)
    store.compact()
    held = [name for name, other in sorted(home.sources().items())
            if name != source.name and published_manifest(home, other) and not republish(store, home, other)]
    store.prune(timedelta(0), purge=True)
    return held


def published_manifest(home: Home, source: Source, store: Store | None = None) -> dict[str, Any] | None:
    """The manifest of what search reads for this source; None when it was never built or its
    published index is damaged: a damaged index is never "unchanged", so the next publish
    replaces it (``published`` says what is wrong). ``store``: an open one to check with."""
    try:
        return published(home, source, store)
    except DamagedIndex:
        return None


def published(home: Home, source: Source, store: Store | None = None) -> dict[str, Any] | None:
    """The manifest of the source's published index once its files and the table versions it
    pins are checked to be there (None: never built). A ``DamagedIndex`` says what is not."""
    base = home.index_dir(source.connector, source.name)
    key = current_version(base, source.name)
    if key is None:
        return None
    manifest, _ = check_version(base / key, source.name)
    _check_tables(store or Store(home.lance_uri), manifest, source.name)
    return manifest


def current_version(base: Path, source: str) -> str | None:
    """The version directory ``current`` names (None when the source was never published)."""
    try:
        return os.readlink(base / "current")
    except FileNotFoundError:
        return None
    except OSError:
        raise DamagedIndex(source, f"{base / 'current'} is not a link to a version") from None


def check_version(directory: Path, source: str) -> tuple[dict[str, Any], list[str]]:
    """A published version's manifest and chunk ids (the index's rows in order), once the files
    search reads are there and agree; cheap (no index is loaded), so status checks every source."""
    if not directory.is_dir():
        raise DamagedIndex(source, f"`current` points at {directory.name}, which is missing")
    manifest = _json_file(directory / MANIFEST, source)
    if not isinstance(manifest, dict) or not _manifest_complete(manifest):
        raise DamagedIndex(source, f"{MANIFEST} lacks the fields search needs")
    ids = _json_file(directory / "chunk_ids.json", source, sealed=True)
    if not isinstance(ids, list) or len(ids) != manifest["chunks"] or not all(isinstance(c, str) for c in ids):
        raise DamagedIndex(source, f"chunk_ids.json does not list the {manifest['chunks']} chunks of {MANIFEST}")
    needed = ["bm25/tokenizer.json"] if ids else []
    if "graph" in manifest:  # published since the graph stage exists
        needed.append(f"{_STAGED_GRAPH}/{graph.META}")
    for rel in needed:
        if not (directory / rel).is_file():
            raise DamagedIndex(source, f"{rel.split('/')[0]}/ of {directory.name} is missing or incomplete")
    if ids:
        _check_whole(directory / "bm25", source)
    return manifest, ids


def _check_whole(folder: Path, source: str) -> None:
    """No array or JSON file in ``folder`` is cut short (a crash or a full disk mid-copy): arrays
    are mapped, not read, and JSON is looked at only at its end, so this stays cheap."""
    for path in sorted(folder.iterdir()):
        try:
            if path.suffix == ".npy":
                np.load(path, mmap_mode="r")
            elif path.suffix == ".json":
                with path.open("rb") as f:
                    f.seek(max(0, path.stat().st_size - 64))
                    whole = f.read().rstrip()[-1:] in (b"}", b"]")
                if not whole:
                    raise ValueError("cut short")
        except (OSError, ValueError):
            where = f"{folder.name}/{path.name} of {folder.parent.name}"
            raise DamagedIndex(source, f"{where} is unreadable (cut short?)") from None


def _json_file(path: Path, source: str, sealed: bool = False) -> Any:
    """A published JSON file, parsed; ``sealed``: it must still hash as it did when published."""
    try:
        raw = path.read_bytes()
        if sealed and _digest(raw) != _sealed_digest(path.parent, raw):
            raise DamagedIndex(source, f"{path.name} of {path.parent.name} differs from what was published")
        return json.loads(raw)
    except FileNotFoundError:
        raise DamagedIndex(source, f"{path.name} of {path.parent.name} is missing") from None
    except (OSError, ValueError):
        raise DamagedIndex(source, f"{path.name} of {path.parent.name} is unreadable (cut short?)") from None


def _digest(raw: bytes) -> str:
    import hashlib

    return hashlib.sha256(raw).hexdigest()


def _sealed_digest(version: Path, raw: bytes) -> str:
    """The hash chunk_ids.json had when its version was published (a version published before
    seals existed vouches for whatever it holds)."""
    try:
        return (version / _SEAL).read_text().strip()
    except FileNotFoundError:
        return _digest(raw)


def _seal(version: Path) -> None:
    """Record chunk_ids.json's hash: the index rows are in its order, and a copy of another
    version's (same length, other ids or order) would otherwise pass as sound."""
    tmp = version / f"{_SEAL}.tmp"
    tmp.write_text(_digest((version / "chunk_ids.json").read_bytes()))
    os.replace(tmp, version / _SEAL)  # a new file: a version made of hard links keeps its own


def _manifest_complete(manifest: dict[str, Any]) -> bool:
    versions = manifest.get("versions")
    return (isinstance(versions, dict) and all(isinstance(versions.get(t), int) for t in PUBLISHED_TABLES)
            and isinstance(manifest.get("chunks"), int) and isinstance(manifest.get("dim"), int)
            and isinstance(manifest.get("model"), str))


def _check_tables(store: Store, manifest: dict[str, Any], source: str) -> None:
    missing = store.missing_pin(source, manifest["versions"])
    if missing:
        raise DamagedIndex(source, missing)


def _store_bytes(store: Store, source: str) -> int:
    """This source's share of the LanceDB tables: the bytes of its rows as Arrow holds them."""
    return sum(store.rows(name, source).nbytes for name in ("documents", "chunks", "embeddings"))


def dir_bytes(path: Path) -> int:
    """Bytes of the files under path, a hard-linked file (staged and published graph) once."""
    seen: dict[tuple[int, int], int] = {}
    for p in path.rglob("*"):
        if p.is_file() and not p.is_symlink():
            st = p.stat()
            seen[(st.st_dev, st.st_ino)] = st.st_size
    return sum(seen.values())


def _swap_current(base: Path, name: str) -> None:
    """Point ``current`` at the new version in one rename. The versions it supersedes are not
    deleted now: a search may have followed ``current`` a moment ago and still be reading
    them. Each is stamped when first superseded and deleted by a later swap once
    ``SUPERSEDED_GRACE_S`` has passed (``remove`` deletes them all at once)."""
    if (base / name / "chunk_ids.json").exists():
        _seal(base / name)
    tmp = base / ".current.tmp"
    tmp.unlink(missing_ok=True)
    os.symlink(name, tmp)
    os.replace(tmp, base / "current")
    now = time.time()
    for old in base.iterdir():
        if old.name == name or old.is_symlink() or not old.is_dir() or not old.name.startswith("v"):
            continue
        since = _superseded_at(old)
        if since is None:
            _mark_superseded(old)  # the version just replaced, or one a killed publish left
        elif now - since >= SUPERSEDED_GRACE_S:
            shutil.rmtree(old, ignore_errors=True)


def _superseded_at(version: Path) -> float | None:
    try:
        return (version / _SUPERSEDED).stat().st_mtime
    except OSError:
        return None


def _mark_superseded(version: Path) -> None:
    try:
        (version / _SUPERSEDED).touch()
    except OSError:
        pass  # unwritable: it stays until `ragbag remove`, which is better than pulling it from a reader


def first_damage(home: Home) -> DamagedIndex | None:
    """The damage of the first registered source whose published index is damaged: what a
    failure that surfaced elsewhere (a tool reading index files itself) most likely was."""
    store = None
    for source in home.sources().values():
        try:
            if current_version(home.index_dir(source.connector, source.name), source.name) is None:
                continue
            store = store or Store(home.lance_uri)
            published(home, source, store)
        except DamagedIndex as e:
            return e
    return None


def chunking_key(content_hash: str, model: str) -> str:
    return stable_hash(content_hash, model, CHUNKER_VERSION)


def _chunk_rows(doc: dict[str, Any], spans: Spanner, count, budget: int, key: str) -> list[dict[str, Any]]:
    meta = json.loads(doc["metadata"] or "{}")
    document = Document(
        source=doc["source"], connector=doc["connector"], native_id=doc["native_id"],
        uri=doc["uri"], title=doc["title"], text=doc["text"], created_at=doc["created_at"],
        updated_at=doc["updated_at"], authors=doc["authors"] or [], metadata=meta,
    )
    title = doc["title"] or ""
    head = title if _informative(title, doc) and count(title) <= _MAX_TITLE_TOKENS else ""
    room = budget - (count(head) + 1 if head else 0)
    rows, seen = [], defaultdict(int)
    for ordinal, sp in enumerate(spans(document, count, room)):
        text = doc["text"][sp.start : sp.end]
        h = stable_hash(text, length=32)
        chunk_id = stable_hash(doc["doc_id"], h, str(seen[h]))
        seen[h] += 1
        index_text = f"{head}\n{text}" if head else text
        rows.append({
            "chunk_id": chunk_id, "doc_id": doc["doc_id"], "source": doc["source"],
            "connector": doc["connector"], "ordinal": ordinal, "text": text,
            "index_text": index_text, "start": sp.start, "end": sp.end,
            "content_hash": stable_hash(index_text), "doc_hash": key,
            "uri": doc["uri"], "title": title, "created_at": doc["created_at"],
            "updated_at": doc["updated_at"], "date": doc["date"],
            "metadata": json.dumps({**meta, **sp.metadata}, sort_keys=True, default=str, ensure_ascii=False),
        })
    return rows


def _informative(title: str, doc: dict[str, Any]) -> bool:
    """Whether a title adds meaning to each chunk's index text: not empty, not merely the file's
    own name (the path is stored anyway), and not already the start of the text."""
    if not title or title == PurePosixPath(doc["native_id"]).name:
        return False
    return not doc["text"].lstrip().startswith(title)


def _document_rows(docs: list[Document]) -> pa.Table:
    return pa.Table.from_pylist([{
        "doc_id": d.doc_id, "source": d.source, "connector": d.connector,
        "native_id": d.native_id, "uri": d.uri, "title": d.title, "text": d.text,
        "created_at": d.created_at, "updated_at": d.updated_at, "date": d.date,
        "authors": d.authors, "content_hash": d.content_hash,
        "metadata": json.dumps(d.metadata, sort_keys=True, default=str, ensure_ascii=False),
    } for d in docs], schema=SCHEMAS["documents"])


def _cache_key(model: str, content_hash: str) -> str:
    return f"{model}:{content_hash}"


def _preview(rows: list[tuple[str, str, str]]) -> str:
    """A markdown table of a few records, for the Dagster UI."""
    lines = ["| title | uri | text |", "|---|---|---|"]
    for title, uri, text in rows:
        cell = lambda s: (s or "").replace("|", "\\|").replace("\n", " ")[:120]  # noqa: E731
        lines.append(f"| {cell(title)} | {cell(uri)} | {cell(text)} |")
    return "\n".join(lines)
