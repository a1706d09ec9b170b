"""Persona B, the held-out evaluation set: generated deterministically from its JSON, read by every
connector without errors, and every judged query resolves to the records it means (and negatives
to none). Persona B is never tuned on; these tests only keep its data and judgements honest.

Fast: no embedding model, no Dagster run; the connectors' own ``read()`` over the generated files,
with OCR results cached in a folder of this module's own.
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
from ragbag.apps.eval.persona_b import DATA, KINDS, SOURCES, generate
from ragbag.core.records import Cursor, Document, ReadError, Seen
from ragbag.search import filters

# One worker builds this module's home once (`make test` runs `--dist loadgroup`).
pytestmark = pytest.mark.xdist_group("test_persona_b")


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
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RAGBAG_OCR_CACHE", str(tmp_path_factory.mktemp("persona-b-ocr")))
        out = generate(tmp_path_factory.mktemp("persona-b"))
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


def test_content_is_data_next_to_the_module():
    names = sorted(p.name for p in DATA.glob("*.json"))
    assert {"mail.json", "queries.json", "notes.json", "calendar.json"} <= set(names), names
    for p in DATA.glob("*.json"):
        json.loads(p.read_text(encoding="utf-8"))


def test_generator_imports_neither_dagster_nor_torch_nor_connectors():
    code = (
        "import sys, ragbag.apps.eval.persona_b; "
        "bad = [m for m in ('dagster', 'torch', 'connectors', 'numpy') if m in sys.modules]; "
        "print(bad); sys.exit(1 if bad else 0)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_home_names_nine_sources_one_per_connector(generated):
    out, _, _, _ = generated
    home = json.loads((out / "home.json").read_text(encoding="utf-8"))
    assert home["name"] == "persona-b"
    assert [(s["name"], s["connector"]) for s in home["sources"]] == SOURCES
    assert sorted(s["connector"] for s in home["sources"]) == sorted(connectors.NAMES)
    for s in home["sources"]:
        assert (out / s["path"]).is_dir()


def test_every_connector_reads_everything_without_errors(generated):
    _, docs, errors, _ = generated
    assert errors == []
    counts = {name: len(found) for name, found in docs.items()}
    minimum = {
        "mail": 75,  # 76 mails (Gmail mbox and a work Maildir) and their attachments
        "browser": 150,
        "calendar": 30,
        "imessage": 10,
        "wechat": 8,
        "chatgpt": 8,
        "claude": 6,
        "code": 10,
        "notes": 25,
    }
    assert all(counts[k] >= v for k, v in minimum.items()), counts
    pictures = [d for found in docs.values() for d in found if d.metadata.get("format") == "image"]
    scans = [d for d in docs["notes"] if d.metadata.get("path", "").startswith("Scans/")]
    scans += [d for d in docs["mail"] if d.metadata.get("filename") == "IMI_2025_nota_cobranca.pdf"]
    assert 6 <= len(pictures) + len(scans) <= 12  # OCR is the slow part: keep it small
    code = {d.metadata["path"] for d in docs["code"]}
    assert not any(p.startswith("data/raw/") or p == ".env" for p in code)  # .gitignore


def test_formats_say_what_the_person_wrote(generated):
    _, docs, _, _ = generated
    events = docs["calendar"]
    assert {d.metadata.get("timezone") for d in events} == {"Europe/Lisbon", ""}  # timed ones in Lisbon
    reply = next(d for d in docs["mail"] if "mosaico hidráulico do corredor" in d.text)
    assert "Prazo de execução" not in reply.text  # the quoted quote is trimmed
    texts = [d.text for found in docs.values() for d in found]
    assert not any("nobody will notice" in t for t in texts)  # ChatGPT's abandoned branch
    contactos = next(d for d in docs["notes"] if d.metadata["path"] == "Obra/contactos-obra.txt")
    assert "Sr. Abílio" in contactos.text and contactos.metadata["encoding"] == "cp1252"


def test_query_set_shape(generated):
    _, _, _, queries = generated
    assert 120 <= len(queries) <= 180
    assert len({q["_id"] for q in queries}) == len(queries)
    assert all(q["_id"].startswith("b-") for q in queries)
    kinds = Counter(q["kind"] for q in queries)
    assert set(kinds) == set(KINDS), kinds
    assert min(kinds[k] for k in ("identifier", "paraphrase", "crosslingual", "cjk", "person", "filtered")) >= 12
    assert 14 <= kinds["negative"] <= 18 and min(kinds[k] for k in KINDS[7:]) >= 4, kinds
    langs = Counter(q.get("lang") for q in queries if q["kind"] == "crosslingual")
    for lang in ("pt", "nl", "ja"):
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


def test_no_question_copies_a_sentence_of_its_answer(generated):
    _, docs, _, queries = generated
    copied = []
    for q in queries:
        if q["kind"] in ("identifier", "filtered", "negative") or len(q["text"]) < 25:
            continue
        asked = q["text"].lower().rstrip("?？")
        for rel in q["relevant"]:
            if any(asked in d.text.lower() for d in _matching(docs, rel["source"], rel["contains"])):
                copied.append((q["_id"], q["text"]))
    assert not copied
