"""Chrome's data in a Google Takeout export: the synced browsing history and the bookmarks (see
:mod:`connectors.takeout`).

- **History** (``Chrome/History.json``, ``BrowserHistory.json`` before 2024, localised names
  such as ``Verlauf.json``): ``{"Browser History": [{url, title, time_usec, page_transition,
  client_id, favicon_url}, …]}`` (newer files add ``"Typed Url"``, ``"Session"``… lists, not
  read), one record per visit, ``time_usec`` in µs since 1970 UTC. The visits of a URL become
  one page document, built by :func:`connectors._pages.page_document` so a Takeout
  history reads like a Chrome profile's: same text, same metadata.
- **Bookmarks** (``Bookmarks.html``, ``Lesezeichen.html``…): the Netscape bookmark file every
  browser exports: ``<DT><H3>folder</H3><DL>…</DL>`` nested folders, ``<DT><A HREF
  ADD_DATE=seconds>title</A>``, an optional ``<DD>`` description. One document per URL.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime
from html.parser import HTMLParser
from typing import Any
from urllib.parse import unquote

from ragbag.connectors._isolate import each_record
from ragbag.connectors._pages import domain_of, page_document, web_url
from ragbag.connectors._takeout_keep import NAME, usec_time
from ragbag.core.records import Document, ReadError
from ragbag.text.unreadable import Unreadable

HISTORY_KEY = "Browser History"
BROWSER, PROFILE, WHERE = "chrome", "takeout", "Chrome (synced history, Google Takeout)"
# Visits Chrome hides in its own history (embedded frames), as the browser connector leaves
# out rows Chrome marks hidden.
SUBFRAMES = frozenset({"AUTO_SUBFRAME", "MANUAL_SUBFRAME"})
_NETSCAPE = re.compile(rb"<!DOCTYPE\s+NETSCAPE-Bookmark-file|<DT>\s*<(A|H3)\b", re.I)


def is_history(data: Any) -> bool:
    return isinstance(data, dict) and isinstance(data.get(HISTORY_KEY), list)


def history_pages(data: dict, uri: str, key: str, source: str) -> Iterator[tuple[Document, float] | ReadError]:
    """One (page, stamp) per URL visited: count, first and last visit, the title of its latest
    visit that had one. A visit without a URL or time is a ReadError (``file#index``); other
    schemes than http(s) and embedded frames are left out, as the browser connector does."""
    pages: dict[str, list] = {}  # url → [count, first, last, title, when titled]
    for index, visit in enumerate(data[HISTORY_KEY]):
        # The isolation boundary: whatever one visit holds fails that visit alone.
        item = each_record(f"{uri}#{index}", _visit, visit)
        if isinstance(item, ReadError):
            yield item
        elif item is not None:
            url, title, when = item
            page = pages.setdefault(url, [0, when, when, "", None])
            page[0] += 1
            page[1], page[2] = min(page[1], when), max(page[2], when)
            if title and (page[4] is None or when >= page[4]):
                page[3], page[4] = title, when
    for url, (count, first, last, title, _) in pages.items():
        doc = each_record(
            f"{uri}#{url}", page_document, source, NAME, url, title, count, first, last, BROWSER, PROFILE, WHERE
        )
        if isinstance(doc, ReadError):
            yield doc
            continue
        doc.metadata.update({"kind": "history", "file": key})
        yield doc, last.timestamp()


def _visit(visit: Any) -> tuple[str, str, datetime] | None:
    if not isinstance(visit, dict):
        raise Unreadable(f"not a visit object ({type(visit).__name__})")
    url = visit.get("url")
    if not isinstance(url, str) or not url.strip():
        raise Unreadable("visit without a URL")
    url = url.strip()
    if not web_url(url) or str(visit.get("page_transition") or "").upper() in SUBFRAMES:
        return None
    when = usec_time(visit.get("time_usec"))
    if when is None:
        raise Unreadable(f"visit of {url} without a usable time_usec ({visit.get('time_usec')!r})")
    title = visit.get("title")
    return url, " ".join(title.split()) if isinstance(title, str) else "", when


def is_bookmarks(head: bytes) -> bool:
    return _NETSCAPE.search(head) is not None


def bookmarks(html: str, uri: str, key: str, source: str) -> Iterator[tuple[Document, float] | ReadError]:
    """One (document, stamp) per bookmarked http(s) URL; a URL kept in several folders is one
    document listing them all (its earliest ``ADD_DATE`` is when it was added)."""
    parser = _Netscape()
    parser.feed(html)
    parser.close()
    if not parser.links:
        if not parser.folders_seen:
            raise Unreadable("not a bookmarks file: no <DT><A HREF> links (Netscape bookmark format)")
        return
    merged: dict[str, dict] = {}
    for link in parser.links:
        url = link["href"].strip()
        if not web_url(url):
            continue  # bookmarklets (javascript:), place: queries, file: and browser pages
        m = merged.setdefault(url, {"title": "", "folders": [], "added": [], "modified": [], "notes": [], "tags": []})
        m["title"] = m["title"] or link["title"]
        for field, value in (("folders", link["folder"]), ("notes", link["note"])):
            if value and value not in m[field]:
                m[field].append(value)
        m["tags"] += [t for t in link["tags"] if t not in m["tags"]]
        for field in ("added", "modified"):
            if link[field]:
                m[field].append(link[field])
    if not merged:
        raise Unreadable(
            f"{len(parser.links)} bookmark{'s' if len(parser.links) != 1 else ''}, none of them a web page"
            " (http or https; relative links, bookmarklets, place: queries and browser pages are left out)"
        )
    for url, m in merged.items():
        yield each_record(f"{uri}#{url}", _bookmark, url, m, key, source)
    if parser.open_lists:  # browsers close every <DL>: a file ending inside one was cut short
        yield ReadError(uri, "the file ends inside a bookmark folder (truncated?): bookmarks past the cut are missing")


def _bookmark(url: str, m: dict, key: str, source: str) -> tuple[Document, float]:
    title = m["title"]
    readable = " ".join(unquote(url, errors="replace").split())
    added = min(m["added"]) if m["added"] else None
    changed = max(m["modified"] + m["added"]) if m["modified"] or m["added"] else None
    where = f" in {'; '.join(m['folders'])}" if m["folders"] else ""
    facts = f"Bookmark{where}" + (f", added {added:%Y-%m-%d}." if added else ".")
    tags = f"Tags: {', '.join(m['tags'])}" if m["tags"] else ""
    text = "\n".join(p for p in (title, readable, facts, *m["notes"], tags) if p) + "\n"
    meta: dict[str, Any] = {
        "kind": "bookmark",
        "url": url,
        "domain": domain_of(url),
        "title": title,
        "folders": m["folders"],
        "file": key,
    }
    if added:
        meta["added"] = added.isoformat()
    if m["tags"]:
        meta["tags"] = m["tags"]
    doc = Document(
        source=source,
        connector=NAME,
        native_id=f"bookmark/{url}",
        uri=url,
        title=title or readable,
        text=text,
        created_at=added,
        updated_at=changed,
        metadata=meta,
    )
    return doc, (changed.timestamp() if changed else 0.0)


def _seconds(value: str | None) -> datetime | None:
    """A bookmark's ``ADD_DATE``/``LAST_MODIFIED``: seconds since 1970 (Chrome, Firefox);
    milliseconds and microseconds, which other exporters write, are told by their size."""
    try:
        n = float(value or "")
    except ValueError:
        return None
    if n != n or n <= 0:
        return None
    n = n / 1_000_000 if n > 1e14 else n / 1000 if n > 1e11 else n
    try:
        return datetime.fromtimestamp(n, tz=UTC)
    except (OverflowError, OSError, ValueError):
        return None


class _Netscape(HTMLParser):
    """The Netscape bookmark format as browsers write it: ``<DT>`` and ``<p>`` are never
    closed, so the folder of a link is told by the ``<DL>`` nesting, each ``<DL>`` opened
    right after its folder's ``<H3>``."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.links: list[dict] = []
        self.folders_seen = False
        self._stack: list[str | None] = []  # the folder each open <DL> is
        self._pending: str | None = None  # an <H3> waiting for its <DL>
        self._capture: str | None = None  # "h3", "a", "dd"
        self._text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k.lower(): v or "" for k, v in attrs}
        if tag in ("dt", "dl", "h3", "a", "h1"):
            self._finish_note()
        if tag == "dl":
            self._stack.append(self._pending)
            self._pending = None
        elif tag == "dt":
            self._pending = None
        elif tag == "h3":
            self._start("h3")
        elif tag == "a":
            self._pending = None
            self._start("a")
            folder = " / ".join(f for f in self._stack if f)
            self.links.append(
                {
                    "href": a.get("href", ""),
                    "title": "",
                    "folder": folder,
                    "added": _seconds(a.get("add_date")),
                    "modified": _seconds(a.get("last_modified")),
                    "tags": [t.strip() for t in a.get("tags", "").split(",") if t.strip()],
                    "note": "",
                }
            )
        elif tag == "dd" and self.links:
            self._start("dd")

    def handle_endtag(self, tag: str) -> None:
        if tag == "h3" and self._capture == "h3":
            self._pending = self._take() or None
            self.folders_seen = True
        elif tag == "a" and self._capture == "a":
            self.links[-1]["title"] = self._take()
        elif tag == "dl":
            self._finish_note()
            if self._stack:
                self._stack.pop()

    def handle_data(self, data: str) -> None:
        if self._capture:
            self._text.append(data)

    @property
    def open_lists(self) -> int:
        return len(self._stack)

    def close(self) -> None:
        super().close()
        if self._capture == "a":
            self.links[-1]["title"] = self._take()
        self._finish_note()

    def _start(self, what: str) -> None:
        if self._capture == "a":  # an <A> left open: its title ends here
            self.links[-1]["title"] = self._take()
        self._capture, self._text = what, []

    def _take(self) -> str:
        self._capture = None
        return " ".join("".join(self._text).split())

    def _finish_note(self) -> None:
        """A ``<DD>`` description ends at the next item or list: its lines are kept."""
        if self._capture == "dd":
            self._capture = None
            lines = [" ".join(line.split()) for line in "".join(self._text).strip().splitlines()]
            self.links[-1]["note"] = re.sub(r"\n{3,}", "\n\n", "\n".join(lines))
