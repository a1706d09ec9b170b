"""Mail's charsets: the labels messages declare, mapped to the codecs that read what senders
really wrote, with fallbacks instead of failures; bytes that declare no charset go to the
shared detector (:func:`ragbag.text.decode.decode`), told which charsets the rest of the
message declares."""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterable

from ragbag.text.decode import decode
from ragbag.text.unreadable import Unreadable

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


_C1 = re.compile("[\x80-\x9f]+")
_SINGLE_BYTE = ("cp125", "iso8859", "latin", "koi8", "mac", "cp4", "cp8", "tis", "cp1006")


def decode_bytes(data: bytes, charset: str | None, hints: Iterable[str] = ()) -> str:
    """Text from bytes in a declared charset, falling back instead of failing: a single-byte
    label (Latin-1, cp1250…) is tried as UTF-8 first (mislabelled UTF-8 is common), any other
    label before UTF-8; unlabelled bytes (or an unknown label) are UTF-8 or else the detector's
    reading, ``hints`` (the charsets declared elsewhere in the message) breaking its ties; the
    last resort is the declared charset (else cp1252) with replacement.

    C1 controls (U+0080–U+009F) are never text: in UTF-8 under a single-byte label they are
    that code page's bytes carried through Latin-1 (``C2 80`` for cp1250's €), and are read
    in it."""
    declared = codec(charset)
    if declared and _single_byte(declared):
        order = ["utf-8", declared]
    elif declared:
        order = [declared, "utf-8"]
    else:
        order = []
    for enc in order:
        try:
            text = data.decode(enc)
        except (UnicodeDecodeError, LookupError):
            continue
        if enc == "utf-8" and declared and _single_byte(declared) and _C1.search(text):
            text = _C1.sub(lambda m: m.group().encode("latin-1").decode(declared, "replace"), text)
        return text
    if not declared:
        try:
            return decode(data, [c for c in map(codec, hints) if c])[0]
        except Unreadable:
            pass
    return data.decode(declared or "cp1252", errors="replace")


def _single_byte(name: str) -> bool:
    return name.startswith(_SINGLE_BYTE)


def codec(charset: str | None) -> str:
    """The codec that reads what a charset label's senders write ('' for none or unknown)."""
    if not charset:
        return ""
    name = charset.strip().strip('"').lower()
    name = _CHARSET_ALIASES.get(name, name)
    try:
        return codecs.lookup(name).name
    except LookupError:
        return ""
