"""A source whose every record vanished at once (an unplugged disk's empty mount point, a folder
gone) keeps its index: the build fails in one line that names `--allow-empty`, which empties it."""

from __future__ import annotations

import shutil

from conftest import cli, strict_json, write
from figures import record


def _build(*args: str) -> tuple[dict, str]:
    proc = cli("build", "disk", "--json", *args, check=False)
    (report,) = strict_json(proc.stdout)
    assert "Traceback" not in proc.stderr and "Stack Trace" not in proc.stderr, proc.stderr
    return report, proc.stderr


def _indexed() -> int:
    return strict_json(cli("status", "disk", "--json").stdout)["documents"]


def test_an_emptied_source_keeps_its_index_unless_allowed(home, tmp_path):
    mount = write(
        tmp_path / "mnt" / "disk",
        {
            "a.md": "# Harbour\n\nThe lighthouse keeper logs the tide every dawn.\n",
            "b.md": "# Kayaks\n\nTwo kayaks booked for Saturday.\n",
            "sub/c.md": "# Garden\n\nWater the tomatoes at dusk.\n",
        },
    )
    cli("add", "files", "disk", str(mount))
    assert _build()[0]["documents"] == 3

    for entry in list(mount.iterdir()):  # unplugged: the mount point is an empty folder
        shutil.rmtree(entry) if entry.is_dir() else entry.unlink()
    report, _ = _build()
    assert report["status"] == "failed" and report["deleted"] == 0
    assert report["failure"] == (
        f"source 'disk' read 0 records and no errors under {mount}; its 3 indexed documents are kept "
        "(an unplugged disk or a moved export?): if it is empty on purpose, `ragbag build disk --allow-empty`"
    )
    plain = cli("build", "disk", check=False)  # the table and that one line, nothing else
    assert plain.returncode == 1 and "ragbag build disk --allow-empty" in plain.stdout and plain.stderr == ""
    assert _indexed() == 3
    hits = strict_json(cli("search", "who records the tides", "-k", "1", "--json").stdout)
    assert hits[0]["title"] == "Harbour"  # the index still serves

    mount.rmdir()  # the mount point itself gone
    report, _ = _build()
    assert report["status"] == "failed" and "path does not exist" in report["failure"]
    assert "its 3 indexed documents are kept" in report["failure"] and "--allow-empty" in report["failure"]
    assert _indexed() == 3

    mount.mkdir()
    report, _ = _build("--allow-empty")  # empty on purpose: emptied as before, with the warning
    assert report["status"] == "success" and report["documents"] == 0 and report["deleted"] == 3
    assert "read 0 records" in report["warnings"][0]
    assert _indexed() == 0
    record("emptied_source", {"refused_builds": 3, "emptied_with_allow_empty": 1})


def test_allow_empty_empties_a_source_whose_path_is_gone(home, tmp_path):
    folder = write(tmp_path / "gone", {"a.md": "# Note\n\nThe lighthouse keeper logs the tide.\n"})
    cli("add", "files", "disk", str(folder))
    assert _build()[0]["documents"] == 1
    shutil.rmtree(folder)
    report, _ = _build("--allow-empty")
    assert report["status"] == "success" and report["deleted"] == 1 and _indexed() == 0


def test_a_source_never_built_may_read_nothing(home, tmp_path):
    """Nothing indexed, nothing to keep: an empty folder builds, with the warning, as before."""
    (tmp_path / "empty").mkdir()
    cli("add", "files", "disk", str(tmp_path / "empty"))
    report, _ = _build()
    assert report["status"] == "success" and report["documents"] == 0 and report["warnings"]
