"""The ``ragbag`` command: a thin layer over the engine and the Dagster definitions.

Heavy imports (Dagster, torch, LanceDB) happen inside the commands that need them, so
``ragbag add`` is instant and ``ragbag search`` never loads Dagster. Every user-facing failure is
a :class:`RagbagError`: one line on stderr, exit code 2; so is a usage error (click's or typer's
vendored click's) and an unexpected failure that a damaged published index explains.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import typer

from ragbag.core import jsonout
from ragbag.core.errors import RagbagError
from ragbag.core.home import Home, private_process

app = typer.Typer(add_completion=False, no_args_is_help=True, help="RAG everything, local-first.")

STAGE_LABELS = {"read": "read", "chunk": "chunk", "embed": "embed", "index": "index"}


def main() -> None:
    try:
        home = Home()
        home.check_root()
        private_process(home)  # owner-only files, temporaries under the home, whatever the command
        code = app(standalone_mode=False)  # returns typer.Exit's code instead of exiting
    except RagbagError as e:
        _fail(str(e))
    except Exception as e:
        if _is_click(e, "Abort"):
            sys.exit(130)
        if _is_click(e, "ClickException"):
            _fail(_usage_message(e))
        damage = _damage_behind(e)
        if damage is None:
            raise
        _fail(str(damage))
    sys.exit(code if isinstance(code, int) else 0)


def _fail(message: str) -> None:
    print(f"ragbag: error: {message}", file=sys.stderr)
    sys.exit(2)


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
        from ragbag.build.stages import first_damage

        return first_damage(Home())
    except Exception:
        return None


def _known_connectors() -> tuple[str, ...]:
    from ragbag import connectors

    return connectors.NAMES


def _console(stderr: bool = False):
    from rich.console import Console

    stream = sys.stderr if stderr else sys.stdout
    return Console(stderr=stderr, highlight=False, width=None if stream.isatty() else 160)


@app.command()
def add(
    connector: str = typer.Argument(..., help="Connector type: files, code."),
    name: str = typer.Argument(..., help="A name for this source (letters, digits, . _ -)."),
    path: str | None = typer.Argument(None, help="File or folder to index (default: the connector's usual places)."),
    schedule: str | None = typer.Option(None, "--schedule", help="Refresh cron for this source under dagster dev."),
    profile: str | None = typer.Option(
        None, "--profile", help="Graph profile: fast (vectors kept) or compact (vectors dropped)."
    ),
    follow_links_outside: bool = typer.Option(
        False,
        "--follow-links-outside",
        help="Also read symlinks that point outside PATH (never /proc, /sys, pipes or devices).",
    ),
) -> None:
    """Register a source in $RAGBAG_HOME/sources.yaml."""
    home = Home()
    options = {}
    if schedule is not None:
        from dagster._utils.schedules import is_valid_cron_string

        if not is_valid_cron_string(schedule):
            raise RagbagError(f"--schedule {schedule!r} is not a valid cron string (e.g. '0 7 * * *')")
        options["schedule"] = schedule
    if profile is not None:
        from ragbag.index.graph import PROFILES

        if profile not in PROFILES:
            raise RagbagError(f"--profile {profile!r}: use one of {', '.join(PROFILES)}")
        options["profile"] = profile
    if follow_links_outside:
        from ragbag.connectors._walk import OPTION

        options[OPTION] = True
    found: list[Path] = []
    if path is None:
        found = _discover(connector)
    src = home.add_source(name, connector, path or "", known=_known_connectors(), options=options)
    _sync_partitions(home, add=[src])
    where = src.path or "default places: " + ", ".join(str(p) for p in found)
    _console().print(f"added {src.connector} source [bold]{src.name}[/] → {where}")


def _discover(connector: str) -> list[Path]:
    """Data of this connector in the platform's default places; an error says where it looked."""
    from ragbag import connectors

    if connector not in connectors.NAMES:
        return []  # add_source reports the unknown connector
    module = connectors.get(connector)
    if not hasattr(module, "discover"):
        raise RagbagError(f"connector {connector!r} needs a PATH: ragbag add {connector} NAME PATH")
    found, looked = module.discover()
    if not found:
        raise RagbagError(f"no {connector} data found; looked in: {', '.join(looked)}")
    return found


@app.command()
def build(
    names: list[str] | None = typer.Argument(None, help="Sources to build (default: all)."),
    docs: str | None = typer.Option(None, "--docs", help="Add a files source for this folder first (LEANN habit)."),
    as_json: bool = typer.Option(False, "--json", help="Print the per-source report as JSON."),
) -> None:
    """Build sources through Dagster: read, chunk, embed, index."""
    home = Home().ensure()
    names = list(names or [])
    if docs is not None:
        if len(names) != 1:
            raise RagbagError("--docs needs exactly one source name: ragbag build NAME --docs PATH")
        registered = home.sources()
        if names[0] not in registered:
            src = home.add_source(names[0], "files", docs, known=_known_connectors())
            _sync_partitions(home, add=[src])
        elif Path(registered[names[0]].path) != Path(docs).expanduser().resolve():
            raise RagbagError(f"source {names[0]!r} already exists for {registered[names[0]].path}")
    registered = home.sources()
    for n in names:
        if n not in registered:
            raise RagbagError(f"no source named {n!r}; see `ragbag list`")
    targets = [registered[n] for n in (names or sorted(registered))]
    if not targets:
        raise RagbagError("no sources registered: `ragbag add CONNECTOR NAME PATH` first")

    from ragbag.apps.runner import run_builds

    reports = run_builds(home, targets, show_progress=not as_json and sys.stderr.isatty())
    if as_json:
        print(jsonout.dumps(reports, indent=2))
    else:
        _print_reports(reports)
    if any(r["status"] != "success" for r in reports):
        raise typer.Exit(1)


@app.command()
def search(
    query: str = typer.Argument(..., help="What to look for."),
    k: int = typer.Option(10, "-k", "--top-k", min=1, help="How many hits."),
    source: list[str] | None = typer.Option(None, "--source", help="Only these sources (repeatable)."),
    connector: list[str] | None = typer.Option(None, "--connector", help="Only these connectors (repeatable)."),
    where: str | None = typer.Option(None, "--where", help='Metadata filter, e.g. \'{"ext": {"==": ".md"}}\'.'),
    after: str | None = typer.Option(None, "--after", help="Only records dated at/after (YYYY-MM-DD or 30d)."),
    before: str | None = typer.Option(None, "--before", help="Only records dated before."),
    mode: str = typer.Option("hybrid", "--mode", help="hybrid, vector or keyword."),
    min_score: float | None = typer.Option(
        None,
        "--min-score",
        help="Drop hits scoring below this (the mode's "
        "score: calibrated 0..1 for hybrid, cosine for vector, BM25 for keyword).",
    ),
    context: int = typer.Option(0, "--context", min=0, help="Merge N neighbouring chunks on each side into each hit."),
    collapse: bool = typer.Option(True, "--collapse/--no-collapse", help="Collapse near-duplicate hits."),
    width: int | None = typer.Option(None, "--width", min=1, help="Graph search width (recall vs speed)."),
    recompute: int | None = typer.Option(
        None, "--recompute", min=1, help="Compact sources: exact embeddings recomputed per query."
    ),
    rerank: bool = typer.Option(
        False,
        "--rerank",
        help="Re-score the best candidates with the second-stage "
        "models (multilingual-e5-small and SPLADE-tiny; a few seconds per query).",
    ),
    rerank_depth: int | None = typer.Option(
        None, "--rerank-depth", min=2, help="How many candidates --rerank re-scores."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print hits as a JSON array."),
) -> None:
    """Search every built source (hybrid BM25 + vector by default)."""
    from ragbag.search import filters

    filters.parse_where(where)  # fail on a bad filter before anything heavy loads
    filters.parse_time(after), filters.parse_time(before)
    from ragbag.search import query as q

    hits = q.search(
        query,
        k=k,
        sources=source,
        connectors=connector,
        where=where,
        after=after,
        before=before,
        mode=mode,
        min_score=min_score,
        context=context,
        collapse=collapse,
        width=width,
        recompute=recompute,
        rerank=_rerank_depth(rerank, rerank_depth),
    )
    if as_json:
        print(jsonout.dumps(jsonout.records(hits), indent=2))
        return
    from ragbag.apps.cli.render import print_hits

    print_hits(_console(), query, hits, min_score)


def _rerank_depth(rerank: bool, depth: int | None) -> int:
    if not rerank:
        return 0
    from ragbag.models import rerank as second_stage

    return depth or second_stage.DEPTH


@app.command("list")
def list_sources(as_json: bool = typer.Option(False, "--json")) -> None:
    """Every registered source with its size and last build."""
    rows = _status_rows(Home())
    if as_json:
        print(jsonout.dumps(rows, indent=2))
        return
    from rich.table import Table

    table = Table("source", "connector", "path", "documents", "chunks", "profile", "last build", "bytes")
    for r in rows:
        table.add_row(
            r["source"],
            r["connector"],
            r["path"],
            str(r["documents"] if r["built"] else "-"),
            str(r["chunks"] if r["built"] else "-"),
            r["profile"] or "-",
            "damaged" if r["damaged"] else r["last_build"] or "never",
            _human(r["bytes"]),
        )
    _console().print(table if rows else "no sources yet: `ragbag add CONNECTOR NAME PATH`")


@app.command()
def status(
    name: str | None = typer.Argument(None, help="One source (default: all)."),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Build state of sources: what is indexed, with which model, and whether the path is there."""
    home = Home()
    rows = _status_rows(home, name)
    if as_json:
        print(jsonout.dumps(rows if name is None else rows[0], indent=2))
        return
    con = _console()
    for r in rows:
        con.print(f"[bold]{r['source']}[/] ({r['connector']}) {r['path']}")
        for key in ("built", "last_build", "documents", "chunks", "model", "bytes", "path_exists"):
            con.print(f"  {key}: {r[key]}")
        if r["damaged"]:
            from rich.markup import escape

            con.print(f"  [red]damaged: {escape(r['damaged'])}; rebuild it with `ragbag build {r['source']}`[/]")


@app.command()
def remove(name: str = typer.Argument(..., help="The source to remove.")) -> None:
    """Remove a source and every byte of it: rows, old table versions, cached vectors, index
    files, cursor, Dagster runs and partition, and its registration."""
    home = Home().ensure()
    src = home.source(name)
    held: list[str] = []
    if not home.lance_is_local or home.lance_dir.exists():
        from ragbag.build.stages import purge
        from ragbag.index.store import Store

        held = purge(Store(home.lance_uri), home, src)
    home.remove_source(name)
    _sync_partitions(home, remove=[src])
    from ragbag.apps.runner import forget_runs

    runs = forget_runs(home, src)
    con = _console()
    con.print(f"removed source [bold]{name}[/] (and its {runs} Dagster runs)")
    for other in held:
        con.print(
            f"[yellow]{other}: a build of it is unfinished, so the table versions its index reads "
            f"still hold {name}'s text until `ragbag build {other}`[/]"
        )


@app.command("eval")
def eval_cmd(
    dataset: str = typer.Argument(
        ...,
        help="A BEIR folder, a SQuAD-style .json file, a home set (a folder "
        "with home.json) or `personal` (the project's own personal-data set).",
    ),
    mode: str = typer.Option("all", "--mode", help="keyword, vector, hybrid or all."),
    model: str | None = typer.Option(None, "--model", help="Embedding model (default: this home's)."),
    home: str | None = typer.Option(None, "--home", help="Keep the built index here and reuse it next time."),
    max_queries: int | None = typer.Option(None, "--max-queries", help="Score only the first N queries."),
    rerank: bool = typer.Option(False, "--rerank", help="Score with the second-stage reranker on."),
    rerank_depth: int | None = typer.Option(None, "--rerank-depth", min=2, help="Candidates --rerank re-scores."),
    min_score: float | None = typer.Option(
        None,
        "--min-score",
        help="Home sets: the floor negatives are judged against (default: ask's relevance floor, 0.1).",
    ),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Score retrieval on a dataset: nDCG@10, Recall@10, Recall@100, MRR@10 per mode (home sets:
    hit@10, MRR@10, nDCG@10 per query kind, and how many negatives stay quiet)."""
    from ragbag.apps.eval import datasets as evaluate
    from ragbag.search import query

    modes = list(query.MODES) if mode == "all" else [mode]
    for m in modes:
        if m not in query.MODES:
            raise RagbagError(f"unknown mode {m!r}; use keyword, vector, hybrid or all")
    result = evaluate.evaluate(
        dataset,
        modes,
        home=home,
        model=model or Home().model,
        max_queries=max_queries,
        rerank=_rerank_depth(rerank, rerank_depth),
        min_score=min_score,
    )
    if as_json:
        print(jsonout.dumps(result, indent=2))
        return
    from rich.table import Table

    if "sources" in result:  # a home set: one table per mode, a row per query kind
        for m, r in result["modes"].items():
            table = Table(
                "kind",
                "queries",
                "hit@10",
                "MRR@10",
                "nDCG@10",
                "quiet",
                title=f"{result['dataset']} ({m}): {result['documents']} docs in {result['sources']} "
                f"sources, {result['queries']} queries, {result['model']}, {r['ms_per_query']} ms/query",
            )
            for kind, row in r["kinds"].items():
                table.add_row(
                    kind,
                    str(row["queries"]),
                    *(f"{row[x]:.3f}" if x in row else "-" for x in ("hit@10", "MRR@10", "nDCG@10", "quiet")),
                )
            _console().print(table)
        return

    table = Table(
        "mode",
        *evaluate.MEASURES,
        "ms/query",
        title=f"{result['dataset']}: {result['documents']} docs, {result['queries']} queries, {result['model']}",
    )
    for m, r in result["modes"].items():
        table.add_row(m, *(f"{r[x]:.4f}" for x in evaluate.MEASURES), f"{r['ms_per_query']:.1f}")
    _console().print(table)


config_app = typer.Typer(help="Per-home settings (config.yaml), e.g. the embedding model.", no_args_is_help=True)
app.add_typer(config_app, name="config")


@config_app.command("set")
def config_set(key: str = typer.Argument(...), value: str = typer.Argument(...)) -> None:
    """Set a setting, e.g. `ragbag config set embedding.model multilingual-e5-small`."""
    home = Home()
    before = home.model
    home.set_config(key, value)
    _console().print(f"{key} = {value}")
    if key == "embedding.model" and value != before and home.sources():
        _console().print("sources indexed with the previous model must be rebuilt: `ragbag build`")


@config_app.command("get")
def config_get(key: str = typer.Argument(...)) -> None:
    """Print one setting (empty when unset)."""
    value = Home().get_config(key)
    print("" if value is None else value)


@config_app.command("show")
def config_show() -> None:
    """Print every setting, and the embedding models to choose from."""
    home = Home()
    from ragbag.models.embedding import MODELS

    print(
        jsonout.dumps(
            {"config": home.config(), "embedding.model": home.model, "models": {n: m.about for n, m in MODELS.items()}},
            indent=2,
        )
    )


def _status_rows(home: Home, name: str | None = None) -> list[dict[str, Any]]:
    from ragbag.build.stages import dir_bytes

    sources = home.sources()
    if name is not None:
        sources = {name: home.source(name)}
    rows = []
    for n, s in sorted(sources.items()):
        idx = home.index_dir(s.connector, n)
        m, damaged = _published(home, s)
        rows.append(
            {
                "source": n,
                "connector": s.connector,
                "path": s.path,
                "path_exists": Path(s.path).exists(),
                "built": bool(m),
                "damaged": damaged,
                "last_build": m.get("built_at"),
                "documents": m.get("documents", 0),
                "chunks": m.get("chunks", 0),
                "model": m.get("model"),
                "profile": (m.get("graph") or {}).get("profile"),
                "graph_bytes": (m.get("graph") or {}).get("bytes"),
                "graph_recall_at_10": (m.get("graph") or {}).get("recall_at_10"),
                "bytes": (dir_bytes(idx) if idx.exists() else 0) + m.get("store_bytes", 0),
            }
        )
    return rows


def _published(home: Home, source) -> tuple[dict[str, Any], str | None]:
    """A source's published manifest ({} when none can be read) and what is damaged, if anything."""
    from ragbag.build.stages import published
    from ragbag.core.errors import DamagedIndex

    try:
        return published(home, source) or {}, None
    except DamagedIndex as e:
        return {}, e.reason


def _sync_partitions(home: Home, add=(), remove=()) -> None:
    """Mirror a registry change into the Dagster instance, so the UI shows it at once."""
    from ragbag.apps.runner import sync_partitions

    sync_partitions(home, add=add, remove=remove)


def _print_reports(reports: list[dict[str, Any]]) -> None:
    from rich.table import Table

    table = Table(
        "source",
        "connector",
        "status",
        "documents",
        "added",
        "changed",
        "deleted",
        "chunks",
        "embedded",
        "errors",
        "seconds",
    )
    for r in reports:
        table.add_row(
            r["source"],
            r["connector"],
            r["status"],
            *(str(r[k]) for k in ("documents", "added", "changed", "deleted", "chunks", "chunks_embedded")),
            str(len(r["errors"])),
            f"{r['seconds']:.1f}",
        )
    con = _console()
    con.print(table)
    for r in reports:
        if r.get("failure"):
            con.print(f"[red]{r['source']}: {r['failure']}[/]")
        for w in r.get("warnings", []):
            con.print(f"[yellow]{r['source']}: warning: {w}[/]")
        for e in r["errors"][:20]:
            con.print(f"[yellow]{r['source']}: {e['uri']}: {e['error']}[/]")
        if len(r["errors"]) > 20:
            con.print(f"[yellow]{r['source']}: … {len(r['errors']) - 20} more (see --json)[/]")


def _human(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


from ragbag.apps.cli import agents as cli_agents  # noqa: E402

cli_agents.register(app)


if __name__ == "__main__":
    main()
