"""The asset chain of one connector, partitioned by source name.

``documents`` reads the source; ``chunks``, ``embeddings`` and ``bm25`` follow eagerly. Every
asset returns counts, errors, a preview and the LanceDB table version as metadata. The place
for a ``graph`` asset is after ``embeddings``, beside ``bm25``.
"""


import warnings
from types import ModuleType
from typing import Any, Callable

import dagster as dg

from assets.resources import RagbagHome
from ragbag import checks, stages
from ragbag.errors import RagbagError
from ragbag.home import Home, Source
from ragbag.store import Store

STAGES = ("documents", "chunks", "embeddings", "bm25")
# Bump when a stage's output for the same input changes, so the UI marks what became stale.
CODE_VERSIONS = {"documents": "1", "chunks": stages.CHUNKER_VERSION, "embeddings": "1", "bm25": "1"}


def partitions_for(connector: str) -> dg.DynamicPartitionsDefinition:
    return dg.DynamicPartitionsDefinition(name=f"{connector}_sources")


def job_name(connector: str) -> str:
    return f"build_{connector}"


def connector_chain(connector: str, module: ModuleType) -> list[dg.AssetsDefinition]:
    """The four assets of one connector, wired in order."""
    partitions = partitions_for(connector)

    def make(stage: str, upstream: "str | None", run: Callable[[Store, Home, Source], dict], doc: str):
        key = dg.AssetKey([connector, stage])
        with warnings.catch_warnings():  # partitioned checks are a Dagster preview; we rely on them
            warnings.simplefilter("ignore", dg.PreviewWarning)
            specs = [
                dg.AssetCheckSpec(fn.__name__, asset=key, blocking=True, partitions_def=partitions,
                                  description=(fn.__doc__ or fn.__name__).strip().splitlines()[0])
                for fn in checks.BY_STAGE[stage]
            ]

        @dg.asset(
            name=stage,
            key_prefix=[connector],
            check_specs=specs,
            partitions_def=partitions,
            deps=[dg.AssetKey([connector, upstream])] if upstream else None,
            group_name=connector,
            code_version=CODE_VERSIONS[stage],
            automation_condition=dg.AutomationCondition.eager() if upstream else None,
            kinds={"lancedb"} if stage != "bm25" else {"bm25s"},
            description=doc,
        )
        def _asset(context: dg.AssetExecutionContext, ragbag: RagbagHome) -> dg.MaterializeResult:
            home = ragbag.home()
            source = _source(home, context.partition_key, connector)
            try:
                report = run(Store(home.lance_dir), home, source)
            except RagbagError as e:
                raise dg.Failure(description=str(e)) from None
            for err in report.get("errors", []):
                context.log.warning(f"{err['uri']}: {err['error']}")
            store = Store(home.lance_dir)
            results = []
            for fn in checks.BY_STAGE[stage]:
                c = fn(store, home, source)
                results.append(dg.AssetCheckResult(
                    check_name=c.name, passed=c.passed, description=c.description, metadata=c.metadata,
                ))
            return dg.MaterializeResult(metadata=_metadata(report), check_results=results)

        return _asset

    return [
        make("documents", None, lambda st, h, s: stages.ingest(st, h, s, module.read),
             f"Records of each {connector} source, normalised, diffed by content hash."),
        make("chunks", "documents", lambda st, h, s: stages.chunk(st, s, module.spans, h.model),
             "Token-bounded chunks; only changed documents are re-chunked."),
        make("embeddings", "chunks", lambda st, h, s: stages.embed(st, s, h.model),
             "Chunk vectors; only new content is embedded (cache keyed by model + hash)."),
        make("bm25", "embeddings", lambda st, h, s: stages.publish(st, h, s, h.model),
             "Keyword index, and the publication of this build to search."),
    ]


def _source(home: Home, name: str, connector: str) -> Source:
    try:
        source = home.source(name)
    except RagbagError as e:
        raise dg.Failure(description=str(e)) from None
    if source.connector != connector:
        raise dg.Failure(description=f"source {name!r} is a {source.connector} source, not {connector}")
    return source


def _metadata(report: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in report.items():
        if key == "preview":
            out[key] = dg.MetadataValue.md(value)
        elif key == "errors":
            out["errors"] = dg.MetadataValue.json(value)
            out["error_count"] = len(value)
        elif isinstance(value, (dict, list)):
            out[key] = dg.MetadataValue.json(value)
        elif isinstance(value, bool):
            out[key] = dg.MetadataValue.bool(value)
        elif value is None:
            out[key] = dg.MetadataValue.null()
        else:
            out[key] = value
    return out


__all__ = ["connector_chain", "partitions_for", "job_name", "RagbagHome", "STAGES"]
