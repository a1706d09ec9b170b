"""A vector's likeness without its language (``ragbag.search.languages``), each row's language told
once at publish (``ragbag.pipeline.row_languages``), and the telling itself (``ragbag.text.languages``)."""

from __future__ import annotations

import json
from types import SimpleNamespace

import numpy as np
from conftest import GARDEN_NOTE, GERMAN_NOTE, build_in_process, built_notes

from ragbag.index import published
from ragbag.pipeline import row_languages
from ragbag.search import languages as unbias
from ragbag.text.languages import identify


def test_languages_are_told_or_left_untold():
    said = {
        "Ihre Krankenversichertennummer steht auf der Rückseite der Karte.": "de",
        "Where did I put the spare key for the garden shed?": "en",
        "Le rendez-vous chez le dentiste est reporté à jeudi matin.": "fr",
        "我的护照号码在哪里？请把复印件发给我。": "zh",
        "パスポートの番号を教えてください。": "ja",
        "여권 번호를 알려 주세요.": "ko",
        "A reunião do condomínio foi adiada para a próxima semana.": "pt",
    }
    for text, lang in said.items():
        assert identify(text) == lang, text
    for untold in ("RE-2025-08817", "4711", "", "\x00\x01 \ud800"):  # codes, nothing, what CLD2 refuses
        assert identify(untold) is None


def _source(rows_langs, vectors):
    """A source's snapshot as ``rescore`` reads it, and its sums and counts per language."""
    told = {"rows": rows_langs}
    sums = {
        lang: (np.sum([v for v, x in zip(vectors, rows_langs) if x == lang], axis=0), rows_langs.count(lang))
        for lang in set(rows_langs)
    }
    kept = np.asarray(vectors, np.float32)
    return SimpleNamespace(vectors=kept, rows=kept, memo={}, languages=lambda: told, aligned=lambda: None), sums


def _passages(lang_axis: int, topics: list[int], dim: int = 12) -> list[np.ndarray]:
    """Texts of one language: each leans on its language's axis, and says something on a topic axis."""
    out = []
    for t in topics:
        v = np.zeros(dim)
        v[lang_axis], v[t] = 0.8, 0.6
        out.append(v)
    return out


def test_a_passage_in_another_language_is_compared_by_its_meaning(monkeypatch):
    # Axes 0 and 1: English and German; 2 to 11: topics. Forty English texts on topics 3 to 11,
    # thirty German ones, one of them on topic 2, which the question asks about.
    english = _passages(0, [3 + n % 9 for n in range(40)])
    german = _passages(1, [2] + [3 + n % 9 for n in range(29)])
    (en, en_sums), (de, de_sums) = _source(["en"] * len(english), english), _source(["de"] * len(german), german)
    snaps = [en, de]
    monkeypatch.setattr(unbias, "means", lambda home: unbias.combine([en_sums, de_sums]))
    question = "What is my health insurance number?"  # told English
    qv = _passages(0, [2])[0]
    cands = sorted(
        [(0, j, float(v @ qv)) for j, v in enumerate(english)] + [(1, j, float(v @ qv)) for j, v in enumerate(german)],
        key=lambda t: -t[2],
    )
    assert cands[0][0] == 0 and cands[40][:2] == (1, 0)  # by plain cosine every English text wins
    ranked = unbias.rescore(cands, snaps, question, qv, lambda i, rows: snaps[i].vectors[rows], None, len(cands))
    assert ranked[0][:2] == (1, 0)  # the German text on the question's topic
    # Laid over the old scores' range: fusion's calibration of cosines still holds.
    assert ranked[0][2] == max(c[2] for c in cands) and ranked[-1][2] == min(c[2] for c in cands)
    # A home whose sources were published before languages were told: the list as it was.
    monkeypatch.setattr(unbias, "means", lambda home: unbias.combine([{}, {}]))
    assert unbias.rescore(cands, snaps, question, qv, lambda i, rows: snaps[i].vectors[rows], None, 70) == cands


def test_every_kept_row_is_compared_and_more_results_keep_the_first_in_place(monkeypatch):
    # One mailbox of 300 English texts on topics 3 to 11 and 200 German ones: the German one on
    # the question's topic (2) is its 301st row by plain cosine, below any candidate pool.
    english = _passages(0, [3 + n % 9 for n in range(300)])
    german = _passages(1, [3 + n % 9 for n in range(199)] + [2])
    jitter = np.random.default_rng(7).normal(0, 0.01, (500, 12))  # no two texts alike
    mail, sums = _source(["en"] * 300 + ["de"] * 200, list(np.asarray(english + german) + jitter))
    answer = len(english) + len(german) - 1
    monkeypatch.setattr(unbias, "means", lambda home: unbias.combine([sums]))
    qv = _passages(0, [2])[0]
    plain = np.asarray(mail.vectors @ qv)
    assert int(np.sum(plain > plain[answer])) == 300

    def ranked(n: int, whole: dict | None) -> list:
        pool = [(0, int(j), float(plain[j])) for j in np.argsort(-plain, kind="stable")[:n]]
        vectors_of = lambda i, rows: mail.vectors[rows]  # noqa: E731
        return unbias.rescore(pool, [mail], "What is my health insurance number?", qv, vectors_of, None, n, whole)

    # Only the plain best re-scored: the German answer never reaches the comparison.
    assert (0, answer) not in {c[:2] for c in ranked(100, None)}
    # Every kept row compared: it ranks first, for any number of results asked.
    first = ranked(100, {0: None})
    assert first[0][:2] == (0, answer) and len(first) == 100
    for n in (120, 250, 500):
        assert ranked(n, {0: None})[:100] == first
    # Rows a filter leaves out stay out.
    allowed = np.ones(len(plain), bool)
    allowed[answer] = False
    assert (0, answer) not in {c[:2] for c in ranked(100, {0: allowed})}


def test_each_text_is_told_once_and_the_sums_are_the_vectors(home, tmp_path, monkeypatch):
    told: list[str] = []
    real = row_languages.identify
    monkeypatch.setattr(row_languages, "identify", lambda text: told.append(text) or real(text))
    notes = tmp_path / "notes"
    version = built_notes(home, notes, {"garden.md": GARDEN_NOTE, "versicherung.md": GERMAN_NOTE})
    base = version.parent
    first = len(told)
    body = json.loads((version / published.LANGUAGES).read_text())
    rows = published.read_rows(version, ["index_text"]).column("index_text").to_pylist()
    vectors = published.read_vectors(version)
    assert first == len(rows) and sorted(set(body["rows"])) == ["de", "en"]
    for lang in ("de", "en"):
        mine = [i for i, x in enumerate(body["rows"]) if x == lang]
        assert body["counts"][lang] == len(mine)
        assert np.allclose(body["sums"][lang], vectors[mine].sum(axis=0), atol=1e-5)
    (notes / "bread.md").write_text("# Bread\n\nFeed the starter twice a day and bake at 250 degrees.\n")
    build_in_process(home, "notes")
    assert len(told) - first == 1  # only the new text is told again
    # A ragbag that tells languages by other rules publishes each source again, once.
    monkeypatch.setattr(row_languages, "VERSION", 2)
    before = published.current_version(base, "notes")
    build_in_process(home, "notes")
    assert published.current_version(base, "notes") != before
