"""The ragbag code location with a Dask executor (the ``scale`` extra: dagster-dask, distributed).

The same assets, jobs, sensors and schedules as ``ragbag.orchestration.definitions``; only the executor
differs: each step of a run is a task on a Dask cluster, chosen per run with run config
``execution: {config: {cluster: {existing: {address: tcp://scheduler:8786}}}}`` or
``{local: {n_workers: 2, threads_per_worker: 1}}`` (the config of dagster-dask's
``dask_executor``). See docs/scale-out.md §2 for what that does to the ``ragbag_lance`` pool.

Why not ``dagster_dask.dask_executor`` itself: dagster-dask 0.29.27 hands the ``DagsterRun`` (a
NamedTuple) to ``Client.submit`` as an argument, and every dask since the task-spec rework
(2024.11) walks tuple arguments looking for futures — down into the run's ``RunOpConcurrency``,
a Dagster ``@record`` that refuses iteration. Every run whose ops have a pool (all of ragbag's)
fails before its first step with "Iteration is not allowed on `@record` RunOpConcurrency". This
executor is dagster-dask's, with the per-step arguments sealed in one object dask does not look
into; and each Dask task is keyed by run id as well as step: dagster-dask keys tasks
``<job>.<step>``, so two runs of one job on one cluster (two sources of a connector) share keys
and the second run silently "succeeds" with the first run's results and none of its own steps.
Scheduling, dependencies and the worker side (``execute_plan`` per step) are dagster-dask's.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import dagster as dg
import dask.distributed
from dagster_dask.executor import DaskExecutor, dask_executor, get_dask_resource_requirements, query_on_dask_worker

from ragbag.core.home import Home
from ragbag.orchestration import definitions as _ragbag
from ragbag.orchestration.dagster_internals import iterate_with_context, raise_execution_interrupts

_CLUSTERS = {  # cluster type -> (module, class), as dagster-dask creates them
    "local": ("dask.distributed", "LocalCluster"),
    "ssh": ("dask.distributed", "SSHCluster"),
    "yarn": ("dask_yarn", "YarnCluster"),
    "pbs": ("dask_jobqueue", "PBSCluster"),
    "moab": ("dask_jobqueue", "MoabCluster"),
    "sge": ("dask_jobqueue", "SGECluster"),
    "lsf": ("dask_jobqueue", "LSFCluster"),
    "slurm": ("dask_jobqueue", "SLURMCluster"),
    "oar": ("dask_jobqueue", "OARCluster"),
    "kube": ("dask_kubernetes", "KubeCluster"),
}


@dataclass(frozen=True)
class _Step:
    """One step's arguments for ``query_on_dask_worker``; not a tuple, so dask leaves it whole."""

    args: tuple


def _run_step(dependencies: list, step: _Step) -> Sequence[dg.DagsterEvent]:
    return query_on_dask_worker(dependencies, *step.args)


class _SealedDaskExecutor(DaskExecutor):
    def execute(self, plan_context, execution_plan):
        dg._check.invariant(plan_context.instance.is_persistent, "Dask execution requires a persistent DagsterInstance")
        job_name = plan_context.job_name
        if self.cluster_type == "existing":
            cluster: Any = self.cluster_configuration["address"]
        elif self.cluster_type in _CLUSTERS:
            module, name = _CLUSTERS[self.cluster_type]
            cluster = getattr(importlib.import_module(module), name)(**self.build_dict(job_name))
        else:
            raise ValueError(f"unknown Dask cluster type {self.cluster_type!r}")
        with dask.distributed.Client(cluster) as client:
            futures, by_key = [], {}
            for level in execution_plan.get_steps_to_execute_by_level():
                for step in level:
                    # Dask runs a step once the futures of its upstream steps are done.
                    dependencies = [by_key[k] for i in step.step_inputs for k in i.dependency_keys]
                    sealed = _Step(
                        (
                            plan_context.reconstructable_job,
                            plan_context.dagster_run,
                            plan_context.run_config,
                            [step.key],
                            plan_context.instance.get_ref(),
                            execution_plan.known_state,
                        )
                    )
                    # The run id in the key: dagster-dask's "<job>.<step>" is the same for every run of
                    # a job, so a shared cluster hands a second concurrent run the first one's tasks.
                    key = f"{job_name}.{plan_context.dagster_run.run_id}.{step.key}"
                    future = client.submit(
                        _run_step, dependencies, sealed, key=key, resources=get_dask_resource_requirements(step.tags)
                    )
                    futures.append(future)
                    by_key[step.key] = future
            done = dask.distributed.as_completed(futures, with_results=True)
            for _, events in iterate_with_context(raise_execution_interrupts, done):
                yield from events


@dg.executor(
    name="dask",
    requirements=dg.multiple_process_executor_requirements(),
    config_schema=dask_executor.config_schema.as_field(),
)
def ragbag_dask_executor(init_context):
    """dagster-dask's ``dask_executor`` (same config), usable with pools; see the module docstring."""
    ((cluster_type, cluster_configuration),) = init_context.executor_config["cluster"].items()
    return _SealedDaskExecutor(cluster_type, cluster_configuration)


# One Definitions object at module scope (Dagster refuses two): the local one, Dask-executed.
@dg.definitions
def defs() -> dg.Definitions:
    return _ragbag.home_definitions(Home(), executor=ragbag_dask_executor)
