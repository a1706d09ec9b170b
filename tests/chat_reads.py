"""What the chat connectors' tests share: one read split into its parts, and documents by chat."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ragbag.core.records import Cursor, Document, ReadError, Seen


def read_chats(
    module: Any, path: Path, cursor: Any = None, options: dict | None = None, source: str = "chats"
) -> tuple[list[Document], list[ReadError], list[str], Any]:
    """(documents, errors, Seen ids, the new cursor) of one read; exactly one Cursor, last."""
    items = list(module.read(path, source, cursor, options=options))
    docs = [i for i in items if isinstance(i, Document)]
    errors = [i for i in items if isinstance(i, ReadError)]
    seen = [i.native_id for i in items if isinstance(i, Seen)]
    assert isinstance(items[-1], Cursor) and not any(isinstance(i, Cursor) for i in items[:-1])
    return docs, errors, seen, items[-1].state


def by_chat(docs: list[Document]) -> dict[str, list[Document]]:
    """Documents grouped by their chat, in the order given."""
    out: dict[str, list[Document]] = {}
    for d in docs:
        out.setdefault(d.metadata["chat"], []).append(d)
    return out
