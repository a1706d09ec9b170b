"""Two OCR recognisers side by side (two builds, two test workers): each with two ONNX Runtime
threads, or each with one (what ``OMP_NUM_THREADS=1`` gives them, ``ragbag.core.threads``).

Run from the repository root: ``.venv/bin/python benchmarks/ocr_threads.py`` (about a minute).
For each setting, twice, alternating: two processes start at once, each recognises the
RapidOCR test images of ``tests/fixtures/public/images/RapidOCR`` with ragbag's recogniser
parameters at that thread count, and reports its wall and CPU seconds.
"""

from __future__ import annotations

import json
import subprocess
import sys

CHILD = r"""
import json, sys, time
from pathlib import Path
import numpy as np
from rapidocr import RapidOCR
from ragbag.text import ocr
threads = int(sys.argv[1])
engine = RapidOCR(params={**ocr._models(), "Global.log_level": "error", "Global.text_score": ocr.MIN_SCORE,
    "Global.max_side_len": ocr.MAX_SIDE, "EngineConfig.onnxruntime.intra_op_num_threads": threads,
    "EngineConfig.onnxruntime.inter_op_num_threads": 1})
images = sorted(Path("tests/fixtures/public/images/RapidOCR").glob("*.jpg"))
engine(np.asarray(ocr.open_image(images[0].read_bytes()))[:, :, ::-1])  # models loaded
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
