"""The names a publish counts (``ragbag.pipeline.people_names``): a refresh updates the version
before's count by what came and went, and gets what counting every row anew gets."""

from __future__ import annotations

import json

import pyarrow as pa

from ragbag.index import published
from ragbag.pipeline import people_names


def _rows(*metadata: dict | None) -> pa.Table:
    return pa.table({"metadata": [json.dumps(m) if m is not None else None for m in metadata]})


def _version(folder, rows: pa.Table, counts: dict[str, int]):
    folder.mkdir()
    published.write_rows(folder, rows, None)
    published.write_people(folder, counts)
    return folder


ANNA = {"from": "Anna Weber <anna@example.org>", "to": ["Jan Hoffmann <jan@example.org>"]}
BEN = {"sender": "Ben Okafor", "participants": ["+4917012345", "Jan Hoffmann"], "chat": "Climbing group"}
CAROL = {"organizer": "Carol Diaz <carol@example.org>", "attendees": [["chair", "Dev Patel"]]}


def test_a_refresh_counts_what_came_and_went_as_counting_anew_does(tmp_path, monkeypatch):
    first = _rows(ANNA, ANNA, BEN, None, {"title": "no people"})  # a mail of two chunks, a chat, others
    counted = people_names.count(first, None, "s")
    assert counted == {"Anna Weber": 2, "Ben Okafor": 1, "Jan Hoffmann": 3}  # a chat's title names no one
    before = _version(tmp_path / "v1", first, counted)
    second = _rows(ANNA, BEN, CAROL, {**BEN, "sender": "Me"})  # a chunk gone, an event and a message came
    read: list[int] = []
    names = people_names._names
    monkeypatch.setattr(people_names, "_names", lambda texts: read.append(sum(texts.values())) or names(texts))
    again = people_names.count(second, before, "s")
    assert read == [2, 3]  # came: the event, the message; went: a chunk of the mail, two without people
    assert again == people_names.count(second, None, "s")
    assert again == {"Anna Weber": 1, "Ben Okafor": 1, "Carol Diaz": 1, "Dev Patel": 1, "Jan Hoffmann": 3, "Me": 1}


def test_a_version_before_without_a_count_or_a_damaged_one_is_counted_anew(tmp_path):
    rows = _rows(ANNA, CAROL)
    expected = people_names.count(rows, None, "s")
    old = tmp_path / "old"
    old.mkdir()
    published.write_rows(old, _rows(BEN), None)  # published before names were counted
    assert people_names.count(rows, old, "s") == expected
    damaged = _version(tmp_path / "damaged", _rows(BEN), {"Ben Okafor": 1})
    (damaged / published.PEOPLE).write_text("{not json")
    assert people_names.count(rows, damaged, "s") == expected


def test_a_version_before_whose_rows_are_cut_short_is_counted_anew(tmp_path):
    rows = _rows(ANNA, CAROL)
    cut = _version(tmp_path / "cut", _rows(BEN, BEN), {"Ben Okafor": 2})
    data = (cut / published.ROWS).read_bytes()
    (cut / published.ROWS).write_bytes(data[: len(data) // 2])
    assert people_names.count(rows, cut, "s") == people_names.count(rows, None, "s")


def test_a_version_before_with_damaged_spellings_is_spelled_anew(tmp_path):
    counts = {"陈静": 1, "Anna Weber": 2}
    expected = people_names.spell(counts, None, "s")
    assert "陈静" in expected
    for bad in ("{not json", '{"rules": 1, "names": {"陈静": "chen jing"}}', "[]"):
        damaged = tmp_path / f"v{len(bad)}"
        damaged.mkdir()
        (damaged / published.SPELLINGS).write_text(bad)
        assert people_names.spell(counts, damaged, "s") == expected
