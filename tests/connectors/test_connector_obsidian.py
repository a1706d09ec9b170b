"""The obsidian connector: vaults as Obsidian leaves them, link resolution, traps, increments."""

from __future__ import annotations

import os
import unicodedata
from datetime import UTC, date, datetime
from pathlib import Path

import pytest
from conftest import sort_read

from ragbag.connectors import obsidian
from ragbag.core.records import Document, ReadError
from ragbag.models.embedding import token_counter
from ragbag_evalsets.formats.obsidian import Vault, link

MTIME = datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)


@pytest.fixture(scope="module")
def count():
    return token_counter()


def write(root: Path, files: dict[str, str | bytes]) -> Path:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
        os.utime(path, (MTIME.timestamp(), MTIME.timestamp()))
    return root


def read(path: Path, cursor=None) -> tuple[dict[str, Document], list[ReadError], list[str], dict]:
    docs, errors, seen, state = sort_read(obsidian.read(path, "vault", cursor))
    return {d.native_id: d for d in docs}, errors, seen, state


NOTE = """---
title: Project Alpha
aliases:
  - Alpha
  - PA
tags: [work, "#planning", 2024]
created: 2024-03-03
updated: "March 5, 2024 10:30"
author: "[[Ann Lee]]"
status: active
priority: 2
date: 2024-03-01
source: meeting
owners: [Ann, Bo]
nested:
  a: 1
related: "[[Plan]]"
---
# Alpha #kickoff

Talk to [[Ann Lee|Ann]] about [[Plan#Budget]] and [[Plan#^b1]], see ![[diagram.png|300]],
[the spec](Specs/Alpha%20spec.md), [notes](<Specs/Alpha spec.md>) and [[Ghost note]].
Nested #area/research tag, #1984 is a year, C# is a language, https://x.com/#frag, [[#Alpha]].
"""


def test_note_field_by_field(tmp_path):
    vault = write(
        tmp_path / "v",
        {
            "Projects/Alpha.md": NOTE,
            "Plan.md": "The plan.\n",
            "People/Ann Lee.md": "Ann.\n",
            "Specs/Alpha spec.md": "Spec.\n",
            "assets/diagram.png": b"\x89PNG",
        },
    )
    docs, errors, _, _ = read(vault)
    assert not errors
    doc = docs["Projects/Alpha.md"]
    assert doc.connector == "obsidian" and doc.source == "vault"
    assert doc.uri == str((vault / "Projects/Alpha.md").absolute())
    assert doc.title == "Project Alpha"
    assert doc.text == NOTE  # the note as written, properties included
    assert doc.created_at == datetime(2024, 3, 3, tzinfo=UTC)
    assert doc.updated_at == datetime(2024, 3, 5, 10, 30, tzinfo=UTC)
    assert doc.authors == ["Ann Lee"]
    meta = doc.metadata
    assert meta["path"] == "Projects/Alpha.md"
    assert meta["tags"] == ["work", "planning", "kickoff", "area/research"]  # 2024 and #1984: digits only
    assert meta["aliases"] == ["Alpha", "PA"]
    assert meta["links"] == ["People/Ann Lee.md", "Plan.md", "Specs/Alpha spec.md"]  # properties' first
    assert meta["attachments"] == ["assets/diagram.png"]
    assert meta["unresolved"] == ["Ghost note"]
    assert meta["status"] == "active" and meta["priority"] == 2 and meta["owners"] == ["Ann", "Bo"]
    assert meta["created"] == "2024-03-03" and meta["updated"] == "March 5, 2024 10:30"
    assert meta["property_date"] == "2024-03-01" and meta["property_source"] == "meeting"  # record fields
    assert "nested" not in meta and "title" not in meta and "frontmatter_error" not in meta
    assert docs["Plan.md"].title == "Plan" and docs["Plan.md"].created_at is None
    assert docs["Plan.md"].updated_at == MTIME


def test_code_math_and_comments_hide_tags_and_links(tmp_path):
    body = (
        "Visible #seen [[Seen]]\n\n"
        "```bash\n# comment #shell [[InCode]]\n```\n\n"
        "- item\n    ```css\n    a { color: #fff } [[InListCode]]\n    ```\n\n"
        "Inline `#code [[InSpan]]` and $#math [[InMath]]$ and\n$$\n#block [[InBlock]]\n$$\n"
        "%%\n#hidden [[InComment]]\n%%\n<!-- #html [[InHtml]] -->\n"
        "Inline comment %% #kept [[Kept]] %% as Obsidian indexes it; escaped \\#not and (#paren).\n"
    )
    docs, _, _, _ = read(write(tmp_path / "v", {"n.md": body}))
    meta = docs["n.md"].metadata
    assert meta["tags"] == ["seen", "kept", "paren"]
    assert meta["unresolved"] == ["Seen", "Kept"]


def test_links_resolve_as_obsidian_resolves_them(tmp_path):
    decomposed = unicodedata.normalize("NFD", "Café.md")
    vault = write(
        tmp_path / "v",
        {
            "Note.md": "root\n",
            "a/Note.md": "a\n",
            "a/b/Other.md": "ab\n",
            "zzzz/Other.md": "z\n",
            "a/Src.md": "[[Note]] [[Other]] [[b/Other]] [[meeting NOTES]] [[../Top]] [[./Note]] [[Café]] [[v1.2]]\n",
            "zzzz/Src2.md": "[[Other]] [Top](../Top.md) [x](Top.md) [[/a/Note]] [[Note.md]] ![[pic.PNG]]\n",
            "x/Meeting notes.md": "m\n",
            "Top.md": "top\n",
            decomposed: "c\n",
            "v1.2.md": "v\n",
            "pic.png": b"\x89PNG",
        },
    )
    docs, _, _, _ = read(vault)
    src = docs["a/Src.md"].metadata
    # root's Note.md wins over the note's own folder; own folder over the shortest path (Other:
    # not in a/, so the shortest path, "a/b/Other.md" over "zzzz/Other.md"); a path ending
    # ("b/Other"); case; "../"; "./" (from a/); NFD on disk, NFC in the link; a dotted name.
    assert src["links"] == [
        "Note.md",
        "a/b/Other.md",
        "x/Meeting notes.md",
        "Top.md",
        "a/Note.md",
        decomposed,
        "v1.2.md",
    ]
    assert src["unresolved"] == []
    src2 = docs["zzzz/Src2.md"].metadata
    assert src2["links"] == ["zzzz/Other.md", "Top.md", "a/Note.md", "Note.md"]
    assert src2["attachments"] == ["pic.png"]


def test_invalid_properties_cost_the_properties_not_the_note(tmp_path):
    vault = write(
        tmp_path / "v",
        {
            "template.md": "---\ncreated: {{date}}\ntags: [x]\n---\nBody #inline\n",
            "tab.md": "---\ntitle: a\n\tb: c\n---\nBody\n",
            "baddate.md": "---\ncreated: 2023-02-30\n---\nBody\n",
            "list.md": "---\n- a\n- b\n---\nBody\n",
            "unclosed.md": "---\ntitle: never closed\nBody #t\n",
        },
    )
    docs, errors, _, _ = read(vault)
    assert not errors and len(docs) == 5
    for name in ("template.md", "tab.md", "baddate.md", "list.md"):
        assert docs[name].metadata["frontmatter_error"], name
        assert docs[name].title == name[:-3]
    assert "unhashable" in docs["template.md"].metadata["frontmatter_error"]
    assert docs["template.md"].metadata["tags"] == ["inline"]
    assert "YAML list" in docs["list.md"].metadata["frontmatter_error"]
    unclosed = docs["unclosed.md"]
    assert "frontmatter_error" not in unclosed.metadata and unclosed.metadata["tags"] == ["t"]


def test_yaml_is_read_as_yaml_1_2(tmp_path):
    text = "---\nanswer: no\ncountry: NO\nswitch: on\nflag: true\nduration: 1:30\nmode: 010\n---\nx\n"
    docs, _, _, _ = read(write(tmp_path / "v", {"n.md": text}))
    meta = docs["n.md"].metadata
    assert (meta["answer"], meta["country"], meta["switch"], meta["flag"]) == ("no", "NO", "on", True)
    assert meta["duration"] == "1:30" and meta["mode"] == "010"


@pytest.mark.parametrize(
    ("properties", "name", "created"),
    [
        ("created: 2024-03-03T10:30:00+02:00", "n", datetime(2024, 3, 3, 8, 30, tzinfo=UTC)),
        ("Date Created: 3 March 2024", "n", datetime(2024, 3, 3, tzinfo=UTC)),
        ('created_at: "2024-03-03 10:30"', "n", datetime(2024, 3, 3, 10, 30, tzinfo=UTC)),
        ('date: "[[2024-03-03]]"', "n", datetime(2024, 3, 3, tzinfo=UTC)),
        ("created: <% tp.date.now() %>", "n", None),  # a template: no year, no date
        ("created: March 3", "n", None),  # dateutil would take this year: not a date
        ("status: x", "2024-03-03", datetime(2024, 3, 3, tzinfo=UTC)),  # a daily note
        ("status: x", "2024-02-30", None),
    ],
)
def test_dates(tmp_path, properties, name, created):
    docs, _, _, _ = read(write(tmp_path / "v", {f"{name}.md": f"---\n{properties}\n---\nbody\n"}))
    doc = docs[f"{name}.md"]
    assert doc.created_at == created
    assert doc.updated_at == MTIME


def test_hidden_folders_bad_files_and_wrong_paths(tmp_path):
    vault = write(
        tmp_path / "v",
        {
            "ok.md": "fine\n",
            "empty.md": "  \n",
            "binary.md": b"\x00\x01\x02" * 100,
            "latin.md": "caf\xe9 cr\xe8me\n".encode("cp1252"),
            ".obsidian/workspace.md": "settings\n",
            ".trash/old.md": "deleted\n",
            "sub/.hidden.md": "hidden\n",
        },
    )
    (vault / "out.md").symlink_to(tmp_path / "elsewhere.md")
    write(tmp_path, {"elsewhere.md": "outside\n"})
    docs, errors, _, _ = read(vault)
    assert set(docs) == {"ok.md", "latin.md"}
    assert docs["latin.md"].text == "café crème\n"
    why = {Path(e.uri).name: e.error for e in errors}
    assert why["empty.md"] == "empty note"
    assert "binary" in why["binary.md"].lower() or "not text" in why["binary.md"].lower()
    assert "outside the source folder" in why["out.md"]
    # the wrong things named: one ReadError each, saying what was expected
    write(tmp_path / "pics", {"a.png": b"\x89PNG"})
    _, errors, _, _ = read(tmp_path / "pics")
    assert [e.error for e in errors] == [f"no notes in this folder: {obsidian.NOT_A_VAULT}"]
    _, errors, _, _ = read(tmp_path / "pics" / "a.png")
    assert [e.error for e in errors] == [f"not an Obsidian note: {obsidian.NOT_A_VAULT}"]
    assert [e.error for e in read(tmp_path / "missing")[1]] == ["no such file or directory"]


def test_a_single_note_is_a_vault_of_one(tmp_path):
    path = write(tmp_path, {"one.md": "[[Other]] [[one]] #t\n"}) / "one.md"
    docs, errors, _, _ = read(path)
    assert not errors and list(docs) == ["one.md"]
    assert docs["one.md"].metadata["unresolved"] == ["Other"] and docs["one.md"].metadata["links"] == []


def test_incremental_refresh(tmp_path):
    vault = write(
        tmp_path / "v",
        {"Index.md": "[[Plan]] and [[Note]]\n", "sub/Note.md": "deep\n", "Other.md": "other\n", "Gone.md": "gone\n"},
    )
    docs, _, seen, cursor = read(vault)
    assert set(docs) == {"Index.md", "sub/Note.md", "Other.md", "Gone.md"} and not seen
    assert docs["Index.md"].metadata["unresolved"] == ["Plan"]
    assert docs["Index.md"].metadata["links"] == ["sub/Note.md"]

    docs, _, seen, cursor = read(vault, cursor)  # nothing changed: all Seen, nothing read
    assert not docs and sorted(seen) == ["Gone.md", "Index.md", "Other.md", "sub/Note.md"]

    (vault / "Gone.md").unlink()  # deleted: neither a document nor Seen
    write(vault, {"Other.md": "other, edited\n"})
    os.utime(vault / "Other.md", (MTIME.timestamp() + 60, MTIME.timestamp() + 60))
    docs, _, seen, cursor = read(vault, cursor)
    assert list(docs) == ["Other.md"] and docs["Other.md"].text == "other, edited\n"
    assert sorted(seen) == ["Index.md", "sub/Note.md"]

    write(vault, {"Plan.md": "the plan\n"})  # a new note resolves Index's [[Plan]]: Index is read again
    docs, _, seen, cursor = read(vault, cursor)
    assert set(docs) == {"Plan.md", "Index.md"}
    assert docs["Index.md"].metadata["links"] == ["Plan.md", "sub/Note.md"]
    assert docs["Index.md"].metadata["unresolved"] == []
    assert sorted(seen) == ["Other.md", "sub/Note.md"]

    write(vault, {"Note.md": "root note\n"})  # the root's Note.md takes [[Note]] over
    docs, _, seen, cursor = read(vault, cursor)
    assert set(docs) == {"Note.md", "Index.md"}
    assert docs["Index.md"].metadata["links"] == ["Plan.md", "Note.md"]

    (vault / "Plan.md").rename(vault / "Plan 2.md")  # renamed: old id gone, the link unresolved again
    docs, _, seen, cursor = read(vault, cursor)
    assert set(docs) == {"Plan 2.md", "Index.md"} and "Plan.md" not in seen
    assert docs["Index.md"].metadata["unresolved"] == ["Plan"]

    _, _, seen, _ = read(vault, {"version": "obsidian-0", "notes": cursor["notes"]})  # another version
    assert not seen


def test_spans_keep_the_property_block_whole(tmp_path, count):
    props = "---\ntitle: T\ntags: [a, b]\nstatus: draft\n---\n"
    body = "# Heading\n\n" + "\n\n".join(f"Paragraph {i} " + "word " * 40 for i in range(12))
    docs, _, _, _ = read(write(tmp_path / "v", {"n.md": props + body, "short.md": props + "Short body.\n"}))
    doc = docs["n.md"]
    spans = obsidian.spans(doc, count, 120)
    assert spans[0].start == 0 and doc.text[spans[0].start : spans[0].end].startswith("---\ntitle: T")
    assert doc.text[: spans[0].end].count("---") >= 2  # the block is not cut at its last line
    assert all(count(doc.text[s.start : s.end]) <= 120 for s in spans)
    assert all(a.end <= b.start for a, b in zip(spans, spans[1:]))
    short = obsidian.spans(docs["short.md"], count, 120)
    assert len(short) == 1 and docs["short.md"].text[short[0].start : short[0].end].endswith("Short body.")
    long_props = "---\n" + "".join(f"key{i}: value {i}\n" for i in range(80)) + "---\n"
    docs, _, _, _ = read(write(tmp_path / "w", {"n.md": long_props + "Body text.\n"}))
    spans = obsidian.spans(docs["n.md"], count, 60)
    assert len(spans) > 2 and all(count(docs["n.md"].text[s.start : s.end]) <= 60 for s in spans)
    assert docs["n.md"].text[spans[-1].start : spans[-1].end] == "Body text."


def test_what_the_evalsets_writer_writes_reads_back(tmp_path):
    v = Vault()
    v.note(
        "Projects/Garden",
        f"Plant tomatoes, see {link('Seeds', alias='the seed list')} and {link('plan.pdf', embed=True)}. #outdoor",
        tags=["home"],
        aliases=["Vegetable garden"],
        created=date(2025, 4, 1),
        extra={"status": "active", "yes": "no"},
    )
    v.note("Seeds", "Cherry, San Marzano.")
    v.daily(date(2025, 4, 2), f"Watered the {link('Garden')}.")
    v.attachment("Attachments/plan.pdf", b"%PDF-1.4")
    write(tmp_path / "v", v.files)
    docs, errors, _, _ = read(tmp_path / "v")
    assert not errors and set(docs) == {"Projects/Garden.md", "Seeds.md", "Daily/2025-04-02.md"}
    garden = docs["Projects/Garden.md"]
    assert garden.created_at == datetime(2025, 4, 1, tzinfo=UTC)
    assert garden.metadata["tags"] == ["home", "outdoor"] and garden.metadata["aliases"] == ["Vegetable garden"]
    assert garden.metadata["links"] == ["Seeds.md"] and garden.metadata["attachments"] == ["Attachments/plan.pdf"]
    assert garden.metadata["status"] == "active" and garden.metadata["yes"] == "no"
    daily = docs["Daily/2025-04-02.md"]
    assert daily.created_at == datetime(2025, 4, 2, tzinfo=UTC)
    assert daily.metadata["links"] == ["Projects/Garden.md"]


@pytest.mark.parametrize("unit", ["[", "[[", "`", "``a", "$", "a", "#", "[x](", "%%", "<!--", "[[a]"])
def test_hostile_lines_cost_their_length(tmp_path, unit):
    """No pattern rescans a long line from every position (each would take minutes)."""
    import time

    line = unit * (300_000 // len(unit))
    write(tmp_path / "v", {"n.md": f"---\ntitle: x\n---\n{line}\n{line}:// [[y]] #t\n"})
    started = time.perf_counter()
    docs, errors, _, _ = read(tmp_path / "v")
    assert time.perf_counter() - started < 5, unit
    assert "n.md" in docs or errors
