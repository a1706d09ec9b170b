"""A source's build report: what its run did, or why it did not do it, in the fields the CLI's
table, ``--json``, the MCP ``build`` tool and the search page share.

Why a run failed is said in one line, from the error Dagster kept of the failed step: the stage's
own words (Dagster wraps them in an error of its own), and for a full or read-only disk the
words of ``ragbag.core.storage_faults``, which say what to do. Nothing else of the error (its
stack) reaches the terminal; the run's event log keeps it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ragbag.core.errors import StorageFault
from ragbag.core.home import Home, Source
from ragbag.core.storage_faults import explain_texts

# The failure of a source that `ragbag remove` removed while its build ran.
REMOVED = "removed during the build (`ragbag remove`); nothing published"
_GRAPH = ("profile", "mode", "recall_at_10", "bytes")


def from_run(home: Home, src: Source, result, seconds: float) -> tuple[dict[str, Any], StorageFault | None]:
    """The report of one Dagster run of ``src``, and the storage fault that failed it, if one did."""
    from ragbag.pipeline.stages import PUBLISH

    meta: dict[str, dict[str, Any]] = {}
    for ev in result.get_asset_materialization_events():
        md = ev.event_specific_data.materialization.metadata
        meta[ev.asset_key.path[-1]] = {k: v.value for k, v in md.items()}
    docs, chunks, emb = meta.get("documents", {}), meta.get("chunks", {}), meta.get("embeddings", {})
    failure, fault = _failure(home, result)
    success = result.success
    return {
        "source": src.name,
        "connector": src.connector,
        "status": "success" if success else "failed",
        "unchanged": bool(meta.get(PUBLISH, {}).get("unchanged", False)),
        "documents": docs.get("documents", 0),
        "added": docs.get("added", 0),
        "changed": docs.get("changed", 0),
        "deleted": docs.get("deleted", 0),
        "chunks": chunks.get("chunks", 0),
        "chunks_embedded": emb.get("chunks_embedded", 0),
        "graph": {k: meta.get("graph", {}).get(k) for k in _GRAPH},
        "errors": docs.get("errors", []),
        "secrets": docs.get("secrets") or {},
        "excluded": {"records": docs.get("excluded", 0), "purged": docs.get("purged", 0)},
        "failure": failure,
        "run_id": result.run_id,
        "seconds": round(seconds, 2),
        "warnings": warnings(src, success, docs),
    }, fault


def unchanged(src: Source, record: dict[str, Any], seconds: float) -> dict[str, Any]:
    """The report of a source skipped as unchanged: a build's fields, from its published index."""
    manifest = record["manifest"]
    docs = {"documents": manifest["documents"], "errors": record.get("errors", [])}
    return {
        **failed(src, None, seconds),
        "status": "success",
        "unchanged": True,
        "documents": manifest["documents"],
        "chunks": manifest["chunks"],
        "graph": {k: manifest.get("graph", {}).get(k) for k in _GRAPH},
        "errors": docs["errors"],
        "warnings": warnings(src, True, docs),
    }


def failed(src: Source, failure: str | None, seconds: float) -> dict[str, Any]:
    """The report of a source whose build published nothing and left no run to read (it was
    removed meanwhile, or the disk stopped the build before or around its run)."""
    return {
        "source": src.name,
        "connector": src.connector,
        "status": "failed",
        "unchanged": False,
        **dict.fromkeys(("documents", "added", "changed", "deleted", "chunks", "chunks_embedded"), 0),
        "graph": dict.fromkeys(_GRAPH),
        "errors": [],
        "secrets": {},
        "excluded": {"records": 0, "purged": 0},
        "failure": failure,
        "run_id": None,
        "seconds": round(seconds, 2),
        "warnings": [],
    }


def warnings(src: Source, success: bool, docs: dict[str, Any]) -> list[str]:
    """Never silently empty: a source that read nothing and reported nothing says so."""
    if success and not docs.get("documents") and not docs.get("errors"):
        return [
            f"{src.connector} read 0 records and reported no errors under {src.path or 'its default places'}: "
            f"is that the folder or export it reads? (see `ragbag add {src.connector} --help`)"
        ]
    return []


def _failure(home: Home, result) -> tuple[str | None, StorageFault | None]:
    """Why the run failed, in one line, from its first failed step."""
    for ev in result.all_events:
        if not ev.is_step_failure:
            continue
        err = ev.step_failure_data.error
        if err is None:
            return "step failed", None
        fault = explain_texts((e.message or "" for e in _chain(err)), home, "build")
        if fault is not None:
            return str(fault), fault
        return _words(err), None
    return None, None


def _chain(err) -> Iterator[Any]:
    """A serialised error and those it was raised from or during (Dagster keeps both)."""
    todo = [err]
    while todo:
        e = todo.pop()
        if e is not None:
            yield e
            todo += [e.cause, e.context]


def _words(err) -> str:
    """The first error in the chain that is not Dagster's wrapping of it, as its first line:
    ``RuntimeError: …`` for an exception a stage raised, the description alone for the
    ``dagster.Failure`` a stage failed with on purpose."""
    while (err.message or "").startswith("dagster.") and err.cause is not None:
        err = err.cause
    text = next((t for t in (err.message or "").strip().splitlines() if t.strip()), "step failed")
    return text.split(": ", 1)[1] if text.startswith("dagster.") and ": " in text else text
