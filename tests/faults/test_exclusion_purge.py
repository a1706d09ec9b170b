"""Exclusion rules (issue 35): what a rule names is never read, and what was indexed before the
rule came is purged as `remove` purges a source — rows, every kept version, cached vectors, old
table and index versions, and the Dagster runs whose previews quote it — proved by decoding
every file of the home (``decoded``). Dropping the rule reads it again."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from email.utils import format_datetime

import pytest
from conftest import cli, cli_json, write
from decoded import holding, in_bytes

from ragbag.connectors import files
from ragbag.core.records import Document, ReadError
from ragbag.search import query

DIARY = "Zanzibarferry ticket 7731 and the diary of the crossing"
DIARY_EDIT = "Zanzibarferry ticket 7731 moved to the evening boat"
NEWSLETTER = "Quorblax mega sale for subscribers only"


def _mbox() -> bytes:
    out = b""
    start = datetime(2024, 3, 1, 9, 0, tzinfo=UTC)
    mails = [
        ("Anna Weber <anna@example.org>", "Lunch on Friday", "Shall we meet at the harbour cafe at noon?"),
        ("Shop <deals@news.spam.example>", "Your weekly deals", NEWSLETTER),
        ("Ben <ben@example.org>", "Keys", "I left the spare keys with the neighbour."),
    ]
    for n, (sender, subject, body) in enumerate(mails):
        m = EmailMessage()
        m["From"], m["To"], m["Subject"] = sender, "me@example.org", subject
        m["Date"] = format_datetime(start + timedelta(hours=n))
        m["Message-ID"] = f"<ex-{n}@example.org>"
        m.set_content(body)
        out += b"From - Fri Mar 01 09:00:00 2024\n" + m.as_bytes().replace(b"\r\n", b"\n") + b"\n"
    return out


def _leaks(root, needle: str) -> list[str]:
    return in_bytes(root, needle) + holding(root, needle)


@pytest.mark.slow(seconds=70)
def test_a_new_rule_purges_what_it_names_and_dropping_it_reads_it_again(home, tmp_path):
    env = {"RAGBAG_HOME": str(home.root)}
    notes = write(tmp_path / "notes", {"trip.md": "# Trip\n\nThe ferry leaves at nine.\n", "private/diary.md": DIARY})
    write(tmp_path / "mail", {"inbox.mbox": _mbox()})
    cli("add", "files", "notes", str(notes), env=env)
    cli("add", "mail", "mail", str(tmp_path / "mail"), env=env)
    cli("build", env=env)
    (notes / "private/diary.md").write_text(DIARY_EDIT)  # a kept earlier version holds the first text
    cli("build", "notes", env=env)
    assert _leaks(home.root, "Zanzibarferry") and _leaks(home.root, "Quorblax")

    done = cli_json("exclude", "notes", "private", "--json", env=env)
    assert done["rules"] == ["path:private"] and done["build"]["excluded"]["purged"] == 1
    done = cli_json("exclude", "mail", "domain:spam.example", "--json", env=env)
    assert done["rules"] == ["domain:spam.example"] and done["build"]["excluded"] == {"records": 1, "purged": 1}
    assert done["purged_runs"] >= 1  # the first build's run, whose preview quoted the newsletter

    assert _leaks(home.root, "Zanzibarferry") == []
    assert _leaks(home.root, "Quorblax") == []
    hits = query.search("Zanzibarferry ferry ticket", home=home, k=10)
    assert set(hits[hits["source"] == "notes"]["title"]) == {"Trip"}
    assert set(hits[hits["source"] == "mail"]["title"]) == {"Lunch on Friday", "Keys"}
    listed = cli("exclude", "mail", env=env).stdout
    assert "domain:spam.example" in listed

    cli("exclude", "notes", "--drop", "private", env=env)
    report = cli_json("build", "notes", "--json", env=env)[0]
    assert report["excluded"] == {"records": 0, "purged": 0} and report["documents"] == 2
    assert "evening boat" in " ".join(query.search("Zanzibarferry", home=home, k=1)["text"])


def test_a_path_rule_is_never_opened_nor_reported(tmp_path):
    """What a path rule names is not even looked at: a FIFO under it (which the walker would
    report as not a regular file) is not mentioned, and nothing of the folder is read."""
    write(tmp_path, {"a.md": "kept", "private/b.md": "secret diary", "deep/private/c.md": "also out"})
    os.mkfifo(tmp_path / "private" / "pipe.md")

    def read(options):
        items = list(files.read(tmp_path, "s", None, options=options))
        return sorted(d.metadata["path"] for d in items if isinstance(d, Document)), [
            e.uri for e in items if isinstance(e, ReadError)
        ]

    docs, errors = read({})
    assert docs == ["a.md", "deep/private/c.md", "private/b.md"] and any(u.endswith("pipe.md") for u in errors)
    assert read({"exclude": ["private"]}) == (["a.md"], [])
    assert read({"exclude": ["path:/private/"]}) == (["a.md", "deep/private/c.md"], [])  # anchored at the root
    assert read({"exclude": ["*.MD"]}) == ([], [])  # case folded: a rule is there to keep things out


@pytest.mark.parametrize(
    ("connector", "names"),
    [("files", ("a.md", "private/b.md")), ("code", ("a.py", "private/b.py")), ("obsidian", ("A.md", "private/B.md"))],
)
def test_every_folder_walk_honours_a_path_rule(tmp_path, connector, names):
    from ragbag import connectors

    kept, out = names
    write(tmp_path, {kept: "# Kept\n\nkept text\n", out: "# Out\n\nthe diary\n"})
    read = connectors.get(connector).read
    docs = [d for d in read(tmp_path, "s", None, options={"exclude": ["private"]}) if isinstance(d, Document)]
    assert [d.metadata["path"] for d in docs] == [kept]
