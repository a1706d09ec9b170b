"""Bytes of an unknown encoding to text: the one decoder behind every connector that reads files
a user wrote (notes, code, calendars, chat exports)."""

from __future__ import annotations

import codecs

import charset_normalizer

from ragbag.text.unreadable import Unreadable

# How much more chaotic than a sibling single-byte guess cp1252 may read and still be chosen.
WESTERN_CHAOS_MARGIN = 0.05
_MULTIBYTE = ("gb", "big5", "shift_jis", "cp932", "cp949", "cp950", "euc", "iso2022", "hz", "johab", "utf")


def decode(data: bytes) -> tuple[str, str]:
    """(text, encoding). UTF-8 first (also when only a few bytes are invalid); then the detector,
    which on short Western text often guesses a sibling code page (cp1250, cp932, cp775...), so
    cp1252 wins whenever it is no more chaotic. Raises :class:`Unreadable` for binary data."""
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
    best = charset_normalizer.from_bytes(data).best()
    western = charset_normalizer.from_bytes(data, cp_isolation=["cp1252"]).best()
    # Coherence is unreliable on a few short words ("Café" read as cp775 "Cafķ" scored higher),
    # and chaos too: a German note with – € ä ü read as cp775 scored 0.0 against cp1252's 0.014.
    # So cp1252, by far the most common legacy encoding, beats another single-byte code page
    # unless it is clearly more chaotic; a multi-byte guess (GBK, Shift-JIS…) must win outright.
    if western is not None and (
        best is None
        or western.chaos <= best.chaos
        or (not _multibyte(best.encoding) and western.chaos <= best.chaos + WESTERN_CHAOS_MARGIN)
    ):
        best = western
    if best is None:
        raise Unreadable("undecodable text (binary?)")
    return str(best), best.encoding


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
