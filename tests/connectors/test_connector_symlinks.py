"""Links leaving a source folder, links into /proc and /sys, FIFOs and link cycles, for every
connector that walks a folder: nothing outside the folder is indexed unless the source opts in
(``follow_links_outside``), special files are never opened, each skip is a ReadError, and no
walk hangs."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from conftest import cli, cli_json, write
from test_connector_browser import Chrome
from test_connector_browser import at as browser_at
from test_connector_imessage import ChatDB
from test_connector_imessage import at as imessage_at

from ragbag.connectors import (
    FOLLOW_LINKS_OUTSIDE,
    browser,
    calendar,
    chatgpt,
    claude,
    code,
    files,
    follows_outside,
    imessage,
    mail,
    wechat,
)
from ragbag.core.records import Document, ReadError

INSIDE, KEPT, SECRET = "cobaltinside", "cobaltkept", "cobaltsecret"
T = 1709630000
HANG_SECONDS = 60

pytestmark = pytest.mark.skipif(
    not Path("/proc/self/environ").exists() or not hasattr(os, "mkfifo"), reason="needs /proc and FIFOs (Linux)"
)


def _eml(path: Path, stem: str, marker: str) -> None:
    path.write_text(
        f"From: {stem}@example.com\nTo: me@example.com\nSubject: {marker}\n"
        f"Date: Tue, 02 Jan 2024 09:30:00 +0000\nMessage-ID: <{stem}@example.com>\n\n{marker} body\n"
    )


def _ics(path: Path, stem: str, marker: str) -> None:
    path.write_text(
        "\r\n".join(
            [
                "BEGIN:VCALENDAR",
                "VERSION:2.0",
                "PRODID:-//test//EN",
                "BEGIN:VEVENT",
                f"UID:{stem}@example.com",
                "DTSTAMP:20240101T000000Z",
                "DTSTART:20240101T100000Z",
                "DTEND:20240101T110000Z",
                f"SUMMARY:{marker}",
                "END:VEVENT",
                "END:VCALENDAR",
                "",
            ]
        )
    )


def _wechat(path: Path, stem: str, marker: str) -> None:
    path.write_text(
        json.dumps(
            [
                {
                    "localId": 1,
                    "talker": f"wxid_{stem}",
                    "type": 1,
                    "content": marker,
                    "createTime": T,
                    "isSentFromSelf": False,
                }
            ]
        )
    )


def _chatgpt(path: Path, stem: str, marker: str) -> None:
    user = {
        "id": "u",
        "author": {"role": "user"},
        "create_time": T,
        "metadata": {},
        "recipient": "all",
        "content": {"content_type": "text", "parts": [marker]},
    }
    path.write_text(
        json.dumps(
            [
                {
                    "id": stem,
                    "conversation_id": stem,
                    "title": marker,
                    "create_time": T,
                    "update_time": T,
                    "current_node": "u",
                    "mapping": {
                        "root": {"id": "root", "message": None, "parent": None, "children": ["u"]},
                        "u": {"id": "u", "message": user, "parent": "root", "children": []},
                    },
                }
            ]
        )
    )


def _claude(path: Path, stem: str, marker: str) -> None:
    t = "2024-06-01T10:15:30Z"
    path.write_text(
        json.dumps(
            [
                {
                    "uuid": stem,
                    "name": marker,
                    "created_at": t,
                    "updated_at": t,
                    "chat_messages": [{"uuid": "m1", "text": marker, "sender": "human", "created_at": t}],
                }
            ]
        )
    )


def _history(path: Path, stem: str, marker: str) -> None:
    c = Chrome(path)
    c.url(f"https://example.com/{stem}", marker, [browser_at(1)])
    c.close()


def _chat_db(path: Path, stem: str, marker: str) -> None:
    db = ChatDB(path, wal=False)
    db.message(
        db.chat(f"iMessage;-;{stem}@example.com", f"{stem}@example.com", [f"{stem}@example.com"]),
        imessage_at(1, 9),
        f"{stem}@example.com",
        marker,
    )
    db.close()


@dataclass
class Kind:
    """How one connector's records look in a folder: ``name(stem)`` is the path of a file it
    reads, ``stash`` a path inside the root it never reads directly (only through a link)."""

    module: object
    name: Callable[[str], str]
    write: Callable[[Path, str, str], None]
    stash: str
    setup: dict[str, str] | None = None


def _text(template: str) -> Callable[[Path, str, str], None]:
    return lambda path, stem, marker: path.write_text(template.format(stem=stem, marker=marker))


KINDS = {
    "files": Kind(files, lambda s: f"{s}.md", _text("# {stem}\n\n{marker} is here.\n"), ".stash/kept.md"),
    "code": Kind(code, lambda s: f"{s}.py", _text("VALUE = '{marker}'\n"), "build/kept.py", {".gitignore": "build/\n"}),
    "mail": Kind(mail, lambda s: f"{s}.eml", _eml, ".stash/kept.eml"),
    "calendar": Kind(calendar, lambda s: f"{s}.ics", _ics, ".stash/kept.ics"),
    "wechat": Kind(wechat, lambda s: f"{s}-wxid_{s}.json", _wechat, ".stash/kept-wxid_kept.json"),
    "chatgpt": Kind(chatgpt, lambda s: f"conversations-{s}.json", _chatgpt, ".stash/conversations-kept.json"),
    "claude": Kind(claude, lambda s: f"conversations-{s}.json", _claude, ".stash/conversations-kept.json"),
    "browser": Kind(browser, lambda s: f"{s}/History", _history, "Cache/kept/History"),
    "imessage": Kind(imessage, lambda s: f"{s}/chat.db", _chat_db, "stash/kept.db"),
}


def _link(link: Path, target: str | Path) -> Path:
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(target)
    return link


def trap_tree(tmp_path: Path, kind: Kind) -> tuple[Path, Path, dict[str, list[str]]]:
    """(source root, the folder outside it, link rel path → words its ReadError must hold)."""
    root, outside = tmp_path / "src", tmp_path / "elsewhere"
    write(root, kind.setup or {})
    for folder, rel, stem, marker in [
        (root, kind.name("inside"), "inside", INSIDE),
        (root, kind.stash, "kept", KEPT),
        (outside, kind.name("far"), "far", SECRET),
    ]:
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        kind.write(folder / rel, stem, marker)
    n = kind.name
    rel_to = lambda a, b: os.path.relpath(root / b, (root / a).parent)  # noqa: E731
    _link(root / n("alias"), rel_to(n("alias"), kind.stash))  # inside the root: read
    _link(root / n("leak"), outside / n("far"))  # a file outside
    _link(root / "outdir", "../elsewhere")  # a folder outside
    _link(root / n("env"), "/proc/self/environ")
    _link(root / "proc", "/proc/self")
    (root / n("pipe")).parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(root / n("pipe"))
    _link(root / n("c1"), rel_to(n("c1"), n("c2")))  # a cycle of file links
    _link(root / n("c2"), rel_to(n("c2"), n("c1")))
    _link(root / "loop", ".")  # a folder link to the root itself
    _link(outside / "back", ".")  # outside: a link to its own folder...
    _link(outside / "home", root)  # ...and one back into the source
    outside_words = ["outside the source folder", FOLLOW_LINKS_OUTSIDE]
    expected = {
        n("leak"): outside_words + [str((outside / n("far")).resolve())],
        "outdir": outside_words + [str(outside.resolve())],
        n("env"): ["/proc", "never read"],
        "proc": ["/proc", "never read"],
        n("pipe"): ["FIFO", "not a regular file"],
        n("c1"): ["cycle"],
        n("c2"): ["cycle"],
    }
    if Path("/sys/kernel").is_dir():
        _link(root / "sys", "/sys/kernel")
        expected["sys"] = ["/sys", "never read"]
    return root, outside, expected


def read_within(module, path: Path, options: dict | None, source: str = "src") -> list:
    """The connector's whole read, failing (instead of hanging the suite) past HANG_SECONDS."""
    out: list = []
    failure: list[BaseException] = []

    def run() -> None:
        try:
            out.extend(module.read(path, source, None, options))
        except BaseException as exc:  # noqa: BLE001 - re-raised in the test thread
            failure.append(exc)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(HANG_SECONDS)
    assert not worker.is_alive(), f"{module.__name__}.read still running after {HANG_SECONDS}s (hung?)"
    if failure:
        raise failure[0]
    return out


def split(items: list) -> tuple[list[Document], dict[str, str]]:
    docs = [i for i in items if isinstance(i, Document)]
    errors = {e.uri: e.error for e in items if isinstance(e, ReadError)}
    return docs, errors


def check_errors(errors: dict[str, str], root: Path, expected: dict[str, list[str]]) -> None:
    want = {str(root / rel): words for rel, words in expected.items()}
    assert set(errors) == set(want), errors
    for uri, words in want.items():
        for word in words:
            assert word in errors[uri], (uri, errors[uri], word)


@pytest.mark.parametrize("name", list(KINDS))
def test_links_outside_the_source_are_reported_never_read(tmp_path, name):
    kind = KINDS[name]
    root, _, expected = trap_tree(tmp_path, kind)
    docs, errors = split(read_within(kind.module, root, {}))
    assert not any(SECRET in repr(d) for d in docs)
    assert any(INSIDE in repr(d) for d in docs)
    assert any(KEPT in repr(d) for d in docs)  # the stash is read only through the link inside
    assert not any("environ" in d.uri or "/proc" in d.uri for d in docs)
    check_errors(errors, root, expected)
    # Deterministic: a second walk gives the same records and errors in the same order.
    assert split(read_within(kind.module, root, {})) == (docs, errors)


@pytest.mark.parametrize("name", list(KINDS))
def test_follow_links_outside_reads_them_but_never_proc_fifos_or_cycles(tmp_path, name):
    kind = KINDS[name]
    root, _, expected = trap_tree(tmp_path, kind)
    docs, errors = split(read_within(kind.module, root, {FOLLOW_LINKS_OUTSIDE: True}))
    assert any(SECRET in repr(d) for d in docs)
    assert any(INSIDE in repr(d) for d in docs) and any(KEPT in repr(d) for d in docs)
    assert not any("environ" in d.uri for d in docs)
    del expected[kind.name("leak")], expected["outdir"]
    expected["outdir/back"] = ["a folder this source already reads"]  # walked once: no cycle
    check_errors(errors, root, expected)


def test_a_source_path_that_is_a_link_is_followed(tmp_path):
    root, _, expected = trap_tree(tmp_path, KINDS["files"])
    given = _link(tmp_path / "notes", root)
    docs, errors = split(read_within(files, given, {}))
    assert {d.native_id for d in docs} == {"inside.md", "alias.md"}
    assert all(d.uri.startswith(str(given) + "/") for d in docs)
    check_errors(errors, given, expected)


def test_single_linked_file_inside_the_root_is_read_where_it_lies(tmp_path):
    root = write(tmp_path / "notes", {"real.md": f"# Real\n\n{INSIDE}\n"})
    _link(root / "same.md", "real.md")
    docs, errors = split(read_within(files, root, {}))
    assert {d.native_id: d.uri for d in docs} == {"real.md": str(root / "real.md"), "same.md": str(root / "same.md")}
    assert errors == {}


def test_code_never_opens_a_gitignore_that_is_a_fifo_or_leaves_the_repo(tmp_path):
    root = write(tmp_path / "repo", {"a/keep.py": "A = 1\n", "b/keep.py": "B = 1\n"})
    write(tmp_path, {"ignore-all": "*\n"})
    os.mkfifo(root / "a" / ".gitignore")
    _link(root / "b" / ".gitignore", tmp_path / "ignore-all")
    docs, errors = split(read_within(code, root, {}))
    assert {d.native_id for d in docs} == {"a/keep.py", "b/keep.py"}  # neither rule file applied
    assert "FIFO" in errors[str(root / "a" / ".gitignore")]
    assert "outside the source folder" in errors[str(root / "b" / ".gitignore")]
    docs, errors = split(read_within(code, root, {FOLLOW_LINKS_OUTSIDE: True}))
    assert {d.native_id for d in docs} == {"a/keep.py"}  # b's followed .gitignore ignores everything
    assert set(errors) == {str(root / "a" / ".gitignore")}


def test_hidden_and_unwanted_links_are_not_reported(tmp_path):
    root = write(tmp_path / "notes", {"a.md": f"# A\n\n{INSIDE}\n"})
    _link(root / ".secret.md", "/etc/passwd")  # hidden: not part of the source
    _link(root / "clip.mp4", "/etc/passwd")  # a type the files connector does not read
    docs, errors = split(read_within(files, root, {}))
    assert [d.native_id for d in docs] == ["a.md"] and errors == {}


@pytest.mark.parametrize(
    "value, follows",
    [(True, True), ("yes", True), ("true", True), (False, False), ("no", False), (None, False), (0, False)],
)
def test_option_values(value, follows):
    assert follows_outside({FOLLOW_LINKS_OUTSIDE: value}) is follows
    assert follows_outside({}) is False


@pytest.mark.slow(seconds=40)
def test_build_report_names_each_skipped_link_and_the_option_opts_in(home, tmp_path):
    root = write(tmp_path / "notes", {"inside.md": f"# Inside\n\n{INSIDE} notes.\n"})
    write(tmp_path, {"elsewhere/far.md": f"# Far\n\n{SECRET} notes.\n"})
    _link(root / "passwd.md", tmp_path / "elsewhere" / "far.md")
    _link(root / "env.md", "/proc/self/environ")
    os.mkfifo(root / "pipe.md")
    cli("add", "files", "notes", str(root))
    (rep,) = cli_json("build")
    assert rep["status"] == "success" and rep["documents"] == 1
    errors = {e["uri"]: e["error"] for e in rep["errors"]}
    far = str((tmp_path / "elsewhere" / "far.md").resolve())
    assert errors[str(root / "passwd.md")] == (
        f"symlink to {far}, outside the source folder: skipped (set option {FOLLOW_LINKS_OUTSIDE} to index it)"
    )
    assert "/proc" in errors[str(root / "env.md")] and "FIFO" in errors[str(root / "pipe.md")]

    raw = yaml.safe_load(home.sources_file.read_text())
    raw["sources"]["notes"].setdefault("options", {})[FOLLOW_LINKS_OUTSIDE] = True
    home.sources_file.write_text(yaml.safe_dump(raw))
    (rep,) = cli_json("build")
    assert rep["documents"] == 2 and str(root / "passwd.md") not in {e["uri"] for e in rep["errors"]}
    hits = cli_json("search", SECRET, "-k", "1")
    assert hits and SECRET in hits[0]["text"]
