"""What kind of fact a question asks for, and whether a sentence holds one of that kind.

"How much extra did I pay?" is answered by a sentence with an amount ("Nachzahlung: 142,37 EUR"),
"when is the appointment?" by one with a date, "what time does the bus leave?" by a time, "what
is the key box code?" by a code, "which seat?" by a seat's number ("Platz 64"). The question is
read in the languages a home mostly holds; the sentence's fact is recognised by its form
(digits, currency, month names), which holds across languages: that is what lets the answerer
prefer the German sentence with the amount to an English sentence that only repeats the
question's words.
"""

from __future__ import annotations

import re

from ragbag.text.sentences import MONTHS as _MONTHS

_WEEKDAYS = (
    r"mon(?:day)?|tue(?:sday)?|wed(?:nesday)?|thu(?:rsday)?|fri(?:day)?|sat(?:urday)?|sun(?:day)?|"
    r"montag|dienstag|mittwoch|donnerstag|freitag|samstag|sonntag|lundi|mardi|mercredi|jeudi|vendredi|"
    r"samedi|dimanche|lunes|martes|mi[ée]rcoles|jueves|viernes|s[áa]bado|domingo"
)

# The question's words for each kind (English, German, French, Spanish, Portuguese, Dutch, CJK).
ASKS: dict[str, re.Pattern[str]] = {
    "amount": re.compile(
        r"\b(?:how much|cost|costs|price|pay|paid|charge[ds]?|fee|amount|refund|credit|rent|advance|deposit|"
        r"salary|bill|wie ?viel|kostet|kosten|betrag|preis|miete|combien|co[uû]te?|prix|cu[áa]nto|precio|"
        r"quanto|custa|hoeveel)\b|多少钱|价格|费用|いくら|料金|얼마",
        re.IGNORECASE,
    ),
    "date": re.compile(
        r"\b(?:when|which (?:day|date)s?|what (?:day|date)s?|on which day|until|deadline|due|wann|an welchem|"
        r"bis wann|datum|quand|quel jour|cu[áa]ndo|qu[ée] d[íi]a|quando|wanneer)\b"
        r"|什么时候|哪天|几号|几月|いつ|何日|언제",
        re.IGNORECASE,
    ),
    "time": re.compile(
        r"\b(?:what time|which time|from what time|at what time|how late|how early|um wie ?viel uhr|wie sp[äa]t|"
        r"ab wann|à quelle heure|a qu[ée] hora|que horas|hoe laat)\b|几点|何時|몇 시",
        re.IGNORECASE,
    ),
    "code": re.compile(
        r"\b(?:code|pin|password|number|no\.|order|tracking|reference|booking|confirmation|ticket|account|iban|"
        r"nr\.|kennwort|passwort|num[ée]ro|c[óo]digo|n[úu]mero)\b"
        r"|\w*(?:nummer|ziffer|code)\b|单号|订单号|号码|编号|番号|번호",  # German compounds: Beitragsnummer
        re.IGNORECASE,
    ),
    "seat": re.compile(
        r"\b(?:seat|row|table|coach|car|platform|gate|room|platz|sitzplatz|reihe|tisch|wagen|gleis|zimmer|place|"
        r"voiture|rang|asiento|fila|mesa|coche|assento|stoel)s?\b|座位|座|席|좌석",
        re.IGNORECASE,
    ),
    "count": re.compile(
        r"\b(?:how many|how long|how old|how often|how far|wie viele|wie lange|wie alt|wie weit|combien de|"
        r"cu[áa]ntos|cu[áa]ntas|quantos)\b|几|多久|多长|何人|몇",
        re.IGNORECASE,
    ),
}

# Each kind's form in a sentence, whatever its language.
HOLDS: dict[str, re.Pattern[str]] = {
    "amount": re.compile(
        r"(?:€|\beur\b|\$|\busd\b|£|¥|\bchf\b|\bgbp\b|元|円|\bkr\b|\brmb\b)\s?\d|"
        r"\d(?:[\d.,' ]*\d)?\s?(?:€|\beur\b|\$|\busd\b|£|\bchf\b|元|円|块|\bkr\b|euros?\b)|\b\d+[.,]\d{2}\b",
        re.IGNORECASE,
    ),
    "date": re.compile(
        rf"\b\d{{1,2}}\.\s?\d{{1,2}}\.(?:\d{{2,4}})?|\b\d{{4}}-\d{{2}}-\d{{2}}\b|\b\d{{1,2}}/\d{{1,2}}(?:/\d{{2,4}})?\b|"
        rf"\b\d{{1,2}}(?:st|nd|rd|th|er|\.)?\s(?:de\s)?(?:{_MONTHS})\b|\b(?:{_MONTHS})\.?\s\d{{1,2}}\b|"
        rf"\b(?:{_WEEKDAYS})\b|\d+月\d+日|\d+月|\d+日|\d+号",
        re.IGNORECASE,
    ),
    "time": re.compile(
        r"\b\d{1,2}:\d{2}\b|\b\d{1,2}\s?h(?:\d{2})?\b|\b\d{1,2}(?:[.:]\d{2})?\s?(?:am|pm|uhr)\b|\d+点|\d+時",
        re.IGNORECASE,
    ),
    "code": re.compile(r"\b(?=[\w-]*\d)[A-Za-z0-9][\w-]{2,}\b|\d{3,}"),
    # a seat, a row, a table or a room by its number (44K, Platz 64, place 112, row 7, 12车15F)
    "seat": re.compile(
        r"\b(?:seat|row|table|coach|car|platform|gate|room|platz|reihe|tisch|wagen|gleis|zimmer|place|voiture|"
        r"rang|asiento|fila|mesa|coche|assento)\s?:?\s?\d+|\b\d{1,3}[A-K]\b|\d+车|\d+[A-F]座|\d+号",
        re.IGNORECASE,
    ),
    "count": re.compile(r"\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|twelve|half)\b", re.IGNORECASE),
}


def asked(question: str) -> set[str]:
    """The kinds of fact the question asks for (none for an open question)."""
    kinds = {kind for kind, words in ASKS.items() if words.search(question)}
    if "time" in kinds:
        kinds.discard("date")  # "from what time" asks for a time, not a day
    return kinds


def held(sentence: str, kinds: set[str]) -> set[str]:
    """Which of ``kinds`` the sentence holds a fact of."""
    return {kind for kind in kinds if HOLDS[kind].search(sentence)}
