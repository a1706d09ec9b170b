"""Google Takeout exports, differentially: ragbag's pages, bookmarks and notes against a plain
walk of each file with the standard library.

The reference opens archives with :mod:`zipfile`, parses JSON with :mod:`json` and finds
bookmarks with one regular expression over the HTML (``<A HREF=… ADD_DATE=…>title</A>``); it
shares no code with the connector. It applies the formats' own rules: a history visit counts
when its URL is http(s) and it is not an embedded frame (``AUTO_SUBFRAME``/``MANUAL_SUBFRAME``);
a page's title is its latest titled visit's; a Keep note is a JSON object with Keep's fields,
not trashed; its HTML twin is not a note of its own; a bookmark file has the Netscape
``DOCTYPE`` (or ``<DT><A`` items), a bookmark is an http(s) ``HREF``, added at its earliest
``ADD_DATE`` (seconds).

Checks, per record the reference finds: ``count`` (ragbag has it: a page or bookmark by URL, a
note by its creation time, else its title), ``times`` (first/last visit; a note's creation and
last edit; a bookmark's date added, to the second), ``text`` (the title agrees, and for a note
every line of its text and every checklist item, with its ``[x]``/``[ ] `` mark, is in ragbag's
text). ``people`` does not apply.
"""

from __future__ import annotations

import html
import json
import re
import zipfile
from datetime import UTC, datetime, timedelta
from pathlib import Path, PurePosixPath

from tests.differential.common import PUBLIC, Outcome, ragbag_read, rel

CONNECTOR = "takeout"
_SKIP = {"SOURCES.tsv", "README.md"}
_UNIX = datetime(1970, 1, 1, tzinfo=UTC)
_NETSCAPE = re.compile(r"<!DOCTYPE\s+NETSCAPE-Bookmark-file|<DT>\s*<A\s", re.I)  # the format's marks
_A = re.compile(r"<A\s([^>]*)>(.*?)</A>", re.I | re.S)
_ATTR = re.compile(r'(\w+)="([^"]*)"')
_KEEP = ("textContent", "listContent", "userEditedTimestampUsec", "createdTimestampUsec", "isTrashed")

# The files that give no record on purpose (an empty file, a broken JSON note, shaarli's notes
# whose links are relative, a Takeout of My Activity only) are listed in
# tests/fixtures/public/takeout/README.md.
EXPLAINED: dict[str, str] = {
    "public/takeout/netscape-bookmark-parser/tests__input__google_bookmarks_nested.htm": (
        "Google Bookmarks' export writes ADD_DATE in microseconds (1515515697780642), not seconds: the"
        " plain reference reads seconds, a date past the year 50,000, so no date; ragbag tells the unit"
        " by its size (seconds, milliseconds or microseconds since 1970) and dates each bookmark in 2018."
    ),
}


def units() -> list[Path]:
    return [p for p in sorted((PUBLIC / CONNECTOR).rglob("*")) if p.is_file() and p.name not in _SKIP]


def _usec(value) -> datetime | None:
    try:
        n = int(float(value))
    except (TypeError, ValueError):
        return None
    return _UNIX + timedelta(microseconds=n) if n > 0 else None


def _web(url: str) -> bool:
    return url.lower().startswith(("http://", "https://"))


def _files(path: Path) -> list[tuple[str, bytes]]:
    if path.suffix.lower() == ".zip":
        with zipfile.ZipFile(path) as zf:
            return [(i.filename, zf.read(i)) for i in zf.infolist() if not i.is_dir()]
    return [(path.name, path.read_bytes())]


def reference(path: Path) -> dict[str, dict]:
    """kind:key → {title, times, lines} of every record the formats define."""
    out: dict[str, dict] = {}
    for name, data in _files(path):
        lower = name.lower()
        if lower.endswith(".json"):
            try:
                obj = json.loads(data.decode("utf-8-sig"))
            except (UnicodeDecodeError, ValueError):
                continue
            if isinstance(obj, dict) and isinstance(obj.get("Browser History"), list):
                _history(obj["Browser History"], out)
            elif isinstance(obj, dict) and any(k in obj for k in _KEEP) and obj.get("isTrashed") is not True:
                _note(obj, PurePosixPath(name).stem, out)
        elif lower.endswith((".htm", ".html")) and _NETSCAPE.search(text := data.decode("utf-8", "replace")):
            _bookmarks(text, out)
    return out


def _history(visits: list, out: dict) -> None:
    for v in visits:
        url = v.get("url") if isinstance(v, dict) else None
        when = _usec(v.get("time_usec")) if isinstance(v, dict) else None
        if not isinstance(url, str) or not _web(url) or when is None:
            continue
        if str(v.get("page_transition", "")).upper() in ("AUTO_SUBFRAME", "MANUAL_SUBFRAME"):
            continue
        page = out.setdefault(f"history:{url}", {"title": "", "titled": None, "times": [when, when], "lines": []})
        page["times"] = [min(page["times"][0], when), max(page["times"][1], when)]
        title = " ".join(str(v.get("title") or "").split())
        if title and (page["titled"] is None or when >= page["titled"]):
            page["title"], page["titled"] = title, when


def _note(obj: dict, stem: str, out: dict) -> None:
    created = _usec(obj.get("createdTimestampUsec"))
    edited = _usec(obj.get("userEditedTimestampUsec")) or created
    lines = [" ".join(line.split()) for line in str(obj.get("textContent") or "").splitlines() if line.strip()]
    for item in obj.get("listContent") or []:
        text = " ".join(str(item.get("text") or "").split())
        if text:
            lines.append(("[x] " if item.get("isChecked") else "[ ] ") + text)
    title = " ".join(str(obj.get("title") or "").split())
    key = f"note:{created.isoformat()}" if created else f"note:{title or stem}"
    out[key] = {"title": title, "times": [created or edited, edited], "lines": lines}


def _bookmarks(text: str, out: dict) -> None:
    for attrs, label in _A.findall(text):
        a = {k.lower(): html.unescape(v) for k, v in _ATTR.findall(attrs)}
        url = a.get("href", "").strip()
        if not _web(url):
            continue
        try:
            added = datetime.fromtimestamp(int(a["add_date"]), tz=UTC)
        except (KeyError, ValueError, OverflowError, OSError):
            added = None
        title = " ".join(html.unescape(re.sub(r"<[^>]*>", "", label)).split())
        mark = out.setdefault(f"bookmark:{url}", {"title": title, "times": [added, added], "lines": []})
        mark["title"] = mark["title"] or title
        if added and (mark["times"][0] is None or added < mark["times"][0]):
            mark["times"] = [added, added]


def _key(doc) -> str:
    kind = doc.metadata.get("kind")
    if kind == "keep":
        created = doc.metadata.get("created")
        return f"note:{created}" if created else f"note:{doc.metadata['title'] or doc.title}"
    return f"{kind}:{doc.metadata['url']}"


def _same(a: datetime | None, b: datetime | None) -> bool:
    return (a is None) == (b is None) and (a is None or b is None or abs((a - b).total_seconds()) < 1)


def compare(path: Path) -> Outcome:
    ref = reference(path)
    docs, errors = ragbag_read(CONNECTOR, path)
    mine = {_key(d): d for d in docs}
    out = Outcome(rel(path), path.parent.name, len(ref), len(docs), len(errors))
    counted = timed = texted = 0
    for key, r in ref.items():
        doc = mine.get(key)
        if doc is None:
            out.disagreements.append(f"missing in ragbag: {key}")
            continue
        counted += 1
        first, last = r["times"]
        got = (doc.created_at, doc.updated_at)
        if key.startswith("bookmark:"):
            got = (doc.created_at, doc.created_at)
        if _same(got[0], first) and _same(got[1], last):
            timed += 1
        else:
            out.disagreements.append(f"times of {key}: ragbag {got[0]}–{got[1]}, reference {first}–{last}")
        flat = " ".join(doc.text.split())
        lacking = [line for line in r["lines"] if line not in flat]
        if doc.metadata["title"] == r["title"] and not lacking:
            texted += 1
        else:
            out.disagreements.append(
                f"text of {key}: title {doc.metadata['title']!r} vs {r['title']!r}; lines missing: {lacking[:3]}"
            )
    out.disagreements += [f"only in ragbag: {k}" for k in mine if k not in ref]
    n = len(ref)
    out.checks = {"count": (counted, max(n, len(mine))), "times": (timed, n), "text": (texted, n)}
    return out
