"""How a question typed in Latin letters writes a name that the records hold otherwise: 陈静 as
"Chen Jing", 坂本彩 as "Aya Sakamoto", 이민지 as "Lee Min-ji" or "Minji", Дмитрий Орлов as
"Dmitriy Orlov", Łukasz Wójcik as "Lukasz Wojcik".

A spelling is a name's words, casefolded, as a set (word order is free: "Aya Sakamoto" and
"Sakamoto Aya" are one spelling). Every script is read by a library made for it, each loaded only
for the names that need it:

- Chinese: pypinyin's dictionary, every reading of each character (its family names of one or
  two characters); a Chinese name is as often a Japanese one, so it is also read as Japanese.
- Japanese: the MeCab-IPADIC dictionary in Janome, whose person-name entries carry their readings
  (坂本 サカモト as a family name, 彩 アヤ as a given name); read only when every part of the name
  is such an entry (or kana), so a Chinese name is not given a made-up Japanese reading. The kana
  are written in Hepburn, with and without the long vowels (Satou and Sato, Youko and Yoko).
  Janome's dictionary is slow to load and large in memory (what a cold search pays for it:
  benchmarks/README.md, "People named as a question writes them"), so these readings are
  ``dictionary`` spellings, asked for only when a question holds a name no cheaper spelling
  explains.
- Korean: Hangul is spelled syllable by syllable in the Revised Romanization (anyascii), with the
  spellings family names are written in by convention (이 Lee/Yi/Rhee, 김 Kim, 박 Park…), the given
  name joined or in syllables ("Minji", "Min-ji"), and as names are often written (현 hyun, 우 woo).
- Any other script, and Latin letters with diacritics: anyascii's transliteration of each word.
"""

from __future__ import annotations

import functools
import itertools
import re

from ragbag.text import scripts

# Raise when ``spellings`` spells a name otherwise: the spellings publications wrote under another
# are not read (``index.published.read_spellings``), and the names are spelled again.
SPELLINGS_VERSION = 1
_WORD = re.compile(r"\w+")
_READINGS, _SPELLINGS = 3, 12  # a Chinese character's readings taken; a Chinese name's spellings made
_HAN, _KANA, _HANGUL = scripts.HAN, scripts.KANA, scripts.HANGUL
_PERSON = "名詞,固有名詞,人名"  # IPADIC's part of speech of a person-name entry

# Korean family names in the spellings their bearers use in Latin letters, besides the Revised
# Romanization itself: the most common (about nine in ten Koreans) and the two-syllable ones, none
# spelled as an English word a question writes with a capital ("An", "No", "Ok", "In").
_KOREAN_FAMILY = {
    "남궁": ("namgung", "namkoong"),
    "황보": ("hwangbo",),
    "제갈": ("jegal",),
    "선우": ("seonu", "sunwoo"),
    "독고": ("dokgo",),
    "김": ("kim", "gim"),
    "이": ("lee", "yi", "rhee"),
    "리": ("lee", "ri", "rhee"),
    "박": ("park", "pak", "bak"),
    "최": ("choi", "choe"),
    "정": ("jung", "jeong", "chung"),
    "강": ("kang", "gang"),
    "조": ("cho", "jo"),
    "윤": ("yoon", "yun"),
    "장": ("jang", "chang"),
    "임": ("lim", "im", "rim"),
    "림": ("lim", "rim"),
    "한": ("han",),
    "오": ("oh", "o"),
    "서": ("seo", "suh"),
    "신": ("shin", "sin"),
    "권": ("kwon", "gwon"),
    "황": ("hwang",),
    "안": ("ahn",),
    "송": ("song",),
    "류": ("ryu", "yoo", "yu"),
    "유": ("yoo", "yu"),
    "전": ("jeon", "jun", "chun"),
    "홍": ("hong",),
    "고": ("ko", "go"),
    "문": ("moon", "mun"),
    "양": ("yang",),
    "손": ("son", "sohn"),
    "배": ("bae", "pae"),
    "백": ("baek", "paik", "baik"),
    "허": ("heo", "huh", "hur"),
    "노": ("noh", "roh"),
    "남": ("nam",),
    "하": ("ha",),
    "곽": ("kwak", "gwak"),
    "성": ("sung", "seong"),
    "차": ("cha",),
    "주": ("joo", "ju", "chu"),
    "우": ("woo", "u"),
    "구": ("koo", "ku", "gu"),
    "민": ("min",),
    "나": ("na", "ra"),
    "진": ("jin", "chin"),
    "지": ("ji", "chi"),
    "엄": ("eom", "um"),
    "채": ("chae",),
    "원": ("won",),
    "천": ("cheon", "chun"),
    "방": ("bang", "pang"),
    "공": ("kong", "gong"),
    "현": ("hyun", "hyeon"),
    "편": ("pyeon", "pyun"),
    "용": ("yong",),
}

# Katakana as Hepburn writes it; a small ャ/ュ/ョ after a syllable in -i joins it (キョ kyo).
_KANA_ROMAJI = dict(
    zip(
        "アイウエオカキクケコサシスセソタチツテトナニヌネノハヒフヘホマミムメモヤユヨラリルレロワヲン"
        "ガギグゲゴザジズゼゾダヂヅデドバビブベボパピプペポヴ",
        "a i u e o ka ki ku ke ko sa shi su se so ta chi tsu te to na ni nu ne no ha hi fu he ho "
        "ma mi mu me mo ya yu yo ra ri ru re ro wa o n ga gi gu ge go za ji zu ze zo da ji zu de do "
        "ba bi bu be bo pa pi pu pe po vu".split(),
        strict=True,
    )
)
_SMALL_Y = {"ャ": "a", "ュ": "u", "ョ": "o"}
_SMALL_VOWEL = {"ァ": "a", "ィ": "i", "ゥ": "u", "ェ": "e", "ォ": "o"}


def spellings(name: str) -> list[frozenset[str]]:
    """A name's spellings in Latin letters that need no dictionary: Chinese readings, Korean,
    other scripts and Latin without diacritics (see the module doc); [] for a name already so."""
    out: list[frozenset[str]] = []
    if _HAN.search(name) and not _HANGUL.search(name):
        out += _chinese(name)
    if _HANGUL.search(name):
        out += _korean(name)
    plain = _ascii_words(name)
    if plain and plain != _words(name):
        out.append(plain)
    # A word of one letter is no name a question writes ("I" is not 이, "O" not 오).
    return list(dict.fromkeys(s for s in out if s and min(map(len, s)) >= 2))


def needs_dictionary(name: str) -> bool:
    """Whether the name may have readings only a dictionary gives (Japanese: kanji, with or
    without kana)."""
    return bool(_HAN.search(name)) and not _HANGUL.search(name) and len(name.replace(" ", "")) <= 6


def dictionary_spellings(name: str) -> list[frozenset[str]]:
    """A Japanese name's readings from IPADIC's person-name entries (see the module doc)."""
    if not needs_dictionary(name):
        return []
    parts = []
    for token in _tokenizer().tokenize(name.replace(" ", "").replace("\u3000", "")):
        surface, reading = token.surface, token.reading
        if all(_KANA.match(c) for c in surface):
            reading = _katakana(surface)
        elif not token.part_of_speech.startswith(_PERSON) or reading == "*":
            return []
        parts.append(_romaji(reading))
    if not parts:
        return []
    return list(dict.fromkeys(frozenset(p) for p in itertools.product(*[_long_vowels(r) for r in parts])))


@functools.cache
def _tokenizer():
    from janome.tokenizer import Tokenizer

    return Tokenizer()


def _chinese(name: str) -> list[frozenset[str]]:
    """Pinyin, family name of one character or two ("Chen Jing" for 陈静, "Ouyang Nana")."""
    if not 2 <= len(name) <= 4 or not all(_HAN.match(c) for c in name):
        return []
    from pypinyin import Style, pinyin

    readings = [r[:_READINGS] for r in pinyin(name, style=Style.NORMAL, heteronym=True)]
    out = []
    for syllables in itertools.islice(itertools.product(*readings), _SPELLINGS):
        for cut in (1, 2) if len(name) > 2 else (1,):
            out.append(frozenset(("".join(syllables[:cut]), "".join(syllables[cut:]))))
    return out


def _korean(name: str) -> list[frozenset[str]]:
    """A Hangul name of two to five syllables, family name first ("이민지", or "이 민지")."""
    from anyascii import anyascii

    words = name.split()
    if not words or not all(_HANGUL.fullmatch(c) for w in words for c in w):
        return []  # a name in two scripts ("Jae-won 이"): its Latin words are its spelling already
    return _korean_name("".join(words), len(words[0]) if len(words) > 1 else None, anyascii)


def _korean_name(name: str, cut: int | None, anyascii) -> list[frozenset[str]]:
    if not 1 <= len(name) <= 5:
        return []
    alone = [frozenset({v}) for v in _syllables_joined(name, anyascii)]  # a given name alone: 민지 Minji
    if cut is None:
        if len(name) == 1 or (len(name) == 2 and name[:1] not in _KOREAN_FAMILY):
            return alone
        cut = 2 if name[:2] in _KOREAN_FAMILY and len(name) >= 4 else 1
    family, given = name[:cut], name[cut:]
    families = set(_KOREAN_FAMILY.get(family) or _syllables_joined(family, anyascii))
    out = []
    for f in sorted(families):
        for g in _syllables_joined(given, anyascii):
            out.append(frozenset({f, g}))  # "Lee Minji"
        for apart in _syllables_apart(given, anyascii):
            out.append(frozenset({f, *apart}))  # "Lee Min-ji"
    return out + (alone if len(name) == 2 else [])


def _syllables_joined(word: str, anyascii) -> list[str]:
    syllables = [anyascii(c).lower() for c in word]
    return list(dict.fromkeys(("".join(syllables), "".join(map(_usual, syllables)))))


def _syllables_apart(word: str, anyascii) -> list[tuple[str, ...]]:
    if len(word) < 2:
        return []
    syllables = [anyascii(c).lower() for c in word]
    return list(dict.fromkeys((tuple(syllables), tuple(map(_usual, syllables)))))


def _usual(syllable: str) -> str:
    """A syllable as Korean names are often written rather than romanized: 현 hyun, 우 woo."""
    return "woo" if syllable == "u" else syllable.replace("eo", "u")


def _katakana(text: str) -> str:
    return "".join(chr(ord(c) + 0x60) if "\u3041" <= c <= "\u3096" else c for c in text)


def _romaji(kana: str) -> str:
    out: list[str] = []
    double = False
    for c in kana:
        if c == "ッ":
            double = True
            continue
        if c == "ー":
            out.append(out[-1][-1] if out and out[-1] else "")
            continue
        if c in _SMALL_Y and out and out[-1].endswith("i") and len(out[-1]) >= 2:
            head = out.pop()[:-1]
            head = head if head.endswith(("sh", "ch", "j")) else head + "y"
            out.append(head + _SMALL_Y[c])
            continue
        if c in _SMALL_VOWEL and out and out[-1]:  # ヴィ vi, ファ fa, ティ ti
            out.append(out.pop()[:-1] + _SMALL_VOWEL[c])
            continue
        syllable = _KANA_ROMAJI.get(c, "")
        if double and syllable:
            syllable = ("t" if syllable.startswith("ch") else syllable[0]) + syllable
        double = False
        out.append(syllable)
    return "".join(out)


def _long_vowels(reading: str) -> list[str]:
    """ "satou" as it is and as names are usually written in Latin letters ("sato")."""
    short = re.sub(r"ou|oo", "o", reading).replace("uu", "u")
    return list(dict.fromkeys((reading, short)))


def _ascii_words(name: str) -> frozenset[str]:
    from anyascii import anyascii

    if name.isascii():
        return frozenset()
    if _HAN.search(name) or _HANGUL.search(name) or _KANA.search(name):
        return frozenset()  # spelled by their own rules above, not anyascii's Mandarin for kanji
    # The name's own words, each transliterated: an emoji beside a name ("Papa ❤") is no word of it.
    return frozenset(w.casefold() for word in _WORD.findall(name) for w in _WORD.findall(anyascii(word)))


def _words(name: str) -> frozenset[str]:
    return frozenset(w.casefold() for w in _WORD.findall(name))
