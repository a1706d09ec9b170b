"""A text's language, as Google's Compact Language Detector 2 tells it (``pycld2``: Apache-2.0,
its tables compiled into the wheel, imported in milliseconds, a paragraph told in a tenth of a
millisecond). Search asks it of each chunk at publish and of each question at search
(``ragbag.search.languages``), so it must cost nothing a refresh or a cold search would notice;
the offline answerer's sentence rules ask it too (``ragbag.text.sentences``).
"""

from __future__ import annotations

import re

import pycld2

# CLD2 reads this much of a text: a chunk's language is its first paragraphs'.
_SAMPLE = 4000
# Characters CLD2 refuses as invalid input (C0 and C1 controls but tab and line ends).
_CONTROLS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def identify(text: str) -> str | None:
    """The ISO 639-1 code of ``text``'s language ("zh" for either Chinese script), None when CLD2
    cannot tell: too little text (a code, a number, two words), or none it knows."""
    sample = _CONTROLS.sub(" ", text[:_SAMPLE]).encode("utf-8", "replace").decode("utf-8")
    try:
        _, _, found = pycld2.detect(sample)
    except pycld2.error:  # what it still refuses: unknown, rather than a failed search
        return None
    code = str(found[0][1])
    return None if code in ("un", "xxx") else code.split("-")[0]
