"""The OCR recogniser takes the encoders' thread budget (``ragbag.core.threads``): ONNX Runtime's
threads spin while they wait, so two recognisers side by side (two builds, two test workers),
each given every core, burned about a third more CPU than with one thread each
(benchmarks/README.md, "Fixed costs of a run")."""

from __future__ import annotations

import os
import subprocess
import sys

PROBE = """
from PIL import Image
from ragbag.text import ocr
ocr.recognise(Image.new("RGB", (64, 64), "white"))  # the models load on first use
engine = ocr._engine()
print(engine.text_det.session.session.get_session_options().intra_op_num_threads)  # the detector: most of the time
"""


def _threads(omp: str | None) -> str:
    env = {k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}
    if omp is not None:
        env["OMP_NUM_THREADS"] = omp
    done = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.split("\n")[-2]


def test_ocr_uses_omp_num_threads_and_at_most_the_cores_it_may_run_on():
    assert _threads("1") == "1"
    cores = len(os.sched_getaffinity(0))
    expect = str(min(4, cores))
    assert _threads(None) == expect  # unset: every core this process may use, up to 4
