"""Which file of a vault a link names, as Obsidian decides it (its ``getFirstLinkpathDest``).

A link's path is matched against every file of the vault, not only notes (``![[scan.pdf]]``
names a PDF), without case and in Unicode NFC (a vault synced from a Mac holds decomposed
names; a link typed elsewhere is composed). A path without the extension of an existing file
names a note (``[[Plan]]`` is ``Plan.md``; ``[[v1.2]]`` is ``v1.2.md``). Among the files a path
can name, in this order:

1. the file at exactly that path from the vault's root (``[[Note]]`` is the root's ``Note.md``,
   ``[[b/Note]]`` is ``b/Note.md``), even when the linking note's folder holds one too;
2. the file at that path from the linking note's own folder;
3. any file whose path ends with ``/`` and that path, the shortest path first (then in
   alphabetical order, so the choice never depends on the walk).

This is the order Obsidian was observed to follow (markdown-vault-mcp's probe of Obsidian 1.13
through ``metadataCache.getFirstLinkpathDest``); Obsidian writes links as the shortest unique
path, so the tie-break only matters for names written by hand or made ambiguous later. A path
starting ``./`` or ``../`` is taken from the linking note's folder and nowhere else; one
starting ``/`` from the root. An alias (the ``aliases`` property) does not make a link resolve,
as in Obsidian: ``[[AI]]`` to a note titled "Artificial intelligence" with the alias "AI" is
unresolved there too.
"""

from __future__ import annotations

import posixpath
import unicodedata
from collections.abc import Iterable


def key(path: str) -> str:
    """A path as links are compared with it: NFC, without case."""
    return unicodedata.normalize("NFC", path).casefold()


class Vault:
    """The files of a vault (relative posix paths), indexed for :func:`resolve`."""

    def __init__(self, paths: Iterable[str]) -> None:
        self.by_key: dict[str, str] = {}
        self.by_name: dict[str, list[str]] = {}
        for path in sorted(paths):
            k = key(path)
            self.by_key.setdefault(k, path)
            self.by_name.setdefault(posixpath.basename(k), []).append(path)

    def resolve(self, link: str, source: str) -> str | None:
        """The vault path ``link`` names from the note at ``source``, None when it names no
        file; ``link`` is a link's path (no ``#subpath``), not empty."""
        link = link.strip().replace("\\", "/")
        folder = posixpath.dirname(source)
        if link.startswith(("./", "../")):
            joined = posixpath.normpath(posixpath.join(folder, link))
            return None if joined.startswith("../") else self._exact(joined)
        if link.startswith("/"):
            return self._exact(link.lstrip("/"))
        names = [link] if key(link).endswith(".md") else [link, link + ".md"]
        for name in names:  # 1. from the root
            found = self.by_key.get(key(name))
            if found:
                return found
        for name in names:  # 2. from the linking note's folder
            found = self.by_key.get(key(posixpath.join(folder, name))) if folder else None
            if found:
                return found
        for name in names:  # 3. anywhere: the shortest path
            wanted = key(name)
            tail = "/" + wanted
            matches = [p for p in self.by_name.get(posixpath.basename(wanted), []) if key(p).endswith(tail)]
            if matches:
                return min(matches, key=lambda p: (len(p), p))
        return None

    def _exact(self, path: str) -> str | None:
        if not path or path == ".":
            return None
        for name in (path, path + ".md"):
            found = self.by_key.get(key(name))
            if found:
                return found
        return None
