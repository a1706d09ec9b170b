"""A PDF's text as people search it (issue 34's rough edges): an identifier broken across lines
at its hyphen is one token again, and a metadata title that is a file name gives way to the file's."""

from __future__ import annotations

from ragbag.apps.eval.personal_set import make_pdf
from ragbag.text.extract import pdf_text, real_title, rejoin_hyphens


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
