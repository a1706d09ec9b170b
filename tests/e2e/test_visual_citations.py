"""Visual citations (issue 21): `ragbag show`, the show_citation tool, `ask --json` boxes.

The PDF is written here with a known layout: Courier 10 pt (every glyph 6 pt wide), each line
placed at x = 72 on its own baseline, so where every line of a cited passage lies is known
to the point, and the boxes pdfium gives back, and the outlined PNG, are checked against it.
"""

from __future__ import annotations

import base64
import io
import json
import os
import shutil
import subprocess
import textwrap
from pathlib import Path

import jsonschema
import pytest
from conftest import RAGBAG, build_in_process, strict_json, write
from PIL import Image

from ragbag import connectors
from ragbag.answer import visual
from ragbag.answer.tool_specs import find_spec
from ragbag.answer.tools import Tools
from ragbag.core.errors import RagbagError
from ragbag.core.home import Home
from ragbag.text import pdf_boxes
from ragbag_evalsets.formats.pdf import pdf_file

# The module runs on one worker, its tests in order (`make test`: --dist loadfile): two of them
# move or overwrite the PDF for a while.

FONT, LEADING, LEFT, TOP, GLYPH = 10, 14, 72, 740, 6.0  # Courier: 600/1000 em per glyph
ROWS = ["apple", "pear", "plum", "quince", "cherry", "medlar", "damson", "greengage"]
TARGET = "The boathouse key hangs behind the blue door, and the padlock on the jetty gate opens with code 5521."
GREENHOUSE = "Greenhouse notes: the thermostat in the greenhouse is set to 18 degrees at night."


def _filler(crew: str, n: int) -> str:
    return " ".join(
        f"In week {i + 3} the {crew} crew checked row {i + 11} of the {ROWS[i % len(ROWS)]} trees, noted "
        f"{(i * 7) % 13 + 2} damaged branches and logged the soil moisture at {20 + (i * 3) % 17} percent."
        for i in range(n)
    )


# Pages 1-3 are each over half the chunk budget, so each is its own chunk; the short pages 4
# and 5 join page 3's, which gives a passage over three pages.
PAGES = [
    ["Orchard log, spring season.", _filler("north", 9)],
    [_filler("south", 5), TARGET, _filler("east", 4)],
    [_filler("west", 10)],
    [GREENHOUSE],
    ["Shed inventory: two ladders, one wheelbarrow."],
]
NOTES = (
    "# Kitchen notes\n\nThe oven runs hot: bake bread at 230 degrees, not 250.\n\n"
    "## Sourdough\n\nFeed the starter twice a day with rye flour <and> water; it lives on the top shelf.\n\n"
    "## Knives\n\nSharpen the knives on the whetstone every second Sunday.\n"
)


def layout_pdf(pages: list[list[str]]) -> tuple[bytes, dict[int, list[tuple[str, float, float, float]]]]:
    """A PDF of wrapped paragraphs, and per page its lines as (text, x0, baseline, x1) in points."""

    def esc(s: str) -> str:
        return s.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")

    kids = " ".join(f"{4 + 2 * i} 0 R" for i in range(len(pages)))
    objs = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Kids [{kids}] /Count {len(pages)} >>".encode(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Courier >>",
    ]
    lines: dict[int, list[tuple[str, float, float, float]]] = {}
    for number, paragraphs in enumerate(pages, 1):
        ops, y = ["BT", f"/F1 {FONT} Tf"], TOP
        for paragraph in paragraphs:
            for line in textwrap.wrap(paragraph, 78):
                ops.append(f"1 0 0 1 {LEFT} {y} Tm ({esc(line)}) Tj")
                lines.setdefault(number, []).append((line, LEFT, y, LEFT + GLYPH * len(line)))
                y -= LEADING
            y -= LEADING
        stream = "\n".join([*ops, "ET"]).encode("latin-1")
        objs.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> "
            f"/Contents {5 + 2 * (number - 1)} 0 R >>".encode()
        )
        objs.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    return pdf_file(objs), lines


PDF, LINES = layout_pdf(PAGES)


@pytest.fixture(scope="module")
def kb(tmp_path_factory) -> Home:
    root = tmp_path_factory.mktemp("visual")
    docs = write(root / "docs", {"orchard.pdf": PDF, "kitchen.md": NOTES})
    home = Home(root / "home").ensure()
    home.add_source("docs", "files", str(docs), known=connectors.NAMES)
    build_in_process(home, "docs")
    return home


@pytest.fixture(scope="module")
def tools(kb) -> Tools:
    return Tools(kb)


def ragbag(kb: Home, *args: str, cwd: Path | None = None, check: bool = True) -> subprocess.CompletedProcess:
    """The real `ragbag` entry point over this module's home, run in ``cwd``."""
    env = {**os.environ, "RAGBAG_HOME": str(kb.root), "DAGSTER_HOME": str(kb.dagster_home)}
    proc = subprocess.run([RAGBAG, *args], capture_output=True, text=True, timeout=300, env=env, cwd=cwd)
    if check and proc.returncode != 0:
        raise AssertionError(f"ragbag {' '.join(args)} -> {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
    return proc


def _hit(tools: Tools, query: str, ext: str) -> dict:
    (hit,) = tools.call("search", {"query": query, "k": 1, "mode": "keyword", "where": {"ext": ext}})["hits"]
    return hit


def _pdf(kb: Home) -> Path:
    return Path(kb.source("docs").path) / "orchard.pdf"


def _fold(text: str) -> str:
    return " ".join(text.split())


def _check_boxes(page: dict, passage: str) -> None:
    """Each line of the page that is part of the passage has one box around it, to a few
    points; no box lies on any other line."""
    lines = LINES[page["page"]]
    inside = [line for line in lines if _fold(line[0]) in _fold(passage)]
    assert inside, "the passage has lines on this page"
    boxes = page["boxes"]
    assert len(boxes) == len(inside)
    for (_, x0, base, x1), (bx0, by0, bx1, by1) in zip(inside, sorted(boxes, key=lambda b: -b[1])):
        assert abs(bx0 - x0) <= 2 and abs(bx1 - x1) <= 2, (x0, x1, bx0, bx1)
        assert base - 4 <= by0 <= base - 1 and base + 6 <= by1 <= base + 10, (base, by0, by1)
    for _, _, base, _ in set(lines) - set(inside):
        assert not any(b[1] < base + 3 < b[3] for b in boxes), f"a box on the uncited line at {base}"


def _yellow(img: Image.Image, box: list[int]) -> tuple[float, int]:
    """(share of highlight-tinted pixels, dark text pixels) inside a pixel box."""
    px = list(img.crop(box).getdata())
    tinted = sum(1 for r, g, b in px if r > 230 and 200 < g < 252 and b < 200)
    dark = sum(1 for r, g, b in px if r + g + b < 300)
    return tinted / len(px), dark


def test_show_writes_a_png_whose_boxes_cover_the_cited_lines(kb, tools, tmp_path):
    hit = _hit(tools, "padlock jetty gate code 5521", "pdf")
    assert TARGET.split(",")[0] in _fold(hit["text"])
    out = tmp_path / "cited.png"
    proc = ragbag(kb, "show", f"c:{hit['citation']}", "--out", str(out), "--json")
    got = strict_json(proc.stdout)
    assert got["kind"] == "pdf" and got["format"] == "png" and got["out"] == str(out)
    assert got["citation"] == hit["citation"] and got["doc_id"] == hit["doc_id"]
    assert "image_png_base64" not in got
    (page,) = got["pages"]
    assert page["page"] == 2 and (page["width"], page["height"]) == (612, 792)
    _check_boxes(page, hit["text"])
    # The cited sentence itself: its two lines are among the boxes.
    target = [line for line in LINES[2] if _fold(line[0]) in TARGET]
    assert len(target) == 2
    for _, x0, base, x1 in target:
        assert any(b[0] <= x0 + 1 and b[2] >= x1 - 1 and b[1] < base < b[3] for b in page["boxes"])

    img = Image.open(out).convert("RGB")
    assert img.size == (got["image_width"], got["image_height"]) == (918, 1188)  # 1.5 px per point
    for box in page["image_boxes"]:
        tinted, dark = _yellow(img, box)
        assert tinted > 0.4 and dark > 20, (box, tinted, dark)
    lowest = max(b[3] for b in page["image_boxes"])
    below = img.crop((0, lowest + 20, img.width, img.height))
    assert below.getextrema() == ((255, 255), (255, 255), (255, 255)), "nothing drawn outside the passage"
    # The pixel boxes are the point boxes, scaled and flipped (y down).
    for (x0, y0, x1, y1), (px0, py0, px1, py1) in zip(page["boxes"], page["image_boxes"]):
        assert abs(px0 - (x0 - 1) * 1.5) <= 2 and abs(py0 - (792 - y1 - 1) * 1.5) <= 2
        assert abs(px1 - (x1 + 1) * 1.5) <= 2 and abs(py1 - (792 - y0 + 1) * 1.5) <= 2

    # Without --out: a PNG named after the citation in the current directory; says where.
    plain = ragbag(kb, "show", hit["citation"], cwd=tmp_path)
    assert plain.stdout.startswith(f"wrote citation-{hit['citation']}.png") and "page 2" in plain.stdout
    assert (tmp_path / f"citation-{hit['citation']}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_passage_over_three_pages_is_outlined_on_each(kb, tools):
    hit = _hit(tools, "greenhouse thermostat degrees night", "pdf")
    view = visual.make(kb, hit["citation"])
    got = view.as_json()
    assert [p["page"] for p in got["pages"]] == [3, 4, 5]
    for page in got["pages"]:
        _check_boxes(page, hit["text"])
    # One picture, the pages stacked: page 4's boxes lie in its second third.
    assert view.image is not None and view.image.size == (918, 3 * 1188 + 2 * visual.PAGE_GAP_PX)
    boxes = got["pages"][1]["image_boxes"]
    assert len(boxes) == 2  # the greenhouse sentence wraps
    for box in boxes:
        assert 1188 < box[1] < box[3] < 2 * 1188 + visual.PAGE_GAP_PX
        tinted, dark = _yellow(view.image, box)
        assert tinted > 0.4 and dark > 20


def test_show_citation_tool_returns_the_picture_and_its_schema_holds(kb, tools):
    hit = _hit(tools, "padlock jetty gate code 5521", "pdf")
    res = tools.call("show_citation", {"citation": f"c:{hit['citation']}"})
    assert res["kind"] == "pdf" and res["mime_type"] == "image/png" and res["uri"].endswith("orchard.pdf")
    png = base64.b64decode(res["image_png_base64"])
    img = Image.open(io.BytesIO(png)).convert("RGB")
    assert img.size == (res["image_width"], res["image_height"])
    (page,) = res["pages"]
    assert page["page"] == 2
    _check_boxes(page, hit["text"])
    for box in page["image_boxes"]:
        assert _yellow(img, box)[0] > 0.4
    # The picture is outside the character budget; everything else stays well inside it.
    rest = {k: v for k, v in res.items() if k != "image_png_base64"}
    assert len(png) > 20_000 and len(json.dumps(rest)) < tools.max_chars
    # The MCP server sends the PNG as image content and names it in ``image``: what remains is
    # what the spec's output schema declares.
    returns = find_spec("show_citation")["returns"]
    jsonschema.Draft202012Validator(returns).validate({**rest, "image": "image/png"})

    note = _hit(tools, "sourdough starter rye flour", "md")
    text = tools.call("show_citation", {"citation": note["citation"]})
    assert text["kind"] == "text" and text["pages"] == [] and "image_png_base64" not in text
    s = text["section"]
    assert s["text"][s["start"] : s["end"]] == note["text"] and s["start"] > 0  # the passage, with context
    assert "oven runs hot" in s["text"] and "whetstone" in s["text"]
    jsonschema.Draft202012Validator(returns).validate(text)
    with pytest.raises(RagbagError, match="not a citation id"):
        tools.call("show_citation", {"citation": "c:xyz"})
    with pytest.raises(RagbagError, match="no indexed passage has citation c:000000"):
        tools.call("show_citation", {"citation": "c:000000"})


def test_a_text_citation_is_shown_marked_in_its_section(kb, tools, tmp_path):
    note = _hit(tools, "sourdough starter rye flour", "md")
    proc = ragbag(kb, "show", f"c:{note['citation']}")
    out = proc.stdout
    assert f"[c:{note['citation']}] Kitchen notes" in out and "\x1b[" not in out  # not a terminal: no colour
    assert f"»{note['text']}«" in out
    assert out.index("oven runs hot") < out.index("»") < out.index("«") < out.index("whetstone")

    page = tmp_path / "note.html"
    ragbag(kb, "show", note["citation"], "--out", str(page))  # the suffix picks html
    html = page.read_text()
    assert html.startswith("<!doctype html>") and '<mark id="cited">' in html
    assert "rye flour &lt;and&gt; water" in html and "<and>" not in html  # escaped
    cited = html.split('<mark id="cited">')[1].split("</mark>")[0]
    assert "Feed the starter twice a day" in cited and "whetstone" not in cited

    view = visual.make(kb, note["citation"])
    coloured = view.terminal(ansi=True)
    assert visual.ANSI_MARK + "Feed the starter" in coloured and "»" not in coloured

    png = ragbag(kb, "show", note["citation"], "--format", "png", check=False)
    assert png.returncode == 2 and png.stderr.count("\n") == 1 and "not a PDF" in png.stderr

    # A PDF passage as text too: page headings where pages break.
    pdf_hit = _hit(tools, "greenhouse thermostat degrees night", "pdf")
    as_text = ragbag(kb, "show", pdf_hit["citation"], "--format", "text").stdout
    assert "── page 4 ──" in as_text and "── page 5 ──" in as_text and GREENHOUSE in _fold(as_text)


def test_ask_json_gives_pdf_citations_their_page_and_boxes(kb, tools):
    question = "which code opens the padlock on the jetty gate?"
    hit = _hit(tools, "padlock jetty gate code 5521", "pdf")
    got = strict_json(ragbag(kb, "ask", question, "--json").stdout)
    cited = {c["citation"]: c for c in got["citations"]}
    assert hit["citation"] in cited, got
    c = cited[hit["citation"]]
    assert c["page"] == 2 and c["page_end"] == 2 and [p["page"] for p in c["pages"]] == [2]
    assert c["boxes"] == c["pages"][0]["boxes"]
    _check_boxes(c["pages"][0], hit["text"])
    assert "p.2" in ragbag(kb, "ask", question).stdout.split("Sources:")[1]
    for other in got["citations"]:
        if not other["uri"].endswith(".pdf"):
            assert "page" not in other and "boxes" not in other

    # The file gone: the answer stands, the citation says why it has no boxes.
    pdf = _pdf(kb)
    moved = pdf.with_suffix(".moved")
    pdf.rename(moved)
    try:
        gone = strict_json(ragbag(kb, "ask", question, "--json").stdout)
    finally:
        moved.rename(pdf)
    c = {c["citation"]: c for c in gone["citations"]}[hit["citation"]]
    assert c["page"] == 2 and "boxes" not in c and "no longer there" in c["boxes_unavailable"]
    assert gone["answer"] == got["answer"]


def test_a_missing_or_changed_pdf_and_bad_ids_are_one_line_errors(kb, tools, tmp_path):
    hit = _hit(tools, "padlock jetty gate code 5521", "pdf")
    pdf = _pdf(kb)

    def fails(*args: str) -> str:
        proc = ragbag(kb, "show", *args, check=False, cwd=tmp_path)
        assert proc.returncode == 2 and proc.stdout == "", proc
        assert proc.stderr.startswith("ragbag: error: ") and proc.stderr.count("\n") == 1, proc.stderr
        return proc.stderr

    saved = tmp_path / "saved.pdf"
    shutil.copy(pdf, saved)
    try:
        pdf.unlink()
        err = fails(hit["citation"])
        assert str(pdf) in err and "no longer there" in err and "ragbag build docs" in err
        with pytest.raises(RagbagError, match="no longer there"):
            tools.call("show_citation", {"citation": hit["citation"]})
        # Another text in its place (the same pages in another order): no wrong lines outlined.
        pdf.write_bytes(layout_pdf(PAGES[::-1])[0])
        err = fails(hit["citation"])
        assert "not on page 2" in err and "changed since it was indexed" in err
        pdf.write_bytes(b"%PDF-1.4 this is not a PDF")
        assert "cannot open the PDF" in fails(hit["citation"])
    finally:
        shutil.copy(saved, pdf)
    assert not list(tmp_path.glob("citation-*")), "nothing written on failure"

    assert "not a citation id" in fails("lisbon")
    assert "not a citation id" in fails("c:12ab")  # too short to name one passage
    assert "no indexed passage has citation c:000000" in fails("c:000000")
    assert "--format must be one of png, html, text" in fails(hit["citation"], "--format", "jpeg")
    assert "cannot write" in fails(hit["citation"], "--out", str(tmp_path / "no" / "such" / "dir.png"))


def test_matching_survives_what_pypdf_and_pdfium_read_differently(tmp_path):
    """Line-end hyphens, ligatures, whitespace and case differ between the two readers; the
    letters do not. Text that is not there is not found, never outlined elsewhere."""
    assert pdf_boxes.fold("The ﬁne of-\nﬁce,  CAFÉ") == pdf_boxes.fold("the fine office cafe")
    page = pdf_boxes.fold("Alpha beta gamma. " * 3 + "The boathouse key hangs behind the blue door today.")
    key = pdf_boxes.fold("The boathouse key hangs behind the blue door today.")
    assert pdf_boxes.find(key, page) == [(len(page) - len(key), len(page))]
    # One glyph read differently: found piece by piece, most of it outlined.
    odd = pdf_boxes.fold(("The boathouse key hangs behind the blue door, " * 2) + "and the gate code is 5521 now.")
    text = odd.replace("gatecode", "gatec0de")
    ranges = pdf_boxes.find(text, odd)
    assert ranges and sum(b - a for a, b in ranges) >= 0.6 * len(text)
    assert pdf_boxes.find(pdf_boxes.fold("Nothing like this is on the page at all, not a word of it."), page) is None

    # A real hyphenated line end in Helvetica: pdfium reads "ap\x02ples", pypdf "ap-\nples".
    from test_connector_files import make_pdf

    path = tmp_path / "hyphen.pdf"
    path.write_bytes(make_pdf([["Alpha page one talks about ap-", "ples that grow on trees."], ["Second page."]]))
    from ragbag.text.extract import pdf_text

    _, text = pdf_text(path.read_bytes(), {})
    with pdf_boxes.opened(path) as doc:
        (page1,) = pdf_boxes.locate(doc, text.split("\f")[0], 1)
        (page2,) = pdf_boxes.locate(doc, text.split("\f")[1], 2)
    assert len(page1.boxes) == 2 and page1.boxes[0][1] > page1.boxes[1][1]  # two lines, top first
    assert page1.boxes[0][0] == pytest.approx(72, abs=1) and page2.page == 2 and len(page2.boxes) == 1
