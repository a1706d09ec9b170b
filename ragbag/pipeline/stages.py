"""The build's stages in one table, in the order they run: each one's asset key, code version,
kinds, description, checks and what it runs. Dagster's assets (``assets/chain.py``), the checks
they declare, the in-process build of the fault tests and the tests' stage lists are all read
from here, so a stage is added, renamed or re-versioned in one place.

Each stage is handed one :class:`Build`: the store opened once and the home's model resolved
once for the whole build of a source, where each stage used to open and resolve its own. What
one stage needs from another's (the embed stage asks the graph stage which texts it already has
a node for) is wired here too, so the stage modules never call into each other.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from ragbag.core.home import Home, Source
from ragbag.index import graph
from ragbag.index.published import home_model
from ragbag.index.store import Store
from ragbag.pipeline import checks, chunk, early, embed, graph_stage, ingest, pending, publish, staged
from ragbag.text import ocr
from ragbag.text.chunking import CHUNKER_VERSION

# The run tag of a build allowed to empty its source (`ragbag build NAME --allow-empty`; a launch
# from the UI may carry it too): see ragbag.pipeline.ingest.
ALLOW_EMPTY_TAG = "ragbag/allow-empty"


@dataclass(frozen=True)
class Build:
    """One source's build: what every stage of it reads and writes."""

    store: Store
    home: Home
    source: Source
    read: Callable[..., Iterator[Any]]  # the connector's read(path, source, cursor, *, options)
    spans: Callable[..., list[Any]]  # the connector's spans(doc, count, max_tokens)
    tags: Mapping[str, str] = field(default_factory=dict)  # the run's (what it was asked)
    model: str = ""  # the home's embedding model, resolved once ("" until ``begin``)


def begin(
    home: Home, source: Source, read: Callable[..., Iterator[Any]], spans: Callable[..., list[Any]], **kw: Any
) -> Build:
    """A source's build: its store opened and the home's model resolved, once. Begun by a step
    that holds the home's writers' lock until it ends, so its store is a writer's."""
    return Build(Store(home.lance_uri, writer=True), home, source, read, spans, model=home_model(home), **kw)


@dataclass(frozen=True)
class Stage:
    key: str  # the asset key's last part, what users name in selections and run history
    upstream: str | None
    code_version: str  # bumped when the stage's output for the same input changes: the UI marks stale
    kinds: frozenset[str]
    description: str
    run: Callable[[Build], dict[str, Any]]
    checks: tuple[Callable[[Store, Home, Source], checks.Check], ...]


def _ingest(b: Build) -> dict[str, Any]:
    try:
        return ingest.ingest(b.store, b.home, b.source, b.read, allow_empty=b.tags.get(ALLOW_EMPTY_TAG) == "true")
    finally:
        ocr.release()  # what the recogniser holds is not held through the embedding (see ``ocr.release``)


def _chunk(b: Build) -> dict[str, Any]:
    return chunk.chunk(b.store, b.source, b.spans, b.model)


def _embed(b: Build) -> dict[str, Any]:
    return embed.embed(
        b.store,
        b.source,
        b.model,
        pending=pending.pending_path(b.home, b.source),
        restore=staged.was_compact(b.home, b.source),
        in_graph=staged.reusable_node_texts(b.home, b.source, b.model),
        early=early.early_publisher(b.store, b.home, b.source, b.model),
        cluster=b.home.embed_cluster,
    )


def _graph(b: Build) -> dict[str, Any]:
    return graph_stage.build_graph(b.store, b.home, b.source, b.model)


def _publish(b: Build) -> dict[str, Any]:
    return publish.publish(b.store, b.home, b.source, b.model)


# The publish step's asset key. It says bm25 because the keyword index was once all the last
# stage built; it is kept because asset keys are what users name (run history in the UI,
# `key:files/bm25` selections, the freshness policy, docs/operations.md), and renaming it would
# orphan every materialisation recorded under it.
PUBLISH = "bm25"

TABLE: tuple[Stage, ...] = (
    Stage(
        "documents",
        None,
        "1",
        frozenset({"lancedb"}),
        "Records of each source, normalised, diffed by content hash.",
        _ingest,
        (checks.no_empty_documents,),
    ),
    Stage(
        "chunks",
        "documents",
        CHUNKER_VERSION,
        frozenset({"lancedb"}),
        "Token-bounded chunks; only changed documents are re-chunked.",
        _chunk,
        (checks.unique_chunk_ids, checks.no_orphan_chunks),
    ),
    Stage(
        "embeddings",
        "chunks",
        "1",
        frozenset({"lancedb"}),
        "Chunk vectors; only new content is embedded (cache keyed by model + hash).",
        _embed,
        (checks.embeddings_match_chunks,),
    ),
    Stage(
        "graph",
        "embeddings",
        graph.FORMAT_VERSION,
        frozenset({"faiss"}),
        "Proximity graph: HNSW over kept vectors (fast) or a hub-pruned graph with PQ codes and the "
        "vectors dropped (compact).",
        _graph,
        (checks.graph_matches_chunks, checks.graph_recall),
    ),
    Stage(
        PUBLISH,
        "graph",
        "1",
        frozenset({"bm25s"}),
        "Publishes this build to search: builds the keyword index (BM25) and swaps it in with the "
        "staged graph as the version search reads.",
        _publish,
        (checks.index_matches_chunks,),
    ),
)
STAGES: tuple[str, ...] = tuple(s.key for s in TABLE)
BY_KEY: dict[str, Stage] = {s.key: s for s in TABLE}


def run_all(build: Build) -> dict[str, Any]:
    """Every stage in order, without Dagster or checks (the fault tests interleave a build with
    readers this way); the publish report."""
    report: dict[str, Any] = {}
    for stage in TABLE:
        report = stage.run(build)
    return report
