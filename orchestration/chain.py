"""The asset chain of one connector, partitioned by source name: one asset per row of the stage
table (``ragbag.pipeline.stages``: keys, order, code versions, kinds, checks and what each runs).

``documents`` reads the source; ``chunks``, ``embeddings``, ``graph`` and ``bm25`` follow
eagerly. Every asset returns counts, errors, a preview and the LanceDB table version as
metadata. ``bm25`` is the publish step (``ragbag.pipeline.publish``): it builds the keyword index
and ships it with the graph the stage before staged, as the version search reads. Its key
stays ``bm25`` (see ``stages.PUBLISH``).
"""

import time
import warnings
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime, timedelta
from types import ModuleType
from typing import Any

import dagster as dg

from ragbag.core import leases
from ragbag.core.errors import RagbagError
from ragbag.core.home import Home, Source
from ragbag.index.store import Store
from ragbag.orchestration.dagster_internals import cron_string_iterator
from ragbag.orchestration.instance import dagster_instance
from ragbag.orchestration.pool import POOL, ensure_pool
from ragbag.orchestration.resources import RagbagHome
from ragbag.pipeline import stages

PUBLISH = stages.PUBLISH
# A backfill over a connector's sources (partition range) is one run; each stage then iterates
# context.partition_keys. `dagster asset materialize --partition-range` requires single_run.
BACKFILL_POLICY = dg.BackfillPolicy.single_run()
# A step logs its wait for the writers' lock only from this long: each log line is an event the
# instance stores, and a refresh pays for every event of every step (benchmarks/README.md).
LOCK_WAIT_WORTH_SAYING = 1.0
# Who to ask about an asset, as the UI shows it: the project, not a person.
OWNERS = ["team:ragbag"]


def partitions_for(connector: str) -> dg.DynamicPartitionsDefinition:
    return dg.DynamicPartitionsDefinition(name=f"{connector}_sources")


def job_name(connector: str) -> str:
    return f"build_{connector}"


def sync_partitions(home: Home, add: Iterable[Source] = (), remove: Iterable[Source] = (), instance=None) -> None:
    """Add/remove the dynamic partitions of sources in the shared Dagster instance (``instance``,
    when the caller holds it: opening one reads its storage's schema)."""
    add, remove = list(add), list(remove)
    if not add and not remove:
        return
    instance = instance or dagster_instance(home)
    ensure_pool(instance, home)
    for src in add:
        pname = partitions_for(src.connector).name
        if not instance.has_dynamic_partition(pname, src.name):
            instance.add_dynamic_partitions(pname, [src.name])
    for src in remove:
        pname = partitions_for(src.connector).name
        if instance.has_dynamic_partition(pname, src.name):
            instance.delete_dynamic_partition(pname, src.name)


def schedule_interval(cron: str) -> timedelta:
    """The longest gap between two consecutive fire times of ``cron`` (over a sample week)."""
    start = datetime(2026, 1, 5, tzinfo=UTC).timestamp()  # a Monday; any fixed start
    fires = []
    for fire in cron_string_iterator(start, cron, "UTC"):
        fires.append(fire)
        if len(fires) > 1 and (fire.timestamp() - start > 8 * 86400 or len(fires) >= 2000):
            break
    gaps = [b - a for a, b in zip(fires, fires[1:])]
    return max(gaps) if gaps else timedelta(days=1)


def freshness_for(cron: str) -> dg.FreshnessPolicy:
    """Warn when a refresh was missed, fail when two were: derived from the refresh cron.

    The grace covers the refresh run itself (a tick at 10:00 materialises bm25 some minutes
    later).
    """
    every = schedule_interval(cron)
    grace = min(timedelta(hours=1), max(timedelta(minutes=15), every / 2))
    return dg.FreshnessPolicy.time_window(fail_window=2 * every + grace, warn_window=every + grace)


def connector_chain(
    connector: str,
    module: ModuleType,
    freshness: "dg.FreshnessPolicy | None" = None,
) -> list[dg.AssetsDefinition]:
    """The five assets of one connector, wired in order; ``freshness`` goes on ``bm25`` (what
    search reads), so the UI flags a connector whose index has not been refreshed on time."""
    partitions = partitions_for(connector)

    def make(stage: stages.Stage) -> dg.AssetsDefinition:
        # Partitioned checks are a Dagster preview and backfill_policy is beta; we rely on both.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", dg.PreviewWarning)
            warnings.simplefilter("ignore", dg.BetaWarning)
            return _define(stage)

    def _define(stage: stages.Stage) -> dg.AssetsDefinition:
        key = dg.AssetKey([connector, stage.key])
        specs = [
            dg.AssetCheckSpec(
                fn.__name__,
                asset=key,
                blocking=True,
                partitions_def=partitions,
                description=(fn.__doc__ or fn.__name__).strip().splitlines()[0],
            )
            for fn in stage.checks
        ]

        @dg.asset(
            name=stage.key,
            key_prefix=[connector],
            check_specs=specs,
            partitions_def=partitions,
            deps=[dg.AssetKey([connector, stage.upstream])] if stage.upstream else None,
            group_name=connector,
            code_version=stage.code_version,
            automation_condition=dg.AutomationCondition.eager() if stage.upstream else None,
            kinds=set(stage.kinds),
            owners=OWNERS,
            description=stage.description,
            pool=POOL,
            backfill_policy=BACKFILL_POLICY,
            freshness_policy=freshness if stage.key == PUBLISH else None,
        )
        def _asset(context: dg.AssetExecutionContext, ragbag: RagbagHome) -> dg.MaterializeResult:
            home = ragbag.home()
            step = context.get_step_execution_context().step.key
            with leases.hold(home.lease_dir, context.run_id, step):  # the pool slot's holder
                with leases.exclusive(home.writer_lock) as waited:
                    # Every log line is an event Dagster stores (a write each): only a wait says something.
                    if waited >= LOCK_WAIT_WORTH_SAYING:
                        context.log.info(f"waited {waited:.1f} s for the writers' lock (another build held it)")
                    held_from = time.time()
                    result = _materialize(context, home)
                    # When this step wrote the shared tables: inside the lock, so the spans of
                    # steps of concurrent builds never overlap (tests/e2e/test_platform.py holds it).
                    lock = {"waited_s": round(waited, 3), "from": held_from, "to": time.time()}
                    metadata = {**(result.metadata or {}), "writers_lock": dg.MetadataValue.json(lock)}
                    return result._replace(metadata=metadata)

        def _materialize(context: dg.AssetExecutionContext, home: Home) -> dg.MaterializeResult:
            keys = list(context.partition_keys)
            if len(keys) == 1:  # a build, refresh or sensor run: exactly one source
                try:
                    build = _begin(home, keys[0], context.run.tags)
                    report = stage.run(build)
                except RagbagError as e:
                    raise dg.Failure(description=str(e)) from None
                for err in report.get("errors", []):
                    context.log.warning(f"{err['uri']}: {err['error']}")
                results = []
                for fn in stage.checks:
                    c = fn(build.store, home, build.source)
                    results.append(
                        dg.AssetCheckResult(
                            check_name=c.name,
                            passed=c.passed,
                            description=c.description,
                            metadata=c.metadata,
                        )
                    )
                return dg.MaterializeResult(metadata=_metadata(report), check_results=results)
            return _backfill_step(context, home, keys, stage, _begin)

        return _asset

    def _begin(home: Home, name: str, tags: Mapping[str, str]) -> stages.Build:
        return stages.begin(home, _source(home, name, connector), module.read, module.spans, tags=tags)

    return [make(stage) for stage in stages.TABLE]


def _backfill_step(
    context: dg.AssetExecutionContext,
    home: Home,
    keys: list[str],
    stage: stages.Stage,
    begin: Callable[[Home, str, Mapping[str, str]], stages.Build],
) -> dg.MaterializeResult:
    """One stage over a range of sources (a backfill run): each source in turn, as a build would.

    A source that fails does not stop the others; the step fails at the end naming them, so the
    blocking checks keep every source of the range from being published by this run. Dagster
    records one materialisation per partition with the same (combined) metadata, and one check
    evaluation for the range: checks pass only when they pass for every source.
    """
    connector = context.assets_def.key.path[0]
    reports: dict[str, dict] = {}
    failures: dict[str, str] = {}
    for key in keys:
        try:
            reports[key] = stage.run(begin(home, key, context.run.tags))
        except (RagbagError, dg.Failure) as e:
            failures[key] = getattr(e, "description", None) or str(e)
            context.log.error(f"{key}: {failures[key]}")
            continue
        for err in reports[key].get("errors", []):
            context.log.warning(f"{key}: {err['uri']}: {err['error']}")
    if failures:
        raise dg.Failure(
            description=f"{len(failures)} of {len(keys)} sources failed: "
            + "; ".join(f"{k}: {v}" for k, v in failures.items())
        )
    store = Store(home.lance_uri)
    results = []
    for fn in stage.checks:
        per_source = {key: fn(store, home, _source(home, key, connector)) for key in keys}
        bad = {k: c.description for k, c in per_source.items() if not c.passed}
        results.append(
            dg.AssetCheckResult(
                check_name=fn.__name__,
                passed=not bad,
                description=(f"failed for {', '.join(sorted(bad))}" if bad else f"passed for all {len(keys)} sources"),
                metadata={"sources": dg.MetadataValue.json({k: c.description for k, c in per_source.items()})},
            )
        )
    totals: dict[str, Any] = {
        "sources": dg.MetadataValue.json(
            {
                k: {f: v for f, v in r.items() if isinstance(v, (int, float, str)) and not isinstance(v, bool)}
                for k, r in reports.items()
            }
        )
    }
    for r in reports.values():
        for f, v in r.items():
            if isinstance(v, int) and not isinstance(v, bool):
                totals[f] = totals.get(f, 0) + v
    totals["error_count"] = sum(len(r.get("errors", [])) for r in reports.values())
    return dg.MaterializeResult(metadata=totals, check_results=results)


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


__all__ = ["connector_chain", "partitions_for", "job_name", "freshness_for", "RagbagHome", "POOL"]
