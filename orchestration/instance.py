"""The home's Dagster instance: ``$RAGBAG_HOME/dagster``, shared by the CLI's runs and `dagster dev`.

Its ``dagster.yaml`` is ragbag's only in four keys: telemetry off (nothing leaves the machine),
the UI's first-visit "join the community" dialog off (``nux``: a local user opens the UI to see
their builds), one run step at a time in the default pool (one writer), and no capture of the
steps' stdout and stderr (``compute_logs``): ragbag's stages print nothing (what they say is in
each run's events and the build's report), and capturing it started two ``tail -F`` processes a
run. A user's other keys (Postgres storage, docs/scale-out.md) are kept, and so are their own
values for these four.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import yaml

from ragbag.core import leases
from ragbag.core.errors import RagbagError
from ragbag.core.home import Home
from ragbag.core.private import write_private

_DAGSTER_YAML = """\
telemetry:
  enabled: false
nux:
  enabled: false
concurrency:
  pools:
    default_limit: 1
compute_logs:
  module: dagster._core.storage.noop_compute_log_manager
  class: NoOpComputeLogManager
"""


def use_home(home: Home) -> Home:
    """The home made, its ``dagster.yaml`` written, and Dagster and the assets' resource pointed
    at it: called before Dagster is imported."""
    home.ensure()
    ensure_dagster_yaml(home.dagster_home / "dagster.yaml")
    os.environ["DAGSTER_HOME"] = str(home.dagster_home)
    os.environ["RAGBAG_HOME"] = str(home.root)
    return home


def dagster_instance(home: Home) -> Any:
    """The Dagster instance the CLI and `dagster dev` share, in this home.

    Opened one process at a time (a lock in the home): the first open creates the SQLite
    storages, and two first builds creating them at once each stamp the schema's version, which
    leaves the home's instance unopenable ("more than one head").
    """
    use_home(home)
    import dagster as dg

    with leases.exclusive(home.state_dir / "dagster-instance.lock"):
        return dg.DagsterInstance.get()


def ensure_dagster_yaml(path: Path) -> None:
    """Telemetry and the UI's dialog off and one writer at a time, also in a dagster.yaml written
    by an older ragbag or edited by the user (their other settings are kept)."""
    wanted = yaml.safe_load(_DAGSTER_YAML)
    try:
        current = (yaml.safe_load(path.read_text(encoding="utf-8")) or {}) if path.exists() else {}
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        raise RagbagError(f"{path}: invalid YAML" + (f" (line {mark.line + 1})" if mark else "")) from None
    merged = {**current, **{k: v for k, v in wanted.items() if k not in current}}
    if merged != current or not path.exists():
        write_private(path, yaml.safe_dump(merged, sort_keys=False))
