"""The ``ragbag`` command: the typer app, its commands registered, and the one error handler.

The commands live by concern beside this module (``sources``: add, build, list, status, remove;
``search``; ``versions``: history, diff; ``eval``; ``settings``: config; ``agents``: ask, react, mcp;
``show``; ``serve``: the search page) and stay thin layers
over the engine and the Dagster definitions. Heavy imports (Dagster, torch, LanceDB) happen
inside the commands that need them, so ``ragbag add`` is instant and ``ragbag search`` never
loads Dagster. Every user-facing failure is a :class:`RagbagError`: one line on stderr, exit
code 2; so is a usage error (click's or typer's vendored click's), a failure to write because the
disk is full or the home read-only (``ragbag.core.storage_faults``), whichever library raised it,
and an unexpected failure that a damaged published index explains.
"""

from __future__ import annotations

import functools
import re
import sys

import typer
import typer.main

from ragbag.apps.cli import agents, excluding, screening, search, serve, settings, show, sources, versions
from ragbag.apps.cli import eval as evaluation
from ragbag.core.collector import pace_for_application
from ragbag.core.errors import RagbagError
from ragbag.core.home import Home
from ragbag.core.private import private_process
from ragbag.core.storage_faults import explain
from ragbag.core.terminal import line
from ragbag.index.lancedb_import import pandas_on_demand

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="RAG everything, local-first.",
    rich_markup_mode="markdown",  # not Rich markup: "[c:xxxxxx]" is what a citation looks like, not a style
)
# In this order in `ragbag --help`.
app.command()(sources.add)
app.command()(sources.build)
app.command()(search.search)
app.command("list")(sources.list_sources)
app.command()(sources.status)
app.command()(sources.remove)
app.command()(excluding.exclude)
app.command()(versions.history)
app.command()(versions.diff)
app.command("eval")(evaluation.eval_cmd)
app.add_typer(settings.config_app, name="config")
app.add_typer(screening.secrets_app, name="secrets")
app.command("ask")(agents.ask)
app.command("react")(agents.react)
app.command("mcp")(agents.mcp)
app.command("show")(show.show)
app.command("serve")(serve.serve)


@functools.cache
def _click_app() -> typer.core.TyperGroup:
    """The click command Typer makes of ``app``. Typer makes it again on every call of ``app``,
    reading every command's signature and type hints (tens of milliseconds); a process that runs
    several commands through ``main`` (a test run, a notebook) makes it once."""
    return typer.main.get_command(app)  # type: ignore[return-value]


def main() -> None:
    pace_for_application()  # before the command's imports: see ragbag.core.collector
    pandas_on_demand()  # see ragbag.index.lancedb_import
    try:
        home = Home()
        home.check_root()
        private_process(home.tmp_dir)  # owner-only files, temporaries under the home, whatever the command
        code = _click_app()(standalone_mode=False)  # returns typer.Exit's code instead of exiting
    except RagbagError as e:
        _fail(in_cli_words(e))
    except Exception as e:
        if _is_click(e, "Abort"):
            sys.exit(130)
        if _is_click(e, "ClickException"):
            _fail(_usage_message(e))
        fault = explain(e, Home(), _command())
        if fault is not None:
            _fail(str(fault))
        damage = _damage_behind(e)
        if damage is None:
            raise
        _fail(str(damage))
    sys.exit(code if isinstance(code, int) else 0)


# What a tool's message names, as the CLI does it: the engine speaks to agents in tool names
# (``find_files lists them``), and a person at the terminal has no find_files to run.
_CLI_FOR_TOOL = {
    "find_files": "`ragbag search` (or `ragbag list`)",
    "list_sources": "`ragbag list`",
    "source_status": "`ragbag status`",
    "read_file": "`ragbag show`",
    "show_citation": "`ragbag show`",
    "grep_file": "`ragbag search --mode keyword`",
}
_TOOL_NAME = re.compile(r"\b(" + "|".join(_CLI_FOR_TOOL) + r")\b")


def in_cli_words(error: RagbagError) -> str:
    """A tool's error (``ToolError``) with the tools it names put as the CLI commands that do
    the same; any other error as it is."""
    from ragbag.answer.tool_specs import ToolError

    message = str(error)
    return _TOOL_NAME.sub(lambda m: _CLI_FOR_TOOL[m.group(1)], message) if isinstance(error, ToolError) else message


def _fail(message: str) -> None:
    print(f"ragbag: error: {line(message)}", file=sys.stderr)  # messages name paths, titles, typed values
    sys.exit(2)


def _command() -> str:
    """The command the user ran, as advice to run it again names it (``build``, ``config set``)."""
    words = []
    for arg in sys.argv[1:3]:
        if not re.fullmatch(r"[a-z][a-z-]*", arg):
            break
        words.append(arg)
        if arg != "config":  # the one group: its command is the next word
            break
    return " ".join(words)


def _is_click(error: Exception, name: str) -> bool:
    """Whether ``error`` is click's ``name`` exception, of click itself or of the copy typer
    vendors (typer >= 0.29 raises ``typer._click`` exceptions, which are not click's)."""
    return any(c.__name__ == name and c.__module__.split(".")[0] in ("click", "typer") for c in type(error).__mro__)


def _usage_message(error: Exception) -> str:
    """A click usage error as one line: what was wrong, and where the command's help is. (The
    multi-line Usage block click would print says nothing the help does not.)"""
    ctx = getattr(error, "ctx", None)
    command = getattr(ctx, "command_path", None) or "ragbag"
    text = " ".join(error.format_message().split()).rstrip(".")  # type: ignore[attr-defined]
    if not text:  # a group run without a command: its help is already on the screen
        text = "missing command"
    return f"{text[:1].lower()}{text[1:]}; see `{command} --help`"


def _damage_behind(error: Exception) -> RagbagError | None:
    """An unexpected failure (a tool that read a damaged index's files itself) explained by a
    damaged published index when there is one: the user gets the one line that says which
    source to rebuild instead of a traceback."""
    try:
        from ragbag.index.published import first_damage

        return first_damage(Home())
    except Exception:
        return None


if __name__ == "__main__":
    main()
