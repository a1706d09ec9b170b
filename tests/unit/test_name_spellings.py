"""Names in other scripts spelled as a question in Latin letters writes them
(``ragbag.text.name_spellings``): Hepburn for Japanese readings, the Revised Romanization and the
usual family-name spellings for Korean, transliteration for the rest."""

from __future__ import annotations

import pytest

from ragbag.text import name_spellings


@pytest.mark.parametrize(
    "kana, romaji",
    [
        ("キョウコ", "kyouko"),
        ("ハットリ", "hattori"),  # a small tsu doubles the next consonant
        ("マッチャ", "matcha"),  # …as t before ch
        ("シュンスケ", "shunsuke"),
        ("コーヘイ", "koohei"),  # a long-vowel mark repeats the vowel
        ("ヴィ", "vi"),
        ("さくら", "sakura"),  # hiragana too
    ],
)
def test_kana_are_written_in_hepburn(kana, romaji):
    assert name_spellings._romaji(name_spellings._katakana(kana)) == romaji


@pytest.mark.parametrize(
    "name, spelling",
    [
        ("大野京子", {"kyoko", "ono"}),  # long vowels as names are usually written…
        ("大野京子", {"kyouko", "oono"}),  # …and as the kana are
        ("服部俊介", {"hattori", "shunsuke"}),
        ("伊藤さくら", {"ito", "sakura"}),  # a given name in kana
    ],
)
def test_a_japanese_name_is_read_by_its_person_name_entries(name, spelling):
    assert frozenset(spelling) in name_spellings.dictionary_spellings(name)


def test_a_name_the_dictionary_does_not_know_as_a_person_gets_no_reading():
    assert name_spellings.dictionary_spellings("陈静") == []  # not made up from a character's readings
    assert name_spellings.dictionary_spellings("Anna Weber") == []


@pytest.mark.parametrize(
    "name, spelling",
    [
        ("이민지", {"lee", "minji"}),
        ("이민지", {"lee", "min", "ji"}),
        ("정현우", {"jung", "hyunwoo"}),  # the way many write it…
        ("정현우", {"jeong", "hyeonu"}),  # …and the Revised Romanization
        ("남궁민수", {"namgung", "minsu"}),  # a family name of two syllables
        ("민지", {"minji"}),  # a given name alone
        ("Łukasz Wójcik", {"lukasz", "wojcik"}),
        ("Дмитрий Орлов", {"dmitriy", "orlov"}),
        ("Γιώργος Παππάς", {"giorgos", "pappas"}),
    ],
)
def test_names_in_other_scripts_are_spelled_without_a_dictionary(name, spelling):
    assert frozenset(spelling) in name_spellings.spellings(name)


def test_a_korean_family_name_is_spelled_as_its_bearers_spell_it_not_as_an_english_word():
    assert not any("an" in s for s in name_spellings.spellings("안정민"))  # Ahn, never "An"
    assert frozenset({"ahn", "jungmin"}) in name_spellings.spellings("안정민")
    assert not any("no" in s for s in name_spellings.spellings("노현우"))


def test_an_emoji_beside_a_name_is_no_word_of_its_spelling():
    assert name_spellings.spellings("Mãe 💕") == [frozenset({"mae"})]
    assert name_spellings.spellings("Papa ❤") == [] and name_spellings.spellings("Ana 🇵🇹") == []


def test_no_spelling_holds_a_word_of_one_letter():
    assert all(min(map(len, s)) >= 2 for s in name_spellings.spellings("이오"))
    assert name_spellings.spellings("Anna Weber") == []
