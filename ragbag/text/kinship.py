"""Kinship words, and the people a home calls by them: "what did dad ask about my bike?" asks
about the person whose mail is signed "Papa", to whom the owner writes "Hoi pap,", or whose
contact or chat is called "Mãe".

No maintained package lists kinship terms across languages, so the words are here: the eight
relations people ask about most (parents, siblings, grandparents, aunts and uncles), in the
languages ragbag reads (English, German, Dutch, French, Spanish, Portuguese, Italian, Polish, the
Nordic languages, Czech, Russian, Chinese, Japanese, Korean), with the forms a greeting uses
(Polish "mamo", "tato"). Spouses and children are left out: people greet and sign to them by
name, and "my wife" in one mailbox is "your mother" in the next. A word that is a kinship term in
one language and something else in another or in a question ("baba", "frau", "man", "far",
"ma", "gran", "mere") is left out too, and so are honorifics said mostly of a spouse's parents
(Korean 어머님, 아버님).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import pyarrow as pa
import pyarrow.compute as pc

from ragbag.text.sentences import SUMMARY_LINE

RELATIONS: dict[str, frozenset[str]] = {
    relation: frozenset(words.split())
    for relation, words in {
        "father": "dad daddy father papa pap pappa paps vader vati vater papi père padre "
        "papá pai papai babbo papà tata tato tatuś tatus ojciec fader isä táta tati otec папа "
        "отец батя 爸爸 爸 父亲 父親 老爸 お父さん 父さん とうさん 아빠 아버지",
        "mother": "mom mommy mum mummy mother mama mamma mam mams moeder mutter mutti mami mère "
        "maman madre mamá mãe mae mamãe mamae mamusia mamuś mamus mamo matka moder äiti máma "
        "мама мать мамочка 妈妈 妈 母亲 母親 老妈 お母さん 母さん かあさん 엄마 어머니",
        "sister": "sister sis zus zusje schwester schwesterherz sœur soeur hermana irmã irma sorella "
        "siostra siostrzyczka syster søster sestra сестра сестрёнка 姐姐 妹妹 お姉ちゃん お姉さん "
        "姉さん 언니 누나 여동생",
        "brother": "brother bro broer broertje bruder brüderchen frère frere hermano irmão irmao "
        "fratello brat braciszek bror брат братик 哥哥 弟弟 お兄ちゃん お兄さん 兄さん 오빠 형 "
        "남동생",
        "grandmother": "grandma granny grandmother nana oma omi grand-mère mamie abuela "
        "abuelita avó vovó vó nonna babcia babciu mormor farmor babička бабушка бабуля 奶奶 外婆 姥姥 "
        "おばあちゃん 祖母 할머니",
        "grandfather": "grandpa granddad grandad gramps grandfather opa opi grand-père papy abuelo "
        "abuelito avô vovô vô nonno dziadek dziadku dziadziu morfar farfar dědeček děda дедушка дед "
        "爷爷 外公 姥爷 おじいちゃん 祖父 할아버지",
        "aunt": "aunt auntie tante tía tia zia ciocia ciociu teta тётя тетя 阿姨 姑姑 姨妈 おばさん 이모 고모",
        "uncle": "uncle onkel oom oncle tío tio zio wujek wujku stryjek strýc дядя 叔叔 舅舅 伯伯 おじさん 삼촌 외삼촌",
    }.items()
}
_RELATION_OF = {w: r for r, words in RELATIONS.items() for w in words}
_CASELESS = tuple((w, r) for w, r in _RELATION_OF.items() if len(w) >= 2 and not w.isascii() and w.upper() == w)
_WORD = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)?")
# A greeting word before the name it greets, in the same languages.
_GREETING = frozenset(
    "hi hey hello dear dearest hallo hoi lieve beste liebe lieber liebes servus moin salut cher chère coucou "
    "bonjour hola querida querido oi olá ola querida caro cara ciao cześć czesc hej witaj kochana kochany "
    "drogi droga ahoj привет дорогая дорогой".split()
)
_SUMMARY = re.compile(rf"^{SUMMARY_LINE}$")
_CLOSING = frozenset(
    "love lots xx xxx liefs groetjes groet kus kusjes dikke gr liebe grüße gruß gruss küsse bises bisous "
    "besos beijos beijinhos abraço abrazo un bacio baci ciao buziaki całuję caluje pozdrawiam ściskam "
    "kram kramar hugs cheers your yours je jouw je dein deine ta ton tua tuo twoja twój sua seu tu "
    "your твоя твой целую".split()
)


def relation(word: str) -> str | None:
    """The relation a word names ("pap" -> father), or None."""
    return _RELATION_OF.get(word.casefold())


def relations_in(text: str) -> list[str]:
    """The relations a question's words name, in order: "what did mum and my sister say" ->
    mother, sister; in a script written without spaces, a term of two characters or more found
    inside the text ("妈妈说了什么")."""
    found = [relation(w) for w in _WORD.findall(text)]
    found += [r for term, r in _CASELESS if term in text]
    return list(dict.fromkeys(r for r in found if r))


def greeted(lines: Iterable[str]) -> str | None:
    """The relation a letter's opening greets ("Hoi pap," -> father), or None: its first line that
    holds a word (after a record's summary line, the mail connector's "From: … · To: …"), if that
    is a greeting word or two and the kinship word, ended by a comma, colon or exclamation mark
    (or nothing)."""
    for line in lines:
        words = _WORD.findall(line)
        if not words or _SUMMARY.match(line):
            continue
        if len(words) > 4 or line.lstrip().startswith(">") or not re.search(r"[,:!]\s*$|^[^.?]*$", line.strip()):
            return None
        kin = [relation(w) for w in words]
        rest = [w for w, k in zip(words, kin) if not k]
        if any(kin) and rest and all(w.casefold() in _GREETING for w in rest):
            return next(k for k in kin if k)
        if len(words) == 1 and kin[0] and line.strip().endswith((",", "!", ":")):
            return kin[0]  # "Mãe," alone
        return None
    return None


def signed(lines: list[str]) -> str | None:
    """The relation a letter is signed with ("Veel liefs,\\nPapa" -> father), or None: its last line
    that holds a word is the kinship word alone (or after a closing: "Love, Mom"). A letter that
    ends in a quote ("> Papa") ends in someone else's sign-off: None."""
    for line in reversed(lines):
        words = _WORD.findall(line)
        if not words:
            continue
        if len(words) > 5 or line.lstrip().startswith(">"):
            return None
        kin = [relation(w) for w in words]
        rest = [w for w, k in zip(words, kin) if not k]
        if kin[-1] and all(w.casefold() in _CLOSING for w in rest):
            return kin[-1]
        return None
    return None


# Any kinship word in a lower-cased string: as a word where words are spaced ("sis" is no sister
# in "analysis"; RE2's \b knows ASCII letters only, so "pap" in "papá" passes, which the line
# readers below then reject), anywhere in a script without spaces.
_SPACED = sorted((re.escape(w) for w in _RELATION_OF if w.isascii() or w.upper() != w), key=len, reverse=True)
_ANY_TERM = r"\b(?:" + "|".join(_SPACED) + r")\b|" + "|".join(w for w, _ in _CASELESS)
_HEAD, _TAIL = 400, 160  # characters of a letter that hold its greeting (after the summary line), its sign-off


def letters_calling(texts: pa.ChunkedArray, metadata: pa.ChunkedArray) -> pa.ChunkedArray:
    """Which rows may be letters that call someone by a kinship word: mail (a ``from`` in the
    metadata) with such a word near the start or the end. Arrow's string kernels look, so a home
    of a hundred thousand chunks is not read into Python to find the few that ``greeted`` and
    ``signed`` then read line by line."""
    mail = pc.fill_null(pc.match_substring(metadata, '"from"'), False)
    ends = pc.binary_join_element_wise(
        pc.utf8_slice_codeunits(texts, 0, _HEAD), pc.utf8_slice_codeunits(texts, -_TAIL, 2**31 - 1), "\n"
    )
    return pc.and_(mail, pc.fill_null(pc.match_substring_regex(pc.utf8_lower(ends), _ANY_TERM), False))
