"""What a source reads inside its records: attachments, the text in pictures (OCR), and speech.

All are on by default and turned off per source (``ragbag add … --no-attachments`` /
``--no-ocr`` / ``--no-speech``, i.e. ``attachments: false`` / ``ocr: false`` / ``speech: false``
in the source's options); speech is recordings transcribed (:mod:`ragbag.text.speech`). The
limits bound what one message may cost: at most ``max_attachments`` attachments read per message
and ``max_attachment_mb`` megabytes each; what a limit leaves out is reported, never dropped in
silence. Connectors keep :func:`signature` in their cursor, so changing any of these re-reads
the source instead of trusting records read under the old settings. The OCR cache keeps pictures'
text redacted as the source's screen redacts it (its ``secrets`` and ``pii`` options;
``ragbag.pipeline.screen``), unless the source keeps its secrets.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any

from ragbag.text import secrets
from ragbag.text.ocr import Cache, cache_folder
from ragbag.text.unreadable import human_size

ATTACHMENTS = "attachments"
OCR = "ocr"
SPEECH = "speech"
MAX_ATTACHMENTS = "max_attachments"
MAX_ATTACHMENT_MB = "max_attachment_mb"
DEFAULT_MAX_ATTACHMENTS = 20
DEFAULT_MAX_ATTACHMENT_MB = 25


@dataclass
class Inside:
    """One read's settings for what lies inside records, and its recognition cache: ``ocr`` for
    pictures, ``speech`` the same one for recordings (None: not read)."""

    attachments: bool
    ocr: Cache | None
    speech: Cache | None
    max_attachments: int
    max_bytes: int

    @property
    def signature(self) -> list[Any]:
        return [self.attachments, self.ocr is not None, self.max_attachments, self.max_bytes, self.speech is not None]

    def admit(self, counted: dict[Any, int], message: Any, size: int) -> str | None:
        """Why an attachment of ``size`` bytes of ``message`` is not read under this source's
        limits (the words every connector reports), or None: it is read, and counted in
        ``counted`` (attachments read so far, per message)."""
        if counted.get(message, 0) >= self.max_attachments:
            return f"the message has more than {self.max_attachments}: max_attachments"
        if size > self.max_bytes:
            return f"{human_size(size)}, over {human_size(self.max_bytes)}: max_attachment_mb"
        counted[message] = counted.get(message, 0) + 1
        return None


def inside(source: str, options: dict | None) -> Inside:
    """The source's settings, from its options (absent: the defaults)."""
    options = options or {}
    cache = Cache(cache_folder(source), _redact(options))
    return Inside(
        attachments=_on(options.get(ATTACHMENTS, True)),
        ocr=cache if _on(options.get(OCR, True)) else None,
        max_attachments=_int(options.get(MAX_ATTACHMENTS), DEFAULT_MAX_ATTACHMENTS),
        max_bytes=_int(options.get(MAX_ATTACHMENT_MB), DEFAULT_MAX_ATTACHMENT_MB) * 1024 * 1024,
        speech=cache if _on(options.get(SPEECH, True)) else None,
    )


def _redact(options: dict) -> Any:
    """What the source's screen does to a picture's lines (None: the source keeps its secrets)."""
    if options.get("secrets") == "keep":
        return None
    return partial(secrets.redact_lines, pii=tuple(str(k) for k in options.get("pii", ()) or ()))


def _on(value: Any) -> bool:
    return value is True or str(value).strip().lower() in ("true", "yes", "on", "1")


def _int(value: Any, default: int) -> int:
    try:
        return max(0, int(value)) if value is not None else default
    except (TypeError, ValueError):
        return default
