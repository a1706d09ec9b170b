"""The `ask`, `react` and `mcp` commands (registered on the typer app in ``ragbag.apps.cli.main``).

Thin: each command parses its options and calls the engine (``ragbag.answer.ask``, ``ragbag.answer.agent``,
``ragbag.apps.mcp_server``). Errors are RagbagErrors, which ``ragbag.apps.cli.main.main`` prints in one line.
"""

from __future__ import annotations

import sys
from typing import Any

import typer

from ragbag.apps.cli.options import FILTER_OPTIONS, with_filters
from ragbag.core import jsonout
from ragbag.core.errors import RagbagError
from ragbag.core.home import Home
from ragbag.core.terminal import block, line
from ragbag.search.request import MODES

LLM = typer.Option(None, "--llm", help="Provider: extractive (default), ollama, openai, anthropic, llama-cpp.")
MODEL = typer.Option(None, "--model", help="Model name (a .gguf path for llama-cpp).")
BASE_URL = typer.Option(None, "--base-url", help="Server URL for openai-compatible / ollama / anthropic.")


def _provider(home: Home, name, model, base_url):
    from ragbag.answer import llm

    provider = llm.resolve(home, name, model, base_url)
    provider.check()
    return provider


def _print_sources(cited: list[dict[str, Any]]) -> None:
    from ragbag.apps.cli.render import sources_text

    sys.stdout.write(sources_text(cited))
    sys.stdout.flush()


@with_filters
def ask(
    question: str | None = typer.Argument(None, help="The question (optional with -i)."),
    filters: dict[str, Any] = FILTER_OPTIONS,
    mode: str = typer.Option("hybrid", "--mode", help="Retrieval: " + " | ".join(MODES) + "."),
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
    from ragbag.search.request import check_options, fields_of

    home = Home()
    options: dict[str, Any] = {**fields_of(filters), "mode": mode, "min_score": min_score}
    check_options(question, **options)  # before a provider or a model loads
    if not question and not interactive:
        raise RagbagError("give a question, or -i for an interactive session")
    if as_json and interactive:
        raise RagbagError("--json and -i do not go together")
    provider = _provider(home, llm_name, model, base_url)
    options["k"] = k or engine.settings(home).get("k", engine.DEFAULT_K)

    def one(q: str, history) -> engine.Answer:
        if as_json:
            return engine.ask(q, provider, home, history=history, **options)

        def write(text: str) -> None:
            sys.stdout.write(block(text))  # the passages' own text, streamed
            sys.stdout.flush()

        a = engine.ask(q, provider, home, history=history, on_text=write, **options)
        sys.stdout.write("\n")
        _print_sources(a.citations)
        if a.unresolved:
            sys.stdout.write(f"  (not in the retrieved context: {', '.join('c:' + c for c in a.unresolved)})\n")
        return a

    if not interactive:
        assert question  # checked above
        a = one(question, None)
        if as_json:
            print(jsonout.dumps(a.as_json(), indent=2))
        return
    history: list[tuple[str, str]] = []
    sys.stderr.write(f"ragbag ask ({line(provider.label)}) — empty line or Ctrl-D to quit\n")
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
            sys.stderr.write(f"ragbag: error: {line(e)}\n")
        pending = None


@with_filters
def react(
    question: str = typer.Argument(..., help="The question or task."),
    filters: dict[str, Any] = FILTER_OPTIONS,
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
    from ragbag.search.request import check_options, fields_of

    home = Home()
    check_options(question, **fields_of(filters))  # the agent gets them as its tools' arguments
    provider = _provider(home, llm_name, model, base_url)
    printer = _tracer() if trace else None
    result = agent.Agent(provider, Tools(home), max_steps=max_steps, filters=filters, trace=printer).run(question)
    if as_json:
        print(jsonout.dumps(result.as_json(), indent=2))
        return
    if result.forced:
        sys.stderr.write(f"(answer forced: {line(result.forced)})\n")
    sys.stdout.write(block(result.answer) + "\n")
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
        con.print(Text(f"{kind:>11}: ", style="bold").append(block(text), style=styles.get(kind, "")))

    return show


def mcp(
    allow_build: bool = typer.Option(False, "--allow-build", help="Offer the build tool (refresh a source)."),
    max_chars: int = typer.Option(20_000, "--max-chars", min=2_000, help="Budget for one tool result (characters)."),
) -> None:
    """Serve the retrieval tools over MCP on stdio (for Claude Code and other agents)."""
    from ragbag.apps.mcp_server import serve

    serve(Home(), allow_build=allow_build, max_chars=max_chars)
