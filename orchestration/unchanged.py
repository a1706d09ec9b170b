"""How a source skipped as unchanged shows in Dagster: a reported materialisation, no run.

A refresh that finds the same files and settings (``ragbag.pipeline.changes``) starts no run. The
publish asset (``<connector>/bm25``, the index search reads) still gets a materialisation of
that partition, reported without a run, with ``unchanged: true`` in its metadata: the UI shows it
as up to date (its freshness policy stays green for a source that simply did not change) and
says no run produced it, while the earlier stages keep the materialisation of the last run that
really built them. These events hold counts, never a record's text, so a removed source's
privacy does not depend on them (Dagster's SQLite storage cannot wipe one partition anyway).
"""

from __future__ import annotations

from typing import Any

import dagster as dg

from ragbag.core.home import Home, Source
from ragbag.pipeline import changes
from ragbag.pipeline.stages import PUBLISH

DESCRIPTION = "Unchanged since its last build (same files, settings and model): checked, nothing read, no run."


def record_unchanged(instance: dg.DagsterInstance, source: Source, record: dict[str, Any]) -> None:
    """Report the publish asset of ``source`` as materialised now, with no run behind it."""
    manifest = record["manifest"]
    instance.report_runless_asset_event(
        dg.AssetMaterialization(
            asset_key=dg.AssetKey([source.connector, PUBLISH]),
            partition=source.name,
            description=DESCRIPTION,
            metadata={
                "unchanged": True,
                "documents": manifest["documents"],
                "chunks": manifest["chunks"],
                "built_at": manifest["built_at"],
                "error_count": len(record.get("errors", [])),
            },
        )
    )


def needing_runs(instance: dg.DagsterInstance, home: Home, names: list[str]) -> list[str]:
    """The sources of ``names`` a refresh must run; each of the others is recorded as unchanged
    (what a schedule or sensor tick does before it requests runs)."""
    sources = home.sources()
    todo = []
    for name in names:
        record = changes.unchanged(home, sources[name]) if name in sources else None
        if record is None:
            todo.append(name)
        else:
            record_unchanged(instance, sources[name], record)
    return todo
