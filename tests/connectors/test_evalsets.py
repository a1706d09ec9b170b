"""The evaluation homes, pinned: both sets generated afresh match ``evalsets/manifest.json``, every
file's sha256 and time, ``home.json`` and ``queries.jsonl``. Every score in the project is measured
on these homes, so a change to a persona's data, to the generator or to a format writer must not
move them unnoticed; a deliberate one rewrites the manifest in the same commit:
``.venv/bin/python tests/connectors/test_evalsets.py``.

Drawn pictures, office files and SQLite databases carry the libraries that wrote them (Pillow and
the fonts it finds, python-docx, openpyxl, zlib, SQLite's version in every database header), and
mail carries them as attachments: their bytes are pinned for the environment the manifest
records, and elsewhere that test skips. What only Python writes (calendars, chat exports, code,
text notes, the queries) and every file's time are pinned on any machine.

Fast: both sets take about a second to generate; nothing is read back.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import sys
import zlib
from importlib.metadata import version
from pathlib import Path

import pytest

import ragbag_evalsets

MANIFEST = Path(__file__).resolve().parents[2] / "evalsets" / "manifest.json"
# Sources whose files no library but Python's own writes.
PORTABLE_SOURCES = (
    *("calendar", "chatgpt", "claude", "code", "wechat"),
    *("whatsapp", "telegram", "obsidian", "slack", "takeout", "contacts"),
)


def environment() -> dict:
    from PIL import features

    from ragbag_evalsets.formats.pictures import font_files

    return {
        "sqlite": sqlite3.sqlite_version,
        "zlib": zlib.ZLIB_RUNTIME_VERSION,
        **{name: version(name) for name in ("pillow", "python-docx", "openpyxl")},
        **{f"pillow {lib}": features.version(lib) for lib in ("freetype2", "jpg", "zlib")},
        "fonts": font_files(),
    }


def generated(tmp: Path) -> dict[str, dict[str, list]]:
    """Each set's files: relative path -> [sha256, mtime in ns] (no time for home.json and
    queries.jsonl, which the generator writes without one)."""
    sets: dict[str, dict[str, list]] = {}
    for name in ragbag_evalsets.SETS:
        root = ragbag_evalsets.generate(name, tmp / name)
        sets[name] = {
            p.relative_to(root).as_posix(): [
                hashlib.sha256(p.read_bytes()).hexdigest(),
                p.stat().st_mtime_ns if p.parent != root else None,
            ]
            for p in sorted(root.rglob("*"))
            if p.is_file()
        }
    return sets


def _portable(rel: str) -> bool:
    parts = rel.split("/")
    if len(parts) == 1:
        return True  # home.json, queries.jsonl
    return parts[1] in PORTABLE_SOURCES or (parts[1] == "notes" and rel.endswith((".md", ".txt", ".html")))


@pytest.fixture(scope="module")
def pinned() -> dict:
    return json.loads(MANIFEST.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> dict[str, dict[str, list]]:
    return generated(tmp_path_factory.mktemp("evalsets"))


def test_every_file_its_time_and_what_python_alone_writes_are_pinned(pinned, made):
    assert sorted(made) == sorted(pinned["sets"])
    for name, files in made.items():
        want = pinned["sets"][name]
        assert sorted(files) == sorted(want), f"{name}: files added or gone"
        assert {rel: f[1] for rel, f in files.items()} == {rel: f[1] for rel, f in want.items()}, name
        changed = [rel for rel in files if _portable(rel) and files[rel][0] != want[rel][0]]
        assert not changed, f"{name}: {changed}"


def test_every_files_bytes_are_pinned(pinned, made):
    here = environment()
    if here != pinned["environment"]:
        other = {k: (pinned["environment"].get(k), v) for k, v in here.items() if pinned["environment"].get(k) != v}
        pytest.skip(f"the manifest was written with other libraries (manifest, here): {other}")
    changed = [
        (name, rel) for name, files in made.items() for rel, f in files.items() if f != pinned["sets"][name][rel]
    ]
    assert not changed


if __name__ == "__main__":  # rewrite the manifest after a deliberate change to a set
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        sets = generated(Path(tmp))
    about = "What the evaluation homes hold, pinned by tests/connectors/test_evalsets.py: [sha256, mtime ns] per file."
    dump = lambda value: json.dumps(value, ensure_ascii=False)  # noqa: E731
    blocks = [
        f"  {dump(name)}: {{\n" + ",\n".join(f"   {dump(rel)}: {dump(f)}" for rel, f in files.items()) + "\n  }"
        for name, files in sets.items()
    ]
    head = f'{{\n "about": {dump(about)},\n "environment": {dump(environment())},\n "sets": {{\n'
    MANIFEST.write_text(head + ",\n".join(blocks) + "\n }\n}\n", encoding="utf-8")
    print(
        f"wrote {MANIFEST}: {', '.join(f'{name} {len(files)} files' for name, files in sets.items())}", file=sys.stderr
    )
