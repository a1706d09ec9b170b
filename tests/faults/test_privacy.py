"""Private by default: every path under the home is owner-only, nothing is written outside it,
and `ragbag remove` leaves no byte of the source behind: neither in any file's raw bytes nor in
the LanceDB tables decoded (``decoded``: compressed columns, every version, deleted rows)."""

from __future__ import annotations

import os
import random
import stat
import subprocess
from datetime import timedelta
from pathlib import Path

import lance
import lancedb
import pyarrow as pa
import pytest
from conftest import RAGBAG, cli, strict_json, write
from decoded import holding, in_bytes
from figures import record

from ragbag.index.store import PUBLISHED, Store

MARKER = "Zqxvorpel"  # in one source's text only; a removed source must leave no copy of it


def _loose(root: Path) -> list[str]:
    """Paths under root that group or others may read, write or enter (links aside)."""
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        for name in [*dirnames, *filenames]:
            st = os.lstat(os.path.join(dirpath, name))
            if not stat.S_ISLNK(st.st_mode) and st.st_mode & 0o077:
                out.append(f"{oct(stat.S_IMODE(st.st_mode))} {os.path.relpath(os.path.join(dirpath, name), root)}")
    return out


@pytest.mark.slow(seconds=60)
def test_owner_only_nothing_outside_and_remove_leaves_no_byte(home, tmp_path):
    lance = tmp_path / "tables"
    lance.mkdir(mode=0o755)  # an existing world-readable folder named as storage.lance_uri
    os.chmod(lance, 0o755)
    system_tmp = tmp_path / "system-tmp"
    system_tmp.mkdir()
    env = {"TMPDIR": str(system_tmp), "RAGBAG_HOME": str(home.root)}
    stale = home.tmp_dir / "ragbag-sqlite-999999999-x"  # a killed build's SQLite copy (no such pid)
    stale.mkdir(parents=True)
    (stale / "copy.db").write_bytes(b"SQLite format 3\x00 private history")
    os.chmod(home.root, 0o755)  # an older ragbag's looser home, tightened by the next command
    (home.root / "old-notes.txt").write_text("left by an older version")
    os.chmod(home.root / "old-notes.txt", 0o644)

    kept = write(
        tmp_path / "kept",
        {
            "a.md": "# Harbour\n\nThe lighthouse keeper logs the tide every dawn.\n",
            "zh.md": "# 会议\n\n明天上午十点在三楼会议室讨论预算。\n",
        },
    )
    secret = write(
        tmp_path / "secret",
        {
            "diary.md": f"# Garden diary\n\n{MARKER} planted the tomatoes beside the shed.\n\n" * 3,
            "more.md": f"# Letters\n\nDear {MARKER}, the parcel arrived on Tuesday.\n",
        },
    )
    cli("config", "set", "storage.lance_uri", str(lance), env=env)
    cli("config", "set", "storage.keep_versions", "0", env=env)  # retention, checked at the end
    cli("add", "files", "kept", str(kept), env=env)
    cli("add", "files", "secret", str(secret), env=env)
    cli("build", env=env)
    hits = strict_json(cli("search", MARKER, "-k", "3", "--json", env=env).stdout)
    assert hits[0]["source"] == "secret"
    assert (
        strict_json(cli("search", "预算 会议", "-k", "1", "--json", env=env).stdout)[0]["source"] == "kept"
    )  # jieba ran

    assert not stale.exists()  # the dead process's temporary went at the next start
    assert _loose(home.root) == [] and _loose(lance) == []
    assert list(system_tmp.iterdir()) == []  # no temporary or cache outside the home
    before = in_bytes(home.root, MARKER) + in_bytes(lance, MARKER)
    assert before  # the check below can fail: the text was on disk
    decoded = holding(home.root, MARKER) + holding(lance, MARKER)
    assert any(".lance@v" in d for d in decoded)  # … and in the tables as Lance reads them

    cli("remove", "secret", env=env)
    assert in_bytes(home.root, MARKER) == [] and in_bytes(lance, MARKER) == []
    assert holding(home.root, MARKER) == [] and holding(lance, MARKER) == []
    assert _loose(home.root) == [] and _loose(lance) == []
    hits = strict_json(cli("search", "who records the tides", "-k", "1", "--json", env=env).stdout)
    assert hits[0]["source"] == "kept"  # the other source is still searchable, from rewritten tables
    status = strict_json(cli("status", "--json", env=env).stdout)
    assert "secret" not in str(status)
    record(
        "privacy",
        {
            "files_holding_marker_before_remove": len(before),
            "decoded_places_holding_marker_before_remove": len(decoded),
            "after_remove": 0,
            "paths_not_owner_only": 0,
        },
    )

    # A refresh after the removal works on the rewritten tables, and with `storage.keep_versions
    # 0` leaves only the newest table version (which the publication pins).
    write(kept, {"b.md": "# Kayaks\n\nTwo kayaks booked for Saturday.\n"})
    report = strict_json(cli("build", "--json", env=env).stdout)[0]
    assert report["status"] == "success" and report["documents"] == 3
    store = Store(str(lance))
    assert {name: len(store.table(name).list_versions()) for name in PUBLISHED} == dict.fromkeys(PUBLISHED, 1)


@pytest.mark.filterwarnings("ignore:optimize.cleanup_older_than=0.")
def test_the_decoded_check_sees_what_the_raw_grep_misses(tmp_path):
    """A table still holding the text in a compressed column is invisible to the raw grep and
    caught by decoding: at the version that held it, as deleted rows of the next, and in the data
    file once only that next version is left. Compaction with cleanup finally drops it."""
    pick = random.Random(1).choice
    words = "the garden shed tomato harbour lighthouse tide dawn keeper logs letter parcel arrived".split()
    texts = [" ".join(pick(words) for _ in range(200)) + (f" {MARKER}" if i % 2 else "") for i in range(2_000)]
    path = tmp_path / "db" / "chunks.lance"
    table = lancedb.connect(str(tmp_path / "db")).create_table("chunks", pa.table({"id": range(2_000), "text": texts}))
    (data,) = [f"db/chunks.lance/data/{p.name}" for p in (path / "data").iterdir()]
    assert in_bytes(tmp_path, MARKER) == []  # compressed: no file's bytes hold it
    assert holding(tmp_path, MARKER) == ["db/chunks.lance@v1", data]

    table.delete("id % 2 = 1")  # hidden by a deletion file; the data file stays as it was
    lance.dataset(str(path)).cleanup_old_versions(older_than=timedelta(0), delete_unverified=True)
    assert in_bytes(tmp_path, MARKER) == []
    assert holding(tmp_path, MARKER) == ["db/chunks.lance@v2", data]

    table.optimize(cleanup_older_than=timedelta(0), delete_unverified=True)  # rewritten without them
    assert holding(tmp_path, MARKER) == []


def test_servers_bind_to_loopback_only():
    """What `make ui` starts: the Dagster webserver on 127.0.0.1 (the MCP server speaks stdio)."""
    makefile = (Path(__file__).resolve().parents[2] / "Makefile").read_text()
    ui = makefile.split("\nui:", 1)[1].split("\n\n", 1)[0]
    assert "dg dev --no-check-yaml -h 127.0.0.1" in ui and "umask 077" in ui


def test_every_ragbag_process_writes_privately(tmp_path):
    """The CLI's own files are owner-only whatever the caller's umask."""
    home = tmp_path / "home"
    proc = subprocess.run(
        ["sh", "-c", f"umask 022 && {RAGBAG} add files notes {tmp_path}"],
        env={**os.environ, "RAGBAG_HOME": str(home)},
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    assert _loose(home) == []


def test_ocr_writes_nothing_in_the_users_home_folder(tmp_path):
    """The recogniser's runtime (OpenVINO, ``ragbag.text.ocr.runtime``) would write a telemetry
    client id and usage counts under ``~/intel`` when its package is imported: a fresh process
    that reads a picture leaves the user's home folder as it found it."""
    import sys

    from conftest import FIXTURES

    user_home = tmp_path / "user-home"
    user_home.mkdir()
    probe = (
        "import sys; from pathlib import Path; from ragbag.text import ocr; "
        "print(ocr.runtime(), ocr.recognise(ocr.open_image(Path(sys.argv[1]).read_bytes())).text.split())"
    )
    image = FIXTURES / "public" / "images" / "tesseract-test" / "testing__HelloGoogle.tif"
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "XDG_CACHE_HOME", "XDG_CONFIG_HOME")}
    done = subprocess.run(
        [sys.executable, "-c", probe, str(image)],
        env={**env, "HOME": str(user_home)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Hello" in done.stdout
    assert sorted(p.relative_to(user_home).as_posix() for p in user_home.rglob("*")) == []
