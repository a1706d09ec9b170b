"""``ragbag history`` and ``ragbag diff``: a document's kept versions, through the same tools
agents and MCP use (``ragbag.answer.tools``), so the three never disagree."""

from __future__ import annotations

import typer
from rich.table import Table
from rich.text import Text

from ragbag.apps.cli.console import console
from ragbag.core import jsonout
from ragbag.core.terminal import line


def history(
    document: str = typer.Argument(..., help="A doc_id (from search or find_files), or the document's path or uri."),
    as_json: bool = typer.Option(False, "--json", help="Print the versions as JSON."),
) -> None:
    """List a document's kept versions with their dates and sizes."""
    result = _tools().call("history", _which(document))
    if as_json:
        print(jsonout.dumps(result, indent=2))
        return
    out = console()
    state = "deleted; " if result["deleted"] else ""
    title = line(result["title"] or result["uri"] or "")
    out.print(Text.assemble((title, "bold"), f"  [{line(result['source'])}] {state}"))
    out.print(Text(f"{line(result['uri'])}\ndoc_id {result['doc_id']}", style="dim"))
    table = Table(box=None, pad_edge=False)
    for column in ("version", "valid from", "valid to", "characters"):
        table.add_column(column, justify="right" if column in ("version", "characters") else "left")
    for v in result["versions"]:
        until = "current" if v["current"] else (v["valid_to"] or "")[:19]
        cells = (v["version"], (v["valid_from"] or "(unknown)")[:19], until, v["chars"])
        table.add_row(*(Text(line(c)) for c in cells))  # a cell given as str would be markup
    out.print(table)


def diff(
    document: str = typer.Argument(..., help="A doc_id, or the document's path or uri."),
    from_version: int = typer.Argument(..., help="The earlier version."),
    to_version: int | None = typer.Argument(None, help="The later version (default: the latest)."),
    context: int = typer.Option(3, "--context", min=0, help="Unchanged lines around each change."),
    as_json: bool = typer.Option(False, "--json", help="Print the diff as JSON."),
) -> None:
    """Show what changed between two versions of a document (a unified diff)."""
    tools = _tools()
    doc_id = tools.call("history", _which(document))["doc_id"]
    args = {"doc_id": doc_id, "from_version": from_version, "context": context}
    if to_version is not None:
        args["to_version"] = to_version
    result = tools.call("diff", args)
    if as_json:
        print(jsonout.dumps(result, indent=2))
        return
    out = console()
    for text in result["diff"]:
        style = (
            "green" if text.startswith("+") else "red" if text.startswith("-") else "cyan" if text[:2] == "@@" else ""
        )
        out.print(Text(line(text), style=style))
    if result.get("note"):
        out.print(Text(line(result["note"]), style="dim"))


def _which(document: str) -> dict[str, str]:
    """A doc_id (32 hex digits) or a path/uri."""
    is_id = len(document) == 32 and all(c in "0123456789abcdef" for c in document)
    return {"doc_id": document} if is_id else {"path": document}


def _tools():
    from ragbag.answer.tools import Tools

    return Tools()
