"""Two OCR recognisers side by side (two builds, two test workers): each with two runtime
threads, or each with one (what ``OMP_NUM_THREADS=1`` gives them, ``ragbag.core.threads``).

Run from the repository root: ``.venv/bin/python benchmarks/ocr_threads.py`` (about a minute).
For each setting, twice, alternating: two processes start at once, each recognises the
RapidOCR test images of ``tests/fixtures/public/images/RapidOCR`` with ragbag's own recogniser
(``ragbag.text.ocr._engine``) under that ``OMP_NUM_THREADS``, and reports the threads its
detector got and its wall and CPU seconds.
"""

from __future__ import annotations

import json
import subprocess
import sys

CHILD = r"""
import json, os, sys, time
os.environ["OMP_NUM_THREADS"] = sys.argv[1]  # what ragbag.core.threads gives the recogniser
from pathlib import Path
import numpy as np
from ragbag.text import ocr
engine = ocr._engine()  # the recogniser a build uses, with its parameters
images = sorted(Path("tests/fixtures/public/images/RapidOCR").glob("*.jpg"))
engine(np.asarray(ocr.open_image(images[0].read_bytes()))[:, :, ::-1])  # models loaded
threads = ocr.detector_threads(engine)
wall, cpu = time.time(), time.process_time()
for path in images:
    engine(np.asarray(ocr.open_image(path.read_bytes()))[:, :, ::-1])
print(json.dumps({"threads": threads, "images": len(images), "wall_s": round(time.time() - wall, 2),
                  "cpu_s": round(time.process_time() - cpu, 2)}))
"""


def main() -> None:
    for threads in (2, 1, 2, 1):
        pair = [
            subprocess.Popen([sys.executable, "-c", CHILD, str(threads)], stdout=subprocess.PIPE, text=True)
            for _ in range(2)
        ]
        print(json.dumps([json.loads(p.communicate()[0]) for p in pair]))


if __name__ == "__main__":
    main()
