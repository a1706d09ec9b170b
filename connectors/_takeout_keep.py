"""Google Keep notes from a Takeout export: one document per note (see :mod:`connectors.takeout`).

A note is a JSON file (``{title, textContent, listContent: [{text, isChecked}], labels:
[{name}], annotations: [{title, url, description, source}], attachments: [{filePath,
mimetype}], sharees: [{email, isOwner}], color, isPinned, isArchived, isTrashed,
createdTimestampUsec, userEditedTimestampUsec}``, times in µs since 1970 UTC) with an HTML twin
of the same name. Exports made before Keep had JSON hold the HTML alone (``<div class="note
COLOR">`` with ``heading`` (the edit date as local time, no zone), ``title``, ``content``
(lines cut by ``<br>``), ``listitem`` (``checked``), ``label-name``/``label`` chips,
``annotations`` links, ``attachments``, ``archived``/``trashed`` icons).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import PurePosixPath
from typing import Any

from bs4 import BeautifulSoup, Tag
from dateutil import parser as dateparser

from ragbag.connectors._takeout_archive import place
from ragbag.core.records import Document
from ragbag.text.unreadable import Unreadable

NAME = "takeout"
HTML_NOTE = "keep/html/"  # the native ids of notes read from HTML: dropped where the JSON is found
# Markers of a Keep note's JSON: a file holding one of them is read as a note.
NOTE_KEYS = ("textContent", "listContent", "userEditedTimestampUsec", "createdTimestampUsec", "isTrashed")
_TITLE_CHARS = 80
_UNIX = datetime(1970, 1, 1, tzinfo=UTC)
# µs between 1601-01-01 (Chrome's own epoch, which some tools write in Google's field names)
# and 1970: a value past it would be centuries ahead as µs since 1970, so it counts from 1601.
_WEBKIT_OFFSET_US = 11_644_473_600_000_000


def usec_time(value: Any) -> datetime | None:
    """An aware UTC time from microseconds since 1970 (an int, a float or a numeric string, as
    Takeout writes them); None for no usable time."""
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value or value <= 0:
        return None
    if value >= _WEBKIT_OFFSET_US:
        value -= _WEBKIT_OFFSET_US
    try:
        return _UNIX + timedelta(microseconds=int(value))
    except (OverflowError, ValueError):
        return None


def is_note(data: Any) -> bool:
    return isinstance(data, dict) and any(k in data for k in NOTE_KEYS)


def json_note(data: Any, uri: str, path: str, key: str, source: str) -> tuple[Document, float] | None:
    """A Keep note's JSON as (document, stamp); None for a trashed or empty note."""
    if not isinstance(data, dict):
        raise Unreadable(f"not a Keep note: a JSON {type(data).__name__}, not an object")
    if data.get("isTrashed") is True:
        return None  # in the trash: Keep deletes it within days, so it is not indexed
    body = data.get("textContent")
    if body is not None and not isinstance(body, str):
        raise Unreadable(f"textContent is a {type(body).__name__}, not text")
    items = []
    for item in _list(data, "listContent"):
        if isinstance(item, dict) and isinstance(item.get("text"), str):
            items.append((item["text"], item.get("isChecked") is True))
    links = [
        (str(a.get("title") or ""), str(a["url"]))
        for a in _list(data, "annotations")
        if isinstance(a, dict) and isinstance(a.get("url"), str) and a["url"]
    ]
    attachments = [
        (str(a["filePath"]), str(a.get("mimetype") or ""))
        for a in _list(data, "attachments")
        if isinstance(a, dict) and isinstance(a.get("filePath"), str) and a["filePath"]
    ]
    labels = [str(x["name"]) for x in _list(data, "labels") if isinstance(x, dict) and x.get("name")]
    sharees = [s for s in _list(data, "sharees") if isinstance(s, dict) and isinstance(s.get("email"), str)]
    created = usec_time(data.get("createdTimestampUsec"))
    edited = usec_time(data.get("userEditedTimestampUsec")) or created
    return _note(
        title=data.get("title"),
        body=body or "",
        items=items,
        links=links,
        attachments=attachments,
        labels=labels,
        created=created,
        edited=edited,
        flags={
            "color": str(data.get("color") or ""),
            "pinned": data.get("isPinned") is True,
            "archived": data.get("isArchived") is True,
        },
        owners=[s["email"] for s in sharees if s.get("isOwner") is True],
        shared=[s["email"] for s in sharees if s.get("isOwner") is not True],
        native_id=f"keep/{_usec_id(data['createdTimestampUsec'])}" if created else f"keep/{note_stem(path)}",
        uri=uri,
        key=key,
        source=source,
    )


def is_html_note(head: bytes) -> bool:
    return b'class="note' in head and (b'class="content"' in head or b'class="heading"' in head)


def html_note(html: str, uri: str, path: str, key: str, source: str) -> tuple[Document, float] | None:
    """A Keep note exported as HTML alone (older exports, or a JSON lost): (document, stamp);
    None for a trashed or empty note. The heading's date is the last edit in the account's
    local time without a zone: read as this machine's local time (the best guess there is);
    a date in a language dateutil does not read leaves the note undated."""
    soup = BeautifulSoup(html, "html.parser")
    note = soup.find(class_="note")
    if not isinstance(note, Tag):
        raise Unreadable("not a Keep note: no note element")
    if note.find(class_="trashed"):
        return None
    classes = [c for c in note.get("class") or [] if c != "note"]
    flags = {
        "color": classes[0] if classes else "",
        "pinned": note.find(class_="pinned") is not None,
        "archived": note.find(class_="archived") is not None,
    }
    heading = _part(note, "heading")
    edited = None
    if heading is not None:
        for icons in heading.find_all(class_="meta-icons"):
            icons.extract()
        edited = _local_time(heading.get_text(" ", strip=True))
    title = _part(note, "title")
    items = []
    for li in note.find_all(class_="listitem"):
        text = li.find(class_="text")
        items.append((_lines(text if isinstance(text, Tag) else li), "checked" in (li.get("class") or [])))
    for block in note.find_all(class_="list"):
        block.extract()  # the checklist sits inside the content: it is read as items above
    content = _part(note, "content")
    labels = [t.get_text(" ", strip=True) for t in note.find_all(class_="label-name")] or [
        t.get_text(" ", strip=True) for t in note.find_all("span", class_="label")
    ]
    links: list[tuple[str, str]] = []
    for block in note.find_all(class_=["annotation", "annotations"]):
        for a in block.find_all("a", href=True):
            label = a.find(class_="annotation-text")
            link = ((label or a).get_text(" ", strip=True), str(a["href"]))
            if link not in links:  # an "annotations" block holds "annotation" chips: met twice
                links.append(link)
    attachments: list[tuple[str, str]] = []
    files = note.find(class_="attachments")
    if isinstance(files, Tag):
        for el in files.find_all(["img", "audio", "source", "a"]):
            target = el.get("src") or el.get("href")
            if isinstance(target, str) and target and not target.startswith("data:"):
                attachments.append((target, str(el.get("type") or "")))
    return _note(
        title=title.get_text(" ", strip=True) if title is not None else "",
        body=_lines(content) if content is not None else "",
        items=items,
        links=links,
        attachments=attachments,
        labels=[x for x in labels if x],
        created=None,
        edited=edited,
        flags=flags,
        owners=[],
        shared=[],
        native_id=HTML_NOTE + note_stem(path),
        uri=uri,
        key=key,
        source=source,
    )


def _note(
    *,
    title: Any,
    body: str,
    items: list[tuple[str, bool]],
    links: list[tuple[str, str]],
    attachments: list[tuple[str, str]],
    labels: list[str],
    created: datetime | None,
    edited: datetime | None,
    flags: dict[str, Any],
    owners: list[str],
    shared: list[str],
    native_id: str,
    uri: str,
    key: str,
    source: str,
) -> tuple[Document, float] | None:
    """The note's document: its title, text, checklist as ``[x] item`` lines, links,
    attachment names and labels, each a paragraph."""
    title = " ".join(str(title or "").split())
    body = re.sub(r"\n{3,}", "\n\n", "\n".join(line.rstrip() for line in body.strip().splitlines()))
    checklist = "\n".join(
        f"[{'x' if done else ' '}] " + "\n    ".join(t.strip() for t in text.strip().splitlines())
        for text, done in items
        if text.strip()
    )
    link_lines = "\n".join(" ".join(x for x in ("Link:", " ".join(name.split()), url) if x) for name, url in links)
    files = "\n".join(f"Attachment: {name}" + (f" ({mime})" if mime else "") for name, mime in attachments)
    label_line = f"Labels: {', '.join(labels)}" if labels else ""
    if not (title or body or checklist or links or attachments):
        return None  # an empty note: nothing to find
    text = "\n\n".join(p for p in (title, body, checklist, link_lines, files, label_line) if p) + "\n"
    first = next((line.strip() for line in (body or checklist).splitlines() if line.strip()), "")
    shown = title or (first[: _TITLE_CHARS - 1] + "…" if len(first) > _TITLE_CHARS else first)
    when = edited or created
    shown = shown or (f"Keep note of {when:%Y-%m-%d}" if when else "Keep note")
    meta: dict[str, Any] = {
        "kind": "keep",
        "title": title,
        "labels": labels,
        **flags,
        "attachments": [PurePosixPath(name).name for name, _ in attachments],
        "links": [url for _, url in links],
        "file": key,
    }
    if shared:
        meta["shared_with"] = shared
    if created:
        meta["created"] = created.isoformat()
    if edited:
        meta["edited"] = edited.isoformat()
    doc = Document(
        source=source,
        connector=NAME,
        native_id=native_id,
        uri=uri,
        title=shown,
        text=text,
        created_at=created or edited,
        updated_at=edited,
        authors=owners,
        metadata=meta,
    )
    return doc, (when.timestamp() if when else 0.0)


def _usec_id(value: Any) -> str:
    """A note's creation time as its id: the same number whether written as text or a number."""
    return str(value if isinstance(value, int) else int(float(value)))


def _list(data: dict, key: str) -> list:
    value = data.get(key)
    return value if isinstance(value, list) else []


def note_stem(path: str) -> str:
    """A note's file without its suffix, from ``Takeout/``: what its JSON and HTML share."""
    folder, _ = place(path)
    stem = PurePosixPath(path).stem
    return f"{folder}/{stem}" if folder else stem


def _part(note: Tag, cls: str) -> Tag | None:
    """The note's own ``cls`` element: a direct child first (a link's preview has a title
    too), else the first one anywhere in the note."""
    found = note.find(class_=cls, recursive=False) or note.find(class_=cls)
    return found if isinstance(found, Tag) else None


def _lines(el: Tag) -> str:
    """An element's text with ``<br>`` and block ends as line breaks."""
    for br in el.find_all("br"):
        br.replace_with("\n")
    return el.get_text()


def _local_time(text: str) -> datetime | None:
    try:
        when = dateparser.parse(text)
    except (ValueError, OverflowError):
        return None
    return (when.astimezone() if when.tzinfo is None else when).astimezone(UTC)
