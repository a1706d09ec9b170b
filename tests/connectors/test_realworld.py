"""Every connector over the real-world fixture corpus (tests/fixtures/realworld, issue 17).

Per file, what a faithful reader should produce was written down in ``expectations.json`` after
reading the file: records in the source, documents out, errors reported, and checks on content.
Where a connector misreads a file today, the expectation carries ``xfail`` (the defect, stated
precisely) and the case is a strict xfail: it starts failing the day the defect is fixed, so the
mark is removed and the expectation then guards the fix. Expectations are never loosened to
make a case pass.

``python tests/connectors/test_realworld.py`` prints the per-connector summary table kept in the corpus
README.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import sys
from pathlib import Path

import pytest
from conftest import FIXTURES, ROOT

REALWORLD = FIXTURES / "realworld"
EXPECTATIONS: dict[str, dict] = json.loads((REALWORLD / "expectations.json").read_text(encoding="utf-8"))
BLOBS = REALWORLD / "imessage" / "imessage-exporter"


def read(connector: str, path: Path) -> tuple[list, list]:
    """(Documents, ReadErrors) of one connector read of ``path``."""
    from ragbag import connectors
    from ragbag.core.records import Cursor, Document, ReadError, Seen

    docs, errors = [], []
    for item in connectors.get(connector).read(str(path), "rw", None):
        if isinstance(item, Document):
            docs.append(item)
        elif isinstance(item, ReadError):
            errors.append(item)
        else:
            assert isinstance(item, (Seen, Cursor))
    ids = [d.native_id for d in docs]
    assert len(ids) == len(set(ids)), f"duplicate native ids in {path}"
    return docs, errors


def _in(value, expected) -> bool:
    if isinstance(expected, list):
        return expected[0] <= value <= expected[1]
    return value == expected


def _meta_has(doc, key, value) -> bool:
    got = doc.metadata.get(key)
    return got == value or (isinstance(got, (list, tuple)) and value in got)


def failures(rel: str, exp: dict) -> list[str]:
    """What differs between the expectation for ``rel`` and a read of it (empty: all good)."""
    docs, errors = read(exp["connector"], REALWORLD / rel)
    out = []
    # A mail's attachments are documents (and reports) of their own: held to their own count,
    # none where the expectation names none, so the message counts below stay the messages'.
    kids = [d for d in docs if "parent_doc_id" in d.metadata]
    kid_errors = [e for e in errors if "attachment=" in e.uri]
    docs = [d for d in docs if "parent_doc_id" not in d.metadata]
    errors = [e for e in errors if "attachment=" not in e.uri]
    want = exp.get("attachments", {"documents": 0, "errors": 0})
    got = {"documents": sorted(d.metadata["filename"] for d in kids), "errors": len(kid_errors)}
    if got != {"documents": sorted(want.get("files", [])), "errors": want["errors"]} or len(kids) != want["documents"]:
        out.append(f"attachments: expected {want}, got {got}: " + "; ".join(e.error for e in kid_errors))
    if not _in(len(docs), exp["documents"]):
        out.append(f"documents: expected {exp['documents']}, got {len(docs)}")
    if not _in(len(errors), exp["errors"]):
        out.append(
            f"errors: expected {exp['errors']}, got {len(errors)}: " + "; ".join(f"{e.uri}: {e.error}" for e in errors)
        )
    if "accounted" in exp and len(docs) + len(errors) != exp["accounted"]:
        out.append(
            f"records accounted for (documents + errors): expected {exp['accounted']}, got {len(docs) + len(errors)}"
        )
    texts = [f"{d.title}\n{d.text}" for d in docs]
    for check in exp.get("checks", []):
        if "contains" in check:
            ok = any(check["contains"] in t for t in texts)
        elif "not_contains" in check:
            ok = not any(check["not_contains"] in t for t in texts)
        elif "body_contains" in check:  # mail: the text below the From · To · Date summary line
            ok = any(check["body_contains"] in d.text.partition("\n")[2] for d in docs)
        elif "title" in check:
            ok = any(d.title == check["title"] for d in docs)
        elif "meta" in check:
            ok = any(_meta_has(d, check["meta"], check["value"]) for d in docs)
        else:
            raise AssertionError(f"unknown check {check}")
        if not ok:
            out.append(f"check failed: {check}")
    return out


def _cases():
    for rel, exp in sorted(EXPECTATIONS.items()):
        marks = [pytest.mark.xfail(strict=True, reason=exp["xfail"])] if exp.get("xfail") else []
        yield pytest.param(rel, id=rel, marks=marks)


def test_every_fixture_has_an_expectation():
    """No file of the corpus escapes the comparison (the raw attributedBody blobs are read by
    the chat.db tests below, the README and expectations are not data)."""
    files = {p.relative_to(REALWORLD).as_posix() for p in REALWORLD.rglob("*") if p.is_file()}
    files -= {"README.md", "expectations.json"}
    files = {f for f in files if not f.startswith("imessage/imessage-exporter/")}
    assert files == set(EXPECTATIONS)


@pytest.mark.parametrize("rel", list(_cases()))
def test_realworld_file(rel):
    problems = failures(rel, EXPECTATIONS[rel])
    assert not problems, f"{rel}:\n  " + "\n  ".join(problems)


@pytest.mark.parametrize("connector", ["calendar", "mail", "browser", "files"])
def test_folder_read_equals_file_reads(connector):
    """Reading a connector's whole part of the corpus as one folder gives, per document, what
    reading each file alone gives: nothing one file holds changes how another is read."""
    folder = REALWORLD / connector
    whole, _ = read(connector, folder)
    alone = {}
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        for d in read(connector, path)[0]:
            alone[(d.title, d.created_at, d.text.split("\n", 1)[0])] = d
    for d in whole:
        key = (d.title, d.created_at, d.text.split("\n", 1)[0])
        assert key in alone, f"{d.native_id}: read differently in the folder than alone ({key})"


# --- chat.db: the real schema of plaso's imessage_chat.db plus real attributedBody blobs -------


def _chat_db_with_blobs(tmp_path: Path, names: list[str]) -> Path:
    """plaso's chat.db (a real macOS database) with one message per blob added to its first
    chat, text NULL and the blob as attributedBody, a minute apart (one window)."""
    db = tmp_path / "chat.db"
    shutil.copy(REALWORLD / "imessage" / "plaso" / "imessage_chat.db", db)
    con = sqlite3.connect(db)
    cols = [r[1] for r in con.execute("PRAGMA table_info(message)")]
    template = dict(zip(cols, con.execute("SELECT * FROM message WHERE ROWID = 1").fetchone()))
    chat_id = con.execute("SELECT chat_id FROM chat_message_join WHERE message_id = 1").fetchone()[0]
    base = con.execute("SELECT MAX(date) FROM message").fetchone()[0] + 86400
    for i, name in enumerate(names):
        row = dict(
            template,
            ROWID=1000 + i,
            guid=f"REALWORLD-BLOB-{i}",
            text=None,
            attributedBody=(BLOBS / name).read_bytes(),
            date=base + 60 * i,
        )
        con.execute(f"INSERT INTO message ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})", list(row.values()))
        con.execute("INSERT INTO chat_message_join (chat_id, message_id) VALUES (?, ?)", (chat_id, 1000 + i))
    con.commit()
    con.close()
    return db


def _blob_window(tmp_path, names):
    docs, errors = read("imessage", _chat_db_with_blobs(tmp_path, names))
    window = [d for d in docs if d.native_id.endswith("/REALWORLD-BLOB-0")]
    return docs, errors, window


def test_imessage_real_attributed_bodies(tmp_path):
    names = ["AttributedBodyTextOnly", "AttributedBodyTextOnly2", "WeirdText", "URL"]
    docs, errors, window = _blob_window(tmp_path, names)
    assert not errors
    assert len(docs) == 6 + 1 and len(window) == 1
    for text in ["Noter test", "Test 3", "𝖍𝖊𝖑𝖑𝖔 𝖜𝖔𝖗𝖑𝖉", "https://github.com/ReagentX/Logria"]:
        assert text in window[0].text


def test_imessage_attachment_placeholders_do_not_glue_words(tmp_path):
    docs, errors, window = _blob_window(tmp_path, ["MultiPart"])
    assert not errors and len(window) == 1
    assert "test 1test 2" not in window[0].text
    assert "test 1" in window[0].text and "test 3" in window[0].text


def test_imessage_overlong_declared_length_keeps_text(tmp_path):
    docs, errors, window = _blob_window(tmp_path, ["ExtraData"])
    assert not errors
    assert len(window) == 1 and "This is parsing" in window[0].text


# --- summary ------------------------------------------------------------------------------------


def summary() -> str:
    """Per connector: files, records in the source, documents and errors read (today)."""
    rows: dict[str, list[int]] = {}
    for rel, exp in sorted(EXPECTATIONS.items()):
        docs, errors = read(exp["connector"], REALWORLD / rel)
        r = rows.setdefault(exp["connector"], [0, 0, 0, 0, 0, 0])
        r[0] += 1
        r[1] += exp["records_in_source"]
        r[2] += len(docs)
        r[3] += len(errors)
        r[4] += 1 if exp.get("xfail") else 0
        r[5] += 1 if (not docs and not errors and exp["records_in_source"]) else 0
    lines = [
        "| connector | files | records in source | documents | errors | files with a known defect | files silently empty |",
        "|---|---|---|---|---|---|---|",
    ]
    for conn, r in rows.items():
        lines.append(f"| {conn} | " + " | ".join(str(x) for x in r) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    print(summary())
