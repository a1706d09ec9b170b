"""Secrets never enter the index: a home whose notes and mailbox hold 100 secrets of 10 kinds is
built, and not one of them is in any file of the home, as raw bytes or in the LanceDB tables
decoded (``decoded``); `ragbag secrets` lists every one (kinds, counts, documents, never the
text); a source that skips such records leaves them out, one that keeps them finds them; and
`remove` takes the list with the source."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from email.utils import format_datetime

import pytest
from conftest import cli, cli_json, materialize_source, write
from decoded import holding, in_bytes
from secret_seeds import KINDS, seeds

from ragbag.search import query

SEEDS = seeds(10)  # 100: ten of each kind


def _mbox(messages: list[tuple[str, str]]) -> bytes:
    out = b""
    start = datetime(2024, 3, 1, 9, 0, tzinfo=UTC)
    for n, (subject, body) in enumerate(messages):
        m = EmailMessage()
        m["From"] = "Anna Weber <anna@example.org>"
        m["To"] = "me@example.org"
        m["Subject"] = subject
        m["Date"] = format_datetime(start + timedelta(hours=n))
        m["Message-ID"] = f"<seed-{n}@example.org>"
        m.set_content(body)
        out += b"From - Fri Mar 01 09:00:00 2024\n" + m.as_bytes().replace(b"\r\n", b"\n") + b"\n"
    return out


@pytest.mark.slow(seconds=40)
def test_a_hundred_secrets_of_ten_kinds_never_reach_the_index(home, instance, tmp_path):
    notes, mails = SEEDS[:50], SEEDS[50:]
    files = {f"note{n:02d}.md": f"# Note {n}\n\nHousehold things.\n\n{s.text}\n" for n, s in enumerate(notes)}
    home.add_source("notes", "files", str(write(tmp_path / "notes", files)), known=("files",))
    pairs = [mails[i : i + 2] for i in range(0, len(mails), 2)]
    # The first message of each pair carries its first secret in the subject too: the code a
    # sign-in mail announces there. Counted once more, in the subject and the title.
    messages = [(f"Mail {n}", "\n\n".join(s.text for s in pair)) for n, pair in enumerate(pairs)]
    write(tmp_path / "mail", {"inbox.mbox": _mbox(messages)})
    home.add_source("mail", "mail", str(tmp_path / "mail"), known=("mail",))
    for name in ("notes", "mail"):
        meta = materialize_source(home, instance, name)
        assert meta["documents"]["errors"] == [], meta["documents"]["errors"]
        assert meta["documents"]["secrets"]["records"] == {"redacted": 50 if name == "notes" else 25}

    leaks = {s.needle: in_bytes(home.root, s.needle) + holding(home.root, s.needle) for s in SEEDS}
    assert {needle: where for needle, where in leaks.items() if where} == {}

    report = cli_json("secrets", env={"RAGBAG_HOME": str(home.root)})
    by_source = {r["source"]: r for r in report["sources"]}
    total = {k: by_source["notes"]["kinds"].get(k, 0) + by_source["mail"]["kinds"].get(k, 0) for k in KINDS}
    assert total == dict.fromkeys(KINDS, 10), total
    assert len(by_source["notes"]["documents"]) == 50 and len(by_source["mail"]["documents"]) == 25
    listed = json.dumps(report)
    assert not [s.needle for s in SEEDS if s.needle in listed]  # where and what kind, never the text

    # What is left is searchable, the placeholder in place of the secret.
    hit = query.search("backup job access key", home=home, k=1).iloc[0]
    assert "[secret:aws-access-key]" in hit["text"]

    # `remove` takes the list with the source.
    cli("remove", "notes", env={"RAGBAG_HOME": str(home.root)})
    again = cli_json("secrets", env={"RAGBAG_HOME": str(home.root)})
    assert [r["source"] for r in again["sources"]] == ["mail"]
    assert not list(home.state_dir.glob("notes.secrets.json"))


@pytest.mark.slow(seconds=20)
def test_skip_leaves_the_record_out_and_keep_keeps_it(home, instance, tmp_path):
    seed = next(s for s in SEEDS if s.kind == "github-token")
    files = {
        "token.md": f"# Deploy\n\nThe ferret deploy token.\n\n{seed.text}\n",
        "plain.md": "# Ferret food\n\nPellets.",
    }
    for policy in ("skip", "keep"):
        home.add_source(
            policy, "files", str(write(tmp_path / policy, files)), known=("files",), options={"secrets": policy}
        )
        meta = materialize_source(home, instance, policy)
        assert meta["documents"]["secrets"]["records"] == {("skipped" if policy == "skip" else "kept"): 1}
    skipped = query.search("ferret deploy token", home=home, k=10, sources=["skip"])["uri"].tolist()
    assert [u.rsplit("/", 1)[1] for u in skipped] == ["plain.md"]
    kept = query.search("ferret deploy token", home=home, k=1, sources=["keep"]).iloc[0]
    assert seed.needle in kept["text"]
    # The CLI's build says what it kept out, and its JSON counts it.
    env = {"RAGBAG_HOME": str(home.root)}
    cli("add", "files", "plain", str(tmp_path / "keep"), env=env)
    shown = cli("build", "plain", env=env).stdout
    assert "plain: records holding secrets: 1 redacted (github-token ×1); `ragbag secrets` lists them" in shown
    assert seed.needle not in shown


def test_the_ocr_cache_keeps_no_secret(tmp_path, monkeypatch):
    """A screenshot of a password is read whole (the screen redacts it next) but cached redacted,
    as its source's screen would redact it; a source that keeps its secrets recognises it again
    and keeps it whole; a plain screenshot is cached as it is."""
    from ragbag.connectors import files
    from ragbag.core.records import Document
    from ragbag_evalsets.formats.pictures import screenshot

    cache = tmp_path / "cache"
    monkeypatch.setenv("RAGBAG_OCR_CACHE", str(cache))
    shots = write(
        tmp_path / "shots",
        {
            "wifi.png": screenshot([("h", "Home network"), ("t", "Wi-Fi password: Lavendel-2019-Kx")]),
            "menu.png": screenshot([("h", "Dinner menu"), ("t", "Pumpkin soup and bread")]),
        },
    )

    def read(options: dict) -> dict[str, str]:
        return {
            d.metadata["path"]: d.text
            for d in files.read(shots, "shots", None, options=options)
            if isinstance(d, Document)
        }

    def cached() -> str:
        return "".join(p.read_text() for p in cache.rglob("*.json"))

    texts = read({})
    assert "Lavendel-2019-Kx" in texts["wifi.png"] and "Pumpkin" in texts["menu.png"]
    assert "Pumpkin" in cached() and "Lavendel" not in cached() and "[secret:password]" in cached()
    assert "[secret:password]" in read({})["wifi.png"]  # from the cache: the screen counts it as the secret
    assert "Lavendel-2019-Kx" in read({"secrets": "keep"})["wifi.png"] and "Lavendel" in cached()
    read({})  # met again by a source that screens: kept redacted from now on
    assert "Lavendel" not in cached()


@pytest.mark.slow(seconds=20)
def test_a_new_rule_screens_what_was_stored_before_it(home, instance, tmp_path):
    """A home's rule added after a build applies to the records already indexed — unchanged files
    the cursor would vouch for, and the versions kept of an edited one — not only to new ones."""
    from ragbag.index.store import Store
    from ragbag.pipeline import history, screen

    notes = write(
        tmp_path / "notes", {"gym.md": "# Gym\n\nlocker combination QX-4471-ZZ\n", "plan.md": "v1 QX-5555-ZZ\n"}
    )
    home.add_source("notes", "files", str(notes), known=("files",))
    materialize_source(home, instance, "notes")
    (notes / "plan.md").write_text("v2 without it\n")  # the first text becomes a kept version
    materialize_source(home, instance, "notes")
    screen.add_rule(home, "locker", r"\bQX-\d{4}-ZZ\b")
    meta = materialize_source(home, instance, "notes")
    assert meta["documents"]["secrets"]["kinds"] == {"locker": 1}
    hit = query.search("locker combination", home=home, k=1).iloc[0]
    assert "[secret:locker]" in hit["text"] and "QX-4471" not in hit["text"]
    kept = history.texts(Store(home.lance_uri), "notes", [d for d in history.earlier(Store(home.lance_uri), "notes")])
    assert [v["text"] for vs in kept.values() for v in vs] == ["v1 [secret:locker]\n"]
