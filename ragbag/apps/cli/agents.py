"""The `ask`, `react` and `mcp` commands, registered on the main typer app by ``register(app)``.

Thin: each command parses its options and calls the engine (``ragbag.answer.ask``, ``ragbag.answer.agent``,
``ragbag.apps.mcp_server``). Errors are RagbagErrors, which ``ragbag.apps.cli.main.main`` prints in one line.
"""

from __future__ import annotations

import sys
from typing import Any

import typer

from ragbag.core import jsonout
from ragbag.core.errors import RagbagError
from ragbag.core.home import Home

SOURCE = typer.Option(None, "--source", help="Only these sources (repeatable).")
CONNECTOR = typer.Option(None, "--connector", help="Only these connectors (repeatable).")
WHERE = typer.Option(None, "--where", help='Metadata filter, e.g. \'{"ext": {"==": "md"}}\'.')
AFTER = typer.Option(None, "--after", help="Only records dated at/after (YYYY-MM-DD or 30d).")
BEFORE = typer.Option(None, "--before", help="Only records dated before.")
LLM = typer.Option(None, "--llm", help="Provider: extractive (default), ollama, openai, anthropic, llama-cpp.")
MODEL = typer.Option(None, "--model", help="Model name (a .gguf path for llama-cpp).")
BASE_URL = typer.Option(None, "--base-url", help="Server URL for openai-compatible / ollama / anthropic.")


def _filters(source, connector, where, after, before) -> dict[str, Any]:
    from ragbag.search import filters, query

    filters.parse_where(where)  # a bad filter fails before anything heavy loads
    filters.parse_time(after), filters.parse_time(before)
    query.check_connectors(connector)
    return {
        "sources": source or None,
        "connectors": connector or None,
        "where": where,
        "after": after,
        "before": before,
    }


def _provider(home: Home, name, model, base_url):
    from ragbag.answer import llm

    provider = llm.resolve(home, name, model, base_url)
    provider.check()
    return provider


def _print_sources(citations: list[dict[str, Any]], out=sys.stdout) -> None:
    if not citations:
        return
    out.write("\nSources:\n")
    for c in citations:
        date = f" — {str(c['date'])[:10]}" if c.get("date") else ""
        out.write(
            f"  [c:{c['citation']}] {c.get('title') or '(untitled)'} — {c['source']} — {c.get('uri') or ''}{date}\n"
        )
    out.flush()


def ask(
    question: str | None = typer.Argument(None, help="The question (optional with -i)."),
    source: list[str] | None = SOURCE,
    connector: list[str] | None = CONNECTOR,
    where: str | None = WHERE,
    after: str | None = AFTER,
    before: str | None = BEFORE,
    mode: str = typer.Option("hybrid", "--mode", help="Retrieval: hybrid, vector or keyword."),
    llm_name: str | None = LLM,
    model: str | None = MODEL,
    base_url: str | None = BASE_URL,
    k: int | None = typer.Option(None, "-k", "--top-k", min=1, max=50, help="Passages to retrieve (default 6)."),
    min_score: float | None = typer.Option(
        None, "--min-score", help="Relevance floor on the calibrated hybrid score (default 0.1)."
    ),
    interactive: bool = typer.Option(False, "-i", "--interactive", help="Keep asking; the conversation is kept."),
    as_json: bool = typer.Option(False, "--json", help="Print {answer, citations, model} as JSON."),
) -> None:
    """Answer a question from your data, with inline citations [c:xxxxxx] and their sources."""
    from ragbag.answer import ask as engine
    from ragbag.search.query import check_min_score

    home = Home()
    flt = _filters(source, connector, where, after, before)
    check_min_score(min_score)
    if not question and not interactive:
        raise RagbagError("give a question, or -i for an interactive session")
    if as_json and interactive:
        raise RagbagError("--json and -i do not go together")
    provider = _provider(home, llm_name, model, base_url)
    k = k or engine.settings(home).get("k", engine.DEFAULT_K)

    def one(q: str, history) -> engine.Answer:
        if as_json:
            return engine.ask(q, provider, home, k=k, min_score=min_score, history=history, mode=mode, **flt)

        def write(text: str) -> None:
            sys.stdout.write(text)
            sys.stdout.flush()

        a = engine.ask(q, provider, home, k=k, min_score=min_score, history=history, on_text=write, mode=mode, **flt)
        sys.stdout.write("\n")
        _print_sources(a.citations)
        if a.unresolved:
            sys.stdout.write(f"  (not in the retrieved context: {', '.join('c:' + c for c in a.unresolved)})\n")
        return a

    if not interactive:
        a = one(question, None)
        if as_json:
            print(jsonout.dumps(a.as_json(), indent=2))
        return
    history: list[tuple[str, str]] = []
    sys.stderr.write(f"ragbag ask ({provider.label}) — empty line or Ctrl-D to quit\n")
    pending = question
    while True:
        if pending is None:
            try:
                pending = input("\nask> ").strip()
            except (EOFError, KeyboardInterrupt):
                sys.stdout.write("\n")
                return
            if not pending or pending.lower() in ("exit", "quit", ":q"):
                return
        try:
            a = one(pending, history)
            if a.relevant:
                history.append((pending, a.answer))
                del history[:-6]  # the last few turns are enough context
        except RagbagError as e:
            sys.stderr.write(f"ragbag: error: {e}\n")
        pending = None


def react(
    question: str = typer.Argument(..., help="The question or task."),
    source: list[str] | None = SOURCE,
    connector: list[str] | None = CONNECTOR,
    where: str | None = WHERE,
    after: str | None = AFTER,
    before: str | None = BEFORE,
    llm_name: str | None = LLM,
    model: str | None = MODEL,
    base_url: str | None = BASE_URL,
    max_steps: int = typer.Option(8, "--max-steps", min=1, max=50, help="Most tool steps before a forced answer."),
    trace: bool = typer.Option(False, "--trace", help="Print each thought, action and observation (stderr)."),
    as_json: bool = typer.Option(False, "--json", help="Print {answer, citations, model, steps} as JSON."),
) -> None:
    """A multi-step agent: search, find_files, read_file, grep_file, then a cited answer."""
    from ragbag.answer import agent
    from ragbag.answer.tools import Tools

    home = Home()
    flt = _filters(source, connector, where, after, before)
    flt = {
        "source": flt["sources"],
        "connector": flt["connectors"],
        "where": flt["where"],
        "after": after,
        "before": before,
    }
    provider = _provider(home, llm_name, model, base_url)
    printer = _tracer() if trace else None
    result = agent.Agent(provider, Tools(home), max_steps=max_steps, filters=flt, trace=printer).run(question)
    if as_json:
        print(jsonout.dumps(result.as_json(), indent=2))
        return
    if result.forced:
        sys.stderr.write(f"(answer forced: {result.forced})\n")
    sys.stdout.write(result.answer + "\n")
    _print_sources(result.citations)
    if result.unresolved:
        sys.stdout.write(f"  (unknown citations: {', '.join('c:' + c for c in result.unresolved)})\n")


def _tracer():
    from rich.console import Console
    from rich.text import Text

    con = Console(stderr=True, highlight=False)
    styles = {
        "thought": "italic cyan",
        "action": "bold magenta",
        "observation": "dim",
        "error": "yellow",
        "final": "green",
    }

    def show(kind: str, text: str) -> None:
        if kind == "final":
            return  # printed on stdout
        if kind == "observation" and len(text) > 600:
            text = text[:600] + f"… ({len(text)} chars)"
        con.print(Text(f"{kind:>11}: ", style="bold").append(text, style=styles.get(kind, "")))

    return show


def mcp(
    allow_build: bool = typer.Option(False, "--allow-build", help="Offer the build tool (refresh a source)."),
    max_chars: int = typer.Option(20_000, "--max-chars", min=2_000, help="Budget for one tool result (characters)."),
) -> None:
    """Serve the retrieval tools over MCP on stdio (for Claude Code and other agents)."""
    from ragbag.apps.mcp_server import serve

    serve(Home(), allow_build=allow_build, max_chars=max_chars)


def register(app: typer.Typer) -> None:
    app.command("ask")(ask)
    app.command("react")(react)
    app.command("mcp")(mcp)
