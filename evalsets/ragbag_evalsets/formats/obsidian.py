"""An Obsidian vault as the app leaves it on disk: Markdown notes in folders, each opened by its
properties (YAML between ``---`` lines, written the way Obsidian's Properties view writes them:
``key: value``, lists one ``  - item`` a line, dates ``YYYY-MM-DD``), linked by ``[[wikilinks]]``
(shortest unique path, Obsidian's default link format) and tagged inline (``#tag``), beside
daily notes (``Daily/YYYY-MM-DD.md``), attachments and the ``.obsidian/`` settings folder."""

from __future__ import annotations

import json
import re
from datetime import date, datetime

# Values Obsidian's Properties view quotes: ones YAML would read as something else than text.
_NEEDS_QUOTES = re.compile(r"^$|^[\s\[\]{}>|*&!%#@`'\",?:-]|: | #|\s$|^(?:true|false|null|~|[-+.\d][\d.:eE+-]*)$", re.I)


def _scalar(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%dT%H:%M:%S")
    if isinstance(value, date):
        return value.isoformat()
    text = str(value)
    return json.dumps(text, ensure_ascii=False) if _NEEDS_QUOTES.search(text) else text


def properties(values: dict[str, object]) -> str:
    """The property block for ``values`` (lists as YAML block lists; empty: no block)."""
    if not values:
        return ""
    lines = ["---"]
    for key, value in values.items():
        if isinstance(value, (list, tuple)):
            lines.append(f"{key}:")
            lines += [f"  - {_scalar(v)}" for v in value]
        else:
            lines.append(f"{key}: {_scalar(value)}")
    return "\n".join([*lines, "---", ""])


def link(target: str, alias: str = "", heading: str = "", embed: bool = False) -> str:
    """``[[target#heading|alias]]`` (``![[…]]`` for an embed)."""
    inner = target + (f"#{heading}" if heading else "") + (f"|{alias}" if alias else "")
    return f"{'!' if embed else ''}[[{inner}]]"


class Vault:
    """The files of one vault, by path relative to the vault's folder."""

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {
            ".obsidian/app.json": json.dumps({"alwaysUpdateLinks": True, "newLinkFormat": "shortest"}).encode(),
            ".obsidian/core-plugins.json": json.dumps(
                ["file-explorer", "daily-notes", "backlink", "tag-pane"]
            ).encode(),
            ".obsidian/daily-notes.json": json.dumps({"folder": "Daily", "format": "YYYY-MM-DD"}).encode(),
        }

    def note(
        self,
        path: str,
        body: str,
        *,
        tags: list[str] | None = None,
        aliases: list[str] | None = None,
        created: date | datetime | None = None,
        extra: dict[str, object] | None = None,
    ) -> str:
        """Write the note at ``path`` (``.md`` added when missing); returns its vault path."""
        path = path if path.endswith(".md") else f"{path}.md"
        values: dict[str, object] = {}
        if created is not None:
            values["created"] = created
        if aliases:
            values["aliases"] = aliases
        if tags:
            values["tags"] = tags
        values.update(extra or {})
        self.files[path] = (properties(values) + body.rstrip("\n") + "\n").encode("utf-8")
        return path

    def daily(self, day: date, body: str, tags: list[str] | None = None) -> str:
        """A daily note, named by its day as the Daily notes plugin names it."""
        return self.note(f"Daily/{day.isoformat()}", body, tags=tags)

    def attachment(self, path: str, data: bytes) -> str:
        self.files[path] = data
        return path
