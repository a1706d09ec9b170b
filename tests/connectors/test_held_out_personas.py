"""The held-out evaluation personas, B and C: each generated deterministically from its JSON, read
by every connector without errors, and every judged query resolves to the records it means (and
negatives to none). They are never tuned on; these tests only keep their data and judgements
honest. What each persona's formats hold of their own is checked per persona below.

Fast: no embedding model, no Dagster run; the connectors' own ``read()`` over the generated files,
with OCR results cached in a folder of this module's own.
"""

from __future__ import annotations

import importlib
import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

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

FIRST_KINDS = ("identifier", "paraphrase", "crosslingual", "cjk", "person", "filtered")


def _persona_b_formats(docs: dict) -> None:
    events = docs["calendar"]
    assert {d.metadata.get("timezone") for d in events} == {"Europe/Lisbon", ""}  # timed ones in Lisbon
    reply = next(d for d in docs["mail"] if "mosaico hidráulico do corredor" in d.text)
    assert "Prazo de execução" not in reply.text  # the quoted quote is trimmed
    texts = [d.text for found in docs.values() for d in found]
    assert not any("nobody will notice" in t for t in texts)  # ChatGPT's abandoned branch
    contactos = next(d for d in docs["notes"] if d.metadata["path"] == "Obra/contactos-obra.txt")
    assert "Sr. Abílio" in contactos.text and contactos.metadata["encoding"] == "cp1252"


def _persona_c_formats(docs: dict) -> None:
    events = docs["calendar"]
    assert {d.metadata.get("timezone") for d in events} == {"Europe/Vienna", ""}  # timed ones in Vienna
    shift = next(d for d in events if "Getauscht mit G. Ferraro" in d.text)
    assert shift.metadata["uid"] == "20251212-ND@dienstplan2ics"  # as her roster tool names it
    reply = next(d for d in docs["mail"] if "Prendo io la notte del 12" in d.text)
    assert "Mio fratello Matteo" not in reply.text  # the quoted mail is trimmed
    tata = next(d for d in docs["mail"] if "Kolano – termin operacji" == d.title)
    assert "Córeczko" in tata.text  # an ISO-8859-2 mail, decoded
    texts = [d.text for found in docs.values() for d in found]
    assert not any("by hand every month" in t for t in texts)  # ChatGPT's abandoned branch
    meters = next(d for d in docs["notes"] if d.metadata["path"] == "Umzug/zaehlerstaende.txt")
    assert "Zählerstände" in meters.text and meters.metadata["encoding"] == "cp1252"
    assert any("이민지" in d.text for d in docs["contacts"]) and any(d.title == "Mama" for d in docs["contacts"])


@dataclass(frozen=True)
class Persona:
    """What one persona's set must hold."""

    module: str
    prefix: str  # of its query ids
    languages: tuple[str, ...]  # crosslingual questions go into these
    queries: tuple[int, int]
    negatives: tuple[int, int]
    inside: tuple[int, int]  # queries of each kind about what lies inside records (attachment…)
    minimum: dict[str, int]  # documents each connector reads at least
    pictures: tuple[int, int]  # pictures and scans (OCR is the slow part: kept small)
    scans: tuple[str, ...]  # mail attachments that are scans, by file name
    ignored: str  # a path the code source's .gitignore keeps out
    formats: Callable[[dict], None]


PERSONAS = {
    "persona-b": Persona(
        "persona_b",
        "b-",
        ("pt", "nl", "ja"),
        (120, 180),
        (14, 18),
        (4, 99),
        {
            "mail": 75,  # 76 mails (Gmail mbox and a work Maildir) and their attachments
            **{"browser": 150, "calendar": 30, "imessage": 10, "wechat": 8, "chatgpt": 8, "claude": 6},
            **{"code": 10, "notes": 25, "whatsapp": 4, "telegram": 2, "signal": 2, "obsidian": 5},
            **{"slack": 5, "takeout": 8},
        },
        (6, 12),
        ("IMI_2025_nota_cobranca.pdf",),
        "data/raw/",
        _persona_b_formats,
    ),
    "persona-c": Persona(
        "persona_c",
        "c-",
        ("de", "pl", "ko"),
        (110, 150),
        (10, 16),
        (0, 2),
        {
            "mail": 75,  # 74 mails (Gmail mbox and the hospital's Maildir) and two attachments
            **{"browser": 50, "calendar": 60, "imessage": 10, "wechat": 6, "chatgpt": 7, "claude": 5},
            **{"code": 9, "notes": 20, "whatsapp": 15, "telegram": 4, "signal": 3, "obsidian": 6},
            **{"slack": 4, "takeout": 8, "contacts": 16},
        },
        (3, 6),
        (),
        "exports/",
        _persona_c_formats,
    ),
}


@pytest.fixture(scope="module", params=sorted(PERSONAS))
def generated(request, tmp_path_factory):
    name = request.param
    module = importlib.import_module(f"ragbag_evalsets.{PERSONAS[name].module}")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RAGBAG_OCR_CACHE", str(tmp_path_factory.mktemp(f"{name}-ocr")))
        out = module.generate(tmp_path_factory.mktemp(name))
        docs, errors = read_all(out)
    queries = [json.loads(line) for line in (out / "queries.jsonl").read_text(encoding="utf-8").splitlines()]
    return name, out, docs, errors, queries


@pytest.mark.parametrize("name", sorted(PERSONAS))
def test_generation_is_deterministic_and_idempotent(name, tmp_path):
    assert_deterministic(importlib.import_module(f"ragbag_evalsets.{PERSONAS[name].module}").generate, tmp_path)


@pytest.mark.parametrize("name", sorted(PERSONAS))
def test_content_is_data_next_to_the_module_and_the_generator_imports_nothing_heavy(name):
    module = f"ragbag_evalsets.{PERSONAS[name].module}"
    data = importlib.import_module(module).DATA
    names = {p.name for p in data.glob("*.json")}
    assert {f"{source}.json" for source, _ in SOURCES} | {"persona.json", "queries.json"} == names, names
    for p in data.glob("*.json"):
        json.loads(p.read_text(encoding="utf-8"))
    assert_imports_light(module)


def test_home_names_one_source_per_connector(generated):
    name, out, _, _, _ = generated
    assert_every_connector(out, name, SOURCES)


def test_every_connector_reads_everything_without_errors(generated):
    name, _, docs, errors, _ = generated
    persona = PERSONAS[name]
    assert errors == []
    counts = {source: len(found) for source, found in docs.items()}
    assert all(counts[k] >= v for k, v in persona.minimum.items()), counts
    pictures = [d for found in docs.values() for d in found if d.metadata.get("format") == "image"]
    scans = [d for d in docs["notes"] if d.metadata.get("path", "").startswith("Scans/")]
    scans += [d for d in docs["mail"] if d.metadata.get("filename") in persona.scans]
    assert persona.pictures[0] <= len(pictures) + len(scans) <= persona.pictures[1]
    code = {d.metadata["path"] for d in docs["code"]}
    assert not any(p.startswith(persona.ignored) or p == ".env" for p in code)  # .gitignore


def test_formats_say_what_the_person_wrote(generated):
    name, _, docs, _, _ = generated
    PERSONAS[name].formats(docs)


def test_query_set_shape(generated):
    name, _, _, _, queries = generated
    persona = PERSONAS[name]
    assert persona.queries[0] <= len(queries) <= persona.queries[1]
    assert all(q["_id"].startswith(persona.prefix) for q in queries)
    kinds = Counter(q["kind"] for q in queries)
    assert set(kinds) <= set(KINDS) and set(FIRST_KINDS) | {"negative"} <= set(kinds), kinds
    assert min(kinds[k] for k in FIRST_KINDS) >= 12
    assert persona.negatives[0] <= kinds["negative"] <= persona.negatives[1], kinds
    assert all(persona.inside[0] <= kinds[k] <= persona.inside[1] for k in KINDS[7:]), kinds
    assert_queries_well_formed(queries, SOURCES, persona.languages)


def test_every_judgement_resolves_to_one_to_three_records_that_pass_the_filters(generated):
    _, _, docs, _, queries = generated
    assert_judgements_resolve(docs, queries)


def test_filters_are_what_keeps_the_distractors_out(generated):
    _, _, docs, _, queries = generated
    assert_filters_keep_distractors_out(docs, queries)


def test_negatives_resolve_to_nothing(generated):
    _, _, docs, _, queries = generated
    assert_negatives_absent(docs, queries)


def test_no_question_copies_a_sentence_of_its_answer(generated):
    _, _, docs, _, queries = generated
    copied = []
    for q in queries:
        if q["kind"] in ("identifier", "filtered", "negative") or len(q["text"]) < 25:
            continue
        asked = q["text"].lower().rstrip("?？")
        for rel in q["relevant"]:
            if any(asked in d.text.lower() for d in matching(docs, rel["source"], rel["contains"])):
                copied.append((q["_id"], q["text"]))
    assert not copied
