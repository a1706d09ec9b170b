"""Second-stage signals and cross-lingual tries on the personal homes, judged the held-out way
(issue 33): each variant is scored on persona A's tune half (where a choice may be made), and on
A's test half and personas B and C (where it is judged), per query kind, hybrid hit@10 / MRR@10.

    .venv/bin/python benchmarks/second_stage.py --set personal=/tmp/pe5 --set persona-b=/tmp/pb5 \\
        --set persona-c=/tmp/pc [--variants baseline prefixes splade20 splade50 sentences20]

Each ``--set NAME=DIR`` is a home set already built by ``ragbag eval NAME --home DIR/home``
(which writes the set itself next to it, in ``DIR/home-NAME``). The variants, each a change to
hybrid search tried without changing the product:

- ``baseline``: search as shipped.
- ``prefixes``: the query embedded with both of e5's prefixes ("query: " and "passage: "), the
  two vectors summed and normalised (a symmetric match may carry a question across languages).
- ``splade20`` / ``splade50``: the reranker's SPLADE half alone (no e5 re-encoding: the home's
  first stage already is e5's cosine), over the first stage's top 20 / 50, at SPLADE's share 0.3.
- ``sentences20``: the top 20 re-scored by their best sentence's e5 cosine with the question
  (sentence vectors for long chunks), at a share of 0.3; the torch engine encodes the sentences.
- ``langnorm``: each record's cosine with the question moved by its language's median against
  the source's (records in another language than the question sit lower on e5's scale as a
  whole; this takes that offset out), on the exact vector search these homes use.

"Multiple windows" is not a variant: a chunk is cut to fit one window of the model
(``embedding.chunk_budget``), so windows are what chunking already makes. Writes
``benchmarks/results/second_stage.json``; the table is in ``benchmarks/README.md``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from ragbag.apps.eval import homes
from ragbag.core.home import Home
from ragbag.models import embedding
from ragbag.search import query, rerank
from ragbag.text import sentences

OUT = Path(__file__).resolve().parent / "results" / "second_stage.json"
VARIANTS = ("baseline", "prefixes", "splade20", "splade50", "sentences20", "langnorm")
SHARE = 0.3
_SENTENCE_VECTORS: dict[str, np.ndarray] = {}


@contextlib.contextmanager
def variant(name: str, queries: list[str], model: str) -> Iterator[dict]:
    """The search options of a variant, with what it patches in place for its run."""
    saved = (rerank.WEIGHT, rerank.SPARSE_WEIGHT, rerank.rerank)
    saved_top = query._vector_top
    try:
        if name == "baseline":
            yield {}
        elif name == "prefixes":
            embedding.prime_queries(queries, model)
            for q in queries:
                v = embedding.encode_query(q, model) + embedding.encode_passages([q], model)[0]
                embedding._QUERY_CACHE.put((model, q), (v / np.linalg.norm(v)).astype(np.float32))
            yield {}
        elif name.startswith("splade"):
            rerank.WEIGHT, rerank.SPARSE_WEIGHT = 0.0, SHARE
            yield {"rerank": int(name.removeprefix("splade"))}
        elif name == "langnorm":
            query._vector_top = _by_language(saved_top)
            yield {}
        elif name.startswith("sentences"):
            embedding.prepare_passage_encoder(model)
            rerank.rerank = _by_sentences(model)
            yield {"rerank": int(name.removeprefix("sentences"))}
        else:
            raise SystemExit(f"unknown variant {name!r}: {', '.join(VARIANTS)}")
    finally:
        rerank.WEIGHT, rerank.SPARSE_WEIGHT, rerank.rerank = saved
        query._vector_top = saved_top
        embedding._QUERY_CACHE.clear()  # the next variant embeds its queries as shipped


def _by_sentences(model: str):
    def second_stage(query, ranked, texts, depth=20, weight=None, sparse_weight=None):
        head, tail = ranked[:depth], ranked[depth:]
        if len(head) < 2:
            return ranked
        qv = embedding.encode_query(query, model)
        best = []
        for content_hash, text in texts(head):
            if content_hash not in _SENTENCE_VECTORS:
                said = [s.text for s in sentences.split(text)] or [text]
                _SENTENCE_VECTORS[content_hash] = embedding.encode_passages(said, model)
            best.append(float((_SENTENCE_VECTORS[content_hash] @ qv).max()))
        first = np.array([t[-1] for t in head], dtype=np.float64)
        fused = (1 - SHARE) * _minmax(first) + SHARE * _minmax(np.array(best))
        order = np.argsort(-fused, kind="stable")
        lo, span = first.min(), (first.max() - first.min()) or 1.0
        out = [(*head[i][:-1], float(fused[i])) for i in order]
        return out + [(*t[:-1], float((1 - SHARE) * (t[-1] - lo) / span) - 1.0) for t in tail]

    return second_stage


_LANGUAGES: dict[int, np.ndarray] = {}


def _by_language(exact_top):
    def vector_top(snaps, qv, masks, n, model, width, recompute):
        cands = []
        for i, (s, mask) in enumerate(zip(snaps, masks)):
            if not len(s.vectors):
                continue
            if id(s) not in _LANGUAGES:
                _LANGUAGES[id(s)] = np.array([sentences.language((r["text"] or "")[:600]) for r in s.records])
            cos = s.vectors @ qv
            langs = _LANGUAGES[id(s)]
            shifted = cos.astype(np.float64).copy()
            whole = float(np.median(cos))
            for lang in set(langs.tolist()):
                rows = langs == lang
                shifted[rows] += whole - float(np.median(cos[rows]))
            if s.embedded is not None:
                mask = s.embedded if mask is None else mask & s.embedded
            cands.extend(query._top([shifted], [mask], n, positive=False, index=i))
        cands.sort(key=lambda t: -t[2])
        return cands[:n]

    return vector_top


def _minmax(x: np.ndarray) -> np.ndarray:
    span = float(x.max() - x.min()) or 1.0
    return (x - x.min()) / span


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--set", action="append", required=True, help="NAME=DIR of a built home set")
    ap.add_argument("--variants", nargs="+", default=list(VARIANTS))
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    results: dict = json.loads(args.out.read_text()) if args.out.exists() else {}
    for spec in args.set:
        name, folder = spec.split("=", 1)
        ds = homes.load(Path(folder) / f"home-{name}")
        home = Home(Path(folder) / "home")
        model = homes.home_model(home)
        rel = homes.judgements(ds, home)
        texts = [q["text"] for q in ds.queries]
        for v in args.variants:
            started = time.time()
            with variant(v, texts, model) as options:
                run = homes.run(ds, home, rel, "hybrid", 0.1, **options)
            scored = {"whole": run["kinds"], **run["halves"], "ms_per_query": run["ms_per_query"]}
            results.setdefault(name, {})[v] = scored
            print(f"{name} {v}: {time.time() - started:.0f} s, {run['ms_per_query']} ms/query", flush=True)
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n")
    for name, by_variant in results.items():
        print(f"\n{name}")
        for v, scored in by_variant.items():
            cells = []
            for part in ("tune", "test", "whole") if name == "personal" else ("whole",):
                kinds = scored[part]
                pos = [k for k in kinds.values() if "hit@10" in k]
                n = sum(k["queries"] for k in pos)
                hit = sum(k["hit@10"] * k["queries"] for k in pos) / n
                mrr = sum(k["MRR@10"] * k["queries"] for k in pos) / n
                xl = kinds.get("crosslingual", {})
                cells.append(f"{part} {hit:.3f}/{mrr:.3f} (xl {xl.get('hit@10', '-')})")
            print(f"  {v:12s} " + "  ".join(cells))


if __name__ == "__main__":
    main()
