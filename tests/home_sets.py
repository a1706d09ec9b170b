"""What every generated evaluation home must hold (the personal set, persona B): read with the
connectors' own ``read()``, each judgement naming the records it means and no others. One set
of checks, so the two personas are held to the same rules."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from ragbag import connectors
from ragbag.core.records import Cursor, Document, ReadError, Seen
from ragbag.search import filters

Docs = dict[str, list[Document]]


def files_of(root: Path) -> dict[str, tuple[bytes, int]]:
    return {
        p.relative_to(root).as_posix(): (p.read_bytes(), p.stat().st_mtime_ns)
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def read_all(out: Path) -> tuple[Docs, list[ReadError]]:
    """Every source of the home in ``out`` read by its connector: documents by source, errors."""
    home = json.loads((out / "home.json").read_text(encoding="utf-8"))
    docs: Docs = {}
    errors: list[ReadError] = []
    for src in home["sources"]:
        found = docs.setdefault(src["name"], [])
        options = {"options": src["options"]} if "options" in src else {}  # as homes.build registers them
        for item in connectors.get(src["connector"]).read(out / src["path"], src["name"], None, **options):
            if isinstance(item, Document):
                found.append(item)
            elif isinstance(item, ReadError):
                errors.append(item)
            else:
                assert isinstance(item, (Seen, Cursor))
    return docs, errors


def queries_of(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "queries.jsonl").read_text(encoding="utf-8").splitlines()]


def matching(docs: Docs, source: str, contains: str) -> list[Document]:
    return [d for d in docs.get(source, []) if contains in d.text]


def passes(doc: Document, query: dict) -> bool:
    """The query's filters as ragbag.search.query applies them: where on the record (document fields
    over its metadata), after inclusive, before exclusive, connectors."""
    if query.get("connectors") and doc.connector not in query["connectors"]:
        return False
    record = {**doc.metadata, "source": doc.source, "connector": doc.connector, "uri": doc.uri, "title": doc.title}
    if not filters.matches(record, filters.parse_where(query.get("where"))):
        return False
    lo, hi = filters.parse_time(query.get("after")), filters.parse_time(query.get("before"))
    if (lo or hi) and doc.date is None:
        return False
    return (lo is None or doc.date >= lo) and (hi is None or doc.date < hi)


def assert_deterministic(generate: Callable[[Path], Path], tmp_path: Path) -> None:
    """The same bytes from two runs, and a second run over one folder replaces its data/."""
    started = time.perf_counter()
    a = files_of(generate(tmp_path / "a") / "data")
    assert time.perf_counter() - started < 5  # ~0.3 s; the bound only catches a runaway
    b_out = generate(tmp_path / "b")
    (b_out / "data" / "stray.txt").write_text("left over from an older run")
    b = files_of(generate(b_out) / "data")
    assert a == b
    for name in ("home.json", "queries.jsonl"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def assert_imports_light(module: str) -> None:
    """Importing the generator loads neither Dagster, torch, the connectors nor NumPy."""
    code = (
        f"import sys, {module}; "
        "bad = [m for m in ('dagster', 'torch', 'connectors', 'numpy') if m in sys.modules]; "
        "print(bad); sys.exit(1 if bad else 0)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def assert_every_connector(out: Path, name: str, sources: list[tuple[str, str]]) -> None:
    """The home's sources are ``sources``, one per connector ragbag has, each a folder."""
    home = json.loads((out / "home.json").read_text(encoding="utf-8"))
    assert home["name"] == name
    assert [(s["name"], s["connector"]) for s in home["sources"]] == sources
    assert sorted(s["connector"] for s in home["sources"]) == sorted(connectors.NAMES)
    for s in home["sources"]:
        assert (out / s["path"]).is_dir()


def assert_queries_well_formed(queries: list[dict], sources: list[tuple[str, str]], targets: tuple[str, ...]) -> None:
    """Unique ids; cross-lingual questions from English into each of ``targets`` and back;
    judgements naming known sources; negatives with nothing relevant and what must stay absent;
    filtered ones with filters and the distractors they keep out."""
    from collections import Counter

    assert len({q["_id"] for q in queries}) == len(queries)
    langs = Counter(q.get("lang") for q in queries if q["kind"] == "crosslingual")
    for lang in targets:
        assert langs[f"en>{lang}"] >= 4, langs
    assert sum(n for lang, n in langs.items() if lang and not lang.startswith("en>")) >= 6, langs
    names = {s for s, _ in sources}
    for q in queries:
        assert q["text"].strip()
        assert all(r["source"] in names and r["contains"] for r in q["relevant"])
        assert (q["kind"] == "negative") == (not q["relevant"]), q
        if q["kind"] == "filtered":
            assert any(k in q for k in ("where", "after", "before", "connectors")), q
            assert q.get("distractors"), q
        if q["kind"] == "negative":
            assert q.get("absent"), q


def assert_judgements_resolve(docs: Docs, queries: list[dict]) -> None:
    """Each judgement names one to three records, all passing the query's filters."""
    bad = []
    for q in queries:
        for rel in q["relevant"]:
            found = matching(docs, rel["source"], rel["contains"])
            if not 1 <= len(found) <= 3:
                bad.append((q["_id"], q["text"], rel["contains"], f"{len(found)} records", [d.title for d in found]))
            elif not all(passes(d, q) for d in found):
                bad.append((q["_id"], q["text"], rel["contains"], "filtered out"))
    assert not bad, "\n".join(map(str, bad))


def assert_filters_keep_distractors_out(docs: Docs, queries: list[dict]) -> None:
    bad = []
    for q in queries:
        for dis in q.get("distractors", []):
            found = matching(docs, dis["source"], dis["contains"])
            if not found or any(passes(d, q) for d in found):
                bad.append((q["_id"], q["text"], dis, len(found)))
    assert not bad, "\n".join(map(str, bad))


def assert_negatives_absent(docs: Docs, queries: list[dict]) -> list[str]:
    """No record holds what a negative question asks for; returns every record's text, lowered."""
    texts = [d.text.lower() for found in docs.values() for d in found]
    bad = [
        (q["_id"], absent) for q in queries for absent in q.get("absent", []) if any(absent.lower() in t for t in texts)
    ]
    assert not bad
    return texts
