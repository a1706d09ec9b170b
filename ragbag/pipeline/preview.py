"""The preview each stage reports: a few of the records it wrote, as a markdown table that the
Dagster UI shows with the materialisation."""

from __future__ import annotations

ROWS = 5  # records a stage puts in its preview


def preview(rows: list[tuple[str, str, str]]) -> str:
    """A markdown table of (title, uri, text) rows, each cell on one line and cut short."""
    lines = ["| title | uri | text |", "|---|---|---|"]
    for title, uri, text in rows:
        lines.append(f"| {_cell(title)} | {_cell(uri)} | {_cell(text)} |")
    return "\n".join(lines)


def _cell(text: str) -> str:
    return (text or "").replace("|", "\\|").replace("\n", " ")[:120]
