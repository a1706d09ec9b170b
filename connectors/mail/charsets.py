"""Mail's charsets: the labels messages declare, mapped to the codecs that read what senders
really wrote, with fallbacks instead of failures."""

from __future__ import annotations

import codecs

_CHARSET_ALIASES = {
    "gb2312": "gb18030",
    "gbk": "gb18030",
    "x-gbk": "gb18030",
    "cp936": "gb18030",
    "gb_2312-80": "gb18030",
    "euc-cn": "gb18030",
    "x-euc-cn": "gb18030",
    "chinese": "gb18030",
    "big5": "big5hkscs",
    "iso-8859-1": "cp1252",
    "latin-1": "cp1252",
    "latin1": "cp1252",
    "us-ascii": "cp1252",
    "ascii": "cp1252",
    "ansi_x3.4-1968": "cp1252",
    "ks_c_5601-1987": "cp949",
    "euc-kr": "cp949",
    "shift_jis": "cp932",
    "shift-jis": "cp932",
    "x-sjis": "cp932",
    "iso-8859-8-i": "iso-8859-8",
    "utf8": "utf-8",
    "unicode-1-1-utf-7": "utf-7",
}


def decode_bytes(data: bytes, charset: str | None) -> str:
    """Text from bytes in a declared charset, falling back instead of failing: a Latin-1/ASCII
    label is tried as UTF-8 first (mislabelled UTF-8 is common), any other label before UTF-8;
    unlabelled bytes try UTF-8, GB18030, cp1252; the last resort is Latin-1 with replacement."""
    declared = ""
    if charset:
        name = charset.strip().strip('"').lower()
        name = _CHARSET_ALIASES.get(name, name)
        try:
            declared = codecs.lookup(name).name
        except LookupError:
            declared = ""
    if not declared:
        order = ["utf-8", "gb18030", "cp1252"]
    elif declared == "cp1252":
        order = ["utf-8", "cp1252"]
    else:
        order = [declared, "utf-8"]
    for enc in order:
        try:
            return data.decode(enc)
        except (UnicodeDecodeError, LookupError):
            continue
    return data.decode(declared or "latin-1", errors="replace")
