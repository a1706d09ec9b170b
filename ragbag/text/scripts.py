"""The scripts of Chinese, Japanese and Korean, as one set of character classes: what has no
spaces between words, no case and no Latin spelling of its own. One definition, so the sentence
splitter, the names' spellings and the places' names agree on what a Han character is."""

from __future__ import annotations

import re

HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")  # CJK ideographs, extension A, compatibility
KANA = re.compile(r"[\u3041-\u30ff\u31f0-\u31ff]")  # hiragana, katakana, katakana's phonetic extensions
HANGUL = re.compile(r"[\uac00-\ud7a3]")  # Hangul syllables
CJK = re.compile(f"{HAN.pattern}|{KANA.pattern}|{HANGUL.pattern}")
