"""A PDF's text as people search it (issue 34's rough edges): an identifier broken across lines
at its hyphen is one token again, a metadata title that is a file name gives way to the file's, and a heading
is never a chunk of its own."""

from __future__ import annotations

from ragbag.text.extract import pdf_text, real_title, rejoin_hyphens
from ragbag_evalsets.formats.pdf import make_pdf


def test_a_line_broken_at_a_hyphen_is_joined():
    assert rejoin_hyphens("Auftrag WTU-\n448172-K vom") == "Auftrag WTU-448172-K vom"
    assert rejoin_hyphens("die Steuer-\nnummer und infor- \n mation") == "die Steuernummer und information"
    assert rejoin_hyphens("per E-\nMail aus Baden-\nWürttemberg") == "per E-Mail aus Baden-Württemberg"
    assert rejoin_hyphens("a list:\n- one\n- two") == "a list:\n- one\n- two"  # bullets stay


def test_pdf_text_joins_the_identifier_and_keeps_pages():
    pdf = make_pdf([["Ihre Auftragsnummer WTU-", "448172-K bitte angeben."], ["Seite zwei"]])
    meta: dict = {}
    _, text = pdf_text(pdf, meta)
    assert "WTU-448172-K" in text and meta["pages"] == 2 and text.count("\f") == 1


def test_a_file_name_or_placeholder_is_no_title():
    assert real_title("note_pdf.html") == real_title("Untitled") == real_title("Document1") == ""
    assert real_title("Microsoft Word - Mietvertrag.docx") == ""
    assert real_title("Microsoft Word - Nebenkosten 2024") == "Nebenkosten 2024"
    assert real_title("  Betriebskostenabrechnung   2024 ") == "Betriebskostenabrechnung 2024"
    title, _ = pdf_text(make_pdf([["x"]], title="note_pdf.html"), {})
    assert title == ""


def test_a_heading_is_never_a_chunk_of_its_own():
    """Issue 34: a markdown heading alone became a chunk and ranked first as noise."""
    from ragbag.text.chunking import prose_spans

    words = lambda t: len(t.split())  # noqa: E731
    text = "# Handbook\n\n## Setup\n\n" + " ".join(["word"] * 40) + "\n\n## Use\n\nShort section here.\n"
    chunks = [text[s.start : s.end] for s in prose_spans(text, words, 30)]
    assert chunks[0].startswith("# Handbook\n\n## Setup\n\nword") and words(chunks[0]) <= 30
    assert chunks[-1] == "## Use\n\nShort section here."
    assert not any(all(line.startswith("#") for line in c.splitlines() if line.strip()) for c in chunks)
    setext = "Title\n=====\n\nIntro paragraph.\n\n## A\n\nBody A.\n"
    assert [setext[s.start : s.end] for s in prose_spans(setext, words, 30)][0] == "Title\n=====\n\nIntro paragraph."


def test_a_snippet_starts_and_ends_on_word_breaks_in_the_terminal_and_on_the_page():
    """Issue 34: CLI snippets started mid-word; the terminal and the search page now cut and mark
    alike (one highlighter, ragbag.text.snippets)."""
    from rich.console import Console

    from ragbag.apps.cli import render
    from ragbag.text.snippets import snippet

    text = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma " * 3
    parts = snippet(text, ["sigma"], 60)
    cut = "".join(piece for piece, _ in parts).strip("…")
    flat = " ".join(text.split())
    start = flat.index(cut)
    assert start == 0 or flat[start - 1] == " "
    assert flat[start + len(cut) : start + len(cut) + 1] in ("", " ") and "sigma" in cut
    assert [piece for piece, match in parts if match] == ["sigma"] * cut.count("sigma")
    console = Console(record=True, width=200)
    console.print(render.marked(parts))
    assert console.export_text().strip() == "".join(piece for piece, _ in parts)
