"""Which process runs which build step, so that a step whose process died is noticed.

Dagster hands the LanceDB writers' pool slot to a step and takes it back when the step ends;
a step whose process is killed never ends, so its slot stays taken and every build waiting on
the pool waits forever. Each step therefore holds a lease while it runs: a file naming the
process (pid and start time, so a recycled pid is not mistaken for the holder). Whoever waits
can tell a dead holder from a slow one and free its slot.

Dagster's pool alone does not make the writers exclusive: on SQLite storage its slot claim reads
a free slot and then takes it in two statements, so two processes claiming at the same moment
can both take the one slot (seen once in CI: two `documents` steps overlapped). Each step
therefore also holds an OS lock on one file of the home while it writes (:func:`exclusive`);
the kernel drops it with a killed process, so it can never be left behind.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path


def identity(pid: int | None = None) -> str:
    """``pid:start`` of a process (start: clock ticks after boot, Linux; empty elsewhere)."""
    pid = os.getpid() if pid is None else pid
    return f"{pid}:{_start_time(pid)}"


def alive(pid: int, start: str = "") -> bool:
    """Whether the process is running (and, given its start time, is the same process).

    A zombie is dead: killed, its files and OS locks gone, it keeps its pid and start time only
    until a parent that never calls ``wait()`` does; taken for alive, it would hold a pool slot
    for good."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True  # someone else's process: alive, and not ours to judge
    stat = _stat(pid)
    if stat is None:
        return not _zombie_by_psutil(pid)
    return stat[0] not in _DEAD_STATES and (not start or stat[19] == start)


def held_by(identity_: str) -> bool:
    """Whether the process an :func:`identity` names is still running."""
    pid, _, start = identity_.partition(":")
    return pid.isdigit() and alive(int(pid), start)


@contextmanager
def hold(folder: Path, run_id: str, step: str) -> Iterator[Path]:
    """Hold the lease of one step of one run while the block runs."""
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = lease_path(folder, run_id, step)
    path.write_text(identity())
    try:
        yield path
    finally:
        path.unlink(missing_ok=True)


@contextmanager
def exclusive(path: Path, waiting: Callable[[], None] | None = None) -> Iterator[float]:
    """Hold an exclusive OS lock on ``path`` while the block runs; yields the seconds waited.
    ``waiting`` is called first when another process holds it (to say why nothing happens)."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        started = time.monotonic()
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if waiting is not None:
                waiting()
            fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            yield time.monotonic() - started
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def lease_path(folder: Path, run_id: str, step: str) -> Path:
    return folder / f"{run_id}.{step}.lease"


def holder(folder: Path, run_id: str, step: str) -> str | None:
    """The identity holding a step's lease; None when the step holds none (not started yet,
    or finished)."""
    try:
        return lease_path(folder, run_id, step).read_text().strip() or None
    except OSError:
        return None


def run_held(folder: Path, run_id: str) -> bool:
    """Whether a running process holds the lease of one of the run's steps."""
    for path in folder.glob(f"{run_id}.*.lease") if folder.is_dir() else ():
        try:
            if held_by(path.read_text().strip()):
                return True
        except OSError:
            continue  # released meanwhile
    return False


def release_dead(folder: Path) -> list[tuple[str, str]]:
    """Delete the leases of dead processes; returns their (run id, step)."""
    gone = []
    for path in folder.glob("*.lease") if folder.is_dir() else ():
        run_id, _, rest = path.name.partition(".")
        try:
            who = path.read_text().strip()
        except OSError:
            continue
        if who and not held_by(who):
            path.unlink(missing_ok=True)
            gone.append((run_id, rest.removesuffix(".lease")))
    return gone


# /proc/<pid>/stat states of a process that has exited: zombie, dead (being reaped).
_DEAD_STATES = ("Z", "X", "x")


def _stat(pid: int) -> list[str] | None:
    """/proc/<pid>/stat's fields after the command name (state first, start time at 19); None
    where there is no /proc (macOS) or the process just went."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()  # the name, in parentheses, may hold spaces


def _zombie_by_psutil(pid: int) -> bool:
    """Without /proc: psutil's reading of the process state, where psutil is installed."""
    try:
        import psutil
    except ImportError:
        return False
    try:
        return bool(psutil.Process(pid).status() == psutil.STATUS_ZOMBIE)
    except psutil.Error:
        return False


def _start_time(pid: int) -> str:
    stat = _stat(pid)
    return stat[19] if stat else ""  # field 22 of /proc/<pid>/stat
