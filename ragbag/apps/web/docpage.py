"""The reading page: a document with the passage marked, and the page of a version diff.

The document is shown as text in a ``<pre>``-like block (``white-space: pre-wrap``): its text is
escaped piece by piece, the passage wrapped in ``<mark id="hit">`` (a link to ``#hit`` scrolls
to it without any script), the query's words inside it emphasised, and a PDF's page breaks
(``\\f``) shown as page headings. Beside it: where the passage is from, its metadata, the
passages just before and after it, the document's versions, and, for a PDF, the page drawn by
``ragbag show``'s renderer with the cited lines outlined (an ``<img>`` of ``/page.png``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlencode

from ragbag.apps.web.hits import doc_href
from ragbag.apps.web.pages import esc, layout
from ragbag.apps.web.reader import Reading
from ragbag.text.snippets import query_terms, segments

# Metadata fields holding ISO times, shown to the minute.
DATES = frozenset({"date", "created", "updated", "start", "end", "due", "first_visit", "last_visit"})


def doc_page(r: Reading, query: str = "") -> str:
    title = str(r.doc.get("title") or r.doc.get("uri") or r.doc.get("doc_id"))
    head = (
        f"<h1>{esc(title)}</h1>"
        f'<p class="where">{esc(r.doc.get("source"))} · {esc(r.doc.get("connector"))} · '
        f'<span class="path">{_link(str(r.doc.get("uri") or ""))}</span></p>'
    )
    if r.citation:
        head += (
            f'<p class="hint">Passage <a href="#hit">[c:{esc(r.citation)}]</a> is marked below '
            f"(characters {r.offset + r.hit[0] if r.hit else '?'}–{r.offset + r.hit[1] if r.hit else '?'} "
            f"of {r.length}).</p>"
        )
    if not r.current:
        head += f'<p class="note" role="note">This is version {r.version}, not the current one.</p>'
    body = (
        f'<div class="reader">{head}'
        f'<article class="doc" aria-label="Document text">{_window_links(r, "top")}'
        f'<div class="text">{_text(r, query_terms(query))}</div>{_window_links(r, "bottom")}</article>'
        f'<aside class="side" aria-label="About this document">{_about(r)}{_neighbours(r, query)}'
        f"{_versions(r)}{_picture(r)}</aside></div>"
    )
    return layout(title, body, scripts=["doc.js"])


def diff_page(result: Mapping[str, Any]) -> str:
    """A unified diff between two versions, added and removed lines marked by class."""
    lines = [f'<span class="line {_kind(line)}">{esc(line)}</span>' for line in result.get("diff") or []]
    title = f"{result.get('title') or result.get('uri')}: v{result['from_version']} → v{result['to_version']}"
    back = f"/doc?{urlencode({'doc_id': result['doc_id']})}"
    body = (
        f"<h1>{esc(title)}</h1><p>{int(result.get('added_lines') or 0)} line(s) added, "
        f'{int(result.get("removed_lines") or 0)} removed. <a href="{esc(back)}">Read the current version</a></p>'
        f'<pre class="diff">{"".join(lines) or "(no difference)"}</pre>'
    )
    return layout(title, body)


def _kind(line: str) -> str:
    """A unified diff line's kind, as its CSS class."""
    for prefix, kind in (("---", "head"), ("+++", "head"), ("@@", "hunk"), ("+", "add"), ("-", "del")):
        if line.startswith(prefix):
            return kind
    return "same"


def _text(r: Reading, terms: list[str]) -> str:
    """The window's text escaped, the passage marked, page breaks as headings."""
    page = [r.first_page]

    def plain(text: str) -> str:
        out = []
        for n, part in enumerate(text.split("\f")):
            if n:
                if page[0] is not None:
                    page[0] += 1
                label = f"page {page[0]}" if page[0] is not None else "page break"
                out.append(f'<span class="pagebreak" role="separator">{label}</span>')
            out.append(esc(part))
        return "".join(out)

    if r.hit is None:
        return plain(r.text)
    s, e = r.hit
    inner = "".join(
        plain(piece) if not match else f'<b class="term">{plain(piece)}</b>'
        for piece, match in segments(r.text[s:e], terms)
    )
    return f'{plain(r.text[:s])}<mark id="hit" tabindex="-1">{inner}</mark>{plain(r.text[e:])}'


def _window_links(r: Reading, where: str) -> str:
    """Links to the text before and after this window of a long document."""
    if r.offset == 0 and r.end >= r.length:
        return ""
    base: dict[str, Any] = {"doc_id": r.doc["doc_id"]}
    if not r.current:
        base["version"] = r.version
    links = []
    if r.offset > 0:
        prev = max(0, r.offset - (r.end - r.offset))
        links.append(f'<a href="/doc?{esc(urlencode({**base, "offset": prev}))}">← earlier text</a>')
    links.append(f"<span>characters {r.offset}–{r.end} of {r.length}</span>")
    if r.end < r.length:
        links.append(f'<a href="/doc?{esc(urlencode({**base, "offset": r.end}))}">later text →</a>')
    return f'<nav class="window {where}" aria-label="Parts of the document">{" ".join(links)}</nav>'


def _about(r: Reading) -> str:
    rows = {
        "source": r.doc.get("source"),
        "connector": r.doc.get("connector"),
        "date": r.doc.get("date"),
        "version": r.version,
        "citation": f"c:{r.citation}" if r.citation else None,
        **r.meta,
    }
    items = "".join(f"<dt>{esc(k)}</dt><dd>{_value(k, v)}</dd>" for k, v in rows.items() if v not in (None, "", [], {}))
    return f'<section><h2>Details</h2><dl class="meta">{items}</dl></section>'


def _value(key: str, value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return esc(", ".join(str(v) for v in value))
    if isinstance(value, Mapping):
        return esc(", ".join(f"{k}: {v}" for k, v in value.items()))
    if key in ("url", "uri") and isinstance(value, str):
        return _link(value)
    if key in DATES and isinstance(value, str) and len(value) >= 16 and value[10] == "T":
        return esc(f"{value[:10]} {value[11:16]}")
    return esc(value)


def _link(uri: str) -> str:
    """A web address as a link (no referrer, a new browsing context); anything else as text."""
    if uri.startswith(("http://", "https://")):
        return f'<a href="{esc(uri)}" rel="noreferrer noopener" target="_blank">{esc(uri)}</a>'
    return esc(uri)


def _neighbours(r: Reading, query: str) -> str:
    if not r.neighbours:
        return ""
    items = "".join(
        f'<li><a href="{esc(doc_href(n["citation"], query))}">{"Before" if n["where"] == "before" else "After"} '
        f"[c:{esc(n['citation'])}]</a><p>{esc(n['preview'])}</p></li>"
        for n in r.neighbours
    )
    return f'<section><h2>Nearby passages</h2><ul class="nearby">{items}</ul></section>'


def _versions(r: Reading) -> str:
    if len(r.versions) < 2:
        return ""
    items = []
    for v in r.versions:
        label = f"v{v['version']}" + (" (current)" if v.get("current") else "")
        since = str(v.get("valid_from") or "")[:10]
        link = f"/doc?{urlencode({'doc_id': r.doc['doc_id'], 'version': v['version']})}"
        here = ' aria-current="page"' if v["version"] == r.version else ""
        diff = ""
        if v["version"] != r.versions[0]["version"]:
            q = urlencode({"doc_id": r.doc["doc_id"], "from": r.versions[0]["version"], "to": v["version"]})
            diff = f' · <a href="/diff?{esc(q)}">diff from v{r.versions[0]["version"]}</a>'
        items.append(
            f'<li><a href="{esc(link)}"{here}>{esc(label)}</a> since {esc(since)}, '
            f"{int(v.get('chars') or 0)} characters{diff}</li>"
        )
    return f'<section><h2>Versions</h2><ol class="versions">{"".join(items)}</ol></section>'


def _picture(r: Reading) -> str:
    if not r.picture or not r.citation:
        return ""
    src = f"/page.png?{urlencode({'cite': r.citation})}"
    page = r.meta.get("page", "")
    return (
        f'<section><h2>On the page</h2><a href="{esc(src)}"><img class="page" src="{esc(src)}" loading="lazy" '
        f'alt="Page {esc(page)} of {esc(r.doc.get("title") or "the PDF")}, the cited lines outlined"></a></section>'
    )
