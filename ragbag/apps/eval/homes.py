"""Retrieval quality on a whole home: several sources of different connectors, judged per query kind.

The public sets are one kind of text and one kind of question. A home set is what a person's
data looks like — a folder with ``home.json`` (the sources: name, connector, path relative to
the folder) and ``queries.jsonl`` (``_id``, ``text``, ``kind``, ``relevant``: a list of
``{"source", "contains"}``, optional ``where``/``after``/``before``/``connectors``). A document
is relevant when it belongs to that source and its text contains the string; judging by
content, not ids, lets a connector window chats or split files as it likes. Every query runs
with its filters, as `ragbag search` runs it (no floor); queries with no relevant document are
negatives, which pass ("quiet") when no hit reaches a floor (``--min-score``, default ``ask``'s
relevance floor: search itself has none, see README "Search options").
``ragbag eval personal`` generates the project's own set (``ragbag_evalsets``, ``evalsets/``).

Held out: every set is scored whole and in two halves by a fixed rule on the query id
(:func:`half_of`). Ranking is tuned on the "tune" half only and judged on the "test" half and
on sets never tuned on (the public sets, ``persona-b``, written apart from the first persona,
and ``persona-c``, written blind); a figure measured on what it was tuned on is not a result.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragbag.apps.config import set_setting
from ragbag.core.errors import RagbagError
from ragbag.core.home import Home
from ragbag.core.private import temporary_prefix
from ragbag.index.published import home_model

DEPTH = 10
MEASURES = ("Success@10", "RR@10", "nDCG@10")
HALVES = ("tune", "test")


@dataclass
class HomeSet:
    name: str
    root: Path
    sources: list[dict[str, Any]]  # name, connector, path; options where a connector needs some
    queries: list[dict[str, Any]]


def is_home_set(path: Path) -> bool:
    return path.is_dir() and (path / "home.json").exists() and (path / "queries.jsonl").exists()


def load(path: Path) -> HomeSet:
    meta = json.loads((path / "home.json").read_text(encoding="utf-8"))
    queries = []
    for n, line in enumerate((path / "queries.jsonl").read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            try:
                q = json.loads(line)
            except json.JSONDecodeError as e:
                raise RagbagError(f"{path}/queries.jsonl:{n}: invalid JSON ({e.msg})") from None
            queries.append(q)
    return HomeSet(meta.get("name") or path.name, path, meta["sources"], queries)


def build(ds: HomeSet, home: Home) -> dict[str, Any]:
    """Register every source of the set in ``home`` (with the ``options`` home.json gives it) and
    build them all through Dagster.

    Each source keeps its secrets (``ragbag.pipeline.screen``'s ``keep``): a relevant document is
    named by a string it holds verbatim, and a person's set asks for what the screen redacts by
    default (the Wi-Fi password in a note); ``benchmarks/secrets_fp.py`` counts what it would."""
    from ragbag.orchestration.runner import run_builds

    registered = home.sources()
    named = tuple(s["connector"] for s in ds.sources)  # an unknown one fails when its build starts
    for s in ds.sources:
        if s["name"] not in registered:
            path = str((ds.root / s["path"]).resolve())
            options = {"secrets": "keep", **s.get("options", {})}  # home.json's own, e.g. WhatsApp's `me`
            home.add_source(s["name"], s["connector"], path, known=named, options=options)
    started = time.time()
    reports = run_builds(home, [home.source(s["name"]) for s in ds.sources], show_progress=False)
    failed = [r for r in reports if r["status"] != "success"]
    if failed:
        raise RagbagError(f"building {ds.name} failed: {failed[0].get('source')}: {failed[0].get('failure')}")
    return {
        "seconds": round(time.time() - started, 1),
        "chunks": sum(r.get("chunks", 0) for r in reports),
        "chunks_embedded": sum(r.get("chunks_embedded", 0) for r in reports),
        "documents": sum(r.get("documents", 0) for r in reports),
    }


def judgements(ds: HomeSet, home: Home) -> dict[str, set[tuple[str, str]]]:
    """Relevant (source, doc_id) pairs per query, read from the published documents."""
    from ragbag.index.published import published_manifest
    from ragbag.index.store import Store

    store = Store(home.lance_uri)
    texts: dict[str, list[tuple[str, str]]] = {}
    for s in ds.sources:
        manifest = published_manifest(home, home.source(s["name"]))
        if manifest is None:
            raise RagbagError(f"source {s['name']!r} has no published index: build the home first")
        rows = store.published_rows("documents", s["name"], manifest["versions"]["documents"], ["doc_id", "text"])
        texts[s["name"]] = list(zip(rows.column("doc_id").to_pylist(), rows.column("text").to_pylist()))
    out = {}
    for q in ds.queries:
        rel = set()
        for r in q.get("relevant", []):
            found = {(r["source"], d) for d, t in texts.get(r["source"], []) if r["contains"] in (t or "")}
            if not found:
                raise RagbagError(
                    f"{ds.name}: query {q['_id']}: no document of {r['source']!r} contains {r['contains']!r}"
                )
            rel |= found
        out[q["_id"]] = rel
    return out


def run(
    ds: HomeSet, home: Home, rel: dict[str, set[tuple[str, str]]], mode: str, min_score: float | None, **search_kw
) -> dict[str, Any]:
    """Search every query as a person would (with its filters), score per kind; negatives are
    quiet when no hit reaches ``min_score``."""
    from ragbag.models import embedding
    from ragbag.search import query

    if mode != "keyword":
        embedding.prime_queries([q["text"] for q in ds.queries], home_model(home))
    started = time.time()
    ranking: dict[str, list[tuple[str, str]]] = {}
    quiet: dict[str, bool] = {}
    scores: dict[str, dict[str, Any]] = {}  # best score, and best relevant score, of each query's top 10
    misses = []
    for q in ds.queries:
        hits = query.search(
            q["text"],
            k=DEPTH,
            mode=mode,
            home=home,
            where=q.get("where"),
            after=q.get("after"),
            before=q.get("before"),
            connectors=q.get("connectors"),
            **search_kw,
        )
        docs = list(dict.fromkeys(zip(hits["source"], hits["doc_id"])))
        ranking[q["_id"]] = docs
        found = [float(sc) for sc, d in zip(hits["score"], zip(hits["source"], hits["doc_id"])) if d in rel[q["_id"]]]
        scores[q["_id"]] = {
            "kind": q["kind"],
            "top": float(hits["score"].max()) if len(hits) else None,
            "relevant": max(found) if found else None,
        }
        if not rel[q["_id"]]:
            top = float(hits["score"].max()) if len(hits) else None
            quiet[q["_id"]] = top is None or (min_score is not None and top < min_score)
            if top is not None and not quiet[q["_id"]]:
                misses.append({"_id": q["_id"], "kind": q["kind"], "text": q["text"], "top_score": round(top, 4)})
        elif not any(d in rel[q["_id"]] for d in docs):
            misses.append({"_id": q["_id"], "kind": q["kind"], "text": q["text"]})
    ms = 1000 * (time.time() - started) / max(1, len(ds.queries))
    kinds = _by_kind(ds.queries, rel, ranking, quiet)
    halves = {h: _by_kind([q for q in ds.queries if half_of(q["_id"]) == h], rel, ranking, quiet) for h in HALVES}
    return {"kinds": kinds, "halves": halves, "ms_per_query": round(ms, 1), "misses": misses, "scores": scores}


def half_of(query_id: str) -> str:
    """Which half of a set a query is in, by a fixed rule on its id alone (a hash's parity), so
    the split never depends on results: ranking is tuned on "tune" and judged on "test"."""
    return HALVES[int(hashlib.blake2b(query_id.encode("utf-8"), digest_size=4).hexdigest(), 16) % 2]


def _by_kind(
    queries: list[dict[str, Any]],
    rel: dict[str, set[tuple[str, str]]],
    ranking: dict[str, list[tuple[str, str]]],
    quiet: dict[str, bool],
) -> dict[str, Any]:
    """hit@10, MRR@10, nDCG@10 per query kind (the share of quiet negatives for negatives)."""
    import ir_measures
    from ir_measures import parse_measure

    measures = [parse_measure(m) for m in MEASURES]
    kinds: dict[str, Any] = {}
    for kind in sorted({q["kind"] for q in queries}):
        qs = [q for q in queries if q["kind"] == kind]
        positives = [q for q in qs if rel[q["_id"]]]
        row: dict[str, Any] = {"queries": len(qs)}
        if positives:
            qrels = [ir_measures.Qrel(q["_id"], f"{s}/{d}", 1) for q in positives for s, d in rel[q["_id"]]]
            run_ = [
                ir_measures.ScoredDoc(q["_id"], f"{s}/{d}", float(DEPTH - r))
                for q in positives
                for r, (s, d) in enumerate(ranking[q["_id"]])
            ]
            agg = ir_measures.calc_aggregate(measures, qrels, run_)
            names = {"Success@10": "hit@10", "RR@10": "MRR@10", "nDCG@10": "nDCG@10"}
            row.update({names[m]: round(float(agg.get(parse_measure(m), 0.0)), 4) for m in MEASURES})
        negatives = [q for q in qs if not rel[q["_id"]]]
        if negatives:
            row["quiet"] = round(sum(quiet[q["_id"]] for q in negatives) / len(negatives), 4)
        kinds[kind] = row
    return kinds


@contextmanager
def eval_home(home: str | Path | None, model: str | None) -> Iterator[Home]:
    """Where an evaluation builds: ``home`` (kept, so a rerun embeds nothing) or a temporary
    home removed afterwards; ``model`` set in it when given."""
    tmp = tempfile.TemporaryDirectory(prefix=temporary_prefix("eval")) if home is None else None
    try:
        h = Home(Path(tmp.name) / "home" if tmp is not None else home).ensure()
        if model:
            set_setting(h, "embedding.model", model)
        yield h
    finally:
        if tmp is not None:
            tmp.cleanup()


def evaluate(
    path: Path, modes: list[str], home: str | Path | None = None, model: str | None = None, **search_kw
) -> dict[str, Any]:
    """Build the home set and score each mode per query kind (what `ragbag eval --json` prints)."""
    from ragbag.answer import ask

    ds = load(path)
    with eval_home(home, model) as h:
        built = build(ds, h)
        rel = judgements(ds, h)
        min_score = search_kw.pop("min_score", None)
        results = {}
        for mode in modes:
            floor = min_score if min_score is not None else ask.floor(h, mode)
            results[mode] = run(ds, h, rel, mode, floor, **search_kw)
        return {
            "dataset": ds.name,
            "sources": len(ds.sources),
            "queries": len(ds.queries),
            "model": home_model(h),
            **built,
            "search": search_kw,
            "modes": results,
        }
