"""Paths that look like rich markup are printed as themselves (issue #38, class 2).

The CLI prints through rich, which reads ``[...]`` as markup: a source under ``a[/]b`` (a folder
``a[`` holding ``]b``) crashed ``ragbag add`` after registering it and then every ``list`` and
``status``; ``notes [old]`` printed as ``notes ``; an empty file under a folder named ``[`` made
every build of its source exit 1 at the report. Each is added, listed, shown and built here
through the real CLI, and must succeed with the path printed whole.
"""

from __future__ import annotations

import pytest
from conftest import cli, cli_json, write


@pytest.fixture(scope="module")
def kb(tmp_path_factory):
    root = tmp_path_factory.mktemp("markup")
    paths = {
        "closing": write(root / "a[" / "]b", {"gate.md": "# Gate\n\nThe gate code is 4711.\n"}),
        "old": write(root / "notes [old]", {"plan.md": "# Plan\n\nThe old plan: paint the shed blue.\n"}),
        "bracket": write(root / "docs", {"[/plan.md": "# Bracket\n\nWater the [bold]tomatoes[/] at dusk.\n"}),
    }
    (root / "docs" / "[" / "empty.md").write_text("")  # reported by the build: its path in the report
    env = {"RAGBAG_HOME": str(root / "home"), "DAGSTER_HOME": str(root / "home" / "dagster")}
    added = {name: cli("add", "files", name, str(path), env=env).stdout for name, path in paths.items()}
    return {"root": root, "paths": paths, "env": env, "added": added}


def test_add_prints_the_path_whole(kb):
    for name, path in kb["paths"].items():
        assert f"added files source {name} → {path}\n" == kb["added"][name], kb["added"][name]


def test_list_and_status_show_every_path(kb):
    table = cli("list", env=kb["env"]).stdout
    status = cli("status", env=kb["env"]).stdout
    for name, path in kb["paths"].items():
        assert str(path) in table, table
        assert f"{name} (files) {path}\n" in status, status
        assert cli_json("status", name, env=kb["env"])["path"] == str(path)


def test_build_reports_the_empty_file_under_a_bracket_folder(kb):
    proc = cli("build", env=kb["env"], check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    empty = kb["root"] / "docs" / "[" / "empty.md"
    assert f"bracket: {empty}: " in proc.stdout, proc.stdout
    hits = cli_json("search", "tomatoes at dusk", "--source", "bracket", env=kb["env"])
    assert "[bold]tomatoes[/]" in hits[0]["text"]
    shown = cli("search", "tomatoes at dusk", "--source", "bracket", env=kb["env"]).stdout
    assert "[bold]tomatoes[/]" in shown and str(kb["paths"]["bracket"] / "[" / "plan.md") in shown, shown
    history = cli("history", str(kb["paths"]["old"] / "plan.md"), env=kb["env"]).stdout  # not a glob
    assert str(kb["paths"]["old"] / "plan.md") in history, history
