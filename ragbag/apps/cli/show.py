"""``ragbag show c:XXXXXX``: a cited passage where it stands in its source (``ragbag.answer.visual``).

A PDF citation becomes a PNG of its page(s) with the passage outlined; anything else (and a PDF,
on request) the passage marked inside its section, as an HTML file or on the terminal. Files are
written where ``--out`` says, else into the current directory under the citation's name, and
the command says where; ``--json`` adds the boxes and pages.
"""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from ragbag.core import jsonout
from ragbag.core.errors import RagbagError
from ragbag.core.home import Home
from ragbag.core.terminal import block, line

_SUFFIXES = {".png": "png", ".html": "html", ".htm": "html"}


def show(
    citation: str = typer.Argument(..., help="A citation id from search, ask or react: c:1a2b3c."),
    out: Path | None = typer.Option(
        None, "--out", "-o", help="Where to write the PNG or HTML (a file, or a folder for the default name)."
    ),
    fmt: str | None = typer.Option(
        None,
        "--format",
        help="png (a PDF's page, the default for PDF citations), html, or text (the default for the rest).",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the citation, its pages and boxes as JSON."),
) -> None:
    """Show a cited passage in its source: a PDF page with the passage outlined, or its section."""
    from ragbag.answer import visual

    if fmt is not None and fmt not in visual.FORMATS:
        raise RagbagError(f"--format must be one of {', '.join(visual.FORMATS)}, not {fmt!r}; see `ragbag show --help`")
    if fmt is None and out is not None and not out.is_dir():
        fmt = _SUFFIXES.get(out.suffix.lower())
    cid = visual.parse_id(citation)  # a malformed id fails before any index loads
    view = visual.make(Home(), cid, picture=fmt in (None, "png"), text_view=fmt in ("html", "text"))
    fmt = fmt or ("png" if view.kind == "pdf" else "text")
    if fmt == "png" and view.image is None:
        raise RagbagError(
            f"c:{view.citation} is from {view.uri or view.title}, not a PDF: there is no page to draw "
            "(use --format html or text)"
        )
    written: Path | None = None
    if fmt == "png":
        written = _write(_target(out, f"citation-{view.citation}.png"), view.png())
    elif fmt == "html":
        written = _write(_target(out, f"citation-{view.citation}.html"), view.html().encode())
    elif out is not None:
        written = _write(_target(out, f"citation-{view.citation}.txt"), view.terminal(ansi=False).encode())
    if as_json:
        print(jsonout.dumps({**view.as_json(), "format": fmt, "out": str(written) if written else None}, indent=2))
    elif written is None:
        sys.stdout.write(view.terminal(ansi=sys.stdout.isatty(), text=block, label=line))
    else:
        where = line(view.title or view.uri)
        pages = ", ".join(f"page {p.page}: {len(p.boxes)} line(s) outlined" for p in view.pages)
        note = f" ({pages})" if pages and fmt == "png" else ""
        print(f"wrote {line(written)} — [c:{view.citation}] {where}{note}")


def _target(out: Path | None, name: str) -> Path:
    if out is None:
        return Path(name)
    return out / name if out.is_dir() else out


def _write(path: Path, data: bytes) -> Path:
    try:
        path.write_bytes(data)
    except OSError as e:
        raise RagbagError(f"{path}: cannot write ({e.strerror or e})") from None
    return path
