"""Excel workbooks (``.xlsx``/``.xlsm``, openpyxl) and Rich Text (``.rtf``, striprtf) through
:func:`ragbag.text.office.office_text`, on files from public test suites (openpyxl, calamine,
striprtf; ``tests/fixtures/public/files/SOURCES.tsv``) and on files written here.

The public files' expected values are read independently of the readers under test: a
workbook's cells from its sheet XML with ``zipfile`` and ElementTree, an RTF file's sentences by
finding them, escaped in the file's declared code page, in its source."""

from __future__ import annotations

import csv
import datetime
import io
import random
import re
import struct
import warnings
import zipfile
from pathlib import Path
from xml.etree import ElementTree

import openpyxl
import pytest
from conftest import FIXTURES

from ragbag.text import office
from ragbag.text.extract import PAGE_BREAK
from ragbag.text.office import office_text
from ragbag.text.unreadable import Unreadable

FILES = FIXTURES / "public" / "files"
PUBLIC = sorted(p for d in ("openpyxl", "calamine", "striprtf") for p in (FILES / d).iterdir())
UNREADABLE = {  # file: what the reason must say
    "openpyxl__tests__data__reader__null_archive.xlsx": "no item named",  # an empty zip
    "tests__pass_protected.xlsx": "OLE2",  # encrypted: an OLE2 file wrapping the zip
    "tests__strict_iso_paths.xlsx": "Strict Open XML",  # openpyxl reads transitional OOXML only
}
_M = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
_R = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"
_PKG = "{http://schemas.openxmlformats.org/package/2006/relationships}"


def _read(path: Path, meta: dict | None = None) -> tuple[str, str]:
    return office_text(path.read_bytes(), path.suffix[1:].lower(), {} if meta is None else meta)


def _public(name: str) -> Path:
    (path,) = [p for p in PUBLIC if p.name == name]
    return path


# --- the public files --------------------------------------------------------------------------


def test_the_public_files_are_listed_with_their_origin_and_licence():
    with (FILES / "SOURCES.tsv").open(newline="") as f:
        rows = {r["file"]: r for r in csv.DictReader(f, delimiter="\t")}
    assert 8 <= len(PUBLIC) <= 20
    for path in PUBLIC:
        row = rows[f"files/{path.parent.name}/{path.name}"]
        assert row["path"].replace("/", "__") == path.name and re.fullmatch(r"[0-9a-f]{40}", row["commit"])
        assert row["licence"] in ("MIT", "BSD-3-Clause") and path.stat().st_size < 200_000


@pytest.mark.parametrize("path", PUBLIC, ids=lambda p: p.name)
def test_every_public_file_gives_text_or_says_why_not(path):
    meta: dict = {}
    try:
        title, text = _read(path, meta)
    except Unreadable as exc:
        assert path.name in UNREADABLE and UNREADABLE[path.name] in str(exc), str(exc)
        assert "\n" not in str(exc)
        return
    assert path.name not in UNREADABLE
    assert isinstance(title, str) and "\n" not in title
    assert text.replace(PAGE_BREAK, "").strip()
    if path.suffix == ".rtf":
        assert PAGE_BREAK not in text and not meta
    else:
        assert meta["pages"] == text.count(PAGE_BREAK) + 1 and "cut" not in meta


def _reference_cells(path: Path) -> dict[str, list[str]]:
    """Sheet name → the values its XML holds (shared strings resolved), in the workbook's order;
    chart sheets left out."""
    archive = zipfile.ZipFile(path)
    rels = {
        r.get("Id"): "xl/" + r.get("Target", "").removeprefix("/xl/")
        for r in ElementTree.fromstring(archive.read("xl/_rels/workbook.xml.rels")).iter(f"{_PKG}Relationship")
    }
    shared = []
    if "xl/sharedStrings.xml" in archive.namelist():
        for si in ElementTree.fromstring(archive.read("xl/sharedStrings.xml")).iter(f"{_M}si"):
            shared.append("".join(t.text or "" for t in si.iter(f"{_M}t")))
    sheets = {}
    for sheet in ElementTree.fromstring(archive.read("xl/workbook.xml")).iter(f"{_M}sheet"):
        part = rels[sheet.get(f"{_R}id")]
        if "/worksheets/" not in part:
            continue
        values = []
        for cell in ElementTree.fromstring(archive.read(part)).iter(f"{_M}c"):
            v = cell.findtext(f"{_M}v")
            if cell.get("t") == "s" and v is not None:
                values.append(shared[int(v)])
            elif cell.get("t") == "inlineStr":
                values.append("".join(t.text or "" for t in cell.iter(f"{_M}t")))
            elif cell.get("t") == "b" and v is not None:
                values.append("TRUE" if v == "1" else "FALSE")
            elif v is not None:
                values.append(v)
        sheets[sheet.get("name")] = values
    return sheets


@pytest.mark.parametrize(
    "name",
    [
        "openpyxl__tests__data__genuine__empty.xlsx",
        "openpyxl__tests__data__reader__formulae.xlsx",
        "openpyxl__reader__tests__data__contains_chartsheets.xlsx",
        "openpyxl__tests__data__reader__vba+comments.xlsm",
        "tests__any_sheets.xlsx",
        "tests__merged_range.xlsx",
        "tests__readings.xlsx",
    ],
)
def test_a_workbook_gives_each_sheet_with_the_values_its_xml_holds(name):
    reference = _reference_cells(_public(name))
    meta: dict = {}
    _, text = _read(_public(name), meta)
    pages = text.split(PAGE_BREAK)
    assert meta["pages"] == len(pages) == len(reference)
    for page, (sheet, values) in zip(pages, reference.items(), strict=True):
        lines = page.split("\n")
        assert lines[0] == f"Sheet: {sheet}"
        cells = {c.strip() for line in lines[1:] for c in line.split(" | ")}
        numbers = {float(c) for c in cells if re.fullmatch(r"-?\d+(\.\d+)?(e[+-]\d+)?", c)}
        dated = any(re.fullmatch(r"\d{4}-\d\d-\d\d.*", c) for c in cells)  # serials shown as dates
        for value in values:
            try:
                number = float(value)
            except ValueError:
                assert " ".join(value.split()) in cells, (sheet, value)
                continue
            assert number in numbers or dated, (sheet, value)


def test_dates_are_iso_in_either_epoch():
    """date_1904.xlsx holds the serial 39385 in a workbook counting from 1904; genuine/empty.xlsx's
    dates sheet 26804 and 26804.385439814814 counting from 1900 (Excel's 1899-12-30)."""
    path = _public("openpyxl__reader__tests__data__date_1904.xlsx")
    workbook = zipfile.ZipFile(path).read("xl/workbook.xml")
    assert b'date1904="1"' in workbook and _reference_cells(path)["Sheet1"] == ["39385"]
    assert (datetime.date(1904, 1, 1) + datetime.timedelta(39385)).isoformat() == "2011-10-31"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # openpyxl's "extension is not supported" stays inside
        title, text = _read(path)
    assert title == "" and text.split(PAGE_BREAK) == ["Sheet: Sheet1\n2011-10-31", "Sheet: Sheet2", "Sheet: Sheet3"]

    path = _public("openpyxl__tests__data__genuine__empty.xlsx")
    assert _reference_cells(path)["Sheet4 - Dates"] == ["26804", "26804.385439814814"]
    when = datetime.datetime(1899, 12, 30) + datetime.timedelta(days=26804.385439814814)
    assert when.replace(microsecond=0) == datetime.datetime(1973, 5, 20, 9, 15, 2)
    assert _read(path)[1].split(PAGE_BREAK)[3] == "Sheet: Sheet4 - Dates\n1973-05-20 |  | 1973-05-20 09:15:02"


def test_specific_cells_of_public_workbooks():
    assert "Paris | 18.5 | 65 | 1009" in _read(_public("tests__readings.xlsx"))[1].split("\n")
    formulae = _read(_public("openpyxl__tests__data__reader__formulae.xlsx"))[1].split("\n")
    assert "24690 | Simple Equation" in formulae and "Düsseldorf" in formulae  # cached formula results
    sheets = _read(_public("tests__any_sheets.xlsx"))[1].split(PAGE_BREAK)
    assert [s.split("\n")[0] for s in sheets] == ["Sheet: Visible", "Sheet: Hidden", "Sheet: VeryHidden"]
    assert sheets[0].split("\n")[1:4] == ["1 | 2", "3 | 4", "5 | 6"]
    # the XML holds "ABC_x000D_\nDEF": OOXML's escape for a carriage return, then a line feed
    assert _reference_cells(_public("tests__has_x000D_.xlsx"))["Sheet1"] == ["ABC_x000D_\nDEF"]
    assert _read(_public("tests__has_x000D_.xlsx"))[1] == "Sheet: Sheet1\nABC DEF"
    merged = _read(_public("tests__merged_range.xlsx"))[1].split(PAGE_BREAK)[1].split("\n")
    assert merged[1:] == ["A1 | B1 | C1 |  | E1 | F1", " | B3 | C3 |  | E3", " | B4 |  |  | E4"]


def _escaped(text: str, codepage: str) -> str:
    """``text`` as RTF writes it in ``codepage``: ASCII as is, other bytes as ``\\'xx``."""
    return "".join(c if ord(c) < 128 else "".join(f"\\'{b:02x}" for b in c.encode(codepage)) for c in text)


@pytest.mark.parametrize(
    ("name", "codepage", "sentence"),
    [
        ("tests__rtf__ansicpg1250.rtf", "cp1250", "Proszę o zapoznanie się z"),
        ("tests__rtf__bytes.rtf", "cp1251", "УХВАЛА"),
        ("tests__rtf__bytes.rtf", "cp1251", "27 грудня 2018 року"),
        ("tests__rtf__issue_28.rtf", "cp936", "印刷情况反映："),
        ("tests__rtf__Speiseplan_KW_32-33_Eybl.rtf", "cp1252", "Gemüserostbraten mit Semmelknödel"),
    ],
)
def test_rtf_text_in_the_declared_code_page(name, codepage, sentence):
    source = _public(name).read_text("ascii")
    assert f"\\ansicpg{codepage[2:]}" in source and _escaped(sentence, codepage) in source
    assert sentence in _read(_public(name))[1]


def test_rtf_title_unicode_and_tables_of_public_files():
    title, text = _read(_public("tests__rtf__ansicpg1250.rtf"))
    assert r"{\title DANE WNIOSKODAWCY}" in _public("tests__rtf__ansicpg1250.rtf").read_text("ascii")
    assert title == "DANE WNIOSKODAWCY" and "DANE WNIOSKODAWCY" not in text  # info is not body text
    assert r"\u26580\'3f\u36947\'3f" in _public("tests__rtf__unicode.rtf").read_text("ascii")
    assert _read(_public("tests__rtf__unicode.rtf")) == ("", chr(26580) + chr(36947) + "\n")  # 柔道
    table = _read(_public("tests__rtf__pages_table_sample.rtf"))[1]
    assert "Hier steht normaler Text, dann kommt eine Tabelle." in table
    assert "Header A|Header B|Header C|" in table and "A3|B3|C3|" in table  # striprtf's cell marks


# --- workbooks written here --------------------------------------------------------------------


def _xlsx(build, title: str | None = None) -> bytes:
    book = openpyxl.Workbook()
    build(book)
    book.properties.title = title
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def _figures(book) -> None:
    sheet = book.active
    sheet.title = "Figures"
    sheet.append(["Quarterly figures"])
    sheet.merge_cells("A1:D1")
    sheet.append(["date", "count", "share", "ok"])
    sheet.append([datetime.date(2024, 3, 1), 3.0, 2.5, True])
    sheet.append([datetime.datetime(2024, 3, 1, 14, 30), 42, None, False])
    sheet.append([])
    sheet.append([None, "two\nlines", None, None])
    sheet.append([datetime.time(9, 15), 1e20, -7.0, "  padded  "])
    sheet["F9"] = ""  # a cell written empty, out past the row's end
    notes = book.create_sheet("Notes")
    notes["B2"] = "only cell"
    book.create_sheet("Empty")


def test_a_written_workbook_as_text_tables():
    meta: dict = {}
    title, text = office_text(_xlsx(_figures, "Sales 2024"), "xlsx", meta)
    assert title == "Sales 2024" and meta == {"pages": 3}
    assert text.split(PAGE_BREAK) == [
        "Sheet: Figures\n"
        "Quarterly figures\n"  # merged across A1:D1: read once, the merged cells empty and dropped
        "date | count | share | ok\n"
        "2024-03-01 | 3 | 2.5 | TRUE\n"
        "2024-03-01 14:30:00 | 42 |  | FALSE\n"
        " | two lines\n"
        "09:15:00 | 1e+20 | -7 | padded",
        "Sheet: Notes\n | only cell",
        "Sheet: Empty",
    ]
    assert office_text(_xlsx(_figures), "xlsm", {})[0] == ""
    assert office_text(_xlsx(_figures, "  Untitled "), "xlsx", {})[0] == ""


def test_a_workbook_of_empty_sheets_has_no_text():
    meta: dict = {}
    assert office_text(_xlsx(lambda book: book.create_sheet("More")), "xlsx", meta) == ("", "")
    assert meta["pages"] == 2


def _rows(count: int, at: int = 1):
    def build(book) -> None:
        book.active.title = "Data"
        for n in range(count):
            book.active.cell(row=at + n, column=1, value=f"row {at + n}")

    return build


def test_the_row_cap_cuts_a_sheet_and_says_so(monkeypatch):
    monkeypatch.setattr(office, "MAX_SHEET_ROWS", 5)
    meta: dict = {}
    _, text = office_text(_xlsx(_rows(8)), "xlsx", meta)
    assert text.split("\n")[1:] == [f"row {n}" for n in range(1, 6)]
    assert meta["cut"] == "sheet 'Data' cut at row 5"
    meta = {}
    assert office_text(_xlsx(_rows(5)), "xlsx", meta)[1].count("\n") == 5 and "cut" not in meta
    meta = {}  # a gap after the cap: the next value within as many rows again is still seen
    office_text(_xlsx(lambda book: (_rows(5)(book), _rows(1, at=9)(book))), "xlsx", meta)
    assert meta["cut"] == "sheet 'Data' cut at row 5"


def test_the_column_cap_cuts_a_row_and_says_so(monkeypatch):
    monkeypatch.setattr(office, "MAX_SHEET_COLS", 3)

    def wide(book) -> None:
        book.active.title = "Wide"
        book.active.append(["a", "b", "c", "d", "e"])
        book.active.append(["x"])

    meta: dict = {}
    assert office_text(_xlsx(wide), "xlsx", meta)[1] == "Sheet: Wide\na | b | c\nx"
    assert meta["cut"] == "sheet 'Wide' cut at column 3"


def test_a_damaged_workbook_is_unreadable():
    data = _xlsx(_figures)
    with pytest.raises(Unreadable, match="damaged zip"):
        office_text(data[: len(data) // 2], "xlsx", {})
    with pytest.raises(Unreadable, match="damaged zip"):
        office_text(b"", "xlsx", {})
    sheet = data.index(b"xl/worksheets/sheet1.xml")  # flip a byte of the first sheet's compressed data
    flipped = bytearray(data)
    flipped[sheet + 60] ^= 0xFF
    with pytest.raises(Unreadable, match="unreadable xlsx file"):
        office_text(bytes(flipped), "xlsx", {})


def test_a_workbook_declaring_a_bomb_is_not_opened(monkeypatch):
    data = bytearray(_xlsx(_figures))
    central = data.index(b"PK\x01\x02")  # the first member's central directory entry
    data[central + 24 : central + 28] = struct.pack("<I", 0xFFFF_FFF0)  # its uncompressed size: 4 GB
    opened = []
    monkeypatch.setattr(openpyxl, "load_workbook", lambda *a, **k: opened.append(1))
    with pytest.raises(Unreadable, match="decompression bomb"):
        office_text(bytes(data), "xlsx", {})
    assert not opened


def test_damaged_copies_of_the_public_files_raise_only_unreadable():
    """Cut short and with bytes flipped (seeded), every file gives text or an Unreadable."""
    rng = random.Random(20240611)
    for path in PUBLIC:
        data = path.read_bytes()
        for _ in range(6):
            copy = bytearray(data[: rng.randrange(len(data) + 1)] if rng.random() < 0.5 else data)
            for _ in range(rng.randrange(1, 8)) if copy else ():
                copy[rng.randrange(len(copy))] = rng.randrange(256)
            try:
                title, text = office_text(bytes(copy), path.suffix[1:], {})
            except Unreadable:
                continue
            assert isinstance(title, str) and isinstance(text, str)


# --- RTF written here --------------------------------------------------------------------------


def test_rtf_escapes_and_bytes_in_the_code_page():
    rtf = rb"{\rtf1\ansi\ansicpg1252{\info{\title Gr\'fc\'dfe an \u8364?}}K\'e4se kostet 5 \u8364? heute.\par Zweite Zeile}"
    assert office_text(rtf, "rtf", {}) == ("Grüße an €", "Käse kostet 5 € heute.\nZweite Zeile\n")
    raw = b"{\\rtf1\\ansi Caf\xe9 \x80 5\\par}"  # 8-bit bytes the specification would escape: cp1252
    assert office_text(raw, "rtf", {}) == ("", "Café € 5\n")
    raw = b"{\\rtf1\\ansi \x81\xe9}"  # 0x81 has no cp1252 character: Latin-1 then
    assert office_text(raw, "rtf", {})[1] == "\x81é\n"
    assert office_text(b"\xef\xbb\xbf\r\n{\\rtf1 Hi}", "rtf", {}) == ("", "Hi\n")  # BOM and blank lines first


def test_rtf_title_only_from_the_info_group():
    assert office_text(rb"{\rtf1{\info{\author A}}Body\par}", "rtf", {}) == ("", "Body\n")
    assert office_text(rb"{\rtf1{\info{\title}}Body}", "rtf", {})[0] == ""
    assert office_text(rb"{\rtf1{\info{\title A \{braced\} title}}Body}", "rtf", {})[0] == "A {braced} title"


def test_an_empty_rtf_has_no_text_and_a_non_rtf_is_unreadable():
    assert office_text(rb"{\rtf1\ansi{\fonttbl\f0 Arial;}}", "rtf", {}) == ("", "")
    for data in (b"", b"plain text.rtf", b"PK\x03\x04 a zip", b"{\\rt", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"):
        with pytest.raises(Unreadable, match="not an RTF file"):
            office_text(data, "rtf", {})


def test_the_formats_are_registered():
    assert {office.FORMATS[e] for e in ("xlsx", "xlsm")} == {"xlsx"} and office.FORMATS["rtf"] == "rtf"
