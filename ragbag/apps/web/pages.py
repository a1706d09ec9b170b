"""The search page's HTML: the layout, the search, ask and status pages, and error pages.

Server-rendered on purpose: the pages work and read well before any script runs, and the
little JavaScript there is (``static/*.js``: search as you type, keyboard navigation, the
streamed answer, refresh progress) comes from our own files, as the Content-Security-Policy
demands (no inline script, no inline style). Every value that comes from the index or the
request goes through ``esc``; nothing here ever writes document text as markup. The reading
page is ``ragbag.apps.web.docpage``.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping, Sequence
from typing import Any
from urllib.parse import urlencode

from ragbag.search.filters import OPERATORS
from ragbag.search.request import MODES
from ragbag.search.sources import embedding_note

NAV = (("/", "search", "Search"), ("/ask", "ask", "Ask"), ("/status", "status", "Status"))
MODE_HELP = {
    "hybrid": "keywords and meaning together",
    "vector": "meaning only",
    "keyword": "exact words only (BM25)",
}


def esc(value: Any) -> str:
    """Text for HTML (element content and quoted attributes alike)."""
    return html.escape("" if value is None else str(value), quote=True)


def layout(title: str, body: str, current: str = "", scripts: Sequence[str] = ()) -> str:
    """A whole page: the header with its navigation, ``body`` in ``<main>``, our scripts."""
    here = ' aria-current="page"'
    links = "".join(f'<a href="{href}"{here if key == current else ""}>{label}</a>' for href, key, label in NAV)
    tags = "".join(f'<script src="/static/{esc(s)}" defer></script>' for s in ("common.js", *scripts))
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(title)} — ragbag</title>"
        '<link rel="icon" href="/static/icon.svg" type="image/svg+xml"><link rel="stylesheet" href="/static/app.css">'
        f"{tags}</head>\n"
        '<body><a class="skip" href="#main">Skip to content</a>'
        f'<header class="top"><span class="brand">ragbag</span><nav aria-label="Pages">{links}</nav></header>\n'
        f'<main id="main" tabindex="-1">{body}</main></body></html>\n'
    )


def filters(sources: Iterable[Mapping[str, Any]], params: Mapping[str, Sequence[str]]) -> str:
    """The facets shared by search and ask: sources, connectors, a date range, and the advanced
    fields (``--where``, ``--as-of``), pre-filled from the request."""
    rows = list(sources)
    chosen = {k: set(params.get(k, ())) for k in ("source", "connector")}

    def first(key: str) -> str:
        got = params.get(key) or [""]
        return got[0]

    def box(key: str, value: str, label: str) -> str:
        checked = " checked" if value in chosen[key] else ""
        field = f'<input type="checkbox" name="{key}" value="{esc(value)}"{checked}>'
        return f'<label class="check">{field} {label}</label>'

    source_boxes = "".join(
        box("source", r["source"], f'{esc(r["source"])} <span class="count">{int(r.get("documents") or 0)}</span>')
        for r in rows
    )
    connectors = sorted({str(r["connector"]) for r in rows})
    connector_boxes = "".join(box("connector", c, esc(c)) for c in connectors)
    return (
        '<fieldset class="facet"><legend>Sources</legend>'
        f"{source_boxes or '<p class=note>No sources registered: <code>ragbag add</code>.</p>'}</fieldset>"
        f'<fieldset class="facet"><legend>Connectors</legend>{connector_boxes}</fieldset>'
        '<fieldset class="facet"><legend>Person</legend>'
        '<label for="person" class="hint">What they sent, received, attended (by contact)</label>'
        f'<input id="person" name="person" type="text" spellcheck="false" value="{esc(first("person"))}" '
        'placeholder="Anna Weber"></fieldset>'
        '<fieldset class="facet"><legend>Date</legend>'
        f'<label for="after">From</label><input id="after" name="after" type="date" value="{esc(first("after"))}">'
        f'<label for="before">Before</label><input id="before" name="before" type="date" '
        f'value="{esc(first("before"))}"></fieldset>'
        f'<details class="facet"{" open" if first("where") or first("as_of") else ""}><summary>Advanced</summary>'
        '<label for="where">Where <span class="hint">(JSON, as <code>--where</code>)</span></label>'
        f'<input id="where" name="where" type="text" spellcheck="false" value="{esc(first("where"))}" '
        'placeholder=\'{"ext": "md"}\' aria-describedby="where-help">'
        f'<p id="where-help" class="hint">Operators: {esc(" ".join(OPERATORS))}; '
        "fields such as ext, path, sender, chat, version.</p>"
        '<label for="as_of">As of <span class="hint">(the data as it was that day)</span></label>'
        f'<input id="as_of" name="as_of" type="date" value="{esc(first("as_of"))}"></details>'
    )


def modes(params: Mapping[str, Sequence[str]]) -> str:
    chosen = (params.get("mode") or ["hybrid"])[0]
    radios = "".join(
        f'<label class="mode" title="{esc(MODE_HELP[m])}"><input type="radio" name="mode" value="{m}"'
        f"{' checked' if m == chosen else ''}> {m}</label>"
        for m in MODES
    )
    return f'<fieldset class="modes"><legend class="visually-hidden">Search mode</legend>{radios}</fieldset>'


def search_page(sources: Iterable[Mapping[str, Any]], params: Mapping[str, Sequence[str]]) -> str:
    q = (params.get("q") or [""])[0]
    body = (
        '<form id="search" class="with-facets" action="/" method="get" role="search">'
        f'<aside class="facets" aria-label="Filters">{filters(sources, params)}</aside>'
        '<div class="column">'
        '<label for="q" class="big-label">Search your data</label>'
        '<div class="searchbar">'
        f'<input id="q" name="q" type="search" value="{esc(q)}" autocomplete="off" spellcheck="false" '
        'aria-describedby="keys" aria-controls="results" autofocus>'
        '<button type="submit">Search</button></div>'
        f"{modes(params)}"
        '<p id="keys" class="hint">Results update as you type. <kbd>↓</kbd>/<kbd>↑</kbd> move through them, '
        "<kbd>Enter</kbd> opens one, <kbd>/</kbd> comes back here.</p>"
        '<p id="summary" role="status" aria-live="polite"></p>'
        '<ol id="results" class="results" aria-label="Results"></ol>'
        '<nav id="pager" class="pager" aria-label="Result pages" hidden>'
        '<button type="button" id="prev">← Previous</button><span id="pageno"></span>'
        '<button type="button" id="next">Next →</button></nav>'
        "</div></form>"
    )
    return layout(f"{q} — search" if q else "Search", body, "search", ["search.js"])


def ask_page(sources: Iterable[Mapping[str, Any]], params: Mapping[str, Sequence[str]], provider: str) -> str:
    question = (params.get("question") or [""])[0]
    body = (
        '<form id="ask" class="with-facets" action="/ask" method="get">'
        f'<aside class="facets" aria-label="Filters">{filters(sources, params)}</aside>'
        '<div class="column">'
        '<label for="question" class="big-label">Ask your data</label>'
        '<div class="searchbar">'
        f'<input id="question" name="question" type="text" value="{esc(question)}" autocomplete="off" required>'
        '<button type="submit" id="ask-button">Ask</button></div>'
        f"{modes(params)}"
        f'<p class="hint">Answered by <b>{esc(provider)}</b> (the configured provider: <code>llm.provider</code>). '
        "Each citation chip opens the passage it cites.</p>"
        '<section id="answer" class="answer" aria-live="polite" aria-busy="false" aria-label="Answer"></section>'
        '<section id="cited" class="cited" aria-label="Sources cited"></section>'
        "</div></form>"
    )
    return layout("Ask", body, "ask", ["ask.js"])


def status_page(rows: Iterable[Mapping[str, Any]], dagster_url: str) -> str:
    body_rows = []
    for r in rows:
        name, connector = str(r["source"]), str(r["connector"])
        state = "damaged" if r.get("damaged") else ("built" if r.get("built") else "not built")
        partition = urlencode({"view": "partitions", "partition": name})
        dagster = f"{dagster_url.rstrip('/')}/assets/{esc(connector)}/bm25?{esc(partition)}"
        why = f"<br><small>{esc(r['damaged'])}</small>" if r.get("damaged") else ""
        if r.get("embedding"):
            why += f'<br><small class="embedding">{esc(embedding_note(r["embedding"]))}</small>'
        body_rows.append(
            f'<tr data-source="{esc(name)}">'
            f'<th scope="row">{esc(name)}</th><td>{esc(connector)}</td><td class="path">{esc(r.get("path") or "")}</td>'
            f'<td class="num docs">{int(r.get("documents") or 0)}</td>'
            f'<td class="num chunks">{int(r.get("chunks") or 0)}</td>'
            f'<td class="last">{esc(_when(r.get("last_build")))}</td>'
            f'<td><span class="state {state.replace(" ", "-")}">{esc(state)}</span>{why}</td>'
            f'<td><a href="{dagster}" rel="noreferrer">partition in Dagster</a></td>'
            f'<td><button type="button" class="refresh" data-source="{esc(name)}">Refresh now</button></td>'
            "</tr>"
        )
    table = (
        '<table class="sources"><caption>Registered sources</caption><thead><tr>'
        '<th scope="col">Source</th><th scope="col">Connector</th><th scope="col">Path</th>'
        '<th scope="col">Documents</th><th scope="col">Chunks</th><th scope="col">Last build</th>'
        '<th scope="col">Index</th><th scope="col">Dagster</th><th scope="col">Build</th>'
        f"</tr></thead><tbody>{''.join(body_rows)}</tbody></table>"
    )
    body = (
        "<h1>Status</h1>"
        f"{table if body_rows else '<p>No sources registered: <code>ragbag add files notes ~/notes</code>.</p>'}"
        f'<p class="hint">Dagster links open the UI at <code>{esc(dagster_url)}</code> (<code>make ui</code>; '
        "<code>ragbag serve --dagster-url</code> for another). <em>Refresh now</em> runs the build "
        "<code>ragbag build SOURCE</code> runs, one at a time.</p>"
        '<section aria-label="Build progress"><h2>Build</h2>'
        '<p id="build-state" role="status" aria-live="polite">No build started from this page.</p></section>'
    )
    return layout("Status", body, "status", ["status.js"])


def error_page(status: int, message: str) -> str:
    titles = {400: "That request cannot be answered", 404: "Not found", 409: "Busy", 500: "Something went wrong"}
    body = (
        f"<h1>{esc(titles.get(status, 'Error'))}</h1>"
        f'<p class="error" role="alert">{esc(message)}</p><p><a href="/">Back to search</a></p>'
    )
    return layout(titles.get(status, "Error"), body)


def _when(value: Any) -> str:
    """An ISO time as ``YYYY-MM-DD HH:MM`` (UTC), or — when never built."""
    text = str(value or "")
    return f"{text[:10]} {text[11:16]} UTC" if len(text) >= 16 else (text or "—")
