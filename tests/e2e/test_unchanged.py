"""A refresh that finds nothing starts no run: the change fingerprint (ragbag.pipeline.changes),
the unchanged report, how Dagster records it, and every way a source must still be rebuilt."""

from __future__ import annotations

import json
import os
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import dagster as dg
from conftest import build_in_process, cli, cli_json, write

from ragbag.core.home import Home
from ragbag.index import published
from ragbag.pipeline import changes, ingest

DOCS = {
    "lisbon.md": "# Lisbon\n\nThe gate code in Lisbon is 4711.\n",
    "porto.md": "# Porto\n\nPorto trains leave at nine.\n",
}


def _runs(home: Home) -> int:
    with dg.DagsterInstance.from_config(str(home.dagster_home)) as instance:
        return len(instance.get_runs())


def _reported(home: Home, name: str) -> list[dict]:
    """The materialisations of the publish asset of `files` source ``name`` that no run made."""
    with dg.DagsterInstance.from_config(str(home.dagster_home)) as instance:
        records = instance.fetch_materializations(
            dg.AssetRecordsFilter(asset_key=dg.AssetKey(["files", "bm25"]), asset_partitions=[name]), limit=100
        ).records
        return [{k: v.value for k, v in r.asset_materialization.metadata.items()} for r in records if not r.run_id]


def _one(args: tuple[str, ...] = ()) -> dict:
    (report,) = cli_json("build", "notes", *args)
    return report


def test_a_build_that_finds_nothing_starts_no_run_and_anything_that_matters_makes_it_run(home, tmp_path):
    docs = write(tmp_path / "notes", DOCS)
    cli("add", "files", "notes", str(docs))
    first = _one()
    assert first["run_id"] and first["unchanged"] is False and first["chunks_embedded"] == 2
    runs = _runs(home)

    again = _one()  # nothing changed: no run, the report a build gives, taken from the index
    assert again["run_id"] is None and again["unchanged"] is True and again["status"] == "success"
    assert (again["documents"], again["chunks"], again["chunks_embedded"], again["added"]) == (2, 2, 0, 0)
    assert again["graph"]["profile"] == "fast" and again["errors"] == []
    assert _runs(home) == runs
    (shown,) = _reported(home, "notes")  # Dagster shows it as a materialisation without a run
    assert shown["unchanged"] is True and shown["chunks"] == 2
    assert "unchanged (no run)" in cli("build", "notes").stdout
    assert _one(("--force",))["run_id"]  # --force runs anyway
    runs = _runs(home)

    (docs / "porto.md").write_text("# Porto\n\nPorto trains now leave at ten.\n")  # an edit
    edited = _one()
    assert edited["run_id"] and edited["changed"] == 1 and edited["chunks_embedded"] == 1
    assert _one()["run_id"] is None

    os.utime(docs / "lisbon.md", ns=(1, 1))  # a touch alone: read again, nothing re-embedded
    touched = _one()
    assert touched["run_id"] and touched["chunks_embedded"] == 0

    cli("config", "set", "graph.profile", "compact")  # a setting: built again under it
    assert _one()["graph"]["profile"] == "compact"
    assert _one()["run_id"] is None
    assert _runs(home) == runs + 3

    rows = home.index_dir("files", "notes") / "current" / published.ROWS
    rows.unlink()  # damage: never "unchanged", the build repairs it
    cli("config", "set", "graph.profile", "fast")
    repaired = _one()
    # two current chunks, and the one of porto.md's first version (kept: see test_versions.py)
    assert repaired["run_id"] and published.published(home, home.source("notes"))["chunks"] == 3


def test_a_killed_build_is_never_taken_for_a_finished_one(home, tmp_path):
    """The fingerprint a read started from counts only once its publish is done: a build killed
    after reading changed files (here: the read stage alone) runs in full next time."""
    docs = write(tmp_path / "notes", DOCS)
    home.add_source("notes", "files", str(docs), known=("files",))
    build_in_process(home, "notes")
    src = home.source("notes")
    assert changes.unchanged(home, src) is not None
    write(docs, {"faro.md": "# Faro\n\nThe ferry to the islands leaves at noon.\n"})
    from ragbag import connectors
    from ragbag.index.store import Store

    ingest.ingest(Store(home.lance_uri), home, src, connectors.get("files").read)  # then "killed"
    assert changes.unchanged(home, src) is None
    assert build_in_process(home, "notes")["chunks"] == 3
    assert changes.unchanged(home, src) is not None


def test_damaged_tables_are_seen_on_disk_without_lancedb(home, tmp_path):
    docs = write(tmp_path / "notes", DOCS)
    home.add_source("notes", "files", str(docs), known=("files",))
    build_in_process(home, "notes")
    src = home.source("notes")
    assert changes.unchanged(home, src) is not None
    tag = home.lance_dir / "chunks.lance" / "_refs" / "tags" / "pub-notes.json"
    body = tag.read_text()
    tag.write_text(json.dumps({**json.loads(body), "version": 0}))
    assert changes.unchanged(home, src) is None
    tag.write_text(body)
    manifest = home.index_dir("files", "notes") / "current" / published.MANIFEST
    saved = manifest.read_text()
    data = json.loads(saved)
    data["versions"]["embeddings"] = 10_000
    manifest.write_text(json.dumps(data))  # a pinned version that is not on disk
    assert changes.unchanged(home, src) is None


def test_sqlite_write_ahead_logs_count_as_changes(tmp_path):
    db = tmp_path / "chat.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE m (t TEXT)")
    before = changes.tree_fingerprint(db)
    (tmp_path / "chat.db-shm").write_bytes(b"\0" * 32)  # shared memory: touched by mere readers
    assert changes.tree_fingerprint(db) == before
    (tmp_path / "chat.db-wal").write_bytes(b"\1" * 32)  # a message not yet checkpointed
    assert changes.tree_fingerprint(db) != before


def test_a_source_whose_files_are_not_walked_here_always_runs(home, tmp_path):
    docs = write(tmp_path / "notes", DOCS)
    home.add_source("notes", "files", str(docs), known=("files",), options={"follow_links_outside": True})
    assert changes.source_fingerprint(home, home.source("notes")) is None


def test_the_schedule_records_an_unchanged_source_instead_of_running_it(home, tmp_path, instance):
    from ragbag.orchestration.chain import RagbagHome
    from ragbag.orchestration.definitions import build_definitions

    defs = build_definitions(["files"])
    for name in ("same", "edited"):
        home.add_source(name, "files", str(write(tmp_path / name, DOCS)), known=("files",))
        build_in_process(home, name)
    instance.add_dynamic_partitions("files_sources", ["same", "edited"])
    (tmp_path / "edited" / "porto.md").write_text("# Porto\n\nNo trains on Sundays.\n")
    ctx = dg.build_schedule_context(
        instance=instance,
        scheduled_execution_time=datetime(2026, 1, 5, 10, 0, tzinfo=UTC),
        resources={"ragbag": RagbagHome(root=str(home.root))},
        repository_def=defs.get_repository_def(),
    )
    requests = defs.resolve_schedule_def("refresh_files").evaluate_tick(ctx).run_requests
    assert [r.partition_key for r in requests] == ["edited"]
    (record,) = instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=dg.AssetKey(["files", "bm25"]), asset_partitions=["same"]), limit=10
    ).records
    assert not record.run_id and record.asset_materialization.metadata["unchanged"].value is True


def test_remove_forgets_the_change_records_and_a_new_source_of_that_name_builds(home, tmp_path):
    docs = write(tmp_path / "notes", DOCS)
    cli("add", "files", "notes", str(docs))
    _one()
    assert _one()["run_id"] is None and list(Path(home.state_dir).glob("notes.*.json"))
    cli("remove", "notes")
    assert not list(Path(home.state_dir).glob("notes.*"))
    cli("add", "files", "notes", str(docs))
    assert _one()["run_id"]
