"""The cyclic garbage collector's pace in ragbag's own processes.

CPython starts a young-generation collection every 700 net allocations of container objects,
and a full one (every object the process holds) whenever the survivors since the last have grown
by a quarter. A ragbag command imports Dagster, LanceDB, pandas and the models' runtimes on its
way: hundreds of thousands of long-lived objects allocated in a burst, which its defaults answer
with hundreds of young collections and several full ones, each walking the whole heap again,
while almost nothing of it is garbage. Collecting young objects after tens of thousands of
allocations, not hundreds, lets those objects settle before the collector walks them; cyclic
garbage is still collected, a little later (what a young collection holds is tens of thousands
of small objects, a few MB at most). ``benchmarks/refresh_cost.py`` measures what it spares.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

# Allocations between young collections; the older generations keep CPython's ratios.
YOUNG = 50_000
_OLDER = (20, 10)


def pace_for_application() -> None:
    """Collect at the application's pace. For ragbag's own processes only (the CLI's commands,
    ``ragbag mcp`` among them), like ``private.private_process``: a library caller keeps the
    collector it set."""
    global _paced
    gc.set_threshold(YOUNG, *_OLDER)
    _paced = True


_paced = False


@contextlib.contextmanager
def long_lived() -> Iterator[None]:
    """Around code that makes objects which live as long as the process (a library's import): in
    ragbag's own processes the collector waits while they are made, then sets them (and what was
    there before) aside for good (``gc.freeze``), so no later collection walks them again. A young
    collection walks every object made since the last one, and an import of LanceDB or Dagster
    makes hundreds of thousands, none of them garbage; frozen objects are still freed when their
    last reference goes, only a cycle among them stays. Elsewhere (a library caller) it does
    nothing, as ``pace_for_application``."""
    if not _paced or not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.enable()
