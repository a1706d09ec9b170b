"""Issue 31's classes for the files and code connectors, on files from public test suites
(``tests/fixtures/public/files``, ``tests/fixtures/realworld/files``): each failed before the
isolation boundary and the readers of this issue."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
from conftest import FIXTURES

from ragbag.connectors import code, files
from ragbag.core.records import Document, ReadError
from ragbag.pipeline.ingest import _document_rows
from ragbag.text import documents

FIXTURES = FIXTURES
PUBLIC = FIXTURES / "public" / "files"
HTML = FIXTURES / "realworld" / "files" / "readability" / "001.html"


def _split(items) -> tuple[list[Document], list[ReadError]]:
    items = list(items)
    return [i for i in items if isinstance(i, Document)], [i for i in items if isinstance(i, ReadError)]


def _stored(docs: list[Document]) -> None:
    """The documents step's own Arrow rows: what failed the whole build for a surrogate."""
    _document_rows(docs, {d.doc_id: (1, datetime.now(UTC)) for d in docs})


@pytest.mark.parametrize("connector", [files, code])
def test_a_file_name_with_a_non_utf8_byte_is_read_and_storable(tmp_path, connector):
    folder = tmp_path / "notes"
    folder.mkdir()
    shutil.copy(HTML, folder / "good.html")
    shutil.copy(HTML, os.fsdecode(bytes(folder) + b"/caf\xe9 menu.html"))  # Latin-1 name, as old zips leave them
    docs, errors = _split(connector.read(folder, "notes"))
    assert len(docs) == 2 and not errors
    _stored(docs)  # raised UnicodeEncodeError: surrogates not allowed
    assert any("café menu.html" in d.uri for d in docs)


@pytest.mark.parametrize("connector", [files, code])
def test_a_file_time_in_the_year_14645_costs_the_date_not_the_file(tmp_path, connector, monkeypatch):
    folder = tmp_path / "notes"
    folder.mkdir()
    shutil.copy(HTML, folder / "future.html")
    shutil.copy(HTML, folder / "normal.html")
    # ext4 stores times up to 2446 (this machine's disk clamps to it); XFS, btrfs and a zip's
    # extended timestamps hold more, so the file's stat is what such a disk returns.
    real = Path.stat

    def stat(self, *args, **kwargs):
        st = real(self, *args, **kwargs)
        if self.name != "future.html":
            return st
        fields = list(st)
        fields[8] = 400_000_000_000  # st_mtime: the year 14645
        return os.stat_result(fields, {"st_mtime": 400_000_000_000.0, "st_mtime_ns": 400_000_000_000 * 10**9})

    monkeypatch.setattr(Path, "stat", stat)
    docs, errors = _split(connector.read(folder, "notes"))
    assert len(docs) == 2 and not errors  # ValueError: year 14645 is out of range
    by_name = {Path(d.uri).name: d for d in docs}
    assert by_name["future.html"].updated_at is None and by_name["normal.html"].updated_at is not None
    _stored(docs)


def test_any_exception_in_one_file_is_that_files_error(tmp_path, monkeypatch):
    """The boundary catches any exception, not a list of types: a parser's AttributeError in
    one file leaves the other files read."""
    folder = tmp_path / "docs"
    folder.mkdir()
    shutil.copy(HTML, folder / "a.html")
    shutil.copy(HTML, folder / "b.html")
    real = documents.html_text

    def broken(text):
        if broken.calls == 0:
            broken.calls += 1
            raise AttributeError("'NoneType' object has no attribute 'group'")
        return real(text)

    broken.calls = 0
    monkeypatch.setattr(documents, "html_text", broken)
    docs, errors = _split(files.read(folder, "docs"))
    assert [Path(d.uri).name for d in docs] == ["b.html"]
    assert [(Path(e.uri).name, e.error) for e in errors] == [
        ("a.html", "AttributeError: 'NoneType' object has no attribute 'group'")
    ]


@pytest.mark.parametrize(
    "name, words",
    [
        ("python-docx/features__steps__test_files__tbl-having-applied-style.docx", None),
        ("python-pptx/features__steps__test_files__shp-autoshape-props.pptx", "Fum"),
        ("odfpy/tests__examples__serious_poem.odt", None),
        ("epubcheck/src__test__resources__epub3__00-minimal__files__minimal.epub", None),
    ],
)
def test_office_documents_and_epubs_in_a_folder_are_read(tmp_path, name, words):
    """Each gave "success, 0 documents" before: the folder walk did not even look at them."""
    from tests.differential.files import reference_words

    folder = tmp_path / "docs"
    folder.mkdir()
    shutil.copy(PUBLIC / name, folder / name.rsplit("__", 1)[-1])
    docs, errors = _split(files.read(folder, "docs"))
    assert len(docs) == 1 and not errors
    expected = reference_words(PUBLIC / name)
    assert expected and all(w in docs[0].text.lower() for w in expected[:20])
    if words:
        assert words in docs[0].text
    _stored(docs)


def test_documents_in_formats_nobody_reads_are_named(tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    for name in ("old.doc", "sheet.xls", "slides.key"):
        (folder / name).write_bytes(b"\xd0\xcf\x11\xe0 not read")
    shutil.copy(HTML, folder / "page.html")
    docs, errors = _split(files.read(folder, "docs"))
    assert len(docs) == 1
    assert sorted(Path(e.uri).name for e in errors) == ["old.doc", "sheet.xls", "slides.key"]
    assert all(e.error.startswith("unsupported format: ") for e in errors)


def test_a_markdown_title_of_a_million_spaces_reads_in_one_pass(tmp_path):
    """The title pattern backtracked quadratically on a long run of spaces (hours for this
    file). Run in a child process with a guard far above the linear cost, so a regression
    fails rather than hangs the suite; the ratio per doubling is in benchmarks/pathological.py."""
    note = tmp_path / "note.md"
    note.write_text("# " + " " * 1_000_000 + "x\n\n```\n# not a title\n" + "```\n" * 2000 + "body\n")
    script = "import sys; from ragbag.connectors import files; d = next(files.read(sys.argv[1], 's')); print(d.title)"
    done = subprocess.run([sys.executable, "-c", script, str(note)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "x", done.stderr[-500:]


def test_the_markdown_title_scan_visits_each_line_once(monkeypatch):
    """The count behind the test above: the title scan holds no regular expression and looks at
    each line once, so its work is the text's length (doubling the lines doubles the visits)."""
    from ragbag.text import markdown

    assert "re" not in vars(markdown)
    visits: list[int] = []
    real = markdown._lines

    def counting(text):
        for line in real(text):
            visits.append(len(line))
            yield line

    monkeypatch.setattr(markdown, "_lines", counting)
    for n in (1000, 2000):
        markdown.markdown_title("```\n" * n + " " * n + "\n")
    assert len(visits) == 1002 + 2002
