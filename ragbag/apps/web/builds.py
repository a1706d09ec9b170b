"""The status page's "Refresh now": the build ``ragbag build SOURCE`` runs, in the background.

``ragbag.orchestration.runner.run_builds`` is the CLI's own path (the change check that skips an
unchanged source, one Dagster run of the source's partition, the report), so a refresh from
the page is a run like any other in the Dagster UI's history. It runs in one worker thread,
one build at a time: a second request while one runs is refused (409), never queued behind
it unseen. The stages' progress (``ragbag.core.progress``) and then the report are kept in
``Refresher.state`` for the page to poll.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from ragbag.core import progress
from ragbag.core.errors import RagbagError
from ragbag.core.home import Home


class Busy(RagbagError):
    """A build is already running."""


class Refresher:
    """One background build at a time for one home, and what the last one did."""

    def __init__(self, home: Home):
        self.home = home
        self._lock = threading.Lock()
        self._state: dict[str, Any] = {"running": False, "source": None}
        self._thread: threading.Thread | None = None

    def state(self) -> dict[str, Any]:
        with self._lock:
            return dict(self._state)

    def start(self, name: Any) -> dict[str, Any]:
        """Start building source ``name`` (a RagbagError when there is none; ``Busy`` while
        another build from this page runs). Returns the state with the build started."""
        if not isinstance(name, str) or not name:
            raise RagbagError("say which source to refresh")
        source = self.home.source(name)  # an unknown name fails with the CLI's message
        with self._lock:
            if self._state["running"]:
                raise Busy(f"a build of {self._state['source']!r} is running; wait for it to finish")
            self._state = {
                "running": True,
                "source": source.name,
                "started": time.time(),
                "stage": None,
                "done": 0,
                "total": None,
                "report": None,
                "error": None,
            }
            self._thread = threading.Thread(target=self._run, args=(source,), name="ragbag-refresh", daemon=True)
            self._thread.start()
            return dict(self._state)

    def wait(self, timeout: float | None = None) -> dict[str, Any]:
        """The state once the running build (if any) is over; for tests and shutdown."""
        thread = self._thread
        if thread is not None:
            thread.join(timeout)
        return self.state()

    def _progress(self, stage: str, source: str, done: int, total: int | None) -> None:
        with self._lock:
            self._state.update(stage=stage, done=done, total=total)

    def _run(self, source: Any) -> None:
        from ragbag.orchestration.runner import run_builds

        report: dict[str, Any] | None = None
        error: str | None = None
        try:
            with progress.listening(self._progress):
                report = run_builds(self.home, [source], show_progress=False)[0]
            if report.get("status") != "success":
                error = report.get("failure") or "the build failed (see its run in the Dagster UI)"
        except RagbagError as e:
            error = str(e)
        except Exception as e:  # the page must learn how it ended whatever happened
            error = f"{type(e).__name__}: {e}"
        with self._lock:
            self._state.update(
                running=False,
                report=_summary(report) if report else None,
                error=error,
                seconds=round(time.time() - self._state["started"], 2),
            )


def _summary(report: dict[str, Any]) -> dict[str, Any]:
    """The fields of a build report the page shows."""
    keys = ("source", "status", "unchanged", "documents", "added", "changed", "deleted", "chunks")
    out = {k: report.get(k) for k in keys}
    out.update(run_id=report.get("run_id"), errors=len(report.get("errors") or []), warnings=report.get("warnings"))
    return out
