"""The text of a Messages ``attributedBody``: an NSAttributedString archived in NeXT/Apple's
typedstream form, which newer macOS stores instead of the ``text`` column."""

from __future__ import annotations

from ragbag.text.unreadable import Unreadable

_STREAM_HEADER = b"\x04\x0bstreamtyped"
_OBJECT_END = b"\x86\x84"  # end of one object, start of the next
_STRING_TYPE = b"\x84\x01+"  # a new type string "+": the NSString's bytes follow


def attributed_text(blob: bytes) -> str:
    """The plain text of an ``attributedBody``: an NSAttributedString in typedstream form.

    The stream starts ``04 0B "streamtyped"``; the attributed string's class chain is followed
    by its string object, whose chain ends in ``NSString`` (directly, or via NSMutableString),
    then the type tag ``84 01 2B`` ("+") and the UTF-8 bytes with their length: one byte below
    0x80, else 0x81 + 2 bytes or 0x82 + 4 bytes, little-endian. Raises :class:`Unreadable`.
    """
    blob = bytes(blob)
    if not blob.startswith(_STREAM_HEADER):
        raise Unreadable("attributedBody is not a typedstream")
    at = blob.find(b"NSString", len(_STREAM_HEADER))
    if at < 0:
        raise Unreadable("attributedBody holds no NSString")
    tag = blob.find(_STRING_TYPE, at + 8, at + 8 + 32)  # past the class version and superclass
    if tag < 0:
        raise Unreadable("attributedBody's NSString has no byte string")
    pos = tag + len(_STRING_TYPE)
    if pos >= len(blob):
        raise Unreadable("attributedBody ends before its text")
    lead = blob[pos]
    if lead < 0x80:
        length, pos = lead, pos + 1
    elif lead in (0x81, 0x82):
        width = 2 if lead == 0x81 else 4
        if pos + 1 + width > len(blob):
            raise Unreadable("attributedBody ends inside a length")
        length, pos = int.from_bytes(blob[pos + 1 : pos + 1 + width], "little"), pos + 1 + width
    else:
        raise Unreadable(f"attributedBody has an unknown length tag 0x{lead:02x}")
    if pos + length > len(blob):
        return _overrun_text(blob, pos, length)
    try:
        return blob[pos : pos + length].decode("utf-8")
    except UnicodeDecodeError:
        raise Unreadable("attributedBody text is not UTF-8") from None


def _overrun_text(blob: bytes, pos: int, length: int) -> str:
    """The text of a string whose declared length runs past the blob (seen in real databases).

    The string object still ends where typedstream ends every object, ``86`` followed by the
    next object's ``84``; the bytes up to there are the text when they are whole UTF-8. Anything
    else is a truncated blob, and an error, never a guess.
    """
    end = blob.find(_OBJECT_END, pos)
    if end < 0:
        raise Unreadable(f"attributedBody truncated: text of {length} bytes, {len(blob) - pos} left")
    try:
        return blob[pos:end].decode("utf-8")
    except UnicodeDecodeError:
        raise Unreadable(f"attributedBody truncated: text of {length} bytes, {len(blob) - pos} left") from None
