"""The personal-data evaluation set: generated deterministically, read by every connector without
errors, and every judged query resolves to the records it means (and negatives to none).

Fast: no embedding model, no Dagster run; the connectors' own ``read()`` over the generated files.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from ragbag import connectors
from ragbag.apps.eval.personal_set import KINDS, SOURCES, generate
from ragbag.core.records import Cursor, Document, ReadError, Seen
from ragbag.search import filters

# One worker builds this module's home once (`make test` runs `--dist loadgroup`).
pytestmark = pytest.mark.xdist_group("test_personal_eval")


def _files(root: Path) -> dict[str, tuple[bytes, int]]:
    return {
        p.relative_to(root).as_posix(): (p.read_bytes(), p.stat().st_mtime_ns)
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def _read_all(out: Path) -> tuple[dict[str, list[Document]], list[ReadError]]:
    home = json.loads((out / "home.json").read_text(encoding="utf-8"))
    docs: dict[str, list[Document]] = {}
    errors: list[ReadError] = []
    for src in home["sources"]:
        found = docs.setdefault(src["name"], [])
        for item in connectors.get(src["connector"]).read(out / src["path"], src["name"], None):
            if isinstance(item, Document):
                found.append(item)
            elif isinstance(item, ReadError):
                errors.append(item)
            else:
                assert isinstance(item, (Seen, Cursor))
    return docs, errors


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    out = generate(tmp_path_factory.mktemp("personal"))
    docs, errors = _read_all(out)
    queries = [json.loads(line) for line in (out / "queries.jsonl").read_text(encoding="utf-8").splitlines()]
    return out, docs, errors, queries


def _matching(docs: dict[str, list[Document]], source: str, contains: str) -> list[Document]:
    return [d for d in docs.get(source, []) if contains in d.text]


def _passes(doc: Document, query: dict) -> bool:
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


def test_generation_is_deterministic_and_idempotent(tmp_path):
    started = time.perf_counter()
    a = _files(generate(tmp_path / "a") / "data")
    assert time.perf_counter() - started < 5  # ~0.3 s; the bound only catches a runaway
    b_out = generate(tmp_path / "b")
    (b_out / "data" / "stray.txt").write_text("left over from an older run")
    b = _files(generate(b_out) / "data")  # a second run over the same folder replaces data/
    assert a == b
    for name in ("home.json", "queries.jsonl"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_generator_imports_neither_dagster_nor_torch_nor_connectors():
    code = (
        "import sys, ragbag.apps.eval.personal_set; "
        "bad = [m for m in ('dagster', 'torch', 'connectors', 'numpy') if m in sys.modules]; "
        "print(bad); sys.exit(1 if bad else 0)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_home_names_nine_sources_one_per_connector(generated):
    out, docs, errors, _ = generated
    home = json.loads((out / "home.json").read_text(encoding="utf-8"))
    assert home["name"] == "personal"
    assert [(s["name"], s["connector"]) for s in home["sources"]] == SOURCES
    assert sorted(s["connector"] for s in home["sources"]) == sorted(connectors.NAMES)
    for s in home["sources"]:
        assert (out / s["path"]).is_dir()


def test_every_connector_reads_everything_without_errors(generated):
    _, docs, errors, _ = generated
    assert errors == []
    counts = {name: len(found) for name, found in docs.items()}
    minimum = {
        "mail": 110,
        "browser": 280,
        "calendar": 40,
        "imessage": 15,
        "wechat": 15,
        "chatgpt": 15,
        "claude": 10,
        "code": 10,
        "notes": 25,
    }
    assert all(counts[k] >= v for k, v in minimum.items()), counts
    notes = {d.metadata["path"]: d for d in docs["notes"]}
    assert notes["wohnung/Mietvertrag_Weserstrasse41.pdf"].metadata["pages"] == 3
    code = {d.metadata["path"] for d in docs["code"]}
    assert not any(p.startswith(("exports/", "node_modules/")) or p == ".env" for p in code)  # .gitignore


def test_cp1252_note_is_decoded(generated):
    _, docs, _, _ = generated
    note = next(d for d in docs["notes"] if d.metadata["path"] == "volleyball-kasse.txt")
    assert "1.260 € für 36 Termine" in note.text and note.metadata["encoding"] == "cp1252"


def test_german_reply_attribution_is_trimmed(generated):
    _, docs, _, _ = generated
    reply = next(d for d in docs["mail"] if "tropfende Ventil" in d.text)
    assert "schrieb Ingrid Baumann" not in reply.text


def test_query_set_shape(generated):
    _, _, _, queries = generated
    assert len(queries) >= 170
    assert len({q["_id"] for q in queries}) == len(queries)
    kinds = Counter(q["kind"] for q in queries)
    assert set(kinds) == set(KINDS) and min(kinds.values()) >= 20, kinds
    langs = Counter(q.get("lang") for q in queries if q["kind"] == "crosslingual")
    for lang in ("de", "fr", "es", "zh"):
        assert langs[f"en>{lang}"] >= 4, langs
    assert sum(n for lang, n in langs.items() if lang and not lang.startswith("en>")) >= 6, langs
    sources = {s for s, _ in SOURCES}
    for q in queries:
        assert q["text"].strip()
        assert all(r["source"] in sources and r["contains"] for r in q["relevant"])
        assert (q["kind"] == "negative") == (not q["relevant"]), q
        if q["kind"] == "filtered":
            assert any(k in q for k in ("where", "after", "before", "connectors")), q
            assert q.get("distractors"), q
        if q["kind"] == "negative":
            assert q.get("absent"), q


def test_every_judgement_resolves_to_one_to_three_records_that_pass_the_filters(generated):
    _, docs, _, queries = generated
    bad = []
    for q in queries:
        for rel in q["relevant"]:
            found = _matching(docs, rel["source"], rel["contains"])
            if not 1 <= len(found) <= 3:
                bad.append((q["_id"], q["text"], rel["contains"], f"{len(found)} records", [d.title for d in found]))
            elif not all(_passes(d, q) for d in found):
                bad.append((q["_id"], q["text"], rel["contains"], "filtered out"))
    assert not bad, "\n".join(map(str, bad))


def test_filters_are_what_keeps_the_distractors_out(generated):
    _, docs, _, queries = generated
    bad = []
    for q in queries:
        for dis in q.get("distractors", []):
            found = _matching(docs, dis["source"], dis["contains"])
            if not found or any(_passes(d, q) for d in found):
                bad.append((q["_id"], q["text"], dis, len(found)))
    assert not bad, "\n".join(map(str, bad))


def test_negatives_resolve_to_nothing(generated):
    _, docs, _, queries = generated
    texts = [d.text.lower() for found in docs.values() for d in found]
    bad = [
        (q["_id"], absent) for q in queries for absent in q.get("absent", []) if any(absent.lower() in t for t in texts)
    ]
    assert not bad
    # what the formats hide must stay hidden: a ChatGPT dead branch, quoted reply text
    assert not any("instant dry yeast" in t for t in texts)
    sent = [d for d in docs["mail"] if "tropfende Ventil" in d.text]
    assert len(sent) == 1 and "Thermenschrank" not in sent[0].text


def test_the_set_splits_into_fixed_tune_and_test_halves(generated):
    """Held-out discipline (issue 33): a query's half is a function of its id alone, and every
    kind has questions in both halves, so each kind can be judged on questions it was not tuned on."""
    from collections import Counter

    from ragbag.apps.eval.homes import HALVES, half_of

    _, _, _, queries = generated
    assert half_of("id-001") == half_of("id-001") and {half_of(f"id-{i:03d}") for i in range(40)} == set(HALVES)
    count = Counter((q["kind"], half_of(q["_id"])) for q in queries)
    for kind in {q["kind"] for q in queries}:
        assert count[(kind, "tune")] >= 5 and count[(kind, "test")] >= 5, kind
