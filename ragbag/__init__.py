"""ragbag: RAG everything, local-first.

The engine package. It imports no Dagster: connectors feed it Documents, the assets in
``assets/`` drive its stages, and ``ragbag.search.query`` reads what they materialised.
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
