"""How big a compact graph may be: the degree and code layout that fit a share of the raw text.

A compact index is worth its name only relative to what it indexes. Its bytes are the pruned
graph's edges plus the PQ codes, a residual byte a node and the codebook, and the text it
replaces can be 350 bytes a passage (msmarco) or 640 (mail). So the build plans per source:
the best layout whose packed bytes fit ``budget`` (a share of the source's raw text bytes), and
``build.build_within`` steps back to better layouts while the own-chunk recall check would fail.

Layouts are ordered best first, by measurement (benchmarks/README.md, "Graph index"; docs/graph.md):
at equal bytes more code bytes beat more edges (msmarco-5k: 12-byte codes at degree 6 find more
of the true top 10 than 8-byte codes at degree 8), so the ladder walks down the code sizes and
tries degree 6 before giving up a code size. Below 20,000 nodes codes are 2-bit (a 256-entry
codebook would outweigh the codes there); from 20,000 up 8-bit, which real queries need (Enron
subject lines lose much of their recall@10 from 32 bytes down to 16), each code size also with
an OPQ rotation.

A rotation is worth about half its code bytes again (``ROTATION_WORTH``), measured as recall@10
when the 128 best by code score are recomputed (no graph; ``benchmarks/code_probe.py``,
benchmarks/README.md "The rotation (OPQ)"): 24 rotated bytes beat 32 plain, 16 rotated match 24
plain. So the ladder ranks a code by its bytes times 1.5 when rotated, rotated first on a tie.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

SMALL_GRAPH = 20_000  # from here on, 8-bit codes
_SMALL_CODES = ((96, 2), (64, 2), (48, 2), (32, 2))
_LARGE_CODES = ((32, 8), (24, 8), (16, 8), (12, 8), (8, 8))
_FEWER_EDGES = 6  # the degree tried before a smaller code
ROTATION_WORTH = 1.5  # a rotated code ranks with a plain one this many times its bytes


@dataclass(frozen=True)
class Layout:
    degree: int  # neighbours a non-hub node keeps
    pq_m: int  # sub-quantisers
    bits: int  # bits per sub-code
    rotate: bool = False  # codes after an OPQ rotation (a d x d float16 matrix in the file)

    @property
    def code_bytes(self) -> float:
        return self.pq_m * self.bits / 8


def layouts(n: int, dim: int, degree: int, pq_m: int = 0, pq_bits: int = 0) -> list[Layout]:
    """Candidate layouts, best first. Explicit ``pq_m``/``pq_bits`` fix the codes (one layout)."""
    bits = pq_bits or (8 if n >= SMALL_GRAPH else 2)
    bits = min(bits, max(1, int(math.log2(max(2, n)))))  # never more centroids than points
    if pq_m or pq_bits:
        m = pq_m or max(k for k in range(1, (32 if bits == 8 else 24) * 8 // bits + 1) if dim % k == 0)
        return [Layout(degree, m, bits)]
    ladder = [(m, min(b, bits)) for m, b in (_SMALL_CODES if n < SMALL_GRAPH else _LARGE_CODES) if dim % m == 0]
    if not ladder:  # a dimension none of the ladder divides: the largest divisor within 24 bytes
        ladder = [(max(k for k in range(1, 24 * 8 // bits + 1) if dim % k == 0), bits)]
    degrees = (degree, _FEWER_EDGES) if degree > _FEWER_EDGES else (degree,)
    # A rotation costs 2·d² bytes (295 KB at 384-d): below SMALL_GRAPH it would outweigh the
    # codes, so only 8-bit codes are tried rotated.
    rotations = (True, False) if bits == 8 and n >= SMALL_GRAPH else (False,)
    codes = [(m, b, r) for m, b in ladder for r in rotations]
    codes.sort(key=lambda c: (-c[0] * c[1] * (ROTATION_WORTH if c[2] else 1), not c[2]))
    return [Layout(d, m, b, r) for m, b, r in codes for d in degrees]


def choose(options: list[Layout], allowed: float | None, size_of: Callable[[Layout], int]) -> int:
    """Index of the best layout whose packed bytes (``size_of``) fit ``allowed`` (None: the best);
    the smallest when none fits. Sizes are measured, not predicted: how well edges and codes
    compress depends on the source (near-copies of a message share codes, so LZMA shrinks a
    mailbox's codes and a set of distinct passages' hardly at all)."""
    if allowed is None:
        return 0
    for i, layout in enumerate(options):
        if size_of(layout) <= allowed:
            return i
    return len(options) - 1
