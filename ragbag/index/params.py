"""Build and search parameters of the graph indexes, shared by both profiles.

Their own module so that every profile's code can take them without importing the façade
(``ragbag.index.graph``) that dispatches between the profiles.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Params:
    """Build and search parameters; defaults chosen by ``benchmarks/graph_bench.py``."""

    build_m: int = 32  # HNSW M of the proximity graph the pruning starts from
    ef_construction: int = 100
    hub_fraction: float = 0.02
    hub_degree: int = 32  # M: neighbours a hub keeps
    degree: int = 8  # m: neighbours every other node keeps
    # Product quantisation; 0 = planned by size (compact.size): the best layout of degree and
    # codes that fits ``budget`` of the source's raw text, 96x2-bit or 32x8-bit at most.
    pq_m: int = 0
    pq_bits: int = 0
    budget: float = 0.05  # compact index bytes per raw text byte the build plans for; 0 = largest
    ef_search: int = 512  # search width: below 512, short mail queries lose recall in the walk
    recompute: int = 128  # exact embeddings recomputed per query
    seeds: int = 4  # hubs a search starts from


def params_dict(params: Params) -> dict:
    """The parameters as a graph's meta records them (and a build's fingerprint hashes them)."""
    return asdict(params)
