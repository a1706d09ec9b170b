"""Ranking across sources (issue 33): a source's best hit is not drowned by a source whose
scores run higher for every question, and a word that one record of the home holds is strong
evidence for it, in whatever language the rest of the question is."""

from __future__ import annotations

import pytest
from conftest import materialize_source, write

from ragbag.search import fusion, languages, mentions, query, rare_words

PLACES = ["Portugal", "Sicily", "Crete", "the Baltic coast", "Mallorca", "Lake Garda", "Provence", "Croatia"]
THINGS = ["sunscreen", "sandals", "a sun hat", "swimwear", "linen shirts", "a beach towel", "sunglasses"]
# A loud English source: packing lists, close to the question in the model's space.
LOUD = {
    f"packing-{n}.md": f"# Packing list for {PLACES[n % 8]}\n\nPack {THINGS[n % 7]}, {THINGS[(n + 3) % 7]} and "
    f"a light jacket for the trip; the weather in {PLACES[n % 8]} is hot in week {n + 20}.\n"
    for n in range(36)
}
# A quieter source: the answer, in another language than the question, so its scores run lower.
QUIET = {
    "gipfel.md": "# Gipfeltour\n\nOben am Gipfel sind es abends nur fünf Grad: warme Jacke, Mütze und Handschuhe einpacken.\n"
}
# One German record holds the question's rarest word.
RARE = {
    "mietvertrag.md": "# Mietvertrag Weserstraße\n\nDie Kaution beträgt 3.360,00 € und wird in drei Raten gezahlt.\n"
}
FLATS = {
    f"flat-{n}.md": f"# Flat notes {n}\n\nThe flat in street {n} has {n % 4 + 1} rooms; rent and deposit were "
    f"discussed with the landlord in week {n + 1}, and the deposit for the flat is due on moving in.\n"
    for n in range(24)
}


@pytest.fixture(scope="module")
def home(tmp_path_factory, instance):
    from ragbag.core.home import Home

    root = tmp_path_factory.mktemp("merge")
    home = Home(root / "home").ensure()
    for name, files in (("notes", LOUD | FLATS | RARE), ("chats", QUIET)):
        home.add_source(name, "files", str(write(root / name, files)), known=("files",))
        materialize_source(home, instance, name)
    return home


def _titles(home, question: str) -> list[str]:
    return list(query.search(question, home=home, k=10)["title"])


@pytest.mark.slow(seconds=15)
def test_a_sources_best_hit_survives_a_merge_with_a_louder_source(home, monkeypatch):
    question = "what warm clothes should I pack for the mountain summit?"
    # Its language taken out of its vector, the German answer ranks above the last place.
    assert "Gipfeltour" in _titles(home, question)[:-1]
    monkeypatch.setattr(languages, "SHARE", 0.0)  # the vector list as it was: the last place holds it
    monkeypatch.setattr(languages, "ALIGNED_SHARE", 0.0)
    assert _titles(home, question)[-1] == "Gipfeltour"
    monkeypatch.setattr(fusion, "SOURCE_PLACES", 0)
    assert "Gipfeltour" not in _titles(home, question)  # the louder source fills the top 10 without it


@pytest.mark.slow(seconds=5)
def test_a_word_one_record_holds_ranks_it_first_in_another_language(home, monkeypatch):
    question = "how much was the Kaution for my flat?"
    assert _titles(home, question)[0] == "Mietvertrag Weserstraße"
    monkeypatch.setattr(languages, "SHARE", 0.0)  # the vector list as it was: the word alone lifts it
    monkeypatch.setattr(languages, "ALIGNED_SHARE", 0.0)
    assert _titles(home, question)[0] == "Mietvertrag Weserstraße"
    monkeypatch.setattr(rare_words, "LIFT", 0.0)
    assert "Mietvertrag Weserstraße" not in _titles(home, question)  # the English notes on flats outrank it
    assert mentions.written_as_names("Where did the Kaution go, and the Miete?", caseless=False) == ["Kaution", "Miete"]
    assert mentions.written_as_names("Tom's Kaution") == ["Tom", "Kaution"]
