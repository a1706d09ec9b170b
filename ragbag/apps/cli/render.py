"""Terminal rendering of search hits and answers' sources: rank, score, where it came from, a
snippet with the query's words marked (``ragbag.text.snippets``: the search page's marks too).
Every document-derived string passes through ``ragbag.core.terminal`` first."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.text import Text

from ragbag.answer.citations import marker
from ragbag.core.rows import Hit
from ragbag.core.terminal import line
from ragbag.search import people
from ragbag.text import snippets

SNIPPET_CHARS = 320
CODE_LINES = 12  # lines of a code hit shown in the terminal


def marked(segments: list[list[Any]]) -> Text:
    """Snippet segments as terminal text: each piece made safe to print, the matches bold."""
    out = Text()
    for piece, match in segments:
        out.append(line(piece), style="bold yellow" if match else "")
    return out


def print_hits(console: Console, query: str, hits: list[Hit], floor: float | None = None) -> None:
    """Hits of ``query.results`` as the terminal shows them."""
    if not hits:
        console.print(
            "no results" + (f" at or above the {floor:g} floor (`--min-score 0` shows weaker hits)" if floor else "")
        )
        return
    terms = snippets.query_terms(query)
    for rank, hit in enumerate(hits, 1):
        names = hit.get("people") or {}  # a contact's raw handle shown as their name
        where = line(people.shown(hit["title"] or hit["uri"], names))
        meta = hit["metadata"] or {}
        lines = ""
        if meta.get("line_start"):
            lines = f":{meta['line_start']}-{meta.get('line_end', meta['line_start'])}"
        elif meta.get("page_start"):
            first, last = meta["page_start"], meta.get("page_end") or meta["page_start"]
            lines = f" p.{first}" if first == last else f" pp.{first}–{last}"
        until = hit.get("valid_to")
        if until is not None:  # an earlier version's text (None: current)
            lines += f" (v{hit['version']}, until {str(until)[:10]})"
        console.print(
            Text.assemble(
                (f"{rank:>2}. ", "bold"),
                (f"{hit['score']:.4f} ", "cyan"),
                (f"[{line(hit['source'])}] ", "magenta"),
                (where, "bold"),
                (lines, ""),
                (f"  [c:{hit['citation']}]", "dim"),
            )
        )
        if hit["uri"] and line(hit["uri"]) != where:
            console.print(Text(f"    {line(hit['uri'])}", style="dim"))
        if hit["connector"] == "code" and meta.get("line_start"):
            for number, code in code_lines(hit["chunk_text"], int(meta["line_start"]), terms):
                console.print(Text(f"    {number:>5} │ ", style="dim").append(marked(snippets.segments(code, terms))))
            continue
        text = people.shown(hit["text"], names)
        console.print(Text("    ").append(marked(snippets.snippet(text, terms, SNIPPET_CHARS))))


def code_lines(text: str, first_line: int, terms: list[str], limit: int = CODE_LINES) -> list[tuple[int, str]]:
    """Up to ``limit`` numbered lines of a code chunk, as written (code flattened to one line is
    unreadable), starting a little above the first line that holds a query term."""
    lines = text.rstrip("\n").split("\n")
    pattern = snippets.matcher(terms)
    hit = next((n for n, line in enumerate(lines) if pattern and pattern.search(line)), 0)
    start = max(0, min(hit - 2, len(lines) - limit))
    return [(first_line + n, line(lines[n].rstrip())) for n in range(start, min(len(lines), start + limit))]


def sources_text(cited: list[dict[str, Any]]) -> str:
    """The "Sources:" list printed under an answer ("" when nothing is cited)."""
    if not cited:
        return ""
    lines = ["\nSources:\n"]
    for c in cited:
        date = f" — {str(c['date'])[:10]}" if c.get("date") else ""
        page = f" p.{c['page']}" if c.get("page") else ""
        lines.append(
            f"  {marker(c['citation'])} {line(c.get('title') or '(untitled)')}{page} — {line(c['source'])} — "
            f"{line(c.get('uri') or '')}{date}\n"
        )
    return "".join(lines)
