"""The graph stage: build or update a source's proximity graph and stage it for publication.

The staged graph lives in the source's index directory (its layout: ``pipeline/staged.py``) until
the publish step links it into a version.
Three ways to get there, chosen by ``_build_or_update``:

- a full build, over every chunk's vector (recomputed where a compact source dropped them);
- an in-place update of a compact graph: deleted texts repaired away, new texts inserted with
  the vectors just embedded, because a rebuild would need every vector again and a compact
  source no longer stores them; past ``GRAPH_REBUILD_CHURN`` it is rebuilt instead;
- adding new chunks to a fast (HNSW) graph: the common refresh of mail, chats and history.
  A deletion or an edit rebuilds it, since HNSW cannot remove a node.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ragbag.core import progress
from ragbag.core.errors import RagbagError
from ragbag.core.home import Home, Source
from ragbag.index import graph, hnsw, published, quality
from ragbag.index.compact.build import build_within, update_compact
from ragbag.index.compact.graph import Compact, permute
from ragbag.index.nodes import first_rows, row_nodes
from ragbag.index.params import Params, params_dict
from ragbag.index.store import Store
from ragbag.models import embedding
from ragbag.pipeline.graph_config import graph_params, graph_profile
from ragbag.pipeline.pending import pending_path, read_pending
from ragbag.pipeline.staged import (
    NODES,
    STAGED_DIR,
    chunk_identity,
    graph_fingerprint,
    staged_graph,
)

Pair = tuple[str, str]  # (chunk id, content hash): a row of the index

# A compact graph is edited in place until this share of its nodes has changed since its last
# full build; then it is rebuilt from freshly computed vectors (see docs/graph.md).
GRAPH_REBUILD_CHURN = 0.25
_RECALL_QUERIES = 200


def build_graph(store: Store, home: Home, source: Source, model: str) -> dict[str, Any]:
    """Build or update the source's proximity graph and stage it for publication (see the
    module's docstring for how). Either way the vectors of a compact source are then dropped
    from storage: the graph holds what search needs."""
    profile = graph_profile(home, source)
    spec = embedding.spec(model)
    keys = store.rows("chunks", source.name, ["chunk_id", "content_hash"]).to_pydict()
    fingerprint = graph_fingerprint(home, source, model, chunk_identity(keys))
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
    live: list[Pair] = list(zip(keys["chunk_id"], keys["content_hash"]))
    missing = [p for p in live if p not in stored]
    if missing:
        raise RagbagError(
            f"source {source.name!r}: {len(missing)} chunks have no {model} embedding; run the embeddings stage"
        )
    params = graph_params(home)
    raw_bytes = _raw_text_bytes(store, source)  # the compact plan's yardstick, and reported
    started = time.perf_counter()
    progress.report("graph", source.name, 0, 1)
    job = _Job(store, source, model, params, stored)
    meta: dict[str, Any] = {
        "model": model,
        "dim": spec.dim,
        "params": params_dict(params),
        "fingerprint": fingerprint,
    }
    g, order, how = _build_or_update(
        job, profile, staged, _previous(base, staged, profile, model, params), live, raw_bytes
    )
    meta.update(how)
    meta["seconds"] = round(time.perf_counter() - started, 3)
    meta["nodes"] = len(order)
    meta["graph_nodes"] = g.n if profile == "compact" else len(order)
    if profile == "compact":
        meta.update(
            degree=int(g.meta.get("degree") or params.degree),
            pq_m=int(g.codes.shape[1]),
            pq_bits=g.bits,
            rotated=g.rotation is not None,
            budget_bytes=g.meta.get("budget_bytes", staged.get("budget_bytes") if staged else None),
        )
    _stage(base, profile, g, meta, order)
    # Vectors stored before the source became compact are dropped now; new ones never were.
    dropped = _drop_vectors(store, source) if profile == "compact" else 0
    if pending is not None:
        pending.unlink(missing_ok=True)
    progress.report("graph", source.name, 1, 1)
    return {
        **_graph_report({**meta, "profile": profile}),
        "unchanged": False,
        "vectors_dropped": dropped,
        "vectors_held": len(waiting),
        "raw_text_bytes": raw_bytes,
    }


# -- what other stages ask of the graph stage --------------------------------------------------


# -- the three ways to a graph -------------------------------------------------------------------


@dataclass
class _Job:
    """What every way to a graph reads: the source's chunks' known vectors and the parameters."""

    store: Store
    source: Source
    model: str
    params: Params
    stored: dict[Pair, Any]  # (chunk id, content hash) → its vector; None where a compact source dropped it

    def vectors(self, order: list[Pair]) -> np.ndarray:
        return _all_vectors(self.store, self.source, self.model, order, self.stored)


def _previous(base: Path, staged: dict[str, Any] | None, profile: str, model: str, params: Params) -> Any:
    """The staged graph, when it was built the way this build would (else it is rebuilt)."""
    if (
        staged
        and staged["profile"] == profile
        and staged["model"] == model
        and staged["params"] == params_dict(params)
        and staged.get("format") == graph.FORMAT_VERSION
    ):
        return graph.load(base / STAGED_DIR, model, embedding.spec(model).dim)[0]
    return None


def _build_or_update(
    job: _Job, profile: str, staged: dict[str, Any] | None, previous: Any, live: list[Pair], raw_bytes: int
) -> tuple[Any, list[Pair], dict[str, Any]]:
    """The graph over ``live``, its rows in node order, and how it was made."""
    old_pairs: list[Pair] = [(c, h) for c, h in staged["pairs"]] if staged and previous is not None else []
    live_set = set(live)
    keep = [i for i, p in enumerate(old_pairs) if p in live_set]
    kept = {old_pairs[i] for i in keep}
    new = [p for p in live if p not in kept]
    deleted = len(old_pairs) - len(keep)
    if staged is None or previous is None:
        return _full_build(job, profile, live, len(old_pairs), raw_bytes)
    churn = staged.get("churn", 0) + len(new) + deleted
    order = [old_pairs[i] for i in keep] + new
    if profile == "compact" and churn <= GRAPH_REBUILD_CHURN * max(1, staged.get("full_build_n", 0)):
        return _update_compact(job, previous, old_pairs, order, staged, churn, len(new), deleted)
    if profile == "fast" and not deleted:
        return _add_fast(job, previous, order, len(keep), staged, churn)
    return _full_build(job, profile, live, len(old_pairs), raw_bytes)


def _full_build(
    job: _Job, profile: str, order: list[Pair], old_count: int, raw_bytes: int
) -> tuple[Any, list[Pair], dict[str, Any]]:
    """A graph over every chunk, from scratch."""
    if profile == "compact":  # one node per distinct text (nodes.row_nodes), sized to the text
        reps = first_rows(row_nodes([h for _, h in order]))
        vectors = job.vectors([order[r] for r in reps])
        # Recall over distinct texts, so a returned copy of a true neighbour is never a miss.
        g, recall, queries = build_within(vectors, raw_bytes, job.params, queries=_RECALL_QUERIES)
    else:
        vectors = job.vectors(order)
        g = hnsw.build_fast(vectors, [h for _, h in order], job.params)
        recall, queries = quality.self_recall(g, vectors, job.params, _RECALL_QUERIES)
    how = {
        "mode": "built",
        "churn": 0,
        "full_build_n": len(order),
        "recall_at_10": recall,
        "recall_queries": queries,
        "inserted": len(order),
        "deleted": old_count,
    }
    return g, order, how


def _update_compact(
    job: _Job,
    previous: Compact,
    old_pairs: list[Pair],
    order: list[Pair],
    staged: dict[str, Any],
    churn: int,
    inserted: int,
    deleted: int,
) -> tuple[Any, list[Pair], dict[str, Any]]:
    """The compact graph edited in place. Its recall is the last full build's (measuring it
    needs every vector); how findable the inserted texts are is measured instead."""
    g, fresh, vectors = _update_compact_nodes(job, previous, old_pairs, order)
    how = {
        "mode": "updated",
        "churn": churn,
        "full_build_n": staged["full_build_n"],
        "recall_at_10": staged["recall_at_10"],
        "recall_queries": staged["recall_queries"],
        "inserted": inserted,
        "deleted": deleted,
        "inserted_found": quality.findability(g, fresh, vectors, job.params),
    }
    return g, order, how


def _add_fast(
    job: _Job, previous: Any, order: list[Pair], kept: int, staged: dict[str, Any], churn: int
) -> tuple[Any, list[Pair], dict[str, Any]]:
    """The HNSW graph with the new chunks (``order[kept:]``) inserted in place."""
    vectors = job.vectors(order)
    g = previous
    new = order[kept:]
    if new:
        hnsw.add_fast(
            g,
            vectors[kept:],
            [h for _, h in new],
            offset=kept,
            present=frozenset(h for _, h in order[:kept]),
        )
    recall, queries = quality.self_recall(g, vectors, job.params, _RECALL_QUERIES)
    how = {
        "mode": "updated",
        "churn": churn,
        "full_build_n": staged["full_build_n"],
        "recall_at_10": recall,
        "recall_queries": queries,
        "inserted": len(new),
        "deleted": 0,
    }
    return g, order, how


def _update_compact_nodes(
    job: _Job, previous: Compact, old_pairs: list[Pair], order: list[Pair]
) -> tuple[Compact, np.ndarray, np.ndarray]:
    """Edit a compact graph in place for the rows in ``order``: nodes are distinct texts, so a
    text that is still there (under any chunk id) keeps its node and only texts never seen are
    embedded and inserted. Returns the graph in ``order``'s node numbering, the inserted nodes
    and their vectors."""
    old_keys = [old_pairs[r][1] for r in first_rows(row_nodes([h for _, h in old_pairs]))]
    reps = first_rows(row_nodes([h for _, h in order]))
    keys = [order[r][1] for r in reps]  # node k of the new graph
    first = {order[r][1]: order[r] for r in reps}
    old_node = {h: k for k, h in enumerate(old_keys)}
    kept = [h for h in keys if h in old_node]
    fresh = [h for h in keys if h not in old_node]
    vectors = job.vectors([first[h] for h in fresh])
    g = update_compact(previous, np.array([old_node[h] for h in kept], np.int64), vectors, job.params)
    at = {h: i for i, h in enumerate(kept + fresh)}  # update_compact's numbering
    g = permute(g, np.array([at[h] for h in keys], np.int64))
    final = {h: i for i, h in enumerate(keys)}
    return g, np.array([final[h] for h in fresh], np.int64), vectors


# -- helpers ---------------------------------------------------------------------------------------


def _stage(base: Path, profile: str, g: Any, meta: dict[str, Any], order: list[Pair]) -> None:
    """Write the graph beside the staged one and swap it in (a killed stage leaves the old one);
    its size goes into ``meta`` (``bytes``) as well as into its graph.json."""
    tmp = base / ".graph.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    graph.save(tmp, profile, g, meta)
    meta["bytes"] = published.dir_bytes(tmp)  # the index proper; node ids are the published chunk_ids.json
    (tmp / graph.META).write_text(json.dumps({**meta, "profile": profile, "format": graph.FORMAT_VERSION}))
    (tmp / NODES).write_text(json.dumps([list(p) for p in order]))
    old = base / ".graph.old"
    shutil.rmtree(old, ignore_errors=True)
    if (base / STAGED_DIR).exists():
        os.replace(base / STAGED_DIR, old)
    os.replace(tmp, base / STAGED_DIR)
    shutil.rmtree(old, ignore_errors=True)


def _raw_text_bytes(store: Store, source: Source) -> int:
    """UTF-8 bytes of the source's chunk texts: what a compact index is measured against."""
    return sum(len(t.encode()) for t in store.rows("chunks", source.name, ["text"]).column("text").to_pylist())


def _graph_report(meta: dict[str, Any]) -> dict[str, Any]:
    skip = {"pairs", "ids", "fingerprint", "params"}
    return {**{k: v for k, v in meta.items() if k not in skip}, "params": meta.get("params")}


def _stored_vectors(store: Store, source: Source, model: str) -> dict[Pair, Any]:
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
    out: dict[Pair, Any] = {}
    for i, (c, h, m) in enumerate(
        zip(emb.column("chunk_id").to_pylist(), emb.column("content_hash").to_pylist(), emb.column("model").to_pylist())
    ):
        if m == model:
            out[(c, h)] = matrix[rows[i]] if valid[i] else None
    return out


def _all_vectors(store: Store, source: Source, model: str, order: list[Pair], stored: dict[Pair, Any]) -> np.ndarray:
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
    held = pc.invert(pc.is_null(emb.column("vector")))
    rows = emb.filter(held)
    if not rows.num_rows:
        return 0
    store.delete_keys("embeddings", "chunk_id", rows.column("chunk_id").to_pylist(), source.name)
    vector = rows.schema.get_field_index("vector")
    store.add(
        "embeddings", rows.set_column(vector, "vector", pa.nulls(rows.num_rows, rows.schema.field("vector").type))
    )
    return rows.num_rows
