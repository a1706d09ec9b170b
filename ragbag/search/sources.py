"""A source's status row: what is registered, what is published, and whether it is damaged.

``ragbag list``, ``ragbag status`` and the MCP tools ``list_sources``/``source_status`` all show
this row (each a fixed selection of its fields, so their JSON stays as it was). It is built here
once, from the home's registry and the published manifest (read through
``ragbag.index.published``), so the surfaces cannot drift apart in what "built" or "bytes" means.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ragbag.core.errors import DamagedIndex
from ragbag.core.home import Home, Source
from ragbag.index.published import dir_bytes, published

# Every field of a status row, in the order ``ragbag status --json`` shows them.
FIELDS = (
    "source",
    "connector",
    "path",
    "path_exists",
    "built",
    "damaged",
    "last_build",
    "documents",
    "chunks",
    "embedding",
    "model",
    "profile",
    "graph_bytes",
    "graph_recall_at_10",
    "bytes",
    "store_bytes",
    "options",
)


# A setting whose name says it holds a credential (signal's ``key``, ``safe_storage_password``):
# its value never leaves sources.yaml, not to an agent through ``source_status`` either.
_CREDENTIAL = re.compile(r"(?i)(?:^|_)(?:key|password|passphrase|secret|token)(?:$|_)")


def shown_options(options: dict[str, Any]) -> dict[str, Any]:
    """A source's options as status rows show them: credentials as ``"[hidden]"``."""
    return {k: "[hidden]" if _CREDENTIAL.search(str(k)) else v for k, v in options.items()}


def status(home: Home, source: Source, fields: Iterable[str] = FIELDS) -> dict[str, Any]:
    """The status row of ``source`` with ``fields`` in that order. ``bytes`` (the index files on
    disk plus the source's share of the tables) walks the index directory, so it is measured only
    when asked for. A damaged published index reads as not built, with ``damaged`` saying why."""
    fields = tuple(fields)
    try:
        manifest, damaged = published(home, source) or {}, None
    except DamagedIndex as e:
        manifest, damaged = {}, e.reason
    graph = manifest.get("graph") or {}
    row: dict[str, Any] = {
        "source": source.name,
        "connector": source.connector,
        "path": source.path,
        # "" means the connector's default places, discovered at every build: nothing to go missing
        "path_exists": not source.path or Path(source.path).exists(),
        "built": bool(manifest),
        "damaged": damaged,
        "last_build": manifest.get("built_at"),
        "documents": manifest.get("documents", 0),
        "chunks": manifest.get("chunks", 0),
        # A first build still embedding (``ragbag.pipeline.early``): embedded, to_embed, eta_seconds.
        "embedding": manifest.get("embedding"),
        "model": manifest.get("model"),
        "profile": graph.get("profile"),
        "graph_bytes": graph.get("bytes"),
        "graph_recall_at_10": graph.get("recall_at_10"),
        "store_bytes": manifest.get("store_bytes", 0),
        "options": shown_options(source.options),
    }
    if "bytes" in fields:
        index = home.index_dir(source.connector, source.name)
        row["bytes"] = (dir_bytes(index) if index.exists() else 0) + row["store_bytes"]
    return {key: row[key] for key in fields}


def embedding_note(progress: dict[str, Any] | None) -> str:
    """A status row's ``embedding`` in words, as the CLI and the search page say it ("" when the
    index is complete)."""
    if not progress:
        return ""
    embedded, total = progress.get("done", progress.get("embedded", 0)), progress.get("to_embed", 0)
    eta = progress.get("eta_seconds")
    left = "" if eta is None else f", about {_duration(eta)} left"
    return f"still embedding: {embedded:,} of {total:,} passages{left}; keyword search covers all"


def _duration(seconds: float) -> str:
    minutes = round(seconds / 60)
    if minutes < 1:
        return "a minute"
    if minutes < 90:
        return f"{minutes} min"
    return f"{minutes / 60:.1f} h"


def statuses(home: Home, name: str | None = None, fields: Iterable[str] = FIELDS) -> list[dict[str, Any]]:
    """The status rows of every registered source by name, or of source ``name`` alone (a
    RagbagError naming the sources when there is none)."""
    chosen = [home.source(name)] if name is not None else [s for _, s in sorted(home.sources().items())]
    return [status(home, s, fields) for s in chosen]
