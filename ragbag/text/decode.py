"""Bytes of an unknown encoding to text: the one decoder behind every connector that reads files
a user wrote (notes, code, calendars, chat exports, mail without a declared charset).

UTF-8 first (also when only a few bytes are invalid), then the maintained detector,
``charset-normalizer``, which scores every plausible code page by how chaotic its reading is
(mess) and how much it looks like a language (coherence). What it cannot do is choose among
readings it scores the same, and on short text (a name in a header, a one-line note) that is
the usual case: ``b"L\\xfctkebohle"`` reads cleanly as cp1250, cp1252, cp437…, six GB2312 bytes
as GB18030, Big5 or EUC-JIS. A fixed try-order cannot choose either (GB18030 decodes almost any
byte string, so trying it before cp1252 turned "Lütkebohle" into CJK). So ties are broken, in
order, by what the caller knows (``hints``: the charsets declared elsewhere in the same
message or file), by coherence, and last by how common each encoding is in the text people
write (cp1252, then GB18030, Shift-JIS, EUC-KR, Big5, the other Windows code pages).
"""

from __future__ import annotations

import codecs
from collections.abc import Iterable

import charset_normalizer

from ragbag.text.unreadable import Unreadable

# How much more chaotic than a sibling single-byte guess cp1252 may read and still be chosen.
WESTERN_CHAOS_MARGIN = 0.05
# Readings whose chaos differs by at most this much are a tie the detector cannot break.
TIE = 0.01
_MULTIBYTE = ("gb", "big5", "shift_jis", "cp932", "cp949", "cp950", "euc", "iso2022", "hz", "johab", "utf")
# Legacy encodings by how much of the text people keep is written in them (most first); an
# encoding not listed ranks after all of these.
_COMMON = (
    "cp1252",
    "gb18030",
    "gbk",
    "gb2312",
    "cp932",
    "shift_jis",
    "euc_jp",
    "cp949",
    "euc_kr",
    "big5",
    "cp950",
    "cp1251",
    "cp1250",
    "koi8_r",
    "cp1253",
    "cp1254",
    "cp1257",
    "cp1256",
    "cp1255",
    "tis_620",
    "cp874",
    "cp1258",
)


def decode(data: bytes, hints: Iterable[str] = ()) -> tuple[str, str]:
    """(text, encoding). UTF-8 first (also when only a few bytes are invalid); then the
    detector's least chaotic reading, ties broken by ``hints`` (charsets the context declares,
    e.g. a message's other parts), coherence and how common the encoding is; cp1252 wins over
    a sibling single-byte code page unless it is clearly more chaotic. Raises
    :class:`Unreadable` for binary data."""
    for bom, enc in ((codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16")):
        if data.startswith(bom):
            try:
                return data.decode(enc), enc
            except UnicodeDecodeError:
                raise Unreadable(f"invalid {enc} text") from None
    if b"\0" in data[:8192]:
        raise Unreadable("binary file (NUL bytes)")
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        pass
    mostly = _mostly_utf8(data)
    if mostly is not None:
        return mostly, "utf-8"
    readings = [m for m in charset_normalizer.from_bytes(data) if not m.encoding.startswith("utf_")]
    western = charset_normalizer.from_bytes(data, cp_isolation=["cp1252"]).best()
    hinted = _hinted(data, hints)
    if not readings and western is None and hinted is None:
        raise Unreadable("undecodable text (binary?)")
    least = min([m.chaos for m in readings] + ([western.chaos] if western is not None else []))
    if hinted is not None and hinted[1] <= least + TIE:
        return hinted[0], hinted[2]
    names = [_codec(h) for h in hints]
    tied = [m for m in readings if m.chaos <= least + TIE]
    best = min(
        tied,
        key=lambda m: (_codec(m.encoding) not in names, -round(m.coherence, 2), _rank(m.encoding)),
        default=None,
    )
    # Coherence is unreliable on a few short words ("Café" read as cp775 "Cafķ" scored higher),
    # and chaos too: a German note with – € ä ü read as cp775 scored 0.0 against cp1252's 0.014.
    # So cp1252, by far the most common legacy encoding, beats another single-byte code page
    # unless it is clearly more chaotic; a multi-byte reading (GBK, Shift-JIS…) must win outright.
    if western is not None and (
        best is None
        or western.chaos <= least + TIE  # a tie: cp1252 is the most common (see _COMMON)
        or (not _multibyte(best.encoding) and western.chaos <= best.chaos + WESTERN_CHAOS_MARGIN)
    ):
        best = western
    if best is None:
        raise Unreadable("undecodable text (binary?)")
    return str(best), best.encoding


def _hinted(data: bytes, hints: Iterable[str]) -> tuple[str, float, str] | None:
    """(text, chaos, codec) of the first hinted charset that decodes ``data`` strictly."""
    for hint in hints:
        name = _codec(hint)
        if not name or name.startswith("utf"):
            continue
        try:
            text = data.decode(name)
        except (UnicodeDecodeError, LookupError):
            continue
        match = charset_normalizer.from_bytes(data, cp_isolation=[name], threshold=1.0).best()
        return text, match.chaos if match is not None else 1.0, name
    return None


def _codec(name: str) -> str:
    try:
        return codecs.lookup(name.strip().strip('"')).name.replace("-", "_")
    except LookupError:
        return ""


def _rank(encoding: str) -> int:
    name = _codec(encoding) or encoding
    return _COMMON.index(name) if name in _COMMON else len(_COMMON)


def _multibyte(encoding: str) -> bool:
    return encoding.lower().replace("-", "_").startswith(_MULTIBYTE)


def _mostly_utf8(data: bytes) -> str | None:
    """The text, when a file is UTF-8 but for a few stray bytes (a pasted fragment, a cut-off
    character): read as cp1252 every valid '€' would become 'â‚¬'. Valid multi-byte sequences
    almost never occur by chance in legacy single-byte text, so at least four of them per
    invalid byte says UTF-8; the invalid bytes become U+FFFD."""
    text = data.decode("utf-8", errors="replace")
    bad = text.count("\ufffd") - data.count("\ufffd".encode())
    multibyte = sum(1 for ch in text if ord(ch) > 0x7F and ch != "\ufffd")
    return text if multibyte >= 4 * max(1, bad) else None
