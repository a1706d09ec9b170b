"""Document-borne text never controls the terminal (issue #38, class 1).

A source whose folder name, file names, title and body are full of terminal escapes — window
title (OSC 0/2), clipboard write (OSC 52), a link (OSC 8), clear screen (CSI 2J), colours, bare
BEL/backspace/carriage return, C1 controls (U+009B is CSI on its own) and bidi overrides — is
added, built and shown by every command that prints document text, as subprocesses. Nothing
they write may hold ESC, BEL, backspace, CR, DEL, a C1 control or a bidi override; the text must
still be there, its controls shown as ``\\x1b``-style escapes. ``--json`` gives back the exact
strings. Under a terminal (a pty) the only escapes are ragbag's own colours (SGR).
"""

from __future__ import annotations

import fcntl
import os
import pty
import re
import shutil
import struct
import subprocess
import tempfile
import termios
from pathlib import Path

import pytest
from conftest import RAGBAG, json_strings, strict_json

ESC = "\x1b"
EVIL = (
    f"{ESC}]0;PWNED-TITLE\x07{ESC}]2;PWNED2{ESC}\\{ESC}[2J{ESC}]52;c;cHduZWQ=\x07"
    f"{ESC}]8;;http:__evil.example_{ESC}\\link{ESC}]8;;{ESC}\\{ESC}[31mred{ESC}[0m"
    "\x08\x08\rover\x9b2J\x9d0;c1\x9c\u202eexe.pdf\u202c\x7f"
)
TITLE_MARK = "\\x1b]0;PWNED-TITLE\\x07"  # how the window-title sequence must show
FORBIDDEN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
SGR = re.compile(r"\x1b\[[0-9;]*m")


@pytest.fixture(scope="module")
def kb(tmp_path_factory):
    """A home with one built source, `evil`, under a folder whose name holds a window-title
    escape; its notes hold ``EVIL`` in name, title and text; an empty file (a build error that
    names it)."""
    root = tmp_path_factory.mktemp("escapes")
    # The folder's path is short, so a piped table (160 columns) shows it on one line, however
    # long pytest's own temporary paths are (xdist adds a level).
    short = Path(tempfile.mkdtemp(prefix="rb-esc-", dir="/tmp"))  # not $TMPDIR: a home's, in-process
    folder = short / f"notes{ESC}]0;dir\x07"
    folder.mkdir()
    note = folder / f"gate{EVIL}.md"
    note.write_text(
        f"# Gate code {EVIL}\n\nThe gate code in Lisbon is 4711 {EVIL} by the tram stop.\n\n"
        f"Second paragraph about the lisbon gate code {EVIL} and the key box.\n"
    )
    (folder / f"empty{EVIL}.txt").write_text("")
    # Wide, whatever the harness's COLUMNS: rich would cut the long paths this test looks for.
    env = {
        **os.environ,
        "RAGBAG_HOME": str(root / "home"),
        "DAGSTER_HOME": str(root / "home" / "dagster"),
        "COLUMNS": "400",
    }
    kb = {"root": root, "folder": folder, "note": note, "env": env}
    kb["add"] = _output(kb, "add", "files", "evil", str(folder))  # checked by their own test
    kb["build"] = _output(kb, "build")
    kb["hit"] = strict_json(_output(kb, "search", "gate code lisbon", "-k", "1", "--json"))[0]
    yield kb
    shutil.rmtree(short)


def run(kb, *args: str) -> str:
    """What one command prints, checked to be inert."""
    out = _output(kb, *args)
    assert_inert(out, args)
    return out


def _output(kb, *args: str) -> str:
    """Stdout and stderr of one command, from bytes (text mode would turn a raw CR into a newline)."""
    proc = subprocess.run([RAGBAG, *args], capture_output=True, env=kb["env"], timeout=300)
    assert proc.returncode == 0, (args, proc.stdout[-2000:], proc.stderr[-2000:])
    return proc.stdout.decode() + proc.stderr.decode()


def assert_inert(text: str, what) -> None:
    found = FORBIDDEN.search(text)
    assert found is None, (
        f"{what}: {found.group()!r} reached the terminal: {text[max(0, found.start() - 80) :][:200]!r}"
    )


def test_the_sanitiser_shows_every_control_and_keeps_the_text():
    from ragbag.core import terminal as safe_text

    assert safe_text.line(f"a{ESC}[2Jb\rc\nd\te\x9b\u202ef") == "a\\x1b[2Jb\\x0dc\\x0ad\te\\x9b\\u202ef"
    assert safe_text.block("one\ntwo\x07") == "one\ntwo\\x07"
    assert safe_text.markup("notes [old] [/]") == "notes \\[old] \\[/]"
    assert_inert(safe_text.line(EVIL) + safe_text.block(EVIL), "safe_text")
    assert safe_text.line("Grüße, 黄山, שלום \u200f") == "Grüße, 黄山, שלום \u200f"  # letters and marks stay


def test_add_and_build_print_the_path_visibly(kb):
    assert_inert(kb["add"], "add")
    assert_inert(kb["build"], "build")  # its report: the skipped file named in it
    assert "notes\\x1b]0;dir\\x07" in kb["add"]
    assert "empty\\x1b]0;PWNED-TITLE\\x07" in kb["build"]  # the empty file's error names it


@pytest.mark.parametrize(
    "args",
    [
        ("search", "gate code lisbon"),
        ("search", "gate code lisbon", "--context", "1"),
        ("ask", "what is the gate code in lisbon?"),
        ("list",),
        ("status",),
        ("status", "evil"),
    ],
)
def test_document_text_is_shown_never_obeyed(kb, args):
    out = run(kb, *args)
    assert TITLE_MARK in out or "notes\\x1b]0;dir\\x07" in out, out[:500]


def test_show_and_history_of_the_hostile_note(kb):
    shown = run(kb, "show", "c:" + kb["hit"]["citation"], "--format", "text")
    assert TITLE_MARK in shown and "4711" in shown
    assert "\n" in shown.split("4711", 1)[1]  # a passage keeps its lines
    assert TITLE_MARK in run(kb, "history", kb["hit"]["doc_id"])
    assert TITLE_MARK in run(kb, "history", str(kb["note"]))  # the path with its escapes finds it


def test_json_gives_back_the_exact_strings(kb):
    for args in (("search", "gate code lisbon"), ("list",), ("status", "evil"), ("history", kb["hit"]["doc_id"])):
        got = list(json_strings(strict_json(run(kb, *args, "--json"))))
        assert any(EVIL in s or str(kb["folder"]) in s for s in got), args
    asked = strict_json(run(kb, "ask", "what is the gate code in lisbon?", "--json"))
    cited = asked["citations"][0]
    assert f"{ESC}]0;PWNED-TITLE\x07" in cited["title"] and cited["uri"] == str(kb["note"])  # a title ends at CR


def test_under_a_terminal_only_ragbags_own_colours_are_sent(kb):
    for args in (
        ("search", "gate code lisbon"),
        ("show", "c:" + kb["hit"]["citation"], "--format", "text"),
        ("list",),
        ("history", kb["hit"]["doc_id"]),
    ):
        out = _in_pty(kb, *args)
        assert TITLE_MARK in out or "notes\\x1b]0;dir\\x07" in out, (args, out[:500])
        assert_inert(SGR.sub("", out).replace("\r\n", "\n"), args)


def _in_pty(kb, *args: str) -> str:
    """What a command writes to a terminal (its stdout and stderr a pty)."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 400, 0, 0))  # wide: paths whole
    proc = subprocess.Popen([RAGBAG, *args], stdout=follower, stderr=follower, env=kb["env"])
    os.close(follower)
    chunks = []
    while True:
        try:
            data = os.read(leader, 65536)
        except OSError:  # EIO: the command exited and the pty closed
            break
        if not data:
            break
        chunks.append(data)
    os.close(leader)
    assert proc.wait(300) == 0, (args, b"".join(chunks)[-2000:])
    return b"".join(chunks).decode()
