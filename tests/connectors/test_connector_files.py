"""The files connector: what each format's text looks like, and that bad files never stop a walk."""

from __future__ import annotations

import json
import os
from datetime import UTC
from pathlib import Path

import pytest

from ragbag.connectors import files
from ragbag.core.records import Document, ReadError
from ragbag.models.embedding import token_counter
from ragbag_evalsets.formats.pdf import pdf_file


@pytest.fixture(scope="module")
def count():
    return token_counter()


def make_pdf(pages: list[list[str]], title: str = "") -> bytes:
    """A minimal valid PDF: one Helvetica text stream per page, byte-exact xref table."""

    def esc(s: str) -> str:
        return s.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")

    n = len(pages)
    kids = " ".join(f"{4 + 2 * i} 0 R" for i in range(n))
    objs = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Kids [{kids}] /Count {n} >>".encode(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    for i, lines in enumerate(pages):
        ops = ["BT", "/F1 12 Tf", "14 TL", "72 720 Td"]
        ops += [f"({esc(line)}) Tj T*" for line in lines]
        stream = "\n".join(ops + ["ET"]).encode("latin-1")
        objs.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            f"/Resources << /Font << /F1 3 0 R >> >> /Contents {5 + 2 * i} 0 R >>".encode()
        )
        objs.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    info = ""
    if title:
        objs.append(f"<< /Title ({esc(title)}) >>".encode())
        info = f" /Info {len(objs)} 0 R"
    return pdf_file(objs, info)


PAGES = [
    ["Alpha page one talks about apples.", "Apples grow on trees in orchards."],
    ["Beta page two talks about bananas.", "Bananas grow in tropical climates."],
    ["Gamma page three talks about cherries.", "Cherries are small stone fruits."],
]

MARKDOWN = """Intro line before any heading.

# Field Guide

Owls hunt at night and sleep by day.

## Feeding

Owls eat mice, voles and insects.
"""

HTML = """<!doctype html>
<html><head><title> Owl Facts </title><style>.x { color: red }</style>
<script>var tracking = "SCRIPTNOISE";</script></head>
<body>
<header><p>HEADERNOISE site banner</p></header>
<nav><a href="/">NAVNOISE home</a></nav>
<main>
  <h1>All about owls</h1>
  <p>Owls are   birds
     of prey.</p>
  <h2>Sight</h2>
  <p>They see well<br>in the dark.</p>
  <ul><li>Barn owl</li><li>Snowy owl</li></ul>
  <pre>def hoot():
    return "hoo"</pre>
  <!-- COMMENTNOISE -->
</main>
<aside>ASIDENOISE related links</aside>
<footer>FOOTERNOISE copyright</footer>
<noscript>NOSCRIPTNOISE</noscript>
</body></html>
"""


def read_all(path: Path, source: str = "docs") -> tuple[dict[str, Document], list[ReadError]]:
    docs, errors = {}, []
    for rec in files.read(path, source):
        if isinstance(rec, ReadError):
            errors.append(rec)
        else:
            docs[rec.native_id] = rec
    return docs, errors


def test_markdown_title_metadata_and_sections(tmp_path, count):
    (tmp_path / "guide.md").write_text(MARKDOWN, encoding="utf-8")
    (tmp_path / "notes.txt").write_text("Plain notes.\n", encoding="utf-8")
    docs, errors = read_all(tmp_path)
    assert errors == []
    doc = docs["guide.md"]
    assert doc.title == "Field Guide"
    assert doc.connector == "files" and doc.source == "docs"
    assert doc.uri == str((tmp_path / "guide.md").absolute())
    assert doc.text == MARKDOWN
    assert doc.created_at is None
    assert doc.updated_at.tzinfo is not None and doc.updated_at.utcoffset().total_seconds() == 0
    assert doc.metadata == {
        "path": "guide.md",
        "ext": "md",
        "format": "markdown",
        "size": len(MARKDOWN.encode()),
        "encoding": "utf-8",
    }
    json.dumps(doc.metadata)
    assert docs["notes.txt"].title == "notes.txt"

    chunks = [doc.text[s.start : s.end] for s in files.spans(doc, count, 254)]
    assert chunks == [
        "Intro line before any heading.",
        "# Field Guide\n\nOwls hunt at night and sleep by day.",
        "## Feeding\n\nOwls eat mice, voles and insects.",
    ]


def test_markdown_title_skips_code_blocks_and_reads_setext(tmp_path):
    (tmp_path / "a.md").write_text("Intro\n\n```sh\n# install\npip install x\n```\n\n# Real\n")
    (tmp_path / "b.md").write_text("Setext Title\n============\n\nBody.\n")
    (tmp_path / "c.md").write_text("## Only a subheading\n")
    docs, _ = read_all(tmp_path)
    assert [docs[n].title for n in ("a.md", "b.md", "c.md")] == ["Real", "Setext Title", "c.md"]


def test_html_keeps_main_text_and_drops_noise(tmp_path, count):
    (tmp_path / "owls.html").write_text(HTML, encoding="utf-8")
    docs, errors = read_all(tmp_path)
    assert errors == []
    doc = docs["owls.html"]
    assert doc.title == "Owl Facts"
    for noise in (
        "SCRIPTNOISE",
        "HEADERNOISE",
        "NAVNOISE",
        "ASIDENOISE",
        "FOOTERNOISE",
        "NOSCRIPTNOISE",
        "COMMENTNOISE",
        "color: red",
        "Owl Facts",
    ):
        assert noise not in doc.text
    assert doc.text.startswith("# All about owls\n\nOwls are birds of prey.\n\n## Sight\n\n")
    assert "They see well\nin the dark." in doc.text
    assert "Barn owl\n\nSnowy owl" in doc.text
    assert 'def hoot():\n    return "hoo"' in doc.text  # <pre> keeps its indentation
    chunks = [doc.text[s.start : s.end] for s in files.spans(doc, count, 254)]
    assert chunks[0] == "# All about owls\n\nOwls are birds of prey."
    assert chunks[1].startswith("## Sight")


def test_html_title_falls_back_to_h1_then_name_and_form_wrapped_pages_survive(tmp_path):
    (tmp_path / "a.htm").write_text("<body><form><h1>Wrapped</h1><p>Body text.</p></form></body>")
    (tmp_path / "b.html").write_text("<p>Just text.</p>")
    docs, _ = read_all(tmp_path)
    assert docs["a.htm"].title == "Wrapped"
    assert "Body text." in docs["a.htm"].text
    assert docs["b.html"].title == "b.html"
    assert docs["b.html"].text == "Just text.\n"


def test_html_article_header_is_content_and_several_articles_are_all_kept(tmp_path):
    (tmp_path / "post.html").write_text(
        "<body><header>SITE BANNER</header><article><header><h1>Post title</h1></header>"
        "<p>Post body.</p></article></body>"
    )
    (tmp_path / "index.html").write_text(
        "<body><article><h2>First</h2><p>One.</p></article><article><h2>Second</h2><p>Two.</p></article></body>"
    )
    docs, _ = read_all(tmp_path)
    assert docs["post.html"].text == "# Post title\n\nPost body.\n"
    assert docs["post.html"].title == "Post title"
    assert docs["index.html"].text == "## First\n\nOne.\n\n## Second\n\nTwo.\n"


def test_pdf_pages_and_page_ranges(tmp_path, count):
    (tmp_path / "fruit.pdf").write_bytes(make_pdf(PAGES, title="Fruit Book"))
    docs, errors = read_all(tmp_path)
    assert errors == []
    doc = docs["fruit.pdf"]
    assert doc.title == "Fruit Book"
    assert doc.metadata["pages"] == 3 and doc.metadata["format"] == "pdf"
    pages = doc.text.split("\f")
    assert len(pages) == 3
    for page, lines in zip(pages, PAGES):
        for line in lines:
            assert line in page

    # Small budget: no chunk straddles a page, each cites its page, and together they hold it all.
    small = files.spans(doc, count, 12)
    assert len(small) >= 6
    per_page: dict[int, list[str]] = {1: [], 2: [], 3: []}
    for span in small:
        chunk = doc.text[span.start : span.end]
        assert "\f" not in chunk and chunk == chunk.strip()
        assert count(chunk) <= 12
        assert span.metadata["page_start"] == span.metadata["page_end"]
        assert chunk in pages[span.metadata["page_start"] - 1]
        per_page[span.metadata["page_start"]].append(chunk)
    for number, lines in enumerate(PAGES, 1):
        assert " ".join(" ".join(per_page[number]).split()) == " ".join(lines)

    # Large budget: short pages share one chunk spanning pages 1-3, without a break at its edges.
    (big,) = files.spans(doc, count, 254)
    assert (big.metadata["page_start"], big.metadata["page_end"]) == (1, 3)
    chunk = doc.text[big.start : big.end]
    assert chunk.startswith("Alpha") and chunk.rstrip().endswith("fruits.")


def test_pdf_without_title_uses_file_name(tmp_path):
    (tmp_path / "plain.pdf").write_bytes(make_pdf([["Only page."]]))
    docs, _ = read_all(tmp_path)
    assert docs["plain.pdf"].title == "plain.pdf"
    assert docs["plain.pdf"].text.strip() == "Only page."


def test_cp1252_and_bom_are_decoded(tmp_path):
    text = "He said \u201cbonjour\u201d to the na\u00efve caf\u00e9 owner \u2014 it\u2019s fine.\n"
    (tmp_path / "legacy.txt").write_bytes(text.encode("cp1252"))
    (tmp_path / "bom.md").write_bytes(b"\xef\xbb\xbf# Heading\n\nBody\n")
    docs, errors = read_all(tmp_path)
    assert errors == []
    assert docs["legacy.txt"].text == text
    assert docs["legacy.txt"].metadata["encoding"] == "cp1252"
    assert docs["bom.md"].text == "# Heading\n\nBody\n"
    assert docs["bom.md"].title == "Heading"
    assert docs["bom.md"].metadata["encoding"] == "utf-8-sig"


def test_bad_files_are_reported_and_the_walk_goes_on(tmp_path):
    (tmp_path / "a_good.md").write_text("# Good\n\nFine.\n")
    (tmp_path / "empty.md").write_bytes(b"")
    (tmp_path / "blank.txt").write_text("  \n\n\t\n")
    (tmp_path / "binary.txt").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    (tmp_path / "broken.pdf").write_bytes(b"%PDF-1.4\nthis is not really a pdf\n")
    (tmp_path / "dangling.md").symlink_to(tmp_path / "missing-target.md")
    (tmp_path / "z_last.txt").write_text("Still read after the errors.\n")
    (tmp_path / "image.png").write_bytes(b"\x89PNG\x00")  # a picture cut short
    (tmp_path / "notes.xyz").write_text("an extension no reader knows: not listed")
    (tmp_path / ".hidden.md").write_text("# Hidden\n")
    (tmp_path / ".cache").mkdir()
    (tmp_path / ".cache" / "x.md").write_text("# Cached\n")
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "deep.markdown").write_text("# Deep\n")

    records = list(files.read(tmp_path, "docs"))
    ids = [r.native_id for r in records if isinstance(r, Document)]
    assert ids == ["a_good.md", "sub/deep.markdown", "z_last.txt"]
    errors = {Path(e.uri).name: e for e in records if isinstance(e, ReadError)}
    assert set(errors) == {"empty.md", "blank.txt", "binary.txt", "broken.pdf", "dangling.md", "image.png"}
    for name, err in errors.items():
        assert err.uri == str((tmp_path / name).absolute())
        assert "\n" not in err.error and err.error
    assert errors["empty.md"].error == "empty file"
    assert "whitespace" in errors["blank.txt"].error
    assert "binary" in errors["binary.txt"].error
    assert errors["broken.pdf"].error.startswith("unreadable PDF")
    assert errors["dangling.md"].error.startswith("unreadable")
    assert errors["image.png"].error.startswith("not a readable image")
    # Deterministic: a second walk yields the same records in the same order.
    again = [getattr(r, "native_id", None) or r.uri for r in files.read(tmp_path, "docs")]
    assert again == [getattr(r, "native_id", None) or r.uri for r in records]


def test_size_limit(tmp_path, monkeypatch):
    monkeypatch.setattr(files, "MAX_BYTES", 100)
    (tmp_path / "big.txt").write_text("word " * 40)
    (tmp_path / "small.txt").write_text("tiny\n")
    docs, errors = read_all(tmp_path)
    assert list(docs) == ["small.txt"]
    (err,) = errors
    assert err.error == "larger than 100 bytes (200 bytes), skipped"


def test_single_file_and_missing_path(tmp_path):
    sub = tmp_path / "deep" / "er"
    sub.mkdir(parents=True)
    (sub / "one.md").write_text("# One\n")
    os.utime(sub / "one.md", (1_700_000_000, 1_700_000_000))
    (doc,) = files.read(sub / "one.md", "docs")
    assert doc.native_id == "one.md" and doc.metadata["path"] == "one.md"
    assert doc.updated_at.timestamp() == 1_700_000_000 and doc.updated_at.tzinfo == UTC
    (err,) = files.read(tmp_path / "nope", "docs")
    assert isinstance(err, ReadError) and "no such file" in err.error
    (tmp_path / "x.doc").write_bytes(b"\xd0\xcf\x11\xe0")
    (err,) = files.read(tmp_path / "x.doc", "docs")
    assert isinstance(err, ReadError) and "unsupported" in err.error
    (tmp_path / "x.docx").write_bytes(b"PK")  # a Word file cut short: named, with why
    (err,) = files.read(tmp_path / "x.docx", "docs")
    assert isinstance(err, ReadError) and "damaged zip" in err.error


def test_unlistable_folder_is_reported(tmp_path, monkeypatch):
    (tmp_path / "ok.md").write_text("# Ok\n")
    (tmp_path / "locked").mkdir()
    (tmp_path / "locked" / "secret.md").write_text("# Secret\n")
    real = os.scandir

    def scandir(path="."):
        if Path(path).name == "locked":
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    docs, errors = read_all(tmp_path)
    assert list(docs) == ["ok.md"]
    assert [(e.uri, e.error) for e in errors] == [
        (str((tmp_path / "locked").absolute()), "unreadable: Permission denied")
    ]


def test_short_cp1252_text_is_not_taken_for_a_sibling_code_page():
    from ragbag.text.decode import decode

    assert decode("Café".encode("cp1252")) == ("Café", "cp1252")
    assert decode("Привет, как дела? Встреча завтра в офисе.".encode("cp1251"))[0].startswith("Привет")


def test_mostly_utf8_keeps_its_characters_and_cp1252_stays_cp1252():
    from ragbag.text.decode import decode

    text, enc = decode(("Preis: 12 € für Käse, Grüße aus Köln.\n" * 5).encode() + b"caf\xe9\n")
    assert enc == "utf-8" and text.count("€") == 5 and "â‚¬" not in text and text.count("\ufffd") == 1
    legacy, enc = decode("Grüße aus Köln, 12 € für Käse – schön.\n".encode("cp1252"))
    assert enc == "cp1252" and "Grüße" in legacy and "€" in legacy
