"""The OCR recogniser takes the encoders' thread budget (``ragbag.core.threads``), whichever
runtime runs it (``ocr.runtime``): a runtime's threads spin while they wait, so two recognisers side by side (two builds, two test workers),
each given every core, burned about a third more CPU than with one thread each
(benchmarks/README.md, "Fixed costs of a run")."""

from __future__ import annotations

import os
import subprocess
import sys

from conftest import FIXTURES

from ragbag.text import ocr

HELLO = FIXTURES / "public" / "images" / "tesseract-test" / "testing__HelloGoogle.tif"  # one line of text

PROBE = """
import sys
from pathlib import Path
from ragbag.text import ocr
ocr.recognise(ocr.open_image(Path(sys.argv[1]).read_bytes()))  # the models load on first use
engine = ocr._engine()
print(engine.text_rec.rec_batch_num, engine.use_cls, engine.text_cls)  # ragbag's settings
print(ocr.detector_threads(engine))  # the detector: most of the time
"""


def _threads(omp: str | None) -> str:
    env = {k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}
    if omp is not None:
        env["OMP_NUM_THREADS"] = omp
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(HELLO)], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    settings, threads = done.stdout.split("\n")[-3:-1]
    # The line batch and no line classifier (benchmarks/ocr_settings.py, ``ocr.recognise``): a
    # RapidOCR that renamed a parameter would drop it silently and read at its own default again.
    assert settings == f"{ocr.LINES_PER_BATCH} False None"
    return threads


def test_ocr_uses_omp_num_threads_and_at_most_the_cores_it_may_run_on():
    assert _threads("1") == "1"
    cores = len(os.sched_getaffinity(0))
    expect = str(min(4, cores))
    assert _threads(None) == expect  # unset: every core this process may use, up to 4


def test_a_build_lets_the_recogniser_go_after_reading_and_the_next_picture_loads_it(home, tmp_path, monkeypatch):
    """``ocr.release`` after each source's read (``pipeline.stages``): a build that recognised a
    picture holds no recogniser through its embedding and after, and the next picture still reads."""
    import shutil

    from conftest import build_in_process, cli

    folder = tmp_path / "pictures"
    folder.mkdir()
    shutil.copy(HELLO, folder / "hello.tif")
    cli("add", "files", "pictures", str(folder))
    monkeypatch.setenv("RAGBAG_OCR_CACHE", str(tmp_path / "ocr"))  # recognised now, not read from the suite's cache
    ocr.release()
    report = build_in_process(home, "pictures")
    assert report["chunks"] == 1
    assert ocr._engine.cache_info().currsize == 0
    assert ocr.recognise(ocr.open_image(HELLO.read_bytes())).text.split() == ["Hello", "Google"]
    assert ocr._engine.cache_info().currsize == 1
