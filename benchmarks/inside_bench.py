"""What reading inside records costs: OCR pages per second and peak memory, and a mailbox whose
mails carry attachments built with and without them (issue 32).

Two parts, one JSON (``benchmarks/results/inside.json``) and the rows of the README table:

- **OCR**: the public scans of ``tests/fixtures/public/images`` (Tesseract's and OCRmyPDF's test
  pages, RapidOCR's Chinese images) and generated A4 letters rendered at 200 dpi, each
  recognised once in a fresh process (no cache), timed per page; peak RSS of that process.
- **Mailbox**: ``--mails`` mails, every ``--every``-th with a scanned PDF letter, a screenshot and
  a Word document attached; ``ragbag build`` of it as a mail source with attachments (OCR on),
  and with ``--no-attachments``; then a no-change ``ragbag build`` and one after a mail is
  appended, each with the OCR cache's file count before and after (nothing recognised again).

    .venv/bin/python benchmarks/inside_bench.py [--mails 300] [--every 10]

Run it on an idle machine; each phase records other processes' CPU share (``_meter.py``).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _meter import meter  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
PUBLIC = ROOT / "tests" / "fixtures" / "public" / "images"
RAGBAG = str(Path(sys.executable).parent / "ragbag")
SCANS = [
    "tesseract-test/testing__phototest.tif",
    "tesseract-test/testing__eurotext.tif",
    "tesseract-test/testing__8071_093.3B.tif",
    "tesseract-test/testing__8087_054.3B.tif",
    "RapidOCR/python__tests__test_files__ch_en_num.jpg",
    "OCRmyPDF/tests__resources__c02-22.pdf",
]
_OCR_CHILD = """
import json, resource, sys, time
from pathlib import Path
from ragbag.text.documents import document_text
from ragbag.text.ocr import Cache
out = []
for path in sys.argv[1:]:
    p = Path(path)
    t = time.perf_counter()
    meta = {}
    document_text(p.read_bytes(), p.name, p.suffix.lower().lstrip("."), meta, Cache(None), None)
    out.append({"file": p.name, "s": round(time.perf_counter() - t, 3), "pages": len(meta.get("ocr_pages", [1]))})
print(json.dumps({"pages": out, "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)}))
"""


def letters(folder: Path, n: int) -> list[Path]:
    """``n`` one-page A4 letters at 200 dpi as image-only PDFs, German and English."""
    from PIL import Image, ImageDraw, ImageFont

    try:
        font = ImageFont.truetype("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", 30)
    except OSError:
        font = ImageFont.load_default(size=30)
    rng = random.Random(32)
    words = "Rechnung Betrag Vertrag Kündigung invoice amount contract renewal Straße Müller payment due".split()
    out = []
    for i in range(n):
        img = Image.new("RGB", (1654, 2339), "white")
        draw = ImageDraw.Draw(img)
        for line in range(28):
            text = " ".join(rng.choice(words) for _ in range(rng.randint(5, 9))) + f" {rng.randint(100, 99999)}"
            draw.text((150, 200 + line * 70), text, font=font, fill="black")
        path = folder / f"letter-{i}.pdf"
        img.save(path, "PDF", resolution=200)
        out.append(path)
    return out


def ocr_cost(work: Path) -> dict:
    files = [PUBLIC / s for s in SCANS] + letters(work, 4)
    with meter() as m:
        proc = subprocess.run([sys.executable, "-c", _OCR_CHILD, *map(str, files)], capture_output=True, text=True)
    if proc.returncode:
        raise SystemExit(proc.stderr[-2000:])
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    pages = sum(p["pages"] for p in got["pages"])
    seconds = sum(p["s"] for p in got["pages"][1:])  # the first includes loading the models
    return {
        **got,
        "pages_per_s": round((pages - got["pages"][0]["pages"]) / seconds, 2),
        "load_and_first_s": got["pages"][0]["s"],
        **{k: m[k] for k in ("wall_s", "cpu_s", "others_busy")},
    }


def mailbox(path: Path, mails: int, every: int) -> None:
    import mailbox as mb
    from email.message import EmailMessage

    import docx
    from PIL import Image, ImageDraw, ImageFont

    try:
        font = ImageFont.truetype("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", 30)
    except OSError:
        font = ImageFont.load_default(size=30)
    box = mb.mbox(str(path))
    for i in range(mails):
        m = EmailMessage()
        m["From"], m["To"] = f"sender{i % 17}@example.org", "me@example.org"
        m["Subject"], m["Message-ID"] = f"Message {i}", f"<m{i}@bench>"
        m["Date"] = f"Mon, {1 + i % 28:02d} Sep 2025 10:00:00 +0000"
        m.set_content(f"Hello, this is message {i} about topic {i % 13}. " * 8)
        if i % every == 0:
            img = Image.new("RGB", (1240, 1754), "white")
            draw = ImageDraw.Draw(img)
            for line in range(12):
                draw.text(
                    (120, 150 + line * 60),
                    f"Rechnung {i}-{line}: Betrag {i * 7 + line},50 EUR",
                    font=font,
                    fill="black",
                )
            scan = io.BytesIO()
            img.save(scan, "PDF", resolution=150)
            shot = io.BytesIO()
            img.crop((0, 0, 1240, 400)).save(shot, "PNG")
            doc = docx.Document()
            doc.add_paragraph(f"Vertrag {i}: die Miete beträgt {900 + i} EUR ab Oktober.")
            word = io.BytesIO()
            doc.save(word)
            m.add_attachment(scan.getvalue(), maintype="application", subtype="pdf", filename=f"scan-{i}.pdf")
            m.add_attachment(shot.getvalue(), maintype="image", subtype="png", filename=f"shot-{i}.png")
            m.add_attachment(
                word.getvalue(),
                maintype="application",
                subtype="vnd.openxmlformats-officedocument.wordprocessingml.document",
                filename=f"vertrag-{i}.docx",
            )
        box.add(m)
    box.flush()
    box.close()


def build(home: Path, *args: str) -> dict:
    env = {**os.environ, "RAGBAG_HOME": str(home), "DAGSTER_HOME": str(home / "dagster")}
    env.pop("RAGBAG_OCR_CACHE", None)  # the home's own cache, as a user has it
    with meter() as m:
        proc = subprocess.run([RAGBAG, "build", "--json", *args], env=env, capture_output=True, text=True)
    if proc.returncode:
        raise SystemExit(proc.stdout[-2000:] + proc.stderr[-2000:])
    (rep,) = json.loads(proc.stdout)
    cache = home / "tmp" / "ocr" / "m"
    return {
        **{k: m[k] for k in ("wall_s", "cpu_s", "others_busy")},
        "documents": rep["documents"],
        "errors": len(rep["errors"]),
        "ocr_cache_files": sum(1 for _ in cache.rglob("*.json")) if cache.exists() else 0,
    }


def add(home: Path, *args: str) -> None:
    env = {**os.environ, "RAGBAG_HOME": str(home), "DAGSTER_HOME": str(home / "dagster")}
    subprocess.run([RAGBAG, "add", "mail", "m", *args], env=env, check=True, capture_output=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mails", type=int, default=300)
    ap.add_argument("--every", type=int, default=10)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "inside.json"))
    a = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="inside-bench-", dir=ROOT / "benchmarks" / ".work"))
    try:
        result: dict = {"ocr": ocr_cost(work)}
        (work / "mail").mkdir()
        mailbox(work / "mail" / "inbox.mbox", a.mails, a.every)
        with_home, without_home = work / "with", work / "without"
        add(with_home, str(work / "mail"))
        add(without_home, str(work / "mail"), "--no-attachments")
        result["mailbox"] = {"mails": a.mails, "with_attachments": a.mails // a.every + (a.mails % a.every > 0)}
        result["build_with"] = build(with_home)
        result["build_without"] = build(without_home)
        result["no_change"] = build(with_home)
        import mailbox as mb

        box = mb.mbox(str(work / "mail" / "inbox.mbox"))
        extra = box.get_message(box.keys()[0])
        del extra["Message-ID"]
        extra["Message-ID"] = "<appended@bench>"
        box.add(extra)
        box.flush()
        box.close()
        result["one_more_mail"] = build(with_home)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    Path(a.out).write_text(json.dumps(result, indent=1) + "\n")
    o, w, wo = result["ocr"], result["build_with"], result["build_without"]
    print(json.dumps(result, indent=1))
    print(f"| OCR | {o['pages_per_s']} pages/s | peak RSS {o['peak_rss_mb']} MB | others {o['others_busy']:.0%} |")
    print(f"| build with attachments | {w['wall_s']} s | {w['documents']} documents | others {w['others_busy']:.0%} |")
    print(f"| build without | {wo['wall_s']} s | {wo['documents']} documents | others {wo['others_busy']:.0%} |")


if __name__ == "__main__":
    main()
