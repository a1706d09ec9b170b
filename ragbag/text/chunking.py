"""Token-bounded chunking that follows how the text reads.

Prose is cut at headings, then paragraphs, then sentences, then words, and neighbouring pieces
are packed up to the embedding model's token budget, so no chunk is ever silently truncated by
the encoder. Connectors with their own structure (code by syntax tree, chats by time gaps)
produce their own pieces and reuse :func:`pack` and :func:`split_to_budget`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from ragbag.core.records import Span
from ragbag.text.extract import PAGE_BREAK

TokenCounter = Callable[[str], int]
# Bumped when the same text is cut differently: every document is re-chunked (2: a heading is
# never a chunk of its own).
CHUNKER_VERSION = "2"

_HEADING = re.compile(r"^(#{1,6}\s|\S.*\n[=-]{3,}\s*$)", re.M)
_PARAGRAPH_BREAK = re.compile(r"\n\s*\n")
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+|(?<=[。！？])")
_WORD = re.compile(r"\S+\s*")


def _breaks(text: str, start: int, end: int, pattern: re.Pattern[str]) -> list[tuple[int, int]]:
    """Split text[start:end] at the pattern's matches into non-empty (start, end) pieces."""
    pieces, cursor = [], start
    for m in pattern.finditer(text, start, end):
        cut = m.end() if m.end() > m.start() else m.start()
        if cut > cursor:
            pieces.append((cursor, cut))
            cursor = cut
    if cursor < end:
        pieces.append((cursor, end))
    return [(s, e) for s, e in pieces if text[s:e].strip()]


def split_to_budget(text: str, start: int, end: int, count: TokenCounter, max_tokens: int) -> list[tuple[int, int]]:
    """Cut one over-long piece into pieces that each fit, trying sentences before words."""
    if count(text[start:end]) <= max_tokens:
        return [(start, end)]
    for pattern in (_SENTENCE_END, _WORD):
        parts = _breaks(text, start, end, pattern)
        if len(parts) > 1:
            out: list[tuple[int, int]] = []
            for s, e in pack_ranges(text, parts, count, max_tokens):
                out.extend(split_to_budget(text, s, e, count, max_tokens))
            return out
    # A single unbreakable token run (a long URL, a base64 blob): cut by characters.
    out, cursor = [], start
    step = max(16, (end - start) * max_tokens // max(1, count(text[start:end])))
    while cursor < end:
        stop = min(end, cursor + step)
        while stop > cursor + 1 and count(text[cursor:stop]) > max_tokens:
            stop = cursor + max(1, (stop - cursor) * 3 // 4)
        out.append((cursor, stop))
        cursor = stop
    return out


def pack_ranges(
    text: str, pieces: Iterable[tuple[int, int]], count: TokenCounter, max_tokens: int
) -> list[tuple[int, int]]:
    """Greedily merge consecutive pieces while the merged text stays within the budget.

    Each piece is counted once and counts are added up (the tokenizer splits at whitespace, so
    sums are exact where pieces meet at whitespace); a merged range whose real count still
    exceeds the budget (a piece boundary inside a word) is packed again exactly.
    """
    pieces = list(pieces)
    groups: list[list[tuple[int, int]]] = []
    total = 0
    for s, e in pieces:
        n = count(text[s:e])
        if groups and total + n <= max_tokens:
            groups[-1].append((s, e))
            total += n
        else:
            groups.append([(s, e)])
            total = n
    out: list[tuple[int, int]] = []
    for group in groups:
        start, end = group[0][0], group[-1][1]
        if len(group) == 1 or count(text[start:end]) <= max_tokens:
            out.append((start, end))
        else:
            out.extend(_pack_exact(text, group, count, max_tokens))
    return out


def _pack_exact(
    text: str, pieces: list[tuple[int, int]], count: TokenCounter, max_tokens: int
) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    cur: tuple[int, int] | None = None
    for s, e in pieces:
        if cur is None:
            cur = (s, e)
        elif count(text[cur[0] : e]) <= max_tokens:
            cur = (cur[0], e)
        else:
            out.append(cur)
            cur = (s, e)
    if cur is not None:
        out.append(cur)
    return out


def pack(text: str, pieces: Iterable[tuple[int, int]], count: TokenCounter, max_tokens: int) -> list[Span]:
    """Make every piece fit the budget, then merge neighbours up to it."""
    fitted: list[tuple[int, int]] = []
    for s, e in pieces:
        fitted.extend(split_to_budget(text, s, e, count, max_tokens))
    return [Span(s, e) for s, e in pack_ranges(text, fitted, count, max_tokens)]


def prose_spans(text: str, count: TokenCounter, max_tokens: int) -> list[Span]:
    """Chunks for prose: a heading starts a new chunk; paragraphs pack within a section. A
    heading is never a chunk of its own (it would match its words and carry nothing else): a
    section that is only a heading (a title above the first subheading) opens the next section,
    and a heading is cut with its section's first paragraph."""
    if not text.strip():
        return []
    section_starts = sorted({0, *(m.start() for m in _HEADING.finditer(text))})
    bounds = section_starts[1:] + [len(text)]
    spans: list[Span] = []
    carry: int | None = None  # where a heading-only section began: the next one starts there
    for n, (s, e) in enumerate(zip(section_starts, bounds)):
        s = carry if carry is not None else s
        carry = None
        parts = _breaks(text, s, e, _PARAGRAPH_BREAK)
        if n + 1 < len(bounds) and _only_headings(text[s:e]):
            carry = s
            continue
        while len(parts) > 1 and _only_headings(text[parts[0][0] : parts[0][1]]):
            parts = [(parts[0][0], parts[1][1]), *parts[2:]]
        spans.extend(pack(text, parts, count, max_tokens))
    return [_strip(text, sp) for sp in spans if text[sp.start : sp.end].strip()]


def _only_headings(piece: str) -> bool:
    """Whether a piece of prose is nothing but heading lines (``# …`` or a setext underline)."""
    lines = [line for line in piece.strip().splitlines() if line.strip()]
    return bool(lines) and all(
        _HEADING.match(line + "\n")
        or re.fullmatch(r"[=-]{3,}\s*", line)
        or (i + 1 < len(lines) and re.fullmatch(r"[=-]{3,}\s*", lines[i + 1]))
        for i, line in enumerate(lines)
    )


def paged_spans(text: str, count: TokenCounter, max_tokens: int) -> list[Span]:
    """Prose chunks of a text whose pages (slides, sheets) are joined by form feeds, each with the
    1-based pages it spans (``page_start``/``page_end``). Each page is cut on its own first, so a
    page break never sits at a chunk's edge; then short neighbouring pages share a chunk (slides
    would otherwise give tiny chunks)."""
    pieces, offset = [], 0
    for page in text.split(PAGE_BREAK):
        pieces += [(offset + s.start, offset + s.end) for s in prose_spans(page, count, max_tokens)]
        offset += len(page) + 1
    out = pack(text, pieces, count, max_tokens)
    for span in out:
        span.metadata["page_start"] = text.count(PAGE_BREAK, 0, span.start) + 1
        span.metadata["page_end"] = text.count(PAGE_BREAK, 0, span.end) + 1
    return out


def line_spans(text: str, count: TokenCounter, max_tokens: int) -> list[Span]:
    """Chunks as windows of whole lines (the fallback for code), with 1-based line ranges."""
    lines = [(m.start(), m.end()) for m in re.finditer(r"[^\n]*\n|[^\n]+$", text)]
    spans = pack(text, lines, count, max_tokens)
    return [with_lines(text, _strip(text, sp)) for sp in spans if text[sp.start : sp.end].strip()]


def with_lines(text: str, span: Span) -> Span:
    """Attach the 1-based first and last line numbers of a span."""
    first = text.count("\n", 0, span.start) + 1
    last = first + text.count("\n", span.start, max(span.start, span.end - 1))
    span.metadata.setdefault("line_start", first)
    span.metadata.setdefault("line_end", last)
    return span


def _strip(text: str, span: Span) -> Span:
    """Trim surrounding whitespace from a span without moving it off its text."""
    s, e = span.start, span.end
    while s < e and text[s].isspace():
        s += 1
    while e > s and text[e - 1].isspace():
        e -= 1
    return Span(s, e, span.metadata)
