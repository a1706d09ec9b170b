"""Persona B, the held-out evaluation set: generated deterministically from its JSON, read by every
connector without errors, and every judged query resolves to the records it means (and negatives
to none). Persona B is never tuned on; these tests only keep its data and judgements honest.

Fast: no embedding model, no Dagster run; the connectors' own ``read()`` over the generated files,
with OCR results cached in a folder of this module's own.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest
from home_sets import (
    assert_deterministic,
    assert_every_connector,
    assert_filters_keep_distractors_out,
    assert_imports_light,
    assert_judgements_resolve,
    assert_negatives_absent,
    assert_queries_well_formed,
    matching,
    read_all,
)

from ragbag_evalsets.persona import KINDS, SOURCES
from ragbag_evalsets.persona_b import DATA, generate


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RAGBAG_OCR_CACHE", str(tmp_path_factory.mktemp("persona-b-ocr")))
        out = generate(tmp_path_factory.mktemp("persona-b"))
        docs, errors = read_all(out)
    queries = [json.loads(line) for line in (out / "queries.jsonl").read_text(encoding="utf-8").splitlines()]
    return out, docs, errors, queries


def test_generation_is_deterministic_and_idempotent(tmp_path):
    assert_deterministic(generate, tmp_path)


def test_content_is_data_next_to_the_module():
    names = sorted(p.name for p in DATA.glob("*.json"))
    assert {"mail.json", "queries.json", "notes.json", "calendar.json"} <= set(names), names
    for p in DATA.glob("*.json"):
        json.loads(p.read_text(encoding="utf-8"))


def test_generator_imports_neither_dagster_nor_torch_nor_connectors():
    assert_imports_light("ragbag_evalsets.persona_b")


def test_home_names_one_source_per_connector(generated):
    assert_every_connector(generated[0], "persona-b", SOURCES)


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
        **{"whatsapp": 4, "telegram": 2, "signal": 2, "obsidian": 5, "slack": 5, "takeout": 8},
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
    assert all(q["_id"].startswith("b-") for q in queries)
    kinds = Counter(q["kind"] for q in queries)
    assert set(kinds) == set(KINDS), kinds
    assert min(kinds[k] for k in ("identifier", "paraphrase", "crosslingual", "cjk", "person", "filtered")) >= 12
    assert 14 <= kinds["negative"] <= 18 and min(kinds[k] for k in KINDS[7:]) >= 4, kinds
    assert_queries_well_formed(queries, SOURCES, ("pt", "nl", "ja"))


def test_every_judgement_resolves_to_one_to_three_records_that_pass_the_filters(generated):
    _, docs, _, queries = generated
    assert_judgements_resolve(docs, queries)


def test_filters_are_what_keeps_the_distractors_out(generated):
    _, docs, _, queries = generated
    assert_filters_keep_distractors_out(docs, queries)


def test_negatives_resolve_to_nothing(generated):
    _, docs, _, queries = generated
    assert_negatives_absent(docs, queries)


def test_no_question_copies_a_sentence_of_its_answer(generated):
    _, docs, _, queries = generated
    copied = []
    for q in queries:
        if q["kind"] in ("identifier", "filtered", "negative") or len(q["text"]) < 25:
            continue
        asked = q["text"].lower().rstrip("?？")
        for rel in q["relevant"]:
            if any(asked in d.text.lower() for d in matching(docs, rel["source"], rel["contains"])):
                copied.append((q["_id"], q["text"]))
    assert not copied
