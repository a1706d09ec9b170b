"""Text in pictures: scans, screenshots, photos of letters and image-only PDF pages, read offline.

The recogniser is RapidOCR (Apache-2.0) running PaddleOCR's PP-OCRv6 small detection and
recognition models on OpenVINO (Apache-2.0; ONNX Runtime where OpenVINO is not installed, see
:func:`runtime`). Its wheel ships those models, so nothing is downloaded
(``_models`` points at the wheel's own files and refuses to run without them), and one model
reads Chinese, English and the Latin scripts with diacritics (German, French, Portuguese...).
Tesseract would need a system binary and a language pack per script; EasyOCR downloads its
weights from a hub on first use.

What a page gives is its :class:`Lines`: each line's text, confidence and box (as fractions of
the image's width and height, so a box drawn on a page rendered at another scale still fits).
Recognition is the costliest thing a build does per byte, so results are cached by the hash of
the pixels recognised (:class:`Cache`): an attachment, file or page that shows what it showed is
never recognised twice, whatever else changed in its bytes (a photo manager's rewritten EXIF
tags, a PDF saved again or mutated outside its scanned page).
The cache lives in a folder of the source's own, so ``ragbag remove`` deletes it with the source.
What is kept there is redacted as the source's screen redacts (``Cache.redact``): no cache may
hold a secret whole.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeVar

from ragbag.text.ocr_layout import Line, reading_order
from ragbag.text.unreadable import Unreadable

MIN_SCORE = 0.5  # a line the recogniser is less sure of is more often noise (texture, a logo) than text
UNSURE = 0.9  # a page's mean line confidence below this is read again turned over
MAX_PIXELS = 64_000_000  # decoded, an image this large is ~200 MB: larger ones are refused, not read
MAX_SIDE = 2000  # the detector's input is scaled to this longest side (RapidOCR's own default)
# Lines are recognised one at a time: RapidOCR's batch of six pads each line to the widest, which
# costs CPU and glues words ("SeaDuty", "50656Köln") on generated scans the choice was not made
# on (benchmarks/ocr_settings.py).
LINES_PER_BATCH = 1
CACHE_FORMAT = 2  # of the cached results; raise it when the models, their settings or the line format change
_LOCK = threading.Lock()  # one recogniser per process; ONNX Runtime sessions are not re-entered


T = TypeVar("T")


@dataclass
class Lines:
    """What one image or page holds, top to bottom; ``width``/``height`` in the recognised pixels."""

    width: int
    height: int
    lines: list[Line] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "\n".join(line.text for line in self.lines)

    def as_json(self) -> dict[str, Any]:
        return {
            "v": CACHE_FORMAT,
            "width": self.width,
            "height": self.height,
            "lines": [[ln.text, round(ln.score, 4), *[round(c, 5) for c in ln.box]] for ln in self.lines],
        }

    @staticmethod
    def from_json(d: dict[str, Any]) -> Lines:
        lines = [Line(str(t), float(s), (float(a), float(b), float(c), float(e))) for t, s, a, b, c, e in d["lines"]]
        return Lines(int(d["width"]), int(d["height"]), lines)


class Cache:
    """Recognised lines by content hash, one JSON file each in an owner-only folder (the source's
    own: see :func:`cache_folder`); ``None`` folder: nothing is kept. ``redact`` (a source that
    screens secrets: ``secrets.redact_lines`` with its settings) is applied to what is kept, so the
    cache never holds a secret whole; an entry kept redacted is recognised again for a source
    that keeps its secrets. ``hits``/``misses`` count this read's lookups, so a build report (and
    a test) can say nothing was recognised twice."""

    def __init__(self, folder: Path | None, redact: Callable[[list[str]], list[str]] | None = None):
        self.folder = folder
        self.redact = redact
        self.hits = 0
        self.misses = 0

    def lines(self, image: Any) -> Lines:
        """The lines of ``image`` (an RGB PIL image, as :func:`open_image` gives), from the cache
        when its pixels were recognised before."""
        key = image_key(image) if self.folder else ""
        return self.kept(key, CACHE_FORMAT, lambda: recognise(image).as_json(), Lines.from_json)

    def kept(
        self, key: str, version: int, make: Callable[[], dict[str, Any]], parse: Callable[[dict[str, Any]], T]
    ) -> T:
        """``parse`` of the entry kept under ``key`` (a dict of format ``version`` whose ``lines``
        are lists starting with their text: a picture's lines, a recording's segments), else of
        ``make()``'s, then kept ("": nothing is kept)."""
        path = self.folder / key[:2] / f"{key}.json" if self.folder and key else None
        if path is not None and path.exists():
            try:
                d = json.loads(path.read_text(encoding="utf-8"))
                if isinstance(d, dict) and d.get("v") == version and not (d.get("redacted") and not self.redact):
                    held = parse(d)
                    self.hits += 1
                    if self.redact is not None and not d.get("redacted"):
                        self._keep(path, d)  # kept whole for a source that kept its secrets
                    return held
            except (OSError, ValueError, KeyError, TypeError, AttributeError):
                pass  # a damaged entry is made again and rewritten
        self.misses += 1
        found = make()
        if path is not None:
            self._keep(path, found)
        return parse(found)

    def _keep(self, path: Path, found: dict[str, Any]) -> None:
        from ragbag.core.private import write_private

        data = dict(found)
        if self.redact is not None:
            texts = [line[0] for line in data["lines"]]
            cleaned = self.redact(texts)
            if cleaned != texts:
                data["lines"] = [[t, *line[1:]] for t, line in zip(cleaned, data["lines"])]
                data["redacted"] = True
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        write_private(path, json.dumps(data, ensure_ascii=False))


def image_key(image: Any) -> str:
    """The cache key of an image: its size and pixels (after EXIF orientation), the cache format
    and the runtime, so other models, settings or arithmetic never read these results."""
    h = hashlib.blake2b(digest_size=20)
    h.update(f"ocr{CACHE_FORMAT} {runtime()} {image.mode} {image.width}x{image.height}\0".encode())
    h.update(image.tobytes())
    return h.hexdigest()


def cache_folder(source: str) -> Path | None:
    """Where the source's OCR results are kept: ``ocr/<source>`` in the folder
    ``RAGBAG_OCR_CACHE`` names (the test suite's homes share one), else in the home's private
    temporaries when this process is ragbag's own; None (no cache) otherwise, such as in a
    notebook, which has no home temporaries to keep them private in."""
    from ragbag.core import private

    setting = os.environ.get("RAGBAG_OCR_CACHE")
    if setting:
        base = Path(setting).expanduser()
    elif private.is_application():
        import tempfile

        base = Path(tempfile.gettempdir())
    else:
        return None
    folder = base / "ocr" / _safe_name(source)
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    return folder


def source_cache_folders(source: str, home_tmp: Path) -> list[Path]:
    """Every place :func:`cache_folder` may have put the source's results (``home_tmp``: the
    home's temporaries), for ``remove``."""
    bases = [home_tmp]
    if os.environ.get("RAGBAG_OCR_CACHE"):
        bases.append(Path(os.environ["RAGBAG_OCR_CACHE"]).expanduser())
    return [b / "ocr" / _safe_name(source) for b in bases]


def _safe_name(source: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in source) or "_"


def open_image(data: bytes) -> Any:
    """The image in ``data`` as an upright RGB PIL image (EXIF orientation applied: a phone's
    photo of a letter is stored sideways); :class:`Unreadable` when it is not an image Pillow
    reads, or is larger than :data:`MAX_PIXELS` (checked before the pixels are decoded)."""
    from PIL import Image, ImageOps, UnidentifiedImageError

    try:
        opened = Image.open(io.BytesIO(data))
        if opened.width * opened.height > MAX_PIXELS:
            raise Unreadable(f"image of {opened.width}×{opened.height} pixels: larger than OCR reads, skipped")
        opened.draft("RGB", (MAX_SIDE * 2, MAX_SIDE * 2))  # JPEG: decode at a reduced scale, cheaply
        return ImageOps.exif_transpose(opened).convert("RGB")
    except Unreadable:
        raise
    except (UnidentifiedImageError, Image.DecompressionBombError) as exc:
        raise Unreadable(f"not a readable image: {type(exc).__name__}") from None
    except (OSError, ValueError, SyntaxError, EOFError) as exc:  # truncated or damaged pixel data
        raise Unreadable(f"damaged image: {exc}"[:200]) from None


def recognise(image: Any) -> Lines:
    """The text lines of a PIL image in reading order (RapidOCR's: top to bottom, left to right);
    lines under :data:`MIN_SCORE` left out. A page scanned sideways (its lines found standing
    up) is read again turned a quarter either way, a page read with little confidence (upside
    down, say) turned over, and the reading that recognises more is kept. Orientation is the
    page's, never a line's: RapidOCR's line classifier is off (``engine_params``), since a page
    whose upside-down lines it turned one by one reads confidently, last line first."""
    best = _recognise(image)
    if _sideways(best):
        turns: tuple[int, ...] = (90, 270)
    elif best.lines and sum(ln.score for ln in best.lines) / len(best.lines) < UNSURE:
        turns = (180,)  # upside down: its lines read as noise
    else:
        return best
    for turn in turns:
        turned = _recognise(image.rotate(turn, expand=True))
        if _weight(turned) > _weight(best):
            best = turned
    return best


def _sideways(found: Lines) -> bool:
    """Whether most of what was found stands up: boxes taller than wide, in pixels."""
    tall = sum(
        (ln.box[3] - ln.box[1]) * found.height > 1.5 * (ln.box[2] - ln.box[0]) * found.width and len(ln.text) > 2
        for ln in found.lines
    )
    return tall * 2 > len(found.lines) > 0


def _weight(found: Lines) -> float:
    return sum(ln.score * len(ln.text) for ln in found.lines)


def _recognise(image: Any) -> Lines:
    import numpy as np

    width, height = image.size
    if width < 8 or height < 8:
        return Lines(width, height)
    with _LOCK:
        result = _engine()(np.asarray(image)[:, :, ::-1])  # RapidOCR takes OpenCV's BGR order
    boxes = getattr(result, "boxes", None)
    texts = getattr(result, "txts", None) or ()
    scores = getattr(result, "scores", None) or ()
    lines = []
    for poly, text, score in zip(boxes if boxes is not None else (), texts, scores):
        text = " ".join(str(text).split())
        if not text or float(score) < MIN_SCORE:
            continue
        xs, ys = [float(p[0]) for p in poly], [float(p[1]) for p in poly]
        box = (min(xs) / width, min(ys) / height, max(xs) / width, max(ys) / height)
        x0, y0, x1, y1 = (min(max(c, 0.0), 1.0) for c in box)
        lines.append(Line(text, float(score), (x0, y0, x1, y1)))
    return Lines(width, height, reading_order(lines))


def _models() -> dict[str, str]:
    """The model files inside rapidocr's own wheel: named explicitly, so the library never
    reaches for its download path; a missing file is an error here, not a download."""
    import rapidocr

    root = Path(rapidocr.__file__).parent / "models"
    wanted = {
        "Det.model_path": root / "PP-OCRv6_det_small.onnx",
        "Rec.model_path": root / "PP-OCRv6_rec_small.onnx",
        "Cls.model_path": root / "ch_ppocr_mobile_v2.0_cls_mobile.onnx",  # unused (no line classifier), never fetched
    }
    missing = [str(p) for p in wanted.values() if not p.is_file()]
    if missing:
        raise RuntimeError(f"rapidocr's wheel lacks its models: {', '.join(missing)}")
    return {k: str(v) for k, v in wanted.items()}


@lru_cache(maxsize=1)
def runtime() -> str:
    """The inference runtime that runs the models: "openvino" where its package imports, else
    "onnxruntime". On the same models and pages OpenVINO reads the same words with a third of
    ONNX Runtime's CPU (its convolutions are faster; in bfloat16 where the CPU multiplies it in
    hardware), and the detector is most of what a build spends on OCR (benchmarks/README.md,
    "The recogniser's runtime"); ONNX Runtime stays for platforms OpenVINO has no wheel for.

    OpenVINO's package imports its model converter, whose telemetry (on unless opted out) writes a
    client id and usage counts under ``~/intel`` on import, converted or not: outside the home,
    which nothing of ragbag's may write to. ragbag converts nothing, so the converter is kept from
    importing (a missing converter is a case the package handles) before OpenVINO is."""
    sys.modules.setdefault("openvino.tools.ovc", None)  # type: ignore[arg-type]  # None: not importable
    try:
        import openvino  # noqa: F401
    except ImportError:
        return "onnxruntime"
    return "openvino"


def engine_params(runtime_name: str | None = None) -> dict[str, Any]:
    """RapidOCR's parameters for ragbag's recogniser on ``runtime_name`` (default :func:`runtime`;
    benchmarks compare others against them)."""
    from rapidocr import EngineType

    from ragbag.core.threads import compute_threads

    # The encoders' thread budget (OMP_NUM_THREADS where set): a runtime's threads spin while
    # they wait, so two recognisers each given every core, side by side, burn a third more CPU.
    threads = min(4, compute_threads())
    if (runtime_name or runtime()) == "openvino":
        engine = {
            "Det.engine_type": EngineType.OPENVINO,
            "Rec.engine_type": EngineType.OPENVINO,
            "EngineConfig.openvino.inference_num_threads": threads,
        }
    else:
        engine = {
            "EngineConfig.onnxruntime.intra_op_num_threads": threads,
            "EngineConfig.onnxruntime.inter_op_num_threads": 1,
        }
    return {
        **_models(),
        "Global.log_level": "error",
        "Global.text_score": MIN_SCORE,
        "Global.max_side_len": MAX_SIDE,
        "Global.use_cls": False,  # orientation is the page's (``recognise``)
        "Rec.rec_batch_num": LINES_PER_BATCH,
        **engine,
    }


def detector_threads(engine: Any) -> int:
    """The threads ``engine``'s detector (most of the time) was given, whichever runtime runs it."""
    session = engine.text_det.session.session
    if hasattr(session, "get_session_options"):  # ONNX Runtime
        return int(session.get_session_options().intra_op_num_threads)
    return int(session.get_compiled_model().get_property("INFERENCE_NUM_THREADS"))


def release() -> None:
    """Let go of this process's recogniser, loaded again by the next picture (its models compile
    in about the time one page takes). OpenVINO keeps buffers for every input size it has run,
    more than twice ONNX Runtime's footprint after a folder of photos and scans; a build releases
    it after each source's read, so it is not held through the embedding, the build's other
    large use of memory (benchmarks/README.md, "OpenMP threads between regions, and what the
    recogniser holds")."""
    _engine.cache_clear()


@lru_cache(maxsize=1)
def _engine() -> Any:
    """The one recogniser of this process (loading its models takes about a second)."""
    import logging

    from rapidocr import RapidOCR

    engine = RapidOCR(params=engine_params())
    logging.getLogger("RapidOCR").setLevel(logging.ERROR)
    return engine
