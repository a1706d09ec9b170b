"""A full disk and a read-only home: every command that writes ends in one line that names the
cause and the fix, with exit 2 and no traceback; a build says which source failed and why; the
previous index stays readable; the next build once space (or write access) is back completes.

The full disk is a 64 MB tmpfs filled to its last byte while a build embeds; the read-only home is
a bind mount of it remounted read-only (chmod would not stop root, and these tests may run as
root). Both live in a private user and mount namespace (``namespaced.py``): no root needed, and
skipped, saying why, where the machine allows no such namespace. Without one,
``test_a_stage_that_meets_a_full_disk_fails_its_source_in_one_line`` makes a stage's write raise
ENOSPC in-process.
"""

from __future__ import annotations

import errno
import json
import sqlite3
import sys
from pathlib import Path

import namespaced
import pytest
from conftest import cli, strict_json, write
from figures import record

from ragbag.core import storage_faults
from ragbag.core.errors import StorageFault
from ragbag.core.home import Home

N = 80  # new documents: their embedding (torch loaded, ~5,000 tokens) outlasts filling the disk
needs_namespace = pytest.mark.skipif(namespaced.available() is not None, reason=str(namespaced.available()))


def _sources(tmp_path: Path) -> tuple[Path, Path, Path]:
    """notes (built first), more (copied into notes for the build that meets the fault), other."""
    notes = write(
        tmp_path / "notes",
        {
            "harbour.md": "# Harbour\n\nThe lighthouse keeper logs the tide every dawn.\n",
            "kayaks.md": "# Kayaks\n\nTwo kayaks booked for Saturday.\n",
            "garden.md": "# Garden\n\nWater the tomatoes at dusk.\n",
        },
    )
    words = "amber birch cobalt dune ember fjord garnet harbor indigo juniper kelp lagoon".split()
    more = write(
        tmp_path / "more",
        {
            f"r{i:03d}.md": f"# Report {i}\n\nQuillmark{i} survey: " + " ".join(words[(i + j) % 12] for j in range(30))
            for i in range(N)
        },
    )
    other = write(tmp_path / "other", {"x.md": "# Other\n\nAnything.\n"})
    return notes, more, other


def _writers(other: Path) -> list[tuple[list[str], str]]:
    """Commands that write, each with its name as the advice to run it again says it."""
    return [
        (["ragbag", "build"], "build"),
        (["ragbag", "add", "files", "other", str(other)], "add"),
        (["ragbag", "config", "set", "storage.keep_versions", "2h"], "config set"),
        (["ragbag", "remove", "notes"], "remove"),
    ]


def _built_then_grown(notes: Path, more: Path) -> list[list[str]]:
    """The first steps of each scenario: the tmpfs, notes built on it, then N more files in notes
    for the build that meets the fault."""
    return [
        ["mount", "64m"],
        ["ragbag", "add", "files", "notes", str(notes)],
        ["ragbag", "build", "--json"],
        ["sh", f"cp {more}/*.md {notes}/"],
    ]


SEARCH_OLD = ["ragbag", "search", "who logs the tide", "-k", "1", "--json"]
SEARCH_NEW = ["ragbag", "search", "Quillmark77", "--mode", "keyword", "-k", "1", "--json"]
READERS = [SEARCH_OLD, ["ragbag", "status", "--json"], ["ragbag", "list", "--json"]]


def _one_line(result: dict, starts: str) -> str:
    """The step ended in exactly one error line that starts so, exit 2, and nothing like a traceback."""
    text = result["stdout"] + result["stderr"]
    assert "Traceback" not in text and "Stack Trace" not in text and "│" not in result["stderr"], text[-3000:]
    lines = result["stderr"].splitlines()
    assert result["rc"] == 2 and len(lines) == 1, (result["step"], result["rc"], result["stderr"][-3000:])
    assert lines[0].startswith(f"ragbag: error: {starts}"), lines[0]
    return lines[0]


def _readable(result: dict) -> None:
    """The previous index answered."""
    assert result["rc"] == 0, result["stderr"][-3000:]
    if result["step"] == SEARCH_OLD:
        assert strict_json(result["stdout"])[0]["title"] == "Harbour"


def _rebuilt(result: dict) -> None:
    assert result["rc"] == 0, result["stdout"][-3000:] + result["stderr"][-3000:]
    (report,) = strict_json(result["stdout"])
    assert report["status"] == "success" and report["documents"] == 3 + N


def _then_searchable(result: dict) -> None:
    assert result["rc"] == 0, result["stderr"][-3000:]
    assert strict_json(result["stdout"])[0]["title"] == "Report 77"


def _through_a_fault(
    tmp_path: Path, fault: list, recover: list, again: list | None = None
) -> tuple[dict, list[tuple[dict, str]]]:
    """notes built, grown, then the fault step (and ``again``, a step that makes the fault hold
    again after it); the readers, the writers and the search again on it; the recovery step, a
    build and a search for a new document. Checks what every fault shares (the reads served,
    the build after it complete); returns the fault step's result and each writer's with its
    command's name."""
    notes, more, other = _sources(tmp_path)
    writers = _writers(other)
    steps = [
        *_built_then_grown(notes, more),
        fault,
        *([again] if again else []),
        *READERS,
        *(step for step, _ in writers),
        SEARCH_OLD,  # after every failed write too
        recover,
        ["ragbag", "build", "--json"],
        SEARCH_NEW,
    ]
    results = namespaced.run(tmp_path, steps)
    assert results[2]["rc"] == 0, results[2]["stderr"][-3000:]
    first = 6 if again else 5  # the first reader's step
    reads = len(READERS)
    for result in [*results[first : first + reads], results[-4]]:
        _readable(result)
    _rebuilt(results[-2])
    _then_searchable(results[-1])
    return results[4], list(zip(results[first + reads : -4], (name for _, name in writers), strict=True))


@pytest.mark.slow(seconds=150)
@needs_namespace
def test_a_full_disk_fails_in_one_line_keeps_the_index_and_recovers(tmp_path):
    home = tmp_path / "fs" / "home"
    # The failed build's end frees what it held (its temporary files); the writers after it
    # meet the disk full again.
    full, writers = _through_a_fault(
        tmp_path, ["during", "embeddings", ["ragbag", "build", "--json"], ["fill"]], ["unfill"], again=["fill"]
    )
    assert full["caught"], "the build ended before the disk was filled"
    advice = "free space and run `ragbag build` again"
    line = _one_line(full, f"no space left on device under $RAGBAG_HOME ({home}, ")
    assert line.endswith(advice)
    (report,) = json.loads(full["stdout"])  # the report first: which source, and why
    assert report["status"] == "failed" and report["failure"].startswith("no space left on device")
    assert report["failure"].endswith(advice)
    for result, command in writers:
        line = _one_line(result, f"no space left on device under $RAGBAG_HOME ({home}, ")
        assert line.endswith(f"free space and run `ragbag {command}` again"), line
    record("disk_faults", {"full_disk_commands_one_line": 1 + len(writers), "full_disk_reads_served": 4})


@pytest.mark.slow(seconds=90)
@needs_namespace
def test_a_read_only_home_fails_in_one_line_keeps_the_index_and_recovers(tmp_path):
    home = tmp_path / "fs" / "home"
    _, writers = _through_a_fault(tmp_path, ["ro"], ["rw"])
    for result, command in writers:
        line = _one_line(result, f"RAGBAG_HOME {home} is read-only: make it writable")
        assert line.endswith(f"run `ragbag {command}` again"), line
    record("disk_faults", {"read_only_home_commands_one_line": len(writers), "read_only_home_reads_served": 4})


def test_a_stage_that_meets_a_full_disk_fails_its_source_in_one_line(home, tmp_path, monkeypatch, capsys):
    """Where no namespace may be made: LanceDB's own ENOSPC error, raised in-process from the
    documents stage's write, through Dagster, the build's report and the CLI's handler."""
    from ragbag.apps.cli import main
    from ragbag.index.store import Store

    notes, more, _ = _sources(tmp_path)
    cli("add", "files", "notes", str(notes))
    cli("build")
    write(notes, {"new.md": "# New\n\nA new page.\n"})

    def full(*_args, **_kw):
        raise RuntimeError(
            "lance error: LanceError(IO): No space left on device (os error 28), "
            "/root/.cargo/registry/src/index.crates.io/lance-file-13.0.0/src/writer/structural.rs:191:9"
        )

    monkeypatch.setattr(Store, "add", full)
    monkeypatch.setattr(sys, "argv", ["ragbag", "build", "--json"])
    with pytest.raises(SystemExit) as ended:
        main.main()
    out, err = capsys.readouterr()
    assert ended.value.code == 2
    (report,) = strict_json(out)
    assert report["status"] == "failed" and report["failure"].startswith("no space left on device under $RAGBAG_HOME")
    assert err.count("\n") == 1 and err.startswith("ragbag: error: no space left on device under $RAGBAG_HOME")
    assert "free space and run `ragbag build` again" in err
    hits = strict_json(cli("search", "who logs the tide", "-k", "1", "--json").stdout)
    assert hits[0]["title"] == "Harbour"


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        (OSError(errno.ENOSPC, "No space left on device"), storage_faults.SPACE),
        (OSError(errno.EDQUOT, "Disk quota exceeded"), storage_faults.QUOTA),
        (OSError(errno.EROFS, "Read-only file system"), storage_faults.READ_ONLY),
        (sqlite3.OperationalError("database or disk is full"), storage_faults.SPACE),
        (sqlite3.OperationalError("attempt to write a readonly database"), storage_faults.READ_ONLY),
        (
            RuntimeError(
                "lance error: LanceError(IO): Generic LocalFileSystem error: Unable to copy data to file: Read-only file system (os error 30)"
            ),
            storage_faults.READ_ONLY,
        ),
        (sqlite3.OperationalError("disk I/O error"), storage_faults.IO),  # this disk has room: not "full"
        (ValueError("disk space is a nice phrase"), None),
        (OSError(errno.ENOENT, "No such file or directory"), None),
    ],
)
def test_storage_faults_are_told_by_errno_and_words_along_the_chain(tmp_path, error, kind):
    try:
        try:
            raise error
        except Exception as inner:
            raise RuntimeError("(sqlalchemy.exc.OperationalError) wrapped") from inner
    except RuntimeError as outer:
        fault = storage_faults.explain(outer, Home(tmp_path), "add")
    if kind is None:
        assert fault is None
    else:
        assert isinstance(fault, StorageFault) and fault.kind == kind
        assert str(fault).endswith("run `ragbag add` again") and "\n" not in str(fault)


# A server's two builds in one process (`ragbag mcp`'s build tool, the search page's refresh): the
# first meets the full disk, the second runs once the filler is gone. Prints what each returned.
SERVER = r"""
import faulthandler, json, sys, threading
faulthandler.dump_traceback_later(400, exit=True)  # a hang shows where (every thread), then ends
from pathlib import Path
from ragbag.orchestration.runner import BuildsStopped, run_builds
from ragbag.core.home import Home

home, out, done = Home(), {}, []
try:
    out["first"] = run_builds(home, [home.source("notes")], show_progress=False)[0]["status"]
except BuildsStopped as e:
    out["first"] = str(e)
Path(sys.argv[1]).unlink()  # space is back
again = threading.Thread(target=lambda: done.append(run_builds(home, [home.source("notes")], False)), daemon=True)
again.start()
again.join(240)  # a hang guard: a run the disk cut short holds the pool, and this process is alive
out["again"] = done[0][0] if done else None
print(json.dumps(out))
"""


@pytest.mark.slow(seconds=90)
@needs_namespace
def test_a_server_builds_again_once_space_is_back(tmp_path):
    """The disk failed Dagster's own writes: the run's end was never recorded and its pool slot
    stays claimed by a live process, which no reaper frees. The same process building again
    settles that run first instead of waiting on the pool for good."""
    notes, more, _ = _sources(tmp_path)
    (tmp_path / "server.py").write_text(SERVER)
    server = ["sh", f"{sys.executable} {tmp_path / 'server.py'} {tmp_path / 'fs' / 'filler'}"]
    steps = [*_built_then_grown(notes, more), ["during", "embeddings", server, ["fill"]]]
    result = namespaced.run(tmp_path, steps)[-1]
    assert result["caught"] and result["rc"] == 0, result["stderr"][-3000:]
    out = json.loads(result["stdout"].strip().splitlines()[-1])
    assert out["first"].startswith("no space left on device under $RAGBAG_HOME")
    assert out["again"] is not None, "the second build waited on the pool for good"
    assert out["again"]["status"] == "success" and out["again"]["documents"] == 3 + N
