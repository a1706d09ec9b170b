"""Documents from a Google Takeout export beyond mail: Chrome's synced history and bookmarks, and
Google Keep's notes.

Format: the archives Takeout writes (``takeout-20240105T101010Z-001.zip``, ``-002.zip``… for a
large export, or ``.tgz`` parts), one of them, or the extracted ``Takeout/`` folder (or a
folder holding several exports). Under ``Takeout/`` is a folder per product, **named in the
account's language** ("Keep" is "Google Notizen" in a German export; Chrome's ``History.json``
is ``Verlauf.json``, its ``Bookmarks.html`` ``Lesezeichen.html``), and JSON keys are not
translated. So files are recognised by what they hold, never by their names: a JSON object with
a ``"Browser History"`` list is Chrome's history; one with Keep's fields (``textContent``,
``listContent``, ``userEditedTimestampUsec``…) a Keep note; HTML with Keep's ``note`` markup a
Keep note exported as HTML; a Netscape bookmark file (``<!DOCTYPE NETSCAPE-Bookmark-file-1>``)
bookmarks. See :mod:`connectors._takeout_chrome` and :mod:`connectors._takeout_keep` for the
formats, :mod:`connectors._takeout_archive` for the archives.

Documents:

- **Chrome history**: one per visited page (http(s) only, embedded frames left out), built by
  ``connectors._pages.page_document`` (the browser connector's shape): title, URL, domain, visit count, first and last
  visit, ``created_at``/``updated_at`` = first/last visit. Metadata as the browser connector's
  (``url``, ``domain``, ``title``, ``visit_count``, ``first_visit``, ``last_visit``,
  ``browser`` = ``chrome``, ``profile`` = ``takeout``) plus ``kind`` = ``history``, ``file``.
  Native id ``chrome/takeout/<url>``. ``time_usec`` is µs since 1970 UTC.
- **Chrome bookmarks**: one per bookmarked URL: title, URL, folders, date added. Metadata
  ``kind`` = ``bookmark``, ``url``, ``domain``, ``title``, ``folders`` (``Bookmarks bar /
  Dev``), ``added``, ``tags`` (exporters that write them), ``file``. Native id
  ``bookmark/<url>``.
- **Keep notes**: one per note: title, text, checklist items as ``[x] item`` / ``[ ] item``,
  links (``annotations``), attachment names, labels. ``created_at``/``updated_at`` = created and
  last edited. Metadata ``kind`` = ``keep``, ``title``, ``labels``, ``color``, ``pinned``,
  ``archived``, ``attachments`` (file names), ``links`` (URLs), ``shared_with`` (collaborators'
  addresses), ``created``, ``edited``, ``file``; ``authors`` = the owner when the note is
  shared. Native id ``keep/<createdTimestampUsec>`` (the same note in a later export keeps it);
  a note read from HTML (no creation time there) ``keep/html/<folder>/<file name>``.

Traps handled:

- **Trashed notes** (``isTrashed``, or the trash icon in HTML) are skipped: Keep empties its
  trash within days; an empty note (no title, text, items, links or attachments) too.
- **HTML twins**: each JSON note has an HTML copy of the same name beside it, not read (nor
  when the two lie in different parts of a multi-part export); a note's HTML without its JSON
  (exports before Keep wrote JSON) is read from the HTML: the checklist inside its content, the
  pinned/archived/trashed icons, link chips, attachments. Its date is the heading's local time
  without a zone (read as this machine's local time).
- **Times**: µs since 1970 as numbers or numeric strings; a value centuries ahead is read as µs
  since 1601 (Chrome's own epoch, which some tools write under Google's field names).
  Bookmark dates are seconds (Google Bookmarks wrote microseconds: the unit is told by size).
- **Bookmarks**: a URL in several folders is one document listing them; bookmarklets and other
  non-web links are left out (a file with no web link at all is one ``ReadError``); a file
  ending inside an open folder list is reported as cut short (browsers close every list).
- **Everything else in the Takeout** (Mail's mbox, Calendar, Photos, YouTube, My Activity, Maps,
  Chrome's settings and autofill files…) is reported, not read: **one** ``ReadError`` per
  product folder, saying how many files, a few names, and where another connector reads them
  (an ``.mbox``: ``ragbag add mail``; ``.ics``: ``ragbag add calendar``), never one per file.
  Files in a Keep notes folder are its notes' attachments and ``Labels.txt`` (the labels are in
  the notes): not reported. Takeout's own index page (``archive_browser.html``, localised, at
  the top of ``Takeout/``) is not data.
- **Bad input**, isolated (:mod:`connectors._isolate`, any exception): a truncated archive, a
  member that does not inflate, a file that looks like Chrome's history or a Keep note but does
  not parse → ``ReadError`` for that file (``zip!/member``); a visit without a URL or time →
  ``ReadError("{file}#{index}")``; a note or page that fails → a ``ReadError`` for it; the rest
  is read. A file given by its path that is none of the formats is one ``ReadError`` saying
  what was expected; an archive without a ``Takeout/`` folder and nothing readable is one
  ``ReadError`` too.

Incremental: per export file (each archive part, each loose file of an extracted folder): an
unchanged one is not opened and its documents are ``Seen``; a changed one is read again and
edits propagate by content hash. The same record in several exports (a folder of successive
Takeouts) is kept once, the newest copy (last visit, last edit, last bookmark change): a note
deleted since stays while an older export holding it is in the folder. A loose note's HTML is
read again when its JSON twin appears or goes; a note's HTML whose JSON lay in another part of
the export, since removed, is read again from its own unchanged part. What was not read is
remembered per file too, so the report does not need unchanged files to be opened.

Left out: Keep's attachments themselves (pictures, recordings, drawings: their names are in the
note), reminders (not in Takeout), Chrome's settings, autofill, search engines, typed URLs and
sessions, every other product, and ``discover()`` (exports have no default place). Several
Google accounts' exports in one folder are one set of records: the same URL or note creation
time in two accounts is kept once.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from pathlib import Path, PurePosixPath
from typing import Any

from ragbag.connectors._exports import export_files, load_json, read_exports
from ragbag.connectors._isolate import each_file, each_record
from ragbag.connectors._takeout_archive import (
    TAKEOUT,
    Member,
    Unread,
    is_archive,
    is_candidate,
    members,
    note_unread,
    place,
    read_member,
    summary,
)
from ragbag.connectors._takeout_chrome import HISTORY_KEY, bookmarks, history_pages, is_bookmarks, is_history
from ragbag.connectors._takeout_keep import (
    HTML_NOTE,
    NAME,
    NOTE_KEYS,
    html_note,
    is_html_note,
    is_note,
    json_note,
    note_stem,
)
from ragbag.connectors._walk import excluded_paths, follows_outside
from ragbag.core.records import Cursor, Document, ReadError, Seen, Span
from ragbag.text.chunking import TokenCounter, prose_spans
from ragbag.text.decode import decode
from ragbag.text.unreadable import Unreadable

__all__ = ["NAME", "SCHEDULE", "read", "spans"]

SCHEDULE = "0 4 * * *"  # exports change when the user exports again: daily is plenty
_VERSION = "takeout-1"
HEAD_BYTES = 256 * 1024  # what is read of a file to tell what it is
WHOLE_JSON_BYTES = 32 * 1024 * 1024  # a JSON file up to this size is parsed to tell what it is
_EXPECTED = (
    "not a Google Takeout file: expected Chrome's History.json (an object with a"
    ' "Browser History" list), a Keep note (.json or .html), a bookmarks file (Netscape HTML)'
    " or a Takeout archive (.zip, .tgz)"
)


def read(
    path: Path, source: str, cursor: dict | None = None, options: dict | None = None
) -> Iterator[Document | ReadError | Seen | Cursor]:
    """Every history page, bookmark and Keep note in the Takeout exports under ``path`` (see the
    module doc). ``options``: the source's options (None: those in ``sources.yaml``), see
    :mod:`connectors._walk`."""
    root = Path(path)
    single = root.is_file()
    found, errors = export_files(root, lambda name: True, follows_outside(options), excluded_paths(options))
    yield from errors
    found = [(f, k) for f, k in found if single or is_archive(k) or place(_inside(root, k))[1] is not None]
    exports = [(f, k) for f, k in found if single or is_archive(k) or is_candidate(k)]
    unread: dict[str, Unread] = {}
    for _, key in found:
        if not (single or is_archive(key) or is_candidate(key)):
            note_unread(unread, _inside(root, key))
    previous = cursor if cursor and cursor.get("version") == _VERSION else {}
    old_facts: dict[str, dict] = previous.get("facts", {})
    # What reading an export file showed besides its records, kept for when it is not opened:
    # "notes" (folders holding Keep notes), "json" (its notes' JSON files, without suffix),
    # "unread" (an archive's unread files per folder: count, a few names, suffixes), "loose"
    # (a loose file that is none of the formats).
    facts: dict[str, dict] = {}

    def parse(file: Path, key: str) -> Iterator:
        facts[key] = {}
        return _parse(file, root, key, single, source, facts[key])

    def depends(key: str) -> str:
        """A loose note's HTML is read, or not, by whether its JSON twin lies beside it."""
        if single or not key.lower().endswith((".html", ".htm")):
            return ""
        return "twin" if _twin_json(root / key).is_file() else ""

    def twins() -> set[str]:
        """The HTML notes whose JSON is in the export after all: in another part than theirs."""
        stems = (s for _, k in exports for s in (facts[k] if k in facts else old_facts.get(k, {})).get("json", []))
        return {HTML_NOTE + stem for stem in stems}

    state: dict = {}
    dropped: set[str] | None = None  # known once every changed file is read (before any record)
    was_dropped = set(previous.get("dropped", []))
    gone, revive = set(), set()
    for item in read_exports(exports, parse, previous.get("exports"), _VERSION, depends):
        if isinstance(item, Cursor):
            state = item.state
            continue
        if isinstance(item, (Document, Seen)) and item.native_id.startswith(HTML_NOTE):
            dropped = twins() if dropped is None else dropped
            if item.native_id in dropped:
                gone.add(item.native_id)
                continue
            if isinstance(item, Seen) and item.native_id in was_dropped:
                revive.add(item.native_id)  # its twin went with another part: never stored, read below
                continue
        yield item
    yield from _revived(revive, state, exports, root, single, source)
    claimed: set[str] = set()
    for _, key in exports:
        known = facts[key] if key in facts else old_facts.get(key, {})
        claimed.update(known.get("notes", []))
        if known.get("loose"):
            note_unread(unread, _inside(root, key))
        for folder, counted in known.get("unread", {}).items():
            unread.setdefault(folder, Unread()).merge(Unread.of(counted))
    if not single or is_archive(root.name):
        yield from summary(root, unread, claimed)
    if not found and not errors:
        yield ReadError(str(root.absolute()), "no files in this folder: " + _EXPECTED.split(": ", 1)[1])
    kept = {k: v for k in state.get("files", {}) if (v := facts[k] if k in facts else old_facts.get(k))}
    yield Cursor({"version": _VERSION, "exports": state, "facts": kept, "dropped": sorted(gone)})


def _revived(
    ids: set[str], state: dict, exports: list[tuple[Path, str]], root: Path, single: bool, source: str
) -> Iterator[Document | ReadError]:
    """The HTML notes left out last time for a JSON twin in another part that has gone since:
    their unchanged part is read again for them."""
    keys = {state.get("winners", {}).get(i) for i in ids}
    for file, key in exports:
        if key in keys:
            read_again = functools.partial(_parse, file, root, key, single, source, {})
            for item in each_file(str(file.absolute()), read_again):
                if isinstance(item, tuple) and item[0].native_id in ids:
                    yield item[0]


def spans(doc: Document, count: TokenCounter, max_tokens: int) -> list[Span]:
    """A page, bookmark or note is short prose: chunks keep its paragraphs together."""
    return prose_spans(doc.text, count, max_tokens)


def _inside(root: Path, key: str) -> str:
    """The path of a loose file as it would be inside an archive: from the walked folder's own
    name, so a source that is the ``Takeout/`` folder itself places its files like a zip's."""
    return f"{root.name}/{key}" if root.name == TAKEOUT else key


def _twin_json(file: Path) -> Path:
    return file.with_suffix(".json")


def _parse(file: Path, root: Path, key: str, single: bool, source: str, facts: dict) -> Iterator:
    """The records of one export file: every member of an archive, or the file itself."""
    if is_archive(file.name):
        yield from _parse_archive(file, key, source, facts)
        return
    path = file.name if single else _inside(root, key)
    twin = not single and _twin_json(file).is_file()
    with open(file, "rb") as stream:
        member = Member(path, str(file.absolute()), file.stat().st_size, stream)
        for item in _member(member, key, source, twin, facts):
            if item is _UNREAD and single:
                yield ReadError(member.uri, _EXPECTED)
            elif item is _UNREAD:
                facts["loose"] = True
            elif item is not _SKIPPED:
                yield item


_UNREAD = object()  # a file that is none of the formats (a marker, never yielded out)
_SKIPPED = object()  # a file that is known and holds nothing to index (a trashed note, a twin)


def _count(facts: dict, unread: dict[str, Unread]) -> None:
    """Add one export file's unread files, per folder, to what its facts remember."""
    for folder, found in unread.items():
        merged = Unread.of(facts.setdefault("unread", {}).get(folder, Unread().state()))
        merged.merge(found)
        facts["unread"][folder] = merged.state()


def _parse_archive(file: Path, key: str, source: str, facts: dict) -> Iterator:
    """Each member of one archive part, each behind its own isolation boundary. Notes' HTML
    waits for the end of the archive: whether its JSON twin is in the same part is known only
    then (a tar is read in one pass)."""
    unread: dict[str, Unread] = {}
    names: set[str] = set()
    html_notes: list[tuple[Member, bytes]] = []
    readable = takeout = False
    for member in members(file):
        if isinstance(member, ReadError):
            yield member
            continue
        names.add(member.path)
        takeout = takeout or TAKEOUT in PurePosixPath(member.path).parts[:-1]
        if place(member.path)[1] is None:
            continue  # Takeout's own index page
        if not is_candidate(member.path):
            note_unread(unread, member.path)
            continue
        # The isolation boundary: whatever one member holds fails that member alone.
        made = each_record(member.uri, _listed, _archived, member, key, source, facts)
        if isinstance(made, ReadError):
            yield made
            continue
        for item in made:
            if item is _UNREAD:
                note_unread(unread, member.path)
            elif isinstance(item, tuple) and isinstance(item[0], Member):
                html_notes.append(item)
            elif item is not _SKIPPED:
                readable = readable or not isinstance(item, ReadError)
                yield item
    for member, data in html_notes:
        twin = str(PurePosixPath(member.path).with_suffix(".json")) in names
        note = each_record(member.uri, _listed, _html_note, member, data, key, source, twin, facts)
        readable = True
        yield from (i for i in ([note] if isinstance(note, ReadError) else note) if i is not _SKIPPED)
    if not takeout and not readable and names:
        yield ReadError(
            str(file.absolute()), "not a Google Takeout archive: no Takeout/ folder and nothing readable in it"
        )
        return
    _count(facts, unread)


def _listed(make: Callable[..., Iterator], *args: Any) -> list:
    return list(make(*args))


def _archived(member: Member, key: str, source: str, facts: dict) -> Iterator:
    """One archive member's records; a note's HTML comes back as (member, bytes) to wait."""
    head = member.stream.read(HEAD_BYTES)
    if member.path.lower().endswith((".html", ".htm")) and is_html_note(head):
        yield member, read_member(member, head)
    else:
        yield from _known(member, head, key, source, False, facts)


def _member(member: Member, key: str, source: str, twin: bool, facts: dict) -> Iterator:
    """The records of one loose file."""
    head = member.stream.read(HEAD_BYTES)
    if member.path.lower().endswith((".html", ".htm")) and is_html_note(head):
        yield from _html_note(member, read_member(member, head), key, source, twin, facts)
    else:
        yield from _known(member, head, key, source, twin, facts)


def _known(member: Member, head: bytes, key: str, source: str, twin: bool, facts: dict) -> Iterator:
    """What one file is, by its first bytes (and a JSON file's structure), and its records:
    Chrome's history, a Keep note, bookmarks; :data:`_UNREAD` for anything else."""
    lower = member.path.lower()
    if lower.endswith(".json"):
        data = _json(member, head)
        if is_history(data):
            yield from history_pages(data, member.uri, key, source)
        elif is_note(data):
            _claim(facts, member.path)
            facts.setdefault("json", []).append(note_stem(member.path))
            note = each_record(member.uri, json_note, data, member.uri, member.path, key, source)
            yield _SKIPPED if note is None else note
        else:
            yield _UNREAD
    elif lower.endswith((".html", ".htm")) and is_bookmarks(head):
        yield from bookmarks(_text(read_member(member, head)), member.uri, key, source)
    else:
        yield _UNREAD


def _json(member: Member, head: bytes) -> Any:
    """The parsed JSON of a file that may be one of ours, :data:`_UNREAD` for one that cannot
    be (a big file whose head names none of our keys, or no JSON at all). A file whose head
    names them and does not parse raises: its ReadError says why."""
    ours = any(f'"{k}"'.encode() in head for k in (HISTORY_KEY, *NOTE_KEYS))
    if member.size > WHOLE_JSON_BYTES and not ours:
        return _UNREAD
    try:
        return load_json(read_member(member, head))
    except (Unreadable, ValueError):
        if ours:
            raise
        return _UNREAD


def _html_note(member: Member, data: bytes, key: str, source: str, twin: bool, facts: dict) -> Iterator:
    _claim(facts, member.path)
    if twin:
        yield _SKIPPED  # the JSON beside it is the note
        return
    note = each_record(member.uri, html_note, _text(data), member.uri, member.path, key, source)
    yield _SKIPPED if note is None else note


def _claim(facts: dict, path: str) -> None:
    """Mark the folder of a note: its other files are the notes' attachments and labels."""
    folder, _ = place(path)
    if folder not in facts.setdefault("notes", []):
        facts["notes"].append(folder)


def _text(data: bytes) -> str:
    return decode(data)[0]
