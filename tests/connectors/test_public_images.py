"""The public OCR pages and EXIF photos (``tests/fixtures/public/images``, see its README) read by
ragbag's readers: :mod:`ragbag.text.ocr`, :mod:`ragbag.text.images`, :mod:`ragbag.text.scans`,
:func:`ragbag.text.documents.document_text` and the files connector.

- EXIF: :func:`photo_facts` against an independent reader (exifread, ``expected.json``), and
  the offline gazetteer's country for each GPS position (checked on a map, not copied from the
  output).
- OCR: word recall against the OCR projects' own ground truth, with a floor per image set from
  a measurement less a margin (the figures are in the fixtures' README: run this file with
  python to measure them again), and the known limits asserted as they are today. When a limit
  is lifted, its expectation fails: update it then.
- The folder connector over a copy of the whole folder: every file it reads is a Document or a
  ReadError with a reason.
- The OCR cache: a hit never calls the recogniser; a damaged entry is recognised again.

Recognition costs 0.3–8 s an image, so each image is recognised at most once per session:
through one module-wide :class:`Cache`, kept in the folder the connector's cache uses when
``RAGBAG_OCR_CACHE`` names it, so the connector test reads the same results back.
"""

from __future__ import annotations

import io
import json
import random
import shutil
import unicodedata
from collections import Counter
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

import pytest
from conftest import FIXTURES

from ragbag.connectors import files
from ragbag.core.records import Document, ReadError
from ragbag.text import ocr
from ragbag.text.documents import document_text
from ragbag.text.images import image_text, photo_facts
from ragbag.text.ocr import CACHE_FORMAT, Cache, Line, Lines, image_key, open_image
from ragbag.text.unreadable import Unreadable

pytestmark = [
    pytest.mark.filterwarnings("ignore::UserWarning:PIL.TiffImagePlugin"),  # damaged EXIF, on purpose
]

IMAGES = FIXTURES / "public" / "images"
EXPECTED: dict[str, dict] = json.loads((IMAGES / "expected.json").read_text(encoding="utf-8"))
EXIF = sorted(k for k, v in EXPECTED.items() if "taken" in v)
PDFS = sorted(k for k in EXPECTED if k.endswith(".pdf"))
OCR_IMAGES = sorted(k for k in EXPECTED if k not in EXIF and k not in PDFS)
SOURCE = "images"  # the connector test's source name: its cache is <RAGBAG_OCR_CACHE>/ocr/images

PHOTOTEST = "tesseract-test/testing__phototest.tif"
ROTATED_L = "tesseract-test/testing__phototest-rotated-L.png"
ROTATED_180 = "tesseract-test/testing__phototest-rotated-180.png"
UNLV = ("tesseract-test/testing__8071_093.3B.tif", "tesseract-test/testing__8087_054.3B.tif")
VIET = "tesseract-test/testing__viet.tif"
CH_EN_NUM = "RapidOCR/python__tests__test_files__ch_en_num.jpg"
EXIF_ORIENTED = "RapidOCR/python__tests__test_files__img_exif_orientation.jpg"
TEXT_CLS = "RapidOCR/python__tests__test_files__text_cls.jpg"
HELLO = "tesseract-test/testing__HelloGoogle.tif"
FRANCAIS = "OCRmyPDF/tests__resources__francais.pdf"

# Floors of word recall: what was measured (in the comment; the README's Figures) less a margin
# for other ONNX Runtime builds and thread counts. A floor of 1.0 is a one-word or one-line text.
RECALL_FLOOR = {
    PHOTOTEST: 0.9,  # 1.000
    ROTATED_L: 0.9,  # 1.000: turned upright by ocr.recognise
    "tesseract-test/testing__eurotext.tif": 0.85,  # 1.000
    UNLV[0]: 0.94,  # 0.997 (the ground truth is zone-ordered and ASCII-only: recall, not order)
    UNLV[1]: 0.90,  # 0.953 (misses the spaced-out "d a t e l i n e" header and folio, read as words)
    HELLO: 1.0,  # 1.000
    CH_EN_NUM: 1.0,  # 1.000 (its first three lines, all the expected text holds)
    EXIF_ORIENTED: 1.0,  # 1.000
    "RapidOCR/python__tests__test_files__test_without_det.jpg": 1.0,  # 1.000
    FRANCAIS: 0.95,  # 0.984: loses the diaeresis-y of "Moÿ" ("Mo")
}

# The gazetteer's country for each GPS photo, checked against the position on a map:
COUNTRY = {
    "metadata-extractor-images/jpg__Issue 508.jpg": "HR",  # 43.86 N 15.50 E: Pakoštane, Dalmatian coast
    "metadata-extractor-images/jpg__FujiFilm FinePixS1Pro (1).jpg": "GB",  # 54.99 N 1.91 W: Northumberland
    "metadata-extractor-images/jpg__HTC Desire.jpg": "IT",  # 45.50 N 9.11 E: Pero, north-west of Milan
    "exifr/test__fixtures__issue-exifr-36.jpg": "KE",  # 0.37 S 36.06 E: by Nakuru, Rift Valley
    "exifr/test__fixtures__issue-exifr-59.jpg": "US",  # 37.75 N 119.53 W: Yosemite Valley, California
    "exifr/test__fixtures__issue-exifr-13.jpg": "AT",  # 47.35 N 10.19 E: Riezlern, Kleinwalsertal (Vorarlberg)
}


def words(text: str, ground_truth: bool = False) -> Counter[str]:
    """The words of ``text``, lower-cased, punctuation and symbols stripped. A UNLV ground truth
    writes each character outside ASCII as ``~``: a word holding one is left out, since OCR
    reads the real character (Café, Dabelič)."""
    found: Counter[str] = Counter()
    for token in text.split():
        if ground_truth and "~" in token:
            continue
        word = "".join(c for c in token.lower() if unicodedata.category(c)[0] in "LN")
        if word:
            found[word] += 1
    return found


def recall(truth: str, text: str) -> float:
    """The share of the ground truth's words (counted with repeats) found in ``text``."""
    want = words(truth, ground_truth=True)
    return sum((want & words(text)).values()) / sum(want.values())


def truth_of(rel: str) -> str:
    """What ``expected.json`` says the image holds: its ground-truth file's text, or its text."""
    entry = EXPECTED[rel]
    if "ground_truth" in entry:
        return (IMAGES / entry["ground_truth"]).read_text(encoding="utf-8")
    return entry["text"]


class Recognised:
    """Each image's lines, recognised on first use and then held, through one :class:`Cache`."""

    def __init__(self, cache: Cache):
        self.cache = cache
        self._held: dict[str, Lines] = {}

    def __call__(self, rel: str) -> Lines:
        if rel not in self._held:
            data = (IMAGES / rel).read_bytes()
            self._held[rel] = self.cache.lines(open_image(data))
        return self._held[rel]


@pytest.fixture(scope="module")
def cache_base(tmp_path_factory) -> Path:
    """What ``RAGBAG_OCR_CACHE`` names in the connector test."""
    return tmp_path_factory.mktemp("ocr-cache")


@pytest.fixture(scope="module")
def recognised(cache_base) -> Recognised:
    return Recognised(Cache(cache_base / "ocr" / SOURCE))


@pytest.fixture(scope="module")
def scanned_pdf() -> Callable[[str], tuple[str, str, dict]]:
    """(title, text, meta) of an image-only PDF through ``document_text`` with no cache folder,
    each read once."""
    held: dict[str, tuple[str, str, dict]] = {}

    def read(rel: str) -> tuple[str, str, dict]:
        if rel not in held:
            meta: dict = {}
            title, text = document_text((IMAGES / rel).read_bytes(), Path(rel).name, "pdf", meta, Cache(None), None)
            held[rel] = (title, text, meta)
        return held[rel]

    return read


# EXIF


@pytest.mark.parametrize("rel", EXIF)
def test_photo_facts_agree_with_exifread(rel):
    want = EXPECTED[rel]
    facts = photo_facts((IMAGES / rel).read_bytes())  # the broken and fuzzed files too: never raises
    if want["taken"] is None:
        assert "taken" not in facts
    else:
        assert facts["taken"][:19] == want["taken"]
    if want["model"] is None:
        assert "camera" not in facts
    else:
        assert want["model"] in facts["camera"]
        assert want["make"].split()[0].lower() in facts["camera"].lower()
    if want["lat"] is None:
        assert "lat" not in facts and "lon" not in facts and "place" not in facts
    elif want["lat"] == want["lon"] == 0 and "placeholder" in want["note"]:
        # Samsung's GPS IFD holds 0°0'0" N 0°0'0" E without a fix: ragbag drops a 0,0 position on
        # purpose (no photo is taken in the Gulf of Guinea's null island), where exifread keeps it.
        assert "lat" not in facts and "lon" not in facts and "place" not in facts
    else:
        assert facts["lat"] == pytest.approx(want["lat"], abs=1e-5)
        assert facts["lon"] == pytest.approx(want["lon"], abs=1e-5)


def test_every_position_is_one_of_the_six_gps_photos():
    placed = {rel for rel in EXIF if EXPECTED[rel]["lat"] and EXPECTED[rel]["lon"]}
    assert placed == set(COUNTRY)


@pytest.mark.parametrize("rel", sorted(COUNTRY))
def test_a_gps_photo_is_placed_by_the_offline_gazetteer(rel):
    facts = photo_facts((IMAGES / rel).read_bytes())
    assert facts["country"] == COUNTRY[rel]
    assert facts["city"] and facts["place"].startswith(facts["city"])
    assert facts["country_name"] and facts["country_name"] in facts["place"]  # "Italy", not "IT"
    assert all(town in facts["place"] for town in facts["near"])


def test_damaged_exif_never_raises():
    """Every EXIF file cut short at 15 places and with bytes of its head overwritten: the facts
    may be lost, never the reading."""
    rng = random.Random(20240531)
    for rel in EXIF:
        data = (IMAGES / rel).read_bytes()
        for cut in range(1, 16):
            assert isinstance(photo_facts(data[: len(data) * cut // 16]), dict)
        for _ in range(10):
            damaged = bytearray(data)
            for _ in range(8):
                damaged[rng.randrange(min(len(damaged), 4096))] = rng.randrange(256)
            assert isinstance(photo_facts(bytes(damaged)), dict)


def test_the_fuzzed_file_is_no_picture_and_says_so():
    data = (
        IMAGES / "metadata-extractor-images/fuzzing__crash-15e5cd044a709974fb9a9f73998d3132cecdcbdb.fuzzed"
    ).read_bytes()
    assert photo_facts(data) == {}
    with pytest.raises(Unreadable, match="not a readable image"):
        document_text(data, "crash.tif", "tif", {}, Cache(None), None)


# OCR


@pytest.mark.parametrize("rel", sorted(RECALL_FLOOR))
def test_word_recall(rel, recognised, scanned_pdf):
    text = scanned_pdf(rel)[1] if rel in PDFS else recognised(rel).text
    assert recall(truth_of(rel), text) >= RECALL_FLOOR[rel]


def test_a_page_turned_a_quarter_reads_like_the_upright_one(recognised):
    upright, turned = recognised(PHOTOTEST), recognised(ROTATED_L)
    assert turned.text == upright.text
    assert (turned.width, turned.height) == (upright.width, upright.height)  # read turned upright


def test_the_exif_oriented_picture_is_read_upright(recognised):
    assert recognised(EXIF_ORIENTED).text == "我是中国人"  # stored upside down, EXIF Orientation 3


def test_the_banner_s_first_three_lines(recognised):
    lines = [line.text for line in recognised(CH_EN_NUM).lines]
    assert lines[:3] == EXPECTED[CH_EN_NUM]["text"].splitlines()
    assert len(lines) == 18  # as RapidOCR's own test counts


def test_lines_have_boxes_within_the_picture(recognised):
    for rel in (PHOTOTEST, CH_EN_NUM, UNLV[0]):
        for line in recognised(rel).lines:
            x0, y0, x1, y1 = line.box
            assert 0 <= x0 <= x1 <= 1 and 0 <= y0 <= y1 <= 1 and line.score >= ocr.MIN_SCORE


def test_a_page_upside_down_is_turned_over(recognised):
    """The line classifier turns each line upright, but not the page: read as it lies, its lines
    came last to first and three of eight were letter noise (recall 0.52). Its low confidence
    has it read again turned over, and it reads exactly as the upright page."""
    assert recognised(ROTATED_180).text == recognised(PHOTOTEST).text


def test_limit_a_stacked_diacritic_is_lost(recognised):
    """A limit: Vietnamese "tiếng" (e with circumflex and acute) is read with the circumflex only."""
    assert recognised(VIET).text == "tiêng"


def test_limit_an_upside_down_crop_yields_nothing(recognised):
    """A limit: the detector finds no box in this 136×48 one-line crop rotated 180° ("怪我咯"),
    nor in it turned upright (RapidOCR's own test reads it with detection off), so the line
    classifier never sees it; the picture has no EXIF either, so it is not indexed."""
    assert recognised(TEXT_CLS).lines == []
    data = (IMAGES / TEXT_CLS).read_bytes()
    with pytest.raises(Unreadable, match="no text recognised"):
        document_text(data, Path(TEXT_CLS).name, "jpg", {}, recognised.cache, None)


@pytest.mark.parametrize(("rel", "share"), [(UNLV[0], 0.95), (UNLV[1], 0.8)])
def test_a_page_s_columns_are_read_column_by_column(rel, share, recognised):
    """The magazine pages' columns are read one after the other, not interleaved line by line:
    of the ground truth's consecutive lines that OCR reads exactly, this share (measured: 102 of
    103 and 77 of 88; a caption set between 8087's columns and its picture's edges cost the rest)
    are consecutive in the OCR text; before the XY-cut none were. Single-column pages keep their
    order."""
    truth = [line.strip() for line in truth_of(rel).splitlines() if line.strip()]
    at = {line.text: i for i, line in enumerate(recognised(rel).lines)}
    pairs = [(a, b) for a, b in zip(truth, truth[1:], strict=False) if a in at and b in at]
    assert len(pairs) > 50
    assert sum(at[b] == at[a] + 1 for a, b in pairs) / len(pairs) >= share
    single = [line.strip() for line in truth_of(PHOTOTEST).splitlines() if line.strip()]
    assert [line.text for line in recognised(PHOTOTEST).lines] == single


def test_a_form_keeps_its_rows(tmp_path):
    """Generated (the public scans hold no form): a label and its value, far apart on one row,
    stay neighbours; the column cut is for running text only."""
    from PIL import Image, ImageDraw, ImageFont

    try:
        font = ImageFont.truetype("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", 30)
    except OSError:
        font = ImageFont.load_default(size=30)
    rows = [("Rechnungsnummer:", "RE-2024-0815"), ("Kundennummer:", "K-77812"), ("Gesamtbetrag:", "412,50 EUR")]
    rows += [("Rechnungsdatum:", "12.03.2024"), ("MwSt 19%:", "65,86 EUR"), ("Betrag netto:", "346,64 EUR")]
    img = Image.new("RGB", (1654, 800), "white")
    draw = ImageDraw.Draw(img)
    for i, (label, value) in enumerate(rows):
        draw.text((150, 150 + i * 70), label, font=font, fill="black")
        draw.text((1000, 150 + i * 70), value, font=font, fill="black")
    got = [line.text for line in ocr.recognise(img).lines]
    assert got == [cell for row in rows for cell in row]


@pytest.mark.parametrize("rel", PDFS)
def test_an_image_only_pdf_is_read_by_ocr(rel, scanned_pdf):
    _, text, meta = scanned_pdf(rel)
    assert meta["pages"] == 1 and meta["ocr_pages"] == [1]
    flat = " ".join(text.split())
    for phrase in EXPECTED[rel].get("text_contains", []):
        assert phrase in flat
    boxes = meta["ocr_lines"]["1"]
    assert [b[0] for b in boxes] == text.splitlines()
    for _, x0, y0, x1, y1 in boxes:
        assert 0 <= x0 <= x1 <= 1 and 0 <= y0 <= y1 <= 1


# The folder connector


def test_the_folder_connector_reads_every_picture_or_says_why(tmp_path, monkeypatch, cache_base, recognised):
    for rel in OCR_IMAGES:  # recognised already when the other tests ran first: read from the cache
        recognised(rel)
    monkeypatch.setenv("RAGBAG_OCR_CACHE", str(cache_base))
    folder = tmp_path / "images"
    shutil.copytree(IMAGES, folder)
    fuzzed = "metadata-extractor-images/fuzzing__crash-15e5cd044a709974fb9a9f73998d3132cecdcbdb.fuzzed"
    shutil.copy(IMAGES / fuzzed, folder / "fuzzed-named-as.tif")  # a damaged picture under a picture's name
    items = list(files.read(folder, SOURCE))
    docs = {d.native_id: d for d in items if isinstance(d, Document)}
    errors = {Path(e.uri).relative_to(folder).as_posix(): e for e in items if isinstance(e, ReadError)}
    assert len(docs) + len(errors) == len(items)

    # What the connector reads is named by extension: pictures, PDFs and text; .uzn, .json, .tsv
    # and .fuzzed are no format it knows (nor an unsupported one it reports), so they are not read.
    present = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}
    read = {rel for rel in present if Path(rel).suffix.lower().lstrip(".") in files.FORMATS}
    assert {Path(rel).suffix.lower() for rel in read} == {".pdf", ".jpg", ".tif", ".png", ".txt", ".md"}
    assert {Path(rel).suffix.lower() for rel in present - read} == {".uzn", ".json", ".tsv", ".fuzzed"}
    assert not any(Path(rel).suffix.lower().lstrip(".") in files.UNSUPPORTED for rel in present)
    assert set(docs) | set(errors) == read and not set(docs) & set(errors)  # none missing, none twice

    assert {rel: e.error for rel, e in errors.items()} == {
        TEXT_CLS: "picture with no date or place (no text recognised): nothing to index",
        "metadata-extractor-images/jpg__FujiFilm DX-5.jpg": "picture with no date or place (no text recognised): nothing to index",
        "fuzzed-named-as.tif": "not a readable image: UnidentifiedImageError",
    }
    for rel in EXIF:
        if rel in docs:
            doc, want = docs[rel], EXPECTED[rel]
            assert doc.created_at == (datetime.fromisoformat(want["taken"]) if want["taken"] else None)
            if rel in COUNTRY:
                assert doc.metadata["country"] == COUNTRY[rel] and doc.metadata["place"] in doc.text
    for rel in OCR_IMAGES:
        if rel in docs:  # the same lines the readers gave above, with the picture's first line
            assert docs[rel].text.endswith(recognised(rel).text + "\n")
            assert [b[0] for b in docs[rel].metadata["ocr_lines"]] == [ln.text for ln in recognised(rel).lines]
    for rel in PDFS:
        assert docs[rel].metadata["ocr_pages"] == [1]
        assert docs[rel].metadata["format"] == "pdf"


# The cache


def test_a_second_lookup_is_a_hit_and_recognises_nothing(tmp_path, monkeypatch, recognised):
    real = recognised(HELLO)  # before the recogniser is replaced
    image = open_image((IMAGES / HELLO).read_bytes())
    calls = []

    def recognise_once(img):
        calls.append(img)
        if len(calls) > 1:
            raise AssertionError("recognised twice")
        return real

    monkeypatch.setattr(ocr, "recognise", recognise_once)
    first = Cache(tmp_path)
    assert first.lines(image).text == real.text
    assert (first.hits, first.misses) == (0, 1)
    second = Cache(tmp_path)
    again = second.lines(image)
    assert (second.hits, second.misses) == (1, 0) and len(calls) == 1
    assert again.text == real.text and (again.width, again.height) == (real.width, real.height)
    assert [ln.box for ln in again.lines] == [tuple(round(c, 5) for c in ln.box) for ln in real.lines]


def test_a_picture_or_scan_whose_bytes_changed_but_not_its_pixels_is_not_recognised_again(tmp_path, monkeypatch):
    """The key is what is recognised: a photo manager's rewritten tags, a PDF saved again with
    bytes added after its end, are read from the cache; a picture that shows something else is not."""
    from PIL import Image, PngImagePlugin

    seen: list[tuple[int, int]] = []
    monkeypatch.setattr(
        ocr, "recognise", lambda img: seen.append(img.size) or Lines(*img.size, [Line("x", 1, (0, 0, 1, 1))])
    )
    cache = Cache(tmp_path)
    picture = Image.open(IMAGES / PHOTOTEST).convert("RGB")
    saved = []
    for title in ("first", "tagged again"):  # the same pixels under other metadata: other bytes
        info = PngImagePlugin.PngInfo()
        info.add_text("Title", title)
        out = io.BytesIO()
        picture.save(out, "PNG", pnginfo=info)
        saved.append(out.getvalue())
    assert saved[0] != saved[1]
    for data in saved:
        image_text(data, "page.png", {}, cache)
    assert (cache.hits, cache.misses) == (1, 1)

    scan = (IMAGES / FRANCAIS).read_bytes()
    for data in (scan, scan + b"\n% saved again\n"):
        document_text(data, "scan.pdf", "pdf", {}, cache, None)
    assert (cache.hits, cache.misses) == (2, 2)

    turned = io.BytesIO()
    picture.rotate(90, expand=True).save(turned, "PNG")
    image_text(turned.getvalue(), "page.png", {}, cache)
    assert (cache.hits, cache.misses) == (2, 3) and len(seen) == 3  # other pixels: recognised


def _valid(real: Lines) -> str:
    return json.dumps(real.as_json(), ensure_ascii=False)


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda real: b"\x00\xff garbage", id="not-utf8"),
        pytest.param(lambda real: _valid(real)[:40].encode(), id="truncated"),
        pytest.param(lambda real: _valid(real).replace(f'"v": {CACHE_FORMAT}', '"v": 0').encode(), id="other-format"),
        pytest.param(lambda real: b"", id="empty"),
    ],
)
def test_a_damaged_cache_entry_is_recognised_again(tmp_path, monkeypatch, recognised, damage):
    real = recognised(HELLO)
    data = (IMAGES / HELLO).read_bytes()
    image = open_image(data)
    key = image_key(image)
    calls = []
    monkeypatch.setattr(ocr, "recognise", lambda img: calls.append(img) or real)
    entry = tmp_path / key[:2] / f"{key}.json"
    entry.parent.mkdir(parents=True)
    entry.write_bytes(damage(real))
    cache = Cache(tmp_path)
    assert cache.lines(image).text == real.text
    assert (cache.hits, cache.misses) == (0, 1) and len(calls) == 1
    assert json.loads(entry.read_text(encoding="utf-8"))["v"] == CACHE_FORMAT  # rewritten whole
    reread = Cache(tmp_path)
    assert reread.lines(image).text == real.text and (reread.hits, len(calls)) == (1, 1)


def test_a_cache_entry_of_this_format_with_a_damaged_line_is_recognised_again(tmp_path, monkeypatch, recognised):
    real = recognised(HELLO)
    data = (IMAGES / HELLO).read_bytes()
    image = open_image(data)
    key = image_key(image)
    calls = []
    monkeypatch.setattr(ocr, "recognise", lambda img: calls.append(img) or real)
    entry = tmp_path / key[:2] / f"{key}.json"
    entry.parent.mkdir(parents=True)
    entry.write_text(json.dumps({"v": CACHE_FORMAT, "width": 1, "height": 1, "lines": [["x", 1]]}))
    cache = Cache(tmp_path)
    assert cache.lines(image).text == real.text and len(calls) == 1
    assert (cache.hits, cache.misses) == (0, 1)  # a damaged entry is a miss, not a hit


@pytest.mark.parametrize("content", ["[]", "null", '"x"'])
def test_a_cache_entry_that_is_not_a_json_object_is_recognised_again(tmp_path, monkeypatch, recognised, content):
    """Valid JSON that is not an object (it raised AttributeError, which the files connector's
    boundary turned into a ReadError for the picture on every build) is recognised again."""
    real = recognised(HELLO)
    data = (IMAGES / HELLO).read_bytes()
    key = image_key(open_image(data))
    monkeypatch.setattr(ocr, "recognise", lambda img: real)
    entry = tmp_path / key[:2] / f"{key}.json"
    entry.parent.mkdir(parents=True)
    entry.write_text(content)
    assert Cache(tmp_path).lines(open_image(data)).text == real.text


if __name__ == "__main__":  # the README's Figures: word recall per image, measured afresh
    print("| file | words | recall |\n|---|---:|---:|")
    for rel in OCR_IMAGES + PDFS:
        if rel in PDFS:
            text = document_text((IMAGES / rel).read_bytes(), Path(rel).name, "pdf", {}, Cache(None), None)[1]
        else:
            data = (IMAGES / rel).read_bytes()
            text = ocr.recognise(open_image(data)).text
        if "text_contains" in EXPECTED[rel]:
            phrases = EXPECTED[rel]["text_contains"]
            found = sum(p in " ".join(text.split()) for p in phrases)
            print(f"| `{rel}` | {len(phrases)} phrases | {found}/{len(phrases)} phrases |")
        else:
            print(f"| `{rel}` | {sum(words(truth_of(rel), True).values())} | {recall(truth_of(rel), text):.3f} |")
