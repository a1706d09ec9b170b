"""A Google Takeout export as Takeout writes it: ``Takeout/Chrome/History.json`` (one record per
visit, ``time_usec`` in µs since 1970), ``Takeout/Chrome/Bookmarks.html`` (Netscape bookmark
file, ``ADD_DATE`` in seconds), ``Takeout/Keep/<title>.json`` per note with its ``.html`` twin and
``Labels.txt``, the other products' files as given, and Takeout's index page; as a folder's files
or as the ``takeout-…-001.zip`` parts. Folder and file names follow the export's language
(:data:`NAMES`)."""

from __future__ import annotations

import io
import json
import zipfile
from dataclasses import dataclass, field
from datetime import UTC, datetime
from html import escape

from ragbag_evalsets.formats import FIXED, h

# The names an English and a German export give the same things (Takeout translates folder and
# file names, never JSON keys).
NAMES = {
    "en": {"chrome": "Chrome", "history": "History.json", "bookmarks": "Bookmarks.html", "keep": "Keep",
           "bar": "Bookmarks bar", "index": "archive_browser.html"},
    "de": {"chrome": "Chrome", "history": "Verlauf.json", "bookmarks": "Lesezeichen.html", "keep": "Google Notizen",
           "bar": "Lesezeichenleiste", "index": "Archiv_Übersicht.html"},
}  # fmt: skip


def usec(when: datetime) -> int:
    return int(when.astimezone(UTC).timestamp()) * 1_000_000 + when.microsecond


@dataclass
class Note:
    title: str
    text: str = ""
    items: list[tuple[str, bool]] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)
    links: list[tuple[str, str]] = field(default_factory=list)
    attachments: list[tuple[str, str, bytes]] = field(default_factory=list)  # name, mimetype, bytes
    created: datetime = FIXED
    edited: datetime = FIXED
    color: str = "DEFAULT"
    pinned: bool = False
    archived: bool = False
    trashed: bool = False

    def json(self) -> bytes:
        rec: dict = {
            "color": self.color,
            "isTrashed": self.trashed,
            "isPinned": self.pinned,
            "isArchived": self.archived,
        }
        if self.items:
            rec["listContent"] = [{"text": t, "isChecked": done} for t, done in self.items]
        else:
            rec["textContent"] = self.text
        rec["title"] = self.title
        rec["userEditedTimestampUsec"] = usec(self.edited)
        rec["createdTimestampUsec"] = usec(self.created)
        if self.labels:
            rec["labels"] = [{"name": name} for name in self.labels]
        if self.links:
            rec["annotations"] = [
                {"description": "", "source": "WEBLINK", "title": title, "url": url} for title, url in self.links
            ]
        if self.attachments:
            rec["attachments"] = [{"filePath": name, "mimetype": mime} for name, mime, _ in self.attachments]
        return json.dumps(rec, ensure_ascii=False, indent=2).encode("utf-8")

    def html(self) -> bytes:
        """The twin Keep writes beside the JSON: the same note as a page (the checklist inside
        the content, links and labels as chips, the edit time in the account's zone, here UTC)."""
        when = self.edited.astimezone(UTC).strftime("%d %b %Y, %H:%M:%S")
        icons = '<span class="archived" title="Note archived"></span>' if self.archived else ""
        icons += '<span class="pinned" title="Note pinned"></span>' if self.pinned else ""
        icons += '<span class="trashed" title="Note binned"></span>' if self.trashed else ""
        body = "<br>".join(escape(line) for line in self.text.splitlines())
        items = "".join(
            f'<li class="listitem{" checked" if done else ""}"><span class="bullet">{"&#9745;" if done else "&#9744;"}'
            f'</span>\n<span class="text">{escape(t)}</span>\n</li>'
            for t, done in self.items
        )
        chips = "".join(
            f'<span class="chip annotation WEBLINK"><a href="{escape(url)}"><span class="chip-icon"></span>'
            f'<span class="annotation-text">{escape(title)}</span></a></span>'
            for title, url in self.links
        ) + "".join(
            f'<span class="chip label"><span class="label-name">{escape(name)}</span></span>' for name in self.labels
        )
        files = "".join(
            f'<li><a class="{mime.split("/")[0]}" href="{escape(name)}" type="{mime}"></a></li>'
            for name, mime, _ in self.attachments
        )
        return (
            '<?xml version="1.0" ?>\n<html><head><title>' + escape(self.title) + "</title></head><body>"
            f'<div class="note {self.color}"><div class="heading"><div class="meta-icons">{icons}</div>\n{when}</div>\n'
            f'<div class="title">{escape(self.title)}</div>\n<div class="content">{body}'
            + (f'<ul class="list">{items}</ul>' if items else "")
            + "</div>\n"
            + (f'<div class="chips">{chips}</div>' if chips else "")
            + (f'<div class="attachments"><ul>{files}</ul></div>' if files else "")
            + "</div></body></html>"
        ).encode("utf-8")


class Takeout:
    """One export: Chrome's visits and bookmarks, Keep's notes, other products' files."""

    def __init__(self, lang: str = "en") -> None:
        self.names = NAMES[lang]
        self.visits: list[dict] = []
        self.bookmarks: list[tuple[list[str], str, str, datetime]] = []
        self.notes: list[Note] = []
        self.others: dict[str, bytes] = {}

    def visit(self, when: datetime, url: str, title: str, transition: str = "LINK") -> None:
        self.visits.append(
            {
                "favicon_url": url.split("/", 3)[0] + "//" + url.split("/", 3)[2] + "/favicon.ico",
                "page_transition": transition,
                "title": title,
                "url": url,
                "client_id": h("client", n=11) + "==",
                "time_usec": usec(when),
            }
        )

    def bookmark(self, folders: list[str], url: str, title: str, added: datetime) -> None:
        self.bookmarks.append((folders, url, title, added))

    def note(self, note: Note) -> None:
        self.notes.append(note)

    def other(self, path: str, data: bytes) -> None:
        """A file of another product, ``path`` under ``Takeout/`` (``Mail/All mail.mbox``)."""
        self.others[path] = data

    def history_json(self) -> bytes:
        doc = {"Browser History": self.visits, "Typed Url": [], "Session": [], "Shared Tab Group": []}
        return json.dumps(doc, ensure_ascii=False, indent=4).encode("utf-8")

    def bookmarks_html(self) -> bytes:
        """Chrome's export: the bookmark bar first, folders as nested ``<DL>`` lists."""
        lines = [
            "<!DOCTYPE NETSCAPE-Bookmark-file-1>",
            "<!-- This is an automatically generated file.",
            "     It will be read and overwritten.",
            "     DO NOT EDIT! -->",
            '<META HTTP-EQUIV="Content-Type" CONTENT="text/html; charset=UTF-8">',
            "<TITLE>Bookmarks</TITLE>",
            "<H1>Bookmarks</H1>",
            "<DL><p>",
        ]
        tree: dict = {}
        for folders, url, title, added in self.bookmarks:
            node = tree
            for name in [self.names["bar"], *folders]:
                node = node.setdefault(name, {})
            node.setdefault(None, []).append((url, title, added))

        def emit(node: dict, depth: int, top: bool = False) -> None:
            pad = "    " * depth
            for url, title, added in node.get(None, []):
                stamp = int(added.timestamp())
                lines.append(f'{pad}<DT><A HREF="{escape(url)}" ADD_DATE="{stamp}">{escape(title)}</A>')
            for name, child in node.items():
                if name is None:
                    continue
                bar = ' PERSONAL_TOOLBAR_FOLDER="true"' if top else ""
                stamp = int(FIXED.timestamp())
                lines.append(f'{pad}<DT><H3 ADD_DATE="{stamp}" LAST_MODIFIED="{stamp}"{bar}>{escape(name)}</H3>')
                lines.append(f"{pad}<DL><p>")
                emit(child, depth + 1)
                lines.append(f"{pad}</DL><p>")

        emit(tree, 1, top=True)
        lines.append("</DL><p>")
        return ("\n".join(lines) + "\n").encode("utf-8")

    def files(self) -> dict[str, bytes]:
        """Every file of the export, by its path from ``Takeout/``'s parent."""
        n = self.names
        out: dict[str, bytes] = {f"Takeout/{n['index']}": b"<html><body><h1>Takeout</h1></body></html>\n"}
        if self.visits:
            out[f"Takeout/{n['chrome']}/{n['history']}"] = self.history_json()
        if self.bookmarks:
            out[f"Takeout/{n['chrome']}/{n['bookmarks']}"] = self.bookmarks_html()
        used: set[str] = set()
        for note in self.notes:
            stem = _file_name(note.title or note.created.astimezone(UTC).strftime("%Y-%m-%dT%H_%M_%S.%f")[:-3])
            base, k = stem, 1
            while stem in used:  # Keep numbers notes of the same title
                stem, k = f"{base}({k})", k + 1
            used.add(stem)
            out[f"Takeout/{n['keep']}/{stem}.json"] = note.json()
            out[f"Takeout/{n['keep']}/{stem}.html"] = note.html()
            for name, _, data in note.attachments:
                out[f"Takeout/{n['keep']}/{name}"] = data
        labels = sorted({label for note in self.notes for label in note.labels})
        if self.notes:
            out[f"Takeout/{n['keep']}/Labels.txt"] = "".join(f"{label}\n" for label in labels).encode("utf-8")
        out.update({f"Takeout/{path}": data for path, data in self.others.items()})
        return out

    def zips(self, stamp: str = "20260115T090000Z", parts: int = 1) -> dict[str, bytes]:
        """The export as ``takeout-<stamp>-00N.zip`` parts (files dealt out in turn)."""
        buffers = [io.BytesIO() for _ in range(parts)]
        archives = [zipfile.ZipFile(b, "w", zipfile.ZIP_DEFLATED) for b in buffers]
        for i, (path, data) in enumerate(sorted(self.files().items())):
            info = zipfile.ZipInfo(path, date_time=FIXED.timetuple()[:6])
            info.compress_type = zipfile.ZIP_DEFLATED
            archives[i % parts].writestr(info, data)
        for zf in archives:
            zf.close()
        return {f"takeout-{stamp}-{i + 1:03d}.zip": b.getvalue() for i, b in enumerate(buffers)}


def _file_name(title: str) -> str:
    """A note's file name as Keep makes it: characters a file name cannot hold become ``_``."""
    return "".join("_" if c in '/\\:*?"<>|' else c for c in title)[:100]
