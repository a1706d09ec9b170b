"""The recogniser's settings (``ragbag.text.ocr``: lines one at a time, no line classifier)
against RapidOCR's defaults and the step between, a smaller detector input tried and left out,
and ragbag's settings on ONNX Runtime (the runtime before OpenVINO, ``ocr.runtime``), by word
recall and CPU seconds.

Run from the repository root: ``.venv/bin/python benchmarks/ocr_settings.py`` (about five
minutes). Each setting reads, in this process with one runtime thread:

- *public* (what the settings were chosen on): the OCR pages of ``tests/fixtures/public/images``
  with a ground truth (``expected.json``), images and image-only PDFs;
- *held out* (never looked at while choosing): the scans and screenshots the evaluation sets'
  generator draws for persona A and persona B, against the lines it drew them from.

Word recall counts words with repeats, case-folded (``words``); ``glued_words`` counts
ground-truth words that came out glued to their neighbour. Prints one JSON line per setting and set.
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
import time
import unicodedata
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
IMAGES = ROOT / "tests" / "fixtures" / "public" / "images"
PERSONAS = ROOT / "evalsets" / "ragbag_evalsets" / "personas"
CLASSIFIER = {"Global.use_cls": True}  # its model: the wheel's, named by ocr.engine_params
SETTINGS = {
    "rapidocr defaults": {"Rec.rec_batch_num": 6, **CLASSIFIER},
    "lines one at a time": CLASSIFIER,
    "ragbag": {},  # and no line classifier: orientation is the page's
    "detector at 512": {"Det.limit_side_len": 512},  # RapidOCR's: 736 (the short side, scaled up)
    "ragbag on ONNX Runtime": {"runtime": "onnxruntime"},
}


def words(text: str) -> Counter:
    return Counter(re.findall(r"\w+", unicodedata.normalize("NFKC", text).casefold()))


def recall(truth: str, text: str) -> tuple[int, int, int]:
    """(words found, words wanted, wanted words found only glued to a neighbour)."""
    want, got = words(truth), words(text)
    found = sum((want & got).values())
    glued = sum(
        1 for a, b in zip(truth.split(), truth.split()[1:]) if re.fullmatch(r"\w+", a + b) and (a + b).casefold() in got
    )
    return found, sum(want.values()), glued


def public_pages() -> list[tuple[str, bytes, str]]:
    expected = json.loads((IMAGES / "expected.json").read_text(encoding="utf-8"))
    pages = []
    for rel, entry in sorted(expected.items()):
        if "taken" in entry or not (entry.get("ground_truth") or entry.get("text")):
            continue
        truth = (
            (IMAGES / entry["ground_truth"]).read_text(encoding="utf-8") if "ground_truth" in entry else entry["text"]
        )
        pages.append((rel, (IMAGES / rel).read_bytes(), truth))
    return pages


def _drawn_lines(entry: dict[str, Any]) -> str:
    """The text a generated scan or screenshot was drawn from: its pages' lines or its rows."""
    lines: list[str] = []
    for page in entry.get("pages", []):
        lines += [str(line).lstrip("#> ") for line in page]
    for row in entry.get("rows", []) + entry.get("blocks", []):
        lines.append(str(row[-1]) if isinstance(row, list) else str(row))
    return "\n".join(lines)


def held_out_pages(folder: Path) -> list[tuple[str, bytes, str]]:
    """Persona A's and B's generated scans and screenshots (their notes folders), with truth."""
    from ragbag_evalsets import persona_b, personal

    pages = []
    for name, generate, spec in (
        ("a", personal.generate, PERSONAS / "a" / "documents.json"),
        ("b", persona_b.generate, PERSONAS / "b" / "notes.json"),
    ):
        out = generate(folder / name) or folder / name
        notes = Path(out) / "data" / "notes"
        stack: list[Any] = [json.loads(spec.read_text(encoding="utf-8"))]
        while stack:
            item = stack.pop()
            if isinstance(item, list):
                stack += item
            elif isinstance(item, dict):
                path = item.get("path")
                scanned = (
                    str(path).lower().endswith(".png") or item.get("type") == "scan" or "/scans/" in f"/{path}".lower()
                )
                if path and scanned and ("pages" in item or "rows" in item or "blocks" in item):
                    if (notes / path).is_file():
                        pages.append((f"{name}/{path}", (notes / path).read_bytes(), _drawn_lines(item)))
                else:
                    stack += list(item.values())
    return sorted(pages)


def read_all(pages: list[tuple[str, bytes, str]]) -> dict[str, Any]:
    from ragbag.text import ocr
    from ragbag.text.documents import document_text

    found = wanted = glued = 0
    cpu = time.process_time()
    for rel, data, truth in pages:
        if rel.lower().endswith(".pdf"):
            text = document_text(data, Path(rel).name, "pdf", {}, ocr.Cache(None), None)[1]
        else:
            text = ocr.recognise(ocr.open_image(data)).text
        f, w, g = recall(truth, text)
        found, wanted, glued = found + f, wanted + w, glued + g
    return {
        "pages": len(pages),
        "word_recall": round(found / wanted, 4),
        "glued_words": glued,
        "cpu_s": round(time.process_time() - cpu, 1),
    }


def main() -> None:
    os.environ["OMP_NUM_THREADS"] = "1"
    from rapidocr import RapidOCR

    from ragbag.text import ocr

    base = ocr._engine()  # ragbag's recogniser: its parameters are what the other settings change
    with tempfile.TemporaryDirectory() as tmp:
        sets = {"public": public_pages(), "held out": held_out_pages(Path(tmp))}
        for setting, change in SETTINGS.items():
            change = dict(change)
            params = ocr.engine_params(change.pop("runtime", None))
            engine = RapidOCR(params={**params, **change}) if setting != "ragbag" else base
            ocr._engine = lambda engine=engine: engine  # type: ignore[assignment]
            for name, pages in sets.items():
                print(json.dumps({"setting": setting, "set": name, **read_all(pages)}), flush=True)


if __name__ == "__main__":
    sys.exit(main())
