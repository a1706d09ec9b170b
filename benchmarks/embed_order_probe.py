"""A/B of how the embed stage batches, on the same texts, in one process, interleaved twice.

    .venv/bin/python benchmarks/embed_order_probe.py    # after build_bench.py (reads .work/texts.json)

1,280 of the chunk texts the bench embedded: 128-text slices in stored order (the embed stage
before 752db21; ``encode_passages`` batch 64) vs one bare ``encode`` call (batch 128, which
sentence-transformers sorts by characters, as ``embed.embed`` now does) vs the same 128-text
slices after ordering the texts by token count. Not part of ``make bench``.
"""

import json
import random
import sys

sys.path.insert(0, "benchmarks")
from _meter import meter

from ragbag.models import embedding

texts = json.load(open("benchmarks/.work/texts.json"))
random.seed(0)
texts = random.sample(texts, 1280)
count = embedding.token_counter()
embedding.encode_passages(texts[:16])


def pipeline():  # the embed stage before 752db21: 128-text slices in stored order, batch 64
    for s in range(0, len(texts), 128):
        embedding.encode_passages(texts[s : s + 128])


def bare():  # one encode call, batch 128 (sentence-transformers sorts by characters)
    embedding._sentence_transformer("all-MiniLM-L6-v2").encode(texts, batch_size=128, normalize_embeddings=True)


def token_sorted():  # same 128-slices, but texts ordered by token count first
    order = sorted(texts, key=count)
    for s in range(0, len(order), 128):
        embedding.encode_passages(order[s : s + 128])


out = {}
for rnd in range(2):
    for name, f in (("pipeline", pipeline), ("bare", bare), ("token_sorted", token_sorted)):
        with meter() as m:
            f()
        out.setdefault(name, []).append(m)
        print(rnd, name, m, flush=True)
json.dump(out, open("benchmarks/.work/embed_order_probe.json", "w"), indent=1)
