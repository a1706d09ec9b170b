"""Retrieval quality in one command: a dataset through the real pipeline, scored per mode.

Takes BEIR layouts (``corpus.jsonl``, ``queries.jsonl``, ``qrels/*.tsv`` with or without a
header row) and SQuAD-style QA files (a question's relevant document is its paragraph). The
corpus is written as one file per document and built as a ``files`` source through Dagster, in
a throwaway RAGBAG_HOME unless ``home`` is given (then a rebuild reuses every embedding).
Metrics come from ir-measures (trec_eval underneath), not hand-written formulas.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragbag.core.errors import RagbagError
from ragbag.core.home import Home
from ragbag.index.published import home_model

MEASURES = ("nDCG@10", "R@10", "R@100", "RR@10")


@dataclass
class Dataset:
    name: str
    corpus: dict[str, tuple[str, str]]  # id -> (title, text)
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]] = field(default_factory=dict)


def _personal_set(home: str | Path | None, which: str = "personal") -> Path:
    """A generated set (``personal``: persona A, tuned on; ``persona-b``, ``persona-c``: personas B
    and C, held out): next to an eval home, else in this RAGBAG_HOME's cache (regenerated each
    time, identically).
    The sets are a distribution of their own (``evalsets/`` in the checkout): an installed ragbag
    carries no made-up persona, so without it this says how to get it."""
    try:
        import ragbag_evalsets
    except ModuleNotFoundError as e:
        if e.name != "ragbag_evalsets":
            raise
        raise RagbagError(
            f"`ragbag eval {which}` needs the evaluation sets: pip install ./evalsets (from a ragbag checkout)"
        ) from None
    if home:
        out = Path(home).parent / f"{Path(home).name}-{which}"
    else:
        cache = Home().ensure().root / "cache"
        cache.mkdir(mode=0o700, exist_ok=True)  # owner-only, like the rest of the home
        out = cache / f"{which}-eval"
    return ragbag_evalsets.generate(which, out)


def load(path: str | Path) -> Dataset:
    """A BEIR folder or a SQuAD-style JSON file."""
    path = Path(path)
    if path.is_dir() and (path / "corpus.jsonl").exists():
        return _load_beir(path)
    if path.is_file() and path.suffix == ".json":
        return _load_squad(path)
    raise RagbagError(f"{path}: not a BEIR folder (corpus.jsonl, queries.jsonl, qrels/) or a SQuAD .json file")


def _jsonl(path: Path) -> Iterable[dict[str, Any]]:
    with path.open(encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if line.strip():
                try:
                    yield json.loads(line)
                except json.JSONDecodeError as e:
                    raise RagbagError(f"{path}:{n}: invalid JSON ({e.msg})") from None


def _load_beir(path: Path) -> Dataset:
    corpus = {str(d["_id"]): (d.get("title") or "", d.get("text") or "") for d in _jsonl(path / "corpus.jsonl")}
    queries = {str(q["_id"]): q["text"] for q in _jsonl(path / "queries.jsonl")}
    qrels: dict[str, dict[str, int]] = {}
    files = sorted((path / "qrels").glob("*.tsv"))
    if not files:
        raise RagbagError(f"{path}/qrels: no .tsv file")
    test = [f for f in files if f.stem == "test"] or files
    for line in test[0].read_text(encoding="utf-8").splitlines():
        cols = line.split("\t")
        if len(cols) < 3 or not cols[2].strip().lstrip("-").isdigit():
            continue  # the header row, when there is one
        qrels.setdefault(cols[0], {})[cols[1]] = int(cols[2])
    queries = {q: t for q, t in queries.items() if any(v > 0 for v in qrels.get(q, {}).values())}
    return Dataset(path.name, corpus, queries, qrels)


def _load_squad(path: Path) -> Dataset:
    data = json.loads(path.read_text(encoding="utf-8"))["data"]
    corpus, queries, qrels = {}, {}, {}
    for article in data:
        for i, para in enumerate(article["paragraphs"]):
            pid = str(para.get("id") or f"{article.get('title', '')}-{i}")
            corpus[pid] = (article.get("title") or "", para["context"])
            for qa in para.get("qas", []):
                queries[str(qa["id"])] = qa["question"]
                qrels[str(qa["id"])] = {pid: 1}
    return Dataset(path.stem, corpus, queries, qrels)


def build(ds: Dataset, home: Home) -> dict[str, Any]:
    """Write the corpus as files (id → file name kept in ids.json) and build it through Dagster."""
    from ragbag.orchestration.runner import run_builds

    docs = home.root.parent / f"{home.root.name}-corpus"
    docs.mkdir(parents=True, exist_ok=True)
    ids = {}
    for n, (doc_id, (title, text)) in enumerate(sorted(ds.corpus.items())):
        name = f"d{n:07d}"
        ids[name] = doc_id
        body = f"# {title}\n\n{text}\n" if title else f"{text}\n"
        target = docs / (name + (".md" if title else ".txt"))
        if not target.exists() or target.read_text(encoding="utf-8") != body:
            target.write_text(body, encoding="utf-8")
    (docs / "ids.json").write_text(json.dumps(ids))
    if "eval" not in home.sources():
        home.add_source("eval", "files", str(docs), known=("files",))
    started = time.time()
    (report,) = run_builds(home, [home.source("eval")], show_progress=False)
    if report["status"] != "success":
        raise RagbagError(f"building {ds.name} failed: {report.get('failure')}")
    return {**report, "seconds": round(time.time() - started, 1), "ids": ids}


def run(
    ds: Dataset, home: Home, ids: dict[str, str], mode: str, depth: int = 100, **search_kw
) -> dict[str, dict[str, float]]:
    """Ranked documents per query: a document scores its best chunk's rank."""
    from ragbag.models import embedding
    from ragbag.search import query

    if mode != "keyword":
        embedding.prime_queries(list(ds.queries.values()), home_model(home))
    out: dict[str, dict[str, float]] = {}
    for qid, text in ds.queries.items():
        hits = query.search(text, k=depth, mode=mode, home=home, sources=["eval"], **search_kw)
        out[qid] = rank_documents([Path(uri).stem for uri in hits["uri"]], ids, depth)
    return out


def rank_documents(stems: list[str], ids: dict[str, str], depth: int) -> dict[str, float]:
    """Ranked chunks (file stems, best first) → documents, each scored by its best chunk's rank
    (a rank-derived score: ties impossible)."""
    ranked: dict[str, float] = {}
    for stem in stems:
        doc = ids.get(stem)
        if doc is not None and doc not in ranked:
            ranked[doc] = float(depth - len(ranked))
    return ranked


def score(ds: Dataset, ranking: dict[str, dict[str, float]]) -> dict[str, float]:
    import ir_measures
    from ir_measures import parse_measure

    measures = [parse_measure(m) for m in MEASURES]
    qrels = [ir_measures.Qrel(q, d, r) for q, docs in ds.qrels.items() if q in ds.queries for d, r in docs.items()]
    run_ = [ir_measures.ScoredDoc(q, d, s) for q, docs in ranking.items() for d, s in docs.items()]
    agg = ir_measures.calc_aggregate(measures, qrels, run_)
    return {m: round(float(agg.get(parse_measure(m), 0.0)), 4) for m in MEASURES}


def evaluate(
    path: str | Path,
    modes: Iterable[str],
    home: str | Path | None = None,
    model: str | None = None,
    max_queries: int | None = None,
    **search_kw,
) -> dict[str, Any]:
    """Build the dataset and score each mode; the result is what `ragbag eval --json` prints.
    ``personal`` is the project's own home set, ``persona-b`` and ``persona-c`` its held-out second
    and third personas (``ragbag_evalsets``), generated next to ``home`` (or in this home's cache);
    a folder with ``home.json`` is scored per query kind (``ragbag.apps.eval.homes``)."""
    from ragbag.apps.eval import homes as eval_homes

    if str(path) in ("personal", "persona-b", "persona-c"):
        path = _personal_set(home, str(path))
    if eval_homes.is_home_set(Path(path)):
        return eval_homes.evaluate(Path(path), list(modes), home=home, model=model, **search_kw)
    search_kw.pop("min_score", None)  # the public sets are ranked to depth 100, unfloored
    ds = load(path)
    if max_queries:
        ds.queries = dict(sorted(ds.queries.items())[:max_queries])
    with eval_homes.eval_home(home, model) as h:
        built = build(ds, h)
        results = {}
        for mode in modes:
            started = time.time()
            ranking = run(ds, h, built["ids"], mode, **search_kw)
            results[mode] = {
                **score(ds, ranking),
                "ms_per_query": round(1000 * (time.time() - started) / max(1, len(ds.queries)), 1),
            }
        return {
            "dataset": ds.name,
            "documents": len(ds.corpus),
            "queries": len(ds.queries),
            "model": home_model(h),
            "chunks": built["chunks"],
            "build_seconds": built["seconds"],
            "chunks_embedded": built["chunks_embedded"],
            "search": search_kw,
            "modes": results,
        }
