"""The order a person reads a recognised page in, from its lines' boxes alone: columns one after
the other, tables and forms row by row. Apart from ``ragbag.text.ocr`` because it is geometry,
not recognition: it needs no model, only the boxes ``ocr`` gives."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Line:
    """One recognised line: its text, the recogniser's confidence, and its box
    (x0, y0, x1, y1) as fractions of the image's width and height, y down."""

    text: str
    score: float
    box: tuple[float, float, float, float]


COLUMN_LINE = 0.15  # of the page's width: a line this long is running text, not a table cell
COLUMN_CHARS = 20  # and this many characters
COLUMN_LINES = 3  # running lines each side of a gap for it to part two columns


def reading_order(lines: list[Line]) -> list[Line]:
    """``lines`` (RapidOCR's order: top to bottom) in the order a person reads them: a page
    in columns column by column, not line by line across the columns (which mixes two texts in
    every chunk). A recursive XY-cut: a block is cut down a vertical gap no line crosses when
    running text (:data:`COLUMN_LINES` lines of :data:`COLUMN_LINE`) lies on both sides, else
    across at blank-line gaps (a headline above two columns, a letterhead above the body), and
    each part is read in turn. Tables and forms keep their rows: their cells are short. A
    caption set between two columns goes with the column it starts in."""
    if len(lines) < 2 * COLUMN_LINES:
        return lines
    left, right = _column_cut(lines)
    if left and right:
        return reading_order(left) + reading_order(right)
    blocks = _blank_line_cut(lines)
    if len(blocks) > 1:
        return [line for block in blocks for line in reading_order(block)]
    return lines


def _column_cut(lines: list[Line]) -> tuple[list[Line], list[Line]]:
    """The lines left and right of a vertical gap with running text on both sides; ([], [])
    when there is none. A gap may be crossed by one line in twelve: the detector
    sometimes joins two columns' lines that sit at one height into one box, which is then
    read with the column it starts in."""
    bins = 400
    cover = [0] * bins
    for ln in lines:
        for b in range(int(ln.box[0] * bins), min(bins, int(ln.box[2] * bins) + 1)):
            cover[b] += 1
    allowed = max(1, len(lines) // 12)
    best: tuple[int, int, float] | None = None  # (crossing lines, -gap width, cut)
    b = 0
    while b < bins:
        if cover[b] > allowed:
            b += 1
            continue
        end = b
        while end < bins and cover[end] <= allowed:
            end += 1
        cut = (b + end) / 2 / bins
        left = [ln for ln in lines if (ln.box[0] + min(ln.box[2], cut)) / 2 < cut]
        right = [ln for ln in lines if (ln.box[0] + min(ln.box[2], cut)) / 2 >= cut]
        if all(sum(_running(ln) for ln in side) >= COLUMN_LINES for side in (left, right)):
            key = (max(cover[b:end]), -(end - b), cut)
            best = key if best is None or key < best else best
        b = end
    if best is None:
        return [], []
    cut = best[2]
    side = lambda ln: ln.box[0] < cut  # noqa: E731 — a crossing line goes with where it starts
    return [ln for ln in lines if side(ln)], [ln for ln in lines if not side(ln)]


def _running(line: Line) -> bool:
    """A line of running text: long on the page and in letters (a form's label or value, a
    table's cell, is short in one or the other)."""
    return line.box[2] - line.box[0] >= COLUMN_LINE and len(line.text) >= COLUMN_CHARS


def _blank_line_cut(lines: list[Line]) -> list[list[Line]]:
    """``lines`` in horizontal bands parted by gaps taller than a line (a blank line or more)."""
    heights = sorted(ln.box[3] - ln.box[1] for ln in lines)
    tall = heights[len(heights) // 2]
    ordered = sorted(lines, key=lambda ln: ln.box[1])
    blocks: list[list[Line]] = [[]]
    bottom = ordered[0].box[3]
    for ln in ordered:
        if blocks[-1] and ln.box[1] - bottom > tall:
            blocks.append([])
        blocks[-1].append(ln)
        bottom = max(bottom, ln.box[3])
    keep = {id(ln): i for i, ln in enumerate(lines)}  # within a band, RapidOCR's own order
    return [sorted(block, key=lambda ln: keep[id(ln)]) for block in blocks]
