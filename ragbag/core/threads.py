"""How many threads the math of an encoder or the OCR recogniser gets.

Every core by default: a build is the one heavy job on a person's machine. ``OMP_NUM_THREADS``
is the conventional way to say otherwise (a machine shared with other work, several builds or
test processes side by side, one worker of a cluster), and torch only reads it at import, which
``torch.set_num_threads`` overrides; so whoever sets the count asks here first.
"""

from __future__ import annotations

import os
from contextlib import AbstractContextManager
from functools import lru_cache
from typing import Any


def compute_threads() -> int:
    """``OMP_NUM_THREADS`` when it holds a positive whole number, else the cores this process may
    run on (its CPU affinity: a container or ``taskset`` may give it fewer than the machine has)."""
    value = os.environ.get("OMP_NUM_THREADS", "").strip()
    if value.isdigit() and int(value) > 0:
        return int(value)
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def one_blas_thread() -> AbstractContextManager[Any]:
    """A context in which BLAS (numpy's OpenBLAS) runs on one thread. For the small products of a
    query: split over threads they gain nothing, and OpenBLAS's threads spin for a while after
    each product, taking the cores from whatever runs next, such as the next query's encoder on
    its own OpenMP threads (benchmarks/README.md, "Search on a larger home")."""
    return _blas().limit(limits=1, user_api="blas")


@lru_cache(maxsize=1)
def _blas() -> Any:
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()
