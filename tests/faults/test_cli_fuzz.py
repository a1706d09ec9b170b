"""Every option of every command, given hostile values: the CLI answers 0 or one
`ragbag: error:` line with exit 2 — never a traceback, never another code.

Run in-process through ``cli.main`` (the entry point) against an empty home per command, so
hundreds of cases take seconds; values that parse reach the engine's own validation.
"""

from __future__ import annotations

import sys

import pytest
import typer.main
from figures import record

from ragbag.apps.cli import main as cli

VALUES = [
    "",
    " ",
    "abc",
    "-1",
    "0",
    "1",
    "nan",
    "-nan",
    "inf",
    "-inf",
    "1e999",
    "99999999999999999999",
    "\x00",
    "x" * 3000,
    "{",
    "[1]",
    '{"ext": {"nope": 1}}',
    "../../../etc/passwd",
    "2024-13-45",
    "99999999999d",
    "-5d",
    "💥",
    "NULL; DROP TABLE chunks",
]
# Commands and the arguments that make them runnable; options that would reach a network
# (an LLM's name, model, address) or start a server are left to their own tests.
BASE = {
    ("search",): ["harbour"],
    ("ask",): ["harbour"],
    ("add",): ["files", "fz-{n}", "{tmp}"],
    ("build",): ["fz"],
    ("status",): [],
    ("list",): [],
    ("remove",): [],
    ("eval",): ["{tmp}/no-such-dataset"],
    ("config", "set"): [],
    ("config", "get"): [],
}
SKIP = {"--llm", "--model", "--base-url", "--interactive", "-i", "--home", "--docs"}  # --docs: builds a folder


def _options():
    """(command path, option flag) for every non-flag option of the commands in BASE."""
    root = typer.main.get_command(cli.app)
    for path in BASE:
        cmd = root
        for part in path:
            cmd = cmd.commands[part]
        for p in cmd.params:
            opts = getattr(p, "opts", [])
            if opts and opts[0].startswith("-") and not getattr(p, "is_flag", False) and opts[-1] not in SKIP:
                yield path, opts[-1]


def _run(argv: list[str], capsys) -> tuple[int, str]:
    old = sys.argv
    sys.argv = ["ragbag", *argv]
    try:
        with pytest.raises(SystemExit) as done:
            cli.main()
    finally:
        sys.argv = old
    code = done.value.code
    return (code if isinstance(code, int) else 0 if code is None else 1), capsys.readouterr().err


def _cases(tmp) -> list[list[str]]:
    cases = []
    for n, (path, flag) in enumerate(_options()):
        base = [a.format(n=n, tmp=tmp) for a in BASE[path]]
        cases.extend([*path, *base, flag, value] for value in VALUES)
    for value in VALUES:  # positional arguments
        cases += [
            ["search", value],
            ["ask", value],
            ["status", value],
            ["remove", value],
            ["config", "get", value],
            ["add", value, "n", str(tmp)],
            ["add", "files", value, str(tmp)],
            ["add", "files", "n2", value],
        ]
        cases += [["config", "set", key, value] for key in sorted(cli_settable())]
    return cases


def cli_settable() -> set[str]:
    from ragbag.core.settings import SETTABLE

    return set(SETTABLE) - {"storage.lance_uri"}  # a valid path would move this home's tables


def test_every_option_given_hostile_values_answers_in_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # relative paths among the values resolve in here
    monkeypatch.setenv("RAGBAG_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "home" / "dagster"))
    cases = _cases(tmp_path)
    assert len(cases) > 500
    bad = []
    for argv in cases:
        try:
            code, err = _run(argv, capsys)
        except Exception as e:  # escaped the entry point: what a user would see as a traceback
            bad.append((argv[:6], "raised", f"{type(e).__name__}: {str(e)[:200]}"))
            continue
        lines = err.strip().splitlines()
        if code == 0:
            continue
        if code != 2 or len(lines) != 1 or not lines[0].startswith("ragbag: error: "):
            bad.append((argv[:6], code, err[-300:]))
    assert not bad, bad[:8]
    record("bad_input", {"cli_cases": len(cases), "cli_cases_not_one_line": len(bad)})
