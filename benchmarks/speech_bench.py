"""What transcribing recordings costs (issue 32, audio): seconds of speech per second of wall
time, CPU seconds and peak memory, for the public recordings of
``tests/fixtures/public/audio`` (faster-whisper's test suite) and a voice memo made of them
end to end (about five minutes), each transcribed once in one fresh process, no cache.

    .venv/bin/python benchmarks/speech_bench.py

Run it on an idle machine; the whole run records other processes' CPU share (``_meter.py``).
Prints one JSON object (also written to ``benchmarks/results/speech.json``).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _meter import meter  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
AUDIO = ROOT / "tests" / "fixtures" / "public" / "audio" / "faster-whisper"

CHILD = r"""
import io, json, resource, sys, time
import numpy as np
from ragbag.text import speech
from ragbag.text.ocr import Cache

out = []
for path in sys.argv[1:]:
    data = open(path, "rb").read()
    t0 = time.perf_counter(); c0 = time.process_time()
    meta = {}
    speech.audio_text(data, path.rsplit("/", 1)[-1], meta, Cache(None))
    out.append({"file": path.rsplit("/", 1)[-1], "audio_s": meta["duration"],
                "wall_s": round(time.perf_counter() - t0, 2), "cpu_s": round(time.process_time() - c0, 2)})
print(json.dumps({"files": out, "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)}))
"""


def long_memo(path: Path) -> Path:
    """The public recordings decoded and laid end to end, five times: one long voice memo (WAV)."""
    import av
    import numpy as np
    from faster_whisper import decode_audio

    parts = [decode_audio(str(p)) for p in sorted(AUDIO.iterdir()) if p.suffix in (".flac", ".mp3", ".wav")]
    samples = (np.concatenate(parts * 5) * 32767).astype(np.int16)
    with av.open(str(path), "w") as out:
        stream = out.add_stream("pcm_s16le", rate=16000)
        stream.layout = "mono"
        frame = av.AudioFrame.from_ndarray(samples.reshape(1, -1), format="s16", layout="mono")
        frame.rate = 16000
        for packet in [*stream.encode(frame), *stream.encode(None)]:
            out.mux(packet)
    return path


def main() -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        memo = long_memo(Path(tmp) / "memo.wav")
        files = [str(p) for p in sorted(AUDIO.iterdir()) if p.suffix in (".flac", ".mp3", ".wav")] + [str(memo)]
        with meter() as m:
            done = subprocess.run([sys.executable, "-c", CHILD, *files], capture_output=True, text=True, check=True)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    rest = result["files"][1:]  # the first includes loading the model
    result["speech_per_wall_s"] = round(sum(f["audio_s"] for f in rest) / sum(f["wall_s"] for f in rest), 1)
    result["run"] = m
    (ROOT / "benchmarks" / "results" / "speech.json").write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
