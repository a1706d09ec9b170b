"""The bytes of a compact graph on disk (``graph.bin``): the one owner of that format.

CSR neighbour lists (sorted per node, delta-coded, split into byte planes), PQ codes packed at
their bit width, float16 centroids, all LZMA-compressed: a few tens of bytes per chunk.
"""

from __future__ import annotations

import io
import lzma
import zlib

import numpy as np

from ragbag.index.compact.graph import Compact


def pack_compact(g: Compact) -> bytes:
    """Sorted neighbour lists delta-coded and split into byte planes (the high bytes of small
    gaps are runs of zeros), codes packed at their bit width, float16 centroids, all
    LZMA-compressed: the bytes that make the compact profile compact. Planes and LZMA come
    close to the entropy of the lists; uint16 gaps under zlib did not (docs/graph.md)."""
    n = g.n
    parts = {
        **_edge_arrays(g.lists()),
        "hubs": g.hubs.astype(np.int32),
        "codes": _pack_bits(g.codes, g.bits),
        "centroids": g.centroids.astype(np.float16),
    }
    if g.residual is not None:  # 0..2 in 255 steps: a unit vector's residual stays below 2
        parts["residual"] = np.round(np.clip(g.residual, 0, 2) * 127.5).astype(np.uint8)
    if g.rotation is not None:  # trained in float16 (``pq.train_rotation``): stored exactly
        parts["rotation"] = g.rotation.astype(np.float16)
    buf = io.BytesIO()
    header = [n, g.bits, g.codes.shape[1], int(g.meta.get("degree") or 0)]
    # numpy's stub reads **arrays as its allow_pickle flag
    np.savez(buf, **parts, header=np.array(header, np.int64))  # type: ignore[arg-type]
    return lzma.compress(buf.getvalue(), preset=9)


def _edge_arrays(lists: list[np.ndarray]) -> dict[str, np.ndarray]:
    """Degrees and the sorted lists' gaps, split into byte planes."""
    n = len(lists)
    degrees = np.array([len(r) for r in lists], np.int64)
    deltas = (
        np.concatenate([np.diff(np.sort(r).astype(np.int64), prepend=0) for r in lists]) if n else np.zeros(0, np.int64)
    )
    width = np.uint16 if n < 2**16 else np.uint32
    planes = deltas.astype(width).view(np.uint8).reshape(-1, np.dtype(width).itemsize).T
    return {
        "degrees": degrees.astype(np.uint16 if degrees.max(initial=0) < 2**16 else np.uint32),
        "delta_planes": np.ascontiguousarray(planes),
    }


def unpack_compact(blob: bytes) -> Compact:
    """Reads what ``pack_compact`` writes, and the zlib/plain-deltas files of format 2 before it."""
    raw = lzma.decompress(blob) if blob[:6] == b"\xfd7zXZ\x00" else zlib.decompress(blob)
    arrays = np.load(io.BytesIO(raw))
    header = [int(x) for x in arrays["header"]]
    n, bits, m = header[:3]
    degrees = arrays["degrees"].astype(np.int64)
    offsets = np.zeros(n + 1, np.int64)
    np.cumsum(degrees, out=offsets[1:])
    if "delta_planes" in arrays:
        planes = arrays["delta_planes"]
        width = np.uint16 if planes.shape[0] == 2 else np.uint32
        deltas = np.ascontiguousarray(planes.T).view(width).reshape(-1).astype(np.int64)
    else:
        deltas = arrays["deltas"].astype(np.int64)
    # Undo the per-row delta coding: a cumulative sum restarted at each row's first entry.
    total = np.cumsum(deltas)
    starts = offsets[:-1][degrees > 0]
    base = np.zeros(len(deltas), np.int64)
    if len(starts):
        before = np.concatenate([[0], total[starts[1:] - 1]]) if len(starts) > 1 else np.zeros(1, np.int64)
        marks = np.zeros(len(deltas), np.int64)
        marks[starts] = before - np.concatenate([[0], before[:-1]])
        base = np.cumsum(marks)
    neighbors = (total - base).astype(np.int32)
    codes = _unpack_bits(arrays["codes"], bits, n, m)
    centroids = arrays["centroids"].astype(np.float32)
    meta = {"degree": header[3]} if len(header) > 3 and header[3] else {}
    residual = arrays["residual"].astype(np.float32) / 127.5 if "residual" in arrays else None
    rotation = arrays["rotation"].astype(np.float32) if "rotation" in arrays else None
    return Compact(
        offsets.astype(np.int32),
        neighbors,
        arrays["hubs"].astype(np.int32),
        codes,
        centroids,
        bits,
        meta,
        residual,
        rotation,
    )


def _pack_bits(codes: np.ndarray, bits: int) -> np.ndarray:
    """Codes of ``bits`` bits each (one byte in memory) as a packed bit string."""
    if bits == 8:
        return codes.reshape(-1)
    unpacked = np.unpackbits(codes.reshape(-1, 1), axis=1)[:, 8 - bits :]
    return np.packbits(unpacked.reshape(-1))


def _unpack_bits(packed: np.ndarray, bits: int, n: int, m: int) -> np.ndarray:
    """The (n, m) byte codes of a bit string ``_pack_bits`` wrote."""
    if bits == 8:
        return packed.reshape(n, m).astype(np.uint8)
    flat = np.unpackbits(packed)[: n * m * bits].reshape(-1, bits)
    full = np.zeros((len(flat), 8), np.uint8)
    full[:, 8 - bits :] = flat
    return np.packbits(full, axis=1).reshape(n, m)
