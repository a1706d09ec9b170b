"""Shared fixtures: a private RAGBAG_HOME per test, a real Dagster instance, the real CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import dagster as dg
import pytest

import connectors
from assets.chain import RagbagHome, connector_chain, partitions_for
from ragbag.home import Home

RAGBAG = str(Path(sys.executable).parent / "ragbag")


@pytest.fixture
def home(tmp_path, monkeypatch) -> Home:
    root = tmp_path / "home"
    monkeypatch.setenv("RAGBAG_HOME", str(root))
    monkeypatch.setenv("DAGSTER_HOME", str(root / "dagster"))
    return Home(root).ensure()


@pytest.fixture(scope="session")
def instance():
    with dg.instance_for_test() as inst:
        yield inst


def materialize_source(home: Home, instance, name: str) -> dict[str, dict]:
    """Run one source's whole chain through Dagster; returns each asset's metadata."""
    src = home.source(name)
    pdef = partitions_for(src.connector)
    if not instance.has_dynamic_partition(pdef.name, name):
        instance.add_dynamic_partitions(pdef.name, [name])
    result = dg.materialize(
        connector_chain(src.connector, connectors.get(src.connector)),
        partition_key=name, instance=instance,
        resources={"ragbag": RagbagHome(root=str(home.root))},
    )
    assert result.success
    out = {}
    for ev in result.get_asset_materialization_events():
        md = ev.event_specific_data.materialization.metadata
        out[ev.asset_key.path[-1]] = {k: v.value for k, v in md.items()}
    return out


def write(root: Path, files: dict[str, str | bytes]) -> Path:
    for rel, body in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        (p.write_bytes if isinstance(body, bytes) else p.write_text)(body)
    return root


def cli(*args: str, env: dict | None = None, check: bool = True, timeout: int = 300) -> subprocess.CompletedProcess:
    """Run the installed `ragbag` entry point in a subprocess."""
    proc = subprocess.run(
        [RAGBAG, *args], capture_output=True, text=True, timeout=timeout,
        env={**os.environ, **(env or {})},
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"ragbag {' '.join(args)} -> {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
    return proc


def cli_json(*args: str, **kw):
    return json.loads(cli(*args, "--json", **kw).stdout)


def split_read(items) -> tuple[dict, set, list, dict]:
    """A connector read split into (documents by native id, Seen ids, ReadErrors, the cursor),
    asserting ids are unique and exactly one Cursor comes last."""
    from ragbag.documents import Cursor, Document, ReadError, Seen

    docs, seen, errors, cursors = {}, set(), [], []
    for item in items:
        if isinstance(item, Document):
            assert item.native_id not in docs
            docs[item.native_id] = item
        elif isinstance(item, Seen):
            seen.add(item.native_id)
        elif isinstance(item, ReadError):
            errors.append(item)
        else:
            assert isinstance(item, Cursor)
            cursors.append(item.state)
    assert len(cursors) == 1
    return docs, seen, errors, cursors[0]
