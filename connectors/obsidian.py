"""Documents from an Obsidian vault: one note, one document.

Format: a vault is a folder of Markdown notes (``*.md``, in any depth of folders) beside the
files they embed (pictures, PDFs, ``.canvas`` and ``.base`` files, anything), with Obsidian's
settings in ``.obsidian/`` and its deleted notes in ``.trash/``. Hidden files and folders (a name
starting with ``.``: those two, ``.git``) are not part of the vault, in Obsidian or here. A
note's properties are the YAML block that opens it; its tags, aliases, links and embeds are
read as :mod:`connectors._obsidian_markdown` says, and which file a link names is decided as
Obsidian decides it (:mod:`connectors._obsidian_links`: the exact path from the root, then from
the note's folder, then the shortest path that ends with it; without case, in NFC). A single
``.md`` file is read as a vault of one note; a folder without any note, or another file, is one
``ReadError`` saying that a vault (a folder of ``.md`` notes) was expected.

Traps handled:

- **Properties that are not valid YAML** (a template's ``created: {{date}}``, a stray tab, an
  unquoted ``: ``, ``2023-02-30``) cost the note its properties, not the note: it is indexed
  with its text as written and ``frontmatter_error`` says why (a ``ReadError`` would mean the
  note was skipped, and it is not). So do properties that are no mapping (a YAML list).
- **YAML 1.1 surprises**: ``no``, ``on`` and ``NO`` (Norway) stay text and ``1:30`` is not
  ninety, as in Obsidian (YAML 1.2; :mod:`connectors._obsidian_markdown`).
- **Tags and links in code, math and comments** are none (a ``#include`` in a code block, a
  ``#fff`` in CSS inside a list item, ``[[x]]`` in a ``%%`` comment block), as in Obsidian's
  own index; ``# Heading``, ``C#``, ``\\#escaped``, a URL's ``#part`` and ``#1984`` (digits only)
  are no tags.
- **Ambiguous names**: two ``Note.md`` in different folders, a link typed in another case
  (``[[meeting notes]]``), a Mac's decomposed ``Café.md`` linked as composed ``[[Café]]``, a
  markdown link with ``%20`` or ``<…>``, a table cell's ``[[Note\\|alias]]``, a relative
  ``../Other.md``: resolved as Obsidian resolves them.
- **Dates**: ``created``/``date`` and ``updated``/``modified`` properties (any case, ``_``, ``-``
  or space between words) are read by YAML when unquoted and by ``dateutil`` when written as
  text (``"March 3, 2024 10:30"``; text without a four-digit year is not taken as a date, since
  dateutil would fill the missing parts from today); ``"[[2024-03-03]]"`` (a link to a daily
  note) is that day. A time without a zone is taken as UTC, as ``--after``/``--before`` take
  theirs, so ``date: 2024-03-03`` and ``--after 2024-03-03`` agree. A daily note
  (``2024-03-03.md``, the Daily notes plugin's default name) is dated by its name when no
  property dates it; otherwise a note has no creation date and its date is the file's mtime.
- **Bad files**, isolated (:mod:`connectors._isolate`): an empty note, one over the size limit,
  binary bytes named ``.md``, one that cannot be read: a ``ReadError`` for that note, and every
  other note is read. Text in a legacy code page is decoded (:mod:`ragbag.text.decode`).

Documents: the note's text as written (properties included: their words are searchable, as
in the files connector's reading of the same file), title = the ``title`` property, else the
file name without ``.md`` (Obsidian's own name for a note), ``authors`` = the ``author`` /
``authors`` property (a ``[[Person]]`` link read as the person). Chunks: the property block,
then the body as the files connector cuts Markdown (headings, paragraphs, sentences); the
property block shares the first chunk when both fit.

Metadata: ``path`` (vault-relative, also the ``native_id``), ``tags`` (property and inline tags,
without ``#``; nested ones as written, ``project/alpha``), ``aliases``, ``links`` (the vault
paths of the notes this note links to or embeds: the ``native_id`` of their documents; ragbag
has no link between documents other than an attachment's ``parent_doc_id``, so a note's links
are metadata, and ``--where '{"links": {"contains": "Projects/Alpha.md"}}'`` finds its
backlinks), ``attachments`` (linked or embedded files that are not notes), ``unresolved`` (link
paths that name no file: notes not written yet), ``frontmatter_error`` when the properties are
invalid, and every other property whose value is a scalar or a list of scalars, under its own
name (dates as ISO text); one whose name a record already uses (``date``, ``source``, ``path``,
``links``…) as ``property_<name>``. Nested properties stay in the text only.

Incremental: per note (size, mtime) plus what its links resolve to. An unchanged note whose
links still name the same files yields ``Seen``; a changed one is read again (edits propagate by
content hash). Adding, renaming or deleting a file changes what other notes' links resolve to
(an unresolved ``[[Plan]]`` resolves once ``Plan.md`` is written; ``[[Note]]`` moves to the
root's ``Note.md`` when one appears): those notes are read again, from the paths the cursor
kept, without reading the unchanged rest. A renamed or deleted note disappears (its path was its
id).

Left out: the attachments themselves (pictures, PDFs, office files: the files connector reads
them, with OCR; add the vault as a ``files`` source too for those, its ``.md`` notes would then
be indexed twice), ``.canvas`` and ``.base`` files, embedded notes' text (``![[Other]]`` is a link:
the other note is its own document), backlinks as a field of their own (they change whenever
another note does, which would make every new link a new version of its target: the ``links``
of the other notes hold them), block ids (``^id``) and heading anchors, Dataview inline fields
(``key:: value``), and ``discover()``: Obsidian lists the vaults it opened in ``obsidian.json``
in its settings folder, but one source reads one vault (its paths are the notes' ids), so a
source names the vault's folder.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator
from datetime import UTC, date, datetime
from functools import partial
from pathlib import Path
from typing import Any

from dateutil import parser as dateparser

from ragbag.connectors._isolate import each_file
from ragbag.connectors._obsidian_links import Vault
from ragbag.connectors._obsidian_markdown import (
    frontmatter,
    frontmatter_end,
    inline_tags,
    links,
    plain,
    property_links,
    property_named,
    property_tags,
    string_list,
    unique_tags,
    visible,
    wikilink_path,
)
from ragbag.connectors._walk import excluded_paths, follows_outside, visible_files
from ragbag.core.dates import from_timestamp
from ragbag.core.records import Cursor, Document, ReadError, Seen, Span
from ragbag.core.rows import ChunkRow, DocumentRow, columns
from ragbag.text.chunking import TokenCounter, pack, prose_spans
from ragbag.text.decode import decode
from ragbag.text.unreadable import Unreadable, human_size

NAME = "obsidian"
# A vault is edited all day, like any folder of notes; reading one again costs a stat per note
# and a read of the changed ones only, so hourly (the default of folder sources) is cheap.
SCHEDULE = "0 * * * *"
MAX_BYTES = 50 * 1024 * 1024  # the files connector's limit for one file
_VERSION = "obsidian-1"
NOT_A_VAULT = "expected an Obsidian vault: a folder of Markdown (.md) notes, or one .md note"

CREATED = ("created", "date created", "created at", "creation date", "created on", "date")
UPDATED = ("updated", "modified", "date modified", "last modified", "updated at", "last updated", "lastmod")
_CONSUMED = {"tags", "tag", "aliases", "alias", "title"}  # read into the document's own fields
_OWN = {"path", "tags", "aliases", "links", "attachments", "unresolved", "frontmatter_error"}
_RECORD_FIELDS = set(columns(ChunkRow)) | set(columns(DocumentRow))
_DAILY = re.compile(r"(\d{4})-(\d{2})-(\d{2})")
_YEAR = re.compile(r"(?<!\d)\d{4}(?!\d)")


def read(
    path: Path | None, source: str, cursor: dict | None = None, options: dict | None = None
) -> Iterator[Document | ReadError | Seen | Cursor]:
    """Every note of the vault at ``path`` (or the one note ``path`` is), in path order, then
    the cursor. ``options``: the source's options (None: those in ``sources.yaml``), see
    :mod:`connectors._walk`."""
    if path is None:
        yield ReadError("obsidian", f"no vault named: {NOT_A_VAULT} (ragbag add obsidian NAME PATH)")
        return
    path = Path(path)
    errors: list[ReadError] = []
    if path.is_file():
        if not _is_note(path.name):
            yield ReadError(str(path.absolute()), f"not an Obsidian note: {NOT_A_VAULT}")
            return
        files = [(path, path.name)]
    elif path.is_dir():
        files = visible_files(path, errors, None, follows_outside(options), excluded_paths(options))
    else:
        yield ReadError(str(path.absolute()), "no such file or directory")
        return
    notes = [(file, rel) for file, rel in files if _is_note(rel)]
    if not notes and path.is_dir():
        yield ReadError(str(path.absolute()), f"no notes in this folder: {NOT_A_VAULT}")
    vault = Vault(rel for _, rel in files)
    previous = cursor if isinstance(cursor, dict) and cursor.get("version") == _VERSION else {}
    old: dict[str, dict] = previous.get("notes", {})
    state: dict[str, dict] = {}
    for file, rel in notes:
        uri = str(file.absolute())
        try:
            st = file.stat()
        except OSError as exc:
            yield ReadError(uri, f"unreadable: {exc.strerror or exc}")
            continue
        stat = [st.st_size, st.st_mtime_ns]
        was = old.get(rel)
        if was and was.get("stat") == stat and resolved(was.get("refs", []), rel, vault) == was.get("resolved"):
            yield Seen(rel)
            state[rel] = was
            continue
        # The isolation boundary: whatever one note holds fails that note alone.
        for item in each_file(uri, partial(_read_note, file, rel, source, vault)):
            if isinstance(item, tuple):
                doc, refs = item
                yield doc
                state[rel] = {"stat": stat, "refs": refs, "resolved": resolved(refs, rel, vault)}
            else:
                yield item
    yield from errors
    yield Cursor({"version": _VERSION, "notes": state})


def spans(doc: Document, count: TokenCounter, max_tokens: int) -> list[Span]:
    """The property block, then the body cut as Markdown prose (:func:`prose_spans`); the block
    joins the first chunk when both fit. (Cut whole, the block's last line would read as a
    setext heading underlined by its closing ``---``, and split the block there.)"""
    text = doc.text
    end = frontmatter_end(text)
    body = [Span(s.start + end, s.end + end, s.metadata) for s in prose_spans(text[end:], count, max_tokens)]
    if not end:
        return body
    if body and count(text[: body[0].end]) <= max_tokens:
        return [Span(0, body[0].end, body[0].metadata), *body[1:]]
    head = [s for s in pack(text, [(0, end)], count, max_tokens) if text[s.start : s.end].strip()]
    for s in head:
        while s.end > s.start and text[s.end - 1].isspace():
            s.end -= 1
    return head + body


def resolved(refs: list[str], rel: str, vault: Vault) -> dict[str, list[str]]:
    """What a note's link paths name in ``vault``: ``links`` (notes), ``attachments`` (other
    files), ``unresolved`` (nothing), each in the order first linked, each once; a link to the
    note itself is none of them."""
    out: dict[str, list[str]] = {"links": [], "attachments": [], "unresolved": []}
    for ref in refs:
        target = vault.resolve(ref, rel)
        if target is None:
            kind, value = "unresolved", ref
        elif target == rel:
            continue
        else:
            kind, value = ("links" if _is_note(target) else "attachments"), target
        if value not in out[kind]:
            out[kind].append(value)
    return out


def _is_note(name: str) -> bool:
    return name.lower().endswith(".md")


def _read_note(file: Path, rel: str, source: str, vault: Vault) -> Iterator[tuple[Document, list[str]]]:
    """The note's document and its link paths (kept in the cursor). Unreadable: the reason."""
    try:
        st = file.stat()
        if st.st_size > MAX_BYTES:
            raise Unreadable(f"larger than {human_size(MAX_BYTES)} ({st.st_size} bytes), skipped")
        data = file.read_bytes()
    except OSError as exc:
        raise Unreadable(f"unreadable: {exc.strerror or exc}") from None
    text = decode(data)[0].lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    if not text.strip():
        raise Unreadable("empty note")
    fm = frontmatter(text)
    props = fm.properties
    shown = visible(text[fm.end :])
    refs = list(dict.fromkeys(link.path for link in property_links(props) + links(shown) if link.path))
    meta: dict[str, Any] = {
        "path": rel,
        "tags": unique_tags(property_tags(property_named(props, "tags", "tag", loose=False)) + inline_tags(shown)),
        "aliases": list(
            dict.fromkeys(string_list(property_named(props, "aliases", "alias", loose=False), split_spaces=False))
        ),
        **resolved(refs, rel, vault),
    }
    if fm.error:
        meta["frontmatter_error"] = fm.error
    meta.update(_property_metadata(props))
    yield (
        Document(
            source=source,
            connector=NAME,
            native_id=rel,
            uri=str(file.absolute()),
            title=_title(props, rel),
            text=text,
            created_at=_when(property_named(props, *CREATED)) or _daily(rel),
            updated_at=_when(property_named(props, *UPDATED)) or from_timestamp(st.st_mtime),
            authors=_authors(property_named(props, "author", "authors")),
            metadata=meta,
        ),
        refs,
    )


def _aliases(props: dict[str, Any]) -> list[str]:
    value = property_named(props, "aliases", "alias", loose=False)
    return list(dict.fromkeys(string_list(value, split_spaces=False)))


def _title(props: dict[str, Any], rel: str) -> str:
    value = property_named(props, "title", loose=False)
    if isinstance(value, (str, int, float)) and not isinstance(value, bool) and str(value).strip():
        return " ".join(str(value).split())
    name = posixpath.basename(rel)
    return name[:-3] if _is_note(name) else name


def _authors(value: Any) -> list[str]:
    """The ``author``/``authors`` property as names: a list's items, or one string whole (a
    comma may be inside one name: "Ango, Steph"); ``[[Person]]`` is the person."""
    items = value if isinstance(value, list) else [value]
    out = []
    for item in items:
        if isinstance(item, (str, int, float)) and not isinstance(item, bool):
            name = str(item).strip()
            if name.startswith("[[") and name.endswith("]]"):
                inner = name[2:-2]
                name = (inner.split("|", 1)[1] if "|" in inner else wikilink_path(inner)).strip()
            if name:
                out.append(name)
    return list(dict.fromkeys(out))


def _when(value: Any) -> datetime | None:
    """A date property as an aware UTC time (see the module doc), None when it is no date."""
    if isinstance(value, list) and len(value) == 1:
        value = value[0]
    if isinstance(value, datetime):
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day, tzinfo=UTC)
    if not isinstance(value, str):
        return None
    text = value.strip()
    if text.startswith("[[") and text.endswith("]]"):
        text = wikilink_path(text[2:-2])
    if not _YEAR.search(text):
        return None
    try:
        # dateutil reads the many ways people write a date ("2024-03-03T10:30", "3 March
        # 2024", "March 3, 2024 10:30 PM"); the default fills only what the text leaves out.
        dt = dateparser.parse(text, default=datetime(2000, 1, 1))
    except (ValueError, OverflowError, TypeError):
        return None
    return dt.replace(tzinfo=UTC) if dt.tzinfo is None else dt.astimezone(UTC)


def _daily(rel: str) -> datetime | None:
    """The day a daily note (``2024-03-03.md``) is named after."""
    m = _DAILY.fullmatch(_title({}, rel))
    if not m:
        return None
    try:
        return datetime(int(m.group(1)), int(m.group(2)), int(m.group(3)), tzinfo=UTC)
    except ValueError:
        return None


def _property_metadata(props: dict[str, Any]) -> dict[str, Any]:
    """Properties as metadata (see the module doc): scalars and lists of scalars, dates as ISO
    text, under their own name unless a record field or the connector uses it."""
    out: dict[str, Any] = {}
    for name, value in props.items():
        if name in _CONSUMED:
            continue
        value = plain(value)
        if isinstance(value, dict) or (isinstance(value, list) and any(isinstance(v, (dict, list)) for v in value)):
            continue
        out[f"property_{name}" if name in _OWN or name in _RECORD_FIELDS else name] = value
    return out
