"""A build started by a parent that ignores SIGTERM (pytest-xdist's workers, some supervisors)
must still end the processes its runs start. An ignored signal is inherited across exec, so
Dagster's ``terminate()`` of the ``tail -F`` that mirrors a step's output did nothing: the tails
outlived the run and held the caller's stdout open, and a caller reading to end of file (the
disk-fault server test) waited for good."""

from __future__ import annotations

import signal
import subprocess
import sys

CHILD = r"""
import subprocess, sys
from ragbag.orchestration import runner
runner._terminable_children()
from dagster._utils.interrupts import setup_interrupt_handlers
setup_interrupt_handlers()  # as a run does: SIGTERM takes SIGINT's handler
tail = subprocess.Popen(["sleep", "120"])
tail.terminate()
try:
    print(tail.wait(timeout=10))  # a bound, not a measurement: SIGTERM ends sleep at once
except subprocess.TimeoutExpired:
    tail.kill()
    print("ignored")
"""


def _ignore_sigterm_and_sigint() -> None:
    """What an xdist worker hands its children (its SigIgn holds both)."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _run_with_sigterm_ignored(script: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=_ignore_sigterm_and_sigint,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip()


def test_a_build_process_whose_parent_ignores_sigterm_can_terminate_what_it_starts():
    assert _run_with_sigterm_ignored(CHILD) == str(-signal.SIGTERM)


def test_without_it_the_child_ignores_sigterm():
    """The condition the test above undoes (so that test can fail). Here the sleep is expected to
    outlive the signal, so its bound is one second, not ten."""
    script = CHILD.replace("runner._terminable_children()", "pass").replace("timeout=10", "timeout=1")
    assert _run_with_sigterm_ignored(script) == "ignored"
