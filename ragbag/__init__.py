"""ragbag: RAG everything, local-first.

The engine in layers, bottom-up: ``core`` → ``text``, ``models`` → ``index`` → ``connectors`` →
``build``, ``search`` → ``answer`` → ``assets`` → ``pipelines`` → ``apps`` (docs/architecture.md;
tests/unit/test_layers.py holds every import to it). Dagster lives in ``assets``, ``pipelines`` and
``apps`` only; the connectors, assets and pipelines install here from the checkout's top-level
folders.
"""

from __future__ import annotations

import importlib
from types import ModuleType

__version__ = "0.1.0"


def __getattr__(name: str) -> ModuleType:
    """``from ragbag import query``, the notebooks' documented entry point (README, the design),
    is ``ragbag.search.query``: imported on first use, so ``import ragbag`` stays light."""
    if name == "query":
        return importlib.import_module("ragbag.search.query")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
