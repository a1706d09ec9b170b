"""A build waiting on the LanceDB writers' pool goes on when the build holding it is killed."""

from __future__ import annotations

import os
import signal
import subprocess
import time

import pytest
from conftest import RAGBAG, cli, strict_json, write
from figures import record

from ragbag.core import leases

N = 400  # documents of the holder: embedding them outlasts the moment of the kill


def _until_queued(home, holder_run: str, timeout: float = 120) -> None:
    """Wait until a step of another run than the holder's waits for the pool's slot (started
    after the waiter's own start-up reap, so only a reaper that keeps watching can free it)."""
    import dagster as dg

    from ragbag.assets.chain import POOL

    with dg.DagsterInstance.from_config(str(home.dagster_home)) as instance:
        deadline = time.time() + timeout
        while time.time() < deadline:
            info = instance.event_log_storage.get_concurrency_info(POOL)
            if any(p.run_id != holder_run for p in info.pending_steps):
                return
            time.sleep(0.1)
    raise AssertionError("the waiting build never queued on the pool")


@pytest.mark.slow(seconds=90)
def test_a_waiting_build_goes_on_when_the_holder_is_killed(home, tmp_path):
    words = "amber birch cobalt dune ember fjord garnet harbor indigo juniper kelp lagoon".split()
    big = write(
        tmp_path / "big",
        {f"r{i:03d}.md": f"# Report {i}\n\n" + " ".join(words[(i + j) % 12] for j in range(40)) for i in range(N)},
    )
    small = write(tmp_path / "small", {"note.md": "# Note\n\nThe lighthouse keeper logs the tide every dawn.\n"})
    cli("add", "files", "big", str(big))
    cli("add", "files", "small", str(small))

    holder = subprocess.Popen([RAGBAG, "build", "big", "--json"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    waiter = None
    try:
        deadline = time.time() + 120
        while time.time() < deadline and not list(home.lease_dir.glob("*embeddings*.lease")):
            assert holder.poll() is None, "the holder finished before it held the pool"
            time.sleep(0.1)
        (lease,) = home.lease_dir.glob("*embeddings*.lease")  # holding the slot, embedding for seconds
        assert leases.held_by(lease.read_text())
        waiter = subprocess.Popen(
            [RAGBAG, "build", "small", "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        _until_queued(home, lease.name.split(".")[0])  # the waiter's step waits on the pool now
        assert holder.poll() is None and waiter.poll() is None and lease.exists(), "the holder let go too soon"
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait(30)
        killed_at = time.time()
        out, err = waiter.communicate(timeout=180)  # without a reaper: blocked by the pool forever
        waited = time.time() - killed_at
    finally:
        for proc in (holder, waiter):
            if proc is not None and proc.poll() is None:
                proc.kill()
    assert waiter.returncode == 0, err
    (report,) = strict_json(out)
    assert report["status"] == "success" and report["documents"] == 1
    assert not list(home.lease_dir.glob("*.lease"))  # the dead holder's lease is gone too
    record("kills", {"slot_holder_killed": 1, "waiter_finished_after_s": round(waited, 1)})

    hits = strict_json(cli("search", "who records the tides", "-k", "1", "--json").stdout)
    assert hits[0]["title"] == "Note"


def test_the_reaper_sensor_frees_a_dead_steps_slot_and_spares_a_live_one(home):
    """Under `dagster dev` the daemon's runs wait on the pool too: the `ragbag_reaper` sensor
    frees what a dead step holds (a lease naming a finished process) and nothing else."""
    import dagster as dg

    from ragbag.assets.chain import POOL
    from ragbag.assets.pool import ensure_pool
    from ragbag.assets.resources import RagbagHome
    from ragbag.pipelines.sensors import reaper_sensor

    gone = subprocess.Popen(["true"])
    gone.wait()
    with dg.DagsterInstance.from_config(str(home.dagster_home)) as instance:
        ensure_pool(instance)
        storage = instance.event_log_storage
        storage.initialize_concurrency_limit_to_default(POOL)
        storage.set_concurrency_slots(POOL, 2)
        for run, who in (("dead-run", leases.identity(gone.pid)), ("live-run", leases.identity())):
            assert storage.claim_concurrency_slot(POOL, run, "files__embeddings").is_claimed
            home.lease_dir.mkdir(parents=True, exist_ok=True)
            leases.lease_path(home.lease_dir, run, "files__embeddings").write_text(who)
        context = dg.build_sensor_context(instance=instance, resources={"ragbag": RagbagHome(root=str(home.root))})
        result = reaper_sensor(context)
        held = {s.run_id for s in storage.get_concurrency_info(POOL).claimed_slots}
    assert held == {"live-run"} and "dead-run" in str(result)
    assert [p.name for p in home.lease_dir.glob("*.lease")] == ["live-run.files__embeddings.lease"]


def test_the_writers_lock_is_exclusive_and_dies_with_its_holder(home):
    """Two processes never write the shared tables at once, even when Dagster's SQLite slot
    claim races; a killed holder's lock is gone at once, with nothing to reap."""
    import fcntl
    import sys

    code = (
        "import sys, time; from pathlib import Path; from ragbag.core import leases\n"
        "with leases.exclusive(Path(sys.argv[1])):\n"
        "    print('held', flush=True); time.sleep(600)\n"
    )
    holder = subprocess.Popen([sys.executable, "-c", code, str(home.writer_lock)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        fd = os.open(home.writer_lock, os.O_RDWR)
        try:
            with pytest.raises(BlockingIOError):
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            holder.send_signal(signal.SIGKILL)
            holder.wait(30)
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # free the moment its holder died
        finally:
            os.close(fd)
    finally:
        holder.kill()
        holder.wait()
    assert oct(home.writer_lock.stat().st_mode & 0o777) == "0o600"
