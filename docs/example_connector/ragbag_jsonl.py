"""A ragbag connector in one file: each line of a ``*.jsonl`` file under the source's folder is a
note ``{"id": …, "title": …, "text": …, "date": "2026-05-01T09:00:00+00:00"}``."""

import json
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

from ragbag.core.records import Document, ReadError, Span
from ragbag.text.chunking import TokenCounter, prose_spans

NAME = "jsonl"


def read(path: Path | None, source: str, cursor: object, *, options: dict | None = None) -> Iterator:
    """Every note under ``path``; a line that is not a note is a ReadError and reading goes on."""
    for file in sorted(Path(path or ".").rglob("*.jsonl")):
        for n, line in enumerate(file.read_text(encoding="utf-8").splitlines(), 1):
            uri = f"{file.as_uri()}#{n}"
            try:
                note = json.loads(line)
                when = datetime.fromisoformat(note["date"]) if note.get("date") else None
                title, text = str(note.get("title") or ""), str(note["text"])
                yield Document(source, NAME, str(note["id"]), uri, title, text, created_at=when)
            except (ValueError, KeyError, TypeError) as e:
                yield ReadError(uri, f"not a note: {e!r}")


def spans(doc: Document, count: TokenCounter, max_tokens: int) -> list[Span]:
    return prose_spans(doc.text, count, max_tokens)
