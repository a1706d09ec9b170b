"""A build waiting on the LanceDB writers' pool goes on when the build holding it is killed, also
when its parent never reaps it (a zombie keeps its pid until then)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import RAGBAG, cli, strict_json, write
from figures import record

from ragbag.core import leases

N = 400  # documents of the holder: embedding them outlasts the moment of the kill


def _until_queued(home, holder_run: str, timeout: float = 120) -> None:
    """Wait until a step of another run than the holder's waits for the pool's slot (started
    after the waiter's own start-up reap, so only a reaper that keeps watching can free it)."""
    import dagster as dg

    from ragbag.orchestration.chain import POOL

    with dg.DagsterInstance.from_config(str(home.dagster_home)) as instance:
        deadline = time.time() + timeout
        while time.time() < deadline:
            info = instance.event_log_storage.get_concurrency_info(POOL)
            if any(p.run_id != holder_run for p in info.pending_steps):
                return
            time.sleep(0.1)
    raise AssertionError("the waiting build never queued on the pool")


def _two_sources(tmp_path) -> None:
    """big, whose build embeds for seconds, and small, whose build waits for it."""
    words = "amber birch cobalt dune ember fjord garnet harbor indigo juniper kelp lagoon".split()
    big = write(
        tmp_path / "big",
        {f"r{i:03d}.md": f"# Report {i}\n\n" + " ".join(words[(i + j) % 12] for j in range(40)) for i in range(N)},
    )
    small = write(tmp_path / "small", {"note.md": "# Note\n\nThe lighthouse keeper logs the tide every dawn.\n"})
    cli("add", "files", "big", str(big))
    cli("add", "files", "small", str(small))


def _embedding_lease(home, holder_pid: int) -> Path:
    """The lease of the holder's embeddings step, once it holds the pool's slot."""
    deadline = time.time() + 120
    while time.time() < deadline and not list(home.lease_dir.glob("*embeddings*.lease")):
        assert leases.alive(holder_pid), "the holder finished before it held the pool"
        time.sleep(0.1)
    (lease,) = home.lease_dir.glob("*embeddings*.lease")  # holding the slot, embedding for seconds
    assert leases.held_by(lease.read_text())
    return lease


def _kill_while_small_waits(home, holder_pid: int) -> tuple[subprocess.CompletedProcess, float]:
    """Start `ragbag build small` while the holder embeds, kill -9 the holder once small waits
    on the pool; small's outcome and how long after the kill it finished."""
    lease = _embedding_lease(home, holder_pid)
    waiter = subprocess.Popen(
        [RAGBAG, "build", "small", "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        _until_queued(home, lease.name.split(".")[0])  # the waiter's step waits on the pool now
        assert leases.alive(holder_pid) and waiter.poll() is None and lease.exists(), "the holder let go too soon"
        os.kill(holder_pid, signal.SIGKILL)
        killed_at = time.time()
        out, err = waiter.communicate(timeout=180)  # without a reaper: blocked by the pool forever
        return subprocess.CompletedProcess(waiter.args, waiter.returncode, out, err), time.time() - killed_at
    finally:
        if waiter.poll() is None:
            waiter.kill()
            waiter.wait()


def _assert_small_built(home, waiter: subprocess.CompletedProcess) -> None:
    assert waiter.returncode == 0, waiter.stderr
    (report,) = strict_json(waiter.stdout)
    assert report["status"] == "success" and report["documents"] == 1
    assert not list(home.lease_dir.glob("*.lease"))  # the dead holder's lease is gone too


@pytest.mark.slow(seconds=90)
def test_a_waiting_build_goes_on_when_the_holder_is_killed(home, tmp_path):
    _two_sources(tmp_path)
    holder = subprocess.Popen([RAGBAG, "build", "big", "--json"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        waiter, waited = _kill_while_small_waits(home, holder.pid)
    finally:
        holder.kill()
        holder.wait(30)
    _assert_small_built(home, waiter)
    record("kills", {"slot_holder_killed": 1, "waiter_finished_after_s": round(waited, 1)})

    hits = strict_json(cli("search", "who records the tides", "-k", "1", "--json").stdout)
    assert hits[0]["title"] == "Note"


# A parent that starts a build and never wait()s for it: killed, the build stays a zombie (its pid
# and start time still those its lease names) until this parent goes.
NEGLECTFUL_PARENT = (
    "import subprocess, sys, time\n"
    "child = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
    "print(child.pid, flush=True)\n"
    "time.sleep(3600)\n"
)


def _state(pid: int) -> str:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]


@pytest.mark.slow(seconds=90)
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads process states from /proc (Linux)")
def test_a_killed_holder_left_a_zombie_by_its_parent_frees_the_pool(home, tmp_path):
    """A dead holder that nobody has reaped is still dead: the waiting build goes on."""
    _two_sources(tmp_path)
    parent = subprocess.Popen(
        [sys.executable, "-c", NEGLECTFUL_PARENT, RAGBAG, "build", "big", "--json"], stdout=subprocess.PIPE, text=True
    )
    try:
        holder = int(parent.stdout.readline())
        waiter, waited = _kill_while_small_waits(home, holder)
        assert _state(holder) == "Z"  # killed, not reaped: its lease still names a pid that exists
    finally:
        parent.kill()  # its zombie child goes to init, which reaps it
        parent.wait(30)
    _assert_small_built(home, waiter)
    record("kills", {"zombie_holder": 1, "waiter_finished_after_zombie_s": round(waited, 1)})


def test_the_reaper_sensor_frees_a_dead_steps_slot_and_spares_a_live_one(home):
    """Under `dagster dev` the daemon's runs wait on the pool too: the `ragbag_reaper` sensor
    frees what a dead step holds (a lease naming a finished process) and nothing else."""
    import dagster as dg

    from ragbag.orchestration.chain import POOL
    from ragbag.orchestration.pool import ensure_pool
    from ragbag.orchestration.resources import RagbagHome
    from ragbag.orchestration.sensors import reaper_sensor

    gone = subprocess.Popen(["true"])
    gone.wait()
    with dg.DagsterInstance.from_config(str(home.dagster_home)) as instance:
        ensure_pool(instance, home)
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
