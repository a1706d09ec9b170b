"""Recordings transcribed offline (ragbag.text.speech), in a folder and attached to a mail: real
recordings from faster-whisper's test suite (tests/fixtures/public/audio, SOURCES.tsv there),
what is not transcribed and why, and the cache that keeps a recording from being transcribed
twice."""

from __future__ import annotations

import mailbox
from email.message import EmailMessage
from pathlib import Path

import numpy as np
import pytest
from conftest import FIXTURES, sort_read

from ragbag.connectors import files, mail
from ragbag.text import speech
from ragbag.text.ocr import Cache
from ragbag.text.unreadable import Unreadable

AUDIO = FIXTURES / "public/audio/faster-whisper"
MUTAGEN = FIXTURES / "public/audio/mutagen"
JFK = AUDIO / "tests__data__jfk.flac"


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGBAG_OCR_CACHE", str(tmp_path / "cache"))


def recording(path: Path, samples: np.ndarray, tags: dict[str, str] | None = None) -> Path:
    """A FLAC file of ``samples`` (16 kHz mono), tagged as a music player would tag it."""
    import av

    with av.open(str(path), "w") as out:
        for key, value in (tags or {}).items():
            out.metadata[key] = value
        stream = out.add_stream("flac", rate=16000)
        stream.layout = "mono"
        frame = av.AudioFrame.from_ndarray(samples.astype(np.int16).reshape(1, -1), format="s16", layout="mono")
        frame.rate = 16000
        for packet in [*stream.encode(frame), *stream.encode(None)]:
            out.mux(packet)
    return path


def test_real_recordings_are_transcribed_with_the_time_of_each_line():
    meta: dict = {}
    title, text = speech.audio_text(JFK.read_bytes(), "jfk.flac", meta, Cache(None))
    head, body = text.split("\n\n", 1)
    assert head == "Recording jfk.flac, 0:11 long, transcribed" and meta["duration"] == 11.0
    words = body.lower()
    for phrase in ("my fellow americans", "your country", "do for you"):  # whisper's own test's phrases
        assert phrase in words
    assert body.startswith("[0:00] ") and all(line.startswith("[0:") for line in body.splitlines())
    _, mp3 = speech.audio_text((AUDIO / "tests__data__multilingual.mp3").read_bytes(), "m.mp3", {}, Cache(None))
    assert "permission is hereby granted" in mp3.lower()  # its English part
    _, wav = speech.audio_text((AUDIO / "tests__data__stereo_diarization.wav").read_bytes(), "s.wav", {}, Cache(None))
    assert "curtain on the left" in wav


@pytest.mark.parametrize(
    ("name", "read"),
    [
        ("example.opus", "If you heard a beep at the beginning of this file"),
        ("has-tags.m4a", "music (tagged: Test Artist): not transcribed"),
        ("silence-1.wma", "a recording in which no speech was recognised"),
        ("with-id3.aif", "a recording in which no speech was recognised"),
        ("106-invalid-streaminfo.flac", "not a recording that decodes: Invalid data found when processing input"),
        ("adif.aac", "not a recording that decodes: Invalid data found when processing input"),
    ],
)
def test_other_projects_files_give_a_transcript_or_one_line_why(name, read):
    data = (MUTAGEN / f"tests__data__{name}").read_bytes()
    try:
        got = speech.audio_text(data, name, {}, Cache(None))[1]
    except Unreadable as exc:
        got = str(exc)
    assert read in got and "\n" not in got.split("\n\n", 1)[0]


def test_what_is_not_transcribed_says_why(tmp_path, monkeypatch):
    tone = np.sin(np.arange(16000 * 3) * 2 * np.pi * 440 / 16000) * 8000
    song = recording(tmp_path / "song.flac", tone, {"artist": "The Band", "title": "A Song"})
    with pytest.raises(Unreadable, match=r"music \(tagged: The Band\)"):
        speech.audio_text(song.read_bytes(), song.name, {}, Cache(None))
    silence = recording(tmp_path / "silence.flac", np.zeros(16000 * 3))
    with pytest.raises(Unreadable, match="no speech was recognised"):
        speech.audio_text(silence.read_bytes(), silence.name, {}, Cache(None))
    with pytest.raises(Unreadable, match="not a recording that decodes"):
        speech.audio_text(b"ID3" + bytes(200), "broken.mp3", {}, Cache(None))
    with pytest.raises(Unreadable, match="transcription is off"):
        speech.audio_text(JFK.read_bytes(), "jfk.flac", {}, None)
    monkeypatch.setattr(speech, "MAX_MINUTES", 0.1)
    with pytest.raises(Unreadable, match="over 0.1: not transcribed"):
        speech.audio_text(JFK.read_bytes(), "jfk.flac", {}, Cache(None))


def test_a_folder_s_voice_memo_is_transcribed_once(tmp_path, monkeypatch):
    folder = tmp_path / "memos"
    folder.mkdir()
    (folder / "memo.flac").write_bytes(JFK.read_bytes())
    docs, errors, _, _ = sort_read(files.read(folder, "memos", None, {}))
    (doc,) = docs
    assert not errors and doc.metadata["format"] == "audio" and "your country" in doc.text

    def never(data):
        raise AssertionError("transcribed twice")

    monkeypatch.setattr(speech, "_transcribe", never)
    (again,), _, _, _ = sort_read(files.read(folder, "memos", None, {}))
    assert again.text == doc.text  # from the cache, by the recording's bytes
    (off,) = sort_read(files.read(folder, "memos", None, {"speech": False}))[1]
    assert "speech transcription is off" in off.error


def test_a_voicemail_attached_to_a_mail_is_a_document_of_its_own(tmp_path):
    msg = EmailMessage()
    msg["From"], msg["To"], msg["Subject"] = "voicemail@carrier.example", "me@example.org", "New voicemail"
    msg["Date"] = "Tue, 05 Mar 2024 09:13:20 +0000"
    msg["Message-ID"] = "<vm-1@carrier.example>"
    msg.set_content("You have a new voicemail from +1 555 0100, 0:11 long.")
    msg.add_attachment(JFK.read_bytes(), maintype="audio", subtype="flac", filename="voicemail.flac")
    box = mailbox.mbox(tmp_path / "inbox.mbox")
    box.add(msg)
    box.close()
    docs, errors, _, _ = sort_read(mail.read(tmp_path / "inbox.mbox", "mail", None, {}))
    assert not errors
    (vm,) = [d for d in docs if d.metadata.get("attachment")]
    assert vm.metadata["filename"] == "voicemail.flac" and vm.metadata["format"] == "audio"
    assert vm.text.startswith("Attachment voicemail.flac of the mail “New voicemail”")
    assert "my fellow Americans" in vm.text
