"""Timing helpers shared by build_bench.py and leann_side.py (which run in different venvs).

A benchmark on a two-core machine is only as good as the machine's quiet: every phase records
its wall time, the CPU seconds this process and its finished children used, and how busy the
whole machine was meanwhile (from /proc/stat), so a reader can tell a slow build from a
crowded machine.
"""

from __future__ import annotations

import os
import resource
import statistics
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def machine_busy() -> tuple[float, float]:
    """(busy, total) CPU seconds of the whole machine since boot, from /proc/stat."""
    try:
        fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    except OSError:
        return 0.0, 0.0
    tick = os.sysconf("SC_CLK_TCK")
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    return (sum(fields[:8]) - idle) / tick, sum(fields[:8]) / tick


def own_cpu() -> float:
    """CPU seconds of this process plus its reaped children."""
    s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime


@contextmanager
def meter() -> Iterator[dict]:
    """Fill a dict for the block it wraps: wall_s, cpu_s (this process and its reaped children),
    machine_busy (share of all cores busy meanwhile, 0..1) and others_busy (the share that was
    not ours: other people's work, or children not yet reaped such as a daemon)."""
    out: dict = {}
    busy0, total0 = machine_busy()
    cpu0, t0 = own_cpu(), time.perf_counter()
    try:
        yield out
    finally:
        wall, cpu = time.perf_counter() - t0, own_cpu() - cpu0
        busy1, total1 = machine_busy()
        span = total1 - total0
        ok = span > 0
        out.update(
            wall_s=round(wall, 2),
            cpu_s=round(cpu, 2),
            machine_busy=round((busy1 - busy0) / span, 3) if ok else None,
            others_busy=round(max(0.0, (busy1 - busy0 - cpu) / span), 3) if ok else None,
        )


def wait_for_quiet(max_wait_s: float, threshold: float = 0.2, sample_s: float = 10.0) -> dict:
    """Wait (at most max_wait_s) until the machine is under `threshold` busy over one sample."""
    start = time.perf_counter()
    while True:
        busy0, total0 = machine_busy()
        time.sleep(sample_s)
        busy1, total1 = machine_busy()
        frac = (busy1 - busy0) / (total1 - total0) if total1 > total0 else 0.0
        waited = time.perf_counter() - start
        if frac <= threshold or waited >= max_wait_s:
            return {"busy_before_start": round(frac, 3), "waited_s": round(waited, 1), "quiet": frac <= threshold}
        print(f"machine {frac:.0%} busy (other work); waiting for quiet…", file=sys.stderr, flush=True)


def percentiles(seconds: list[float]) -> dict:
    ms = sorted(s * 1000 for s in seconds)
    p95 = statistics.quantiles(ms, n=20, method="inclusive")[-1] if len(ms) > 1 else ms[0]
    return {"n": len(ms), "p50_ms": round(statistics.median(ms), 2), "p95_ms": round(p95, 2)}


def folder_bytes(path: Path) -> dict:
    """Apparent size (sum of file sizes) and allocated size (what `du` counts) of a folder."""
    files = [p for p in Path(path).rglob("*") if p.is_file() and not p.is_symlink()]
    return {"apparent": sum(p.stat().st_size for p in files), "allocated": sum(p.stat().st_blocks * 512 for p in files)}
