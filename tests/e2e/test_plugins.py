"""A connector from a package outside ragbag, installed the way pip installs any package, is found
through its entry point, built by the same Dagster chain as a built-in and searched; the
example is the one `docs/plugins.md` shows (docs/example_connector)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

from conftest import ROOT, cli, cli_json, write

from ragbag import connectors
from ragbag.core import plugins

EXAMPLE = ROOT / "docs" / "example_connector"


def test_built_ins_are_registered_the_way_plugins_are():
    """ragbag's own connectors, models and providers come from its entry points, nowhere else."""
    assert connectors.NAMES[:2] == ("files", "code")
    assert {"mail", "imessage", "wechat", "chatgpt", "claude", "calendar", "browser"} <= set(connectors.NAMES)
    assert all(ep.value.startswith("ragbag.") for ep in plugins.registered(plugins.CONNECTORS).values())
    assert {"extractive", "openai", "anthropic", "ollama", "llama-cpp"} <= set(
        plugins.registered(plugins.LLM_PROVIDERS)
    )
    assert {"all-MiniLM-L6-v2", "multilingual-e5-small"} <= set(plugins.registered(plugins.MODELS))


def test_a_connector_from_another_package_is_found_built_and_searched(tmp_path):
    package = shutil.copytree(EXAMPLE, tmp_path / "package")  # pip writes build files beside it
    site = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--no-build-isolation"]
        + ["--target", str(site), str(package)],
        check=True,
        capture_output=True,
    )
    assert list(site.glob("ragbag_jsonl-1.0.0.dist-info/entry_points.txt"))
    home = tmp_path / "home"
    bare = {"RAGBAG_HOME": str(home), "DAGSTER_HOME": str(home / "dagster")}
    notes = write(
        tmp_path / "notes",
        {
            "house.jsonl": '{"id": "b1", "title": "Boiler", "text": "The boiler service is due in March; '
            'the engineer asked for the gas meter code 7731.", "date": "2026-02-01T09:00:00+00:00"}\n'
            "this line is not a note\n"
            '{"id": "b2", "title": "Garden", "text": "Plant the tulip bulbs before the first frost."}\n',
        },
    )

    # Not installed: the name is unknown, in one line.
    missing = cli("add", "jsonl", "notes", str(notes), env=bare, check=False)
    assert missing.returncode == 2 and "unknown connector 'jsonl'" in missing.stderr
    assert len(missing.stderr.strip().splitlines()) == 1

    env = {**bare, "PYTHONPATH": str(site)}
    cli("add", "jsonl", "notes", str(notes), env=env)
    report = cli("build", env=env)
    assert "house.jsonl#2" in report.stdout + report.stderr  # the bad line is named, the rest read
    hits = cli_json("search", "when is the boiler service due", "-k", "3", env=env)
    assert hits[0]["connector"] == "jsonl" and hits[0]["title"] == "Boiler"
    assert "7731" in hits[0]["text"]
    assert cli_json("search", "tulip bulbs", "--connector", "jsonl", env=env)[0]["title"] == "Garden"


def test_a_plugin_that_fails_to_import_is_one_line_naming_its_package(tmp_path):
    site = write(
        tmp_path / "site",
        {
            "broken_plugin.py": "raise ImportError('needs libfoo 2')\n",
            "ragbag_broken-0.1.dist-info/METADATA": "Metadata-Version: 2.1\nName: ragbag-broken\nVersion: 0.1\n",
            "ragbag_broken-0.1.dist-info/entry_points.txt": "[ragbag.connectors]\nbroken = broken_plugin\n",
        },
    )
    home = tmp_path / "home"
    env = {"RAGBAG_HOME": str(home), "DAGSTER_HOME": str(home / "dagster"), "PYTHONPATH": str(site)}
    out = cli("add", "broken", "b", str(tmp_path), env=env, check=False)
    assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1, out.stderr
    assert "ragbag-broken" in out.stderr and "needs libfoo 2" in out.stderr


def test_a_plugin_cannot_take_a_built_in_name(tmp_path):
    """Another package declaring `files` (here pointing into ragbag's own modules, as an impostor
    could) does not replace ragbag's: only the ragbag distribution's own entry points win a tie."""
    site = write(
        tmp_path / "site",
        {
            "ragbag_impostor-0.1.dist-info/METADATA": "Metadata-Version: 2.1\nName: ragbag-impostor\nVersion: 0.1\n",
            "ragbag_impostor-0.1.dist-info/entry_points.txt": "[ragbag.connectors]\nfiles = ragbag.connectors.code\n",
        },
    )
    code = "from ragbag import connectors; print(connectors.get('files').__name__)"
    out = subprocess.run(
        [sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": str(site)}, capture_output=True, text=True
    )
    assert out.returncode == 0 and out.stdout.strip() == "ragbag.connectors.files", out.stderr
