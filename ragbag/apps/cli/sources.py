"""The commands that manage sources: ``add``, ``build``, ``list``, ``status``, ``remove``.

Registration lives in the home (``sources.yaml``); each change is mirrored into the Dagster
instance at once so the UI shows it, and ``build`` runs the pipeline through
``ragbag.orchestration.runner``. Heavy imports (Dagster, LanceDB) happen inside the commands that need
them, so ``ragbag add`` stays instant.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import typer

from ragbag.apps.cli.console import console
from ragbag.core import collector, jsonout
from ragbag.core.errors import RagbagError
from ragbag.core.home import Home, Source
from ragbag.core.terminal import line, markup


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
    attachments: bool = typer.Option(
        True,
        "--attachments/--no-attachments",
        help="Read attachments (mail, iMessage, ChatGPT and WeChat files) as documents of their own.",
    ),
    ocr: bool = typer.Option(
        True, "--ocr/--no-ocr", help="Read the text in pictures and scanned PDF pages (offline OCR)."
    ),
    speech: bool = typer.Option(
        True, "--speech/--no-speech", help="Transcribe recordings: voice memos, voicemail (offline, English only)."
    ),
    history_versions: int | None = typer.Option(
        None, "--history-versions", min=0, help="Versions of a document kept, the current one included (default 5)."
    ),
    history_days: int | None = typer.Option(
        None, "--history-days", min=0, help="Days an earlier version is kept after it was superseded (default 180)."
    ),
    secrets: str = typer.Option(
        "redact", "--secrets", help="A record holding a secret: redact it (default), skip the record, or keep it."
    ),
    redact_pii: str | None = typer.Option(
        None, "--redact-pii", help="Also redact these PII kinds: email, phone (comma-separated)."
    ),
    exclude: list[str] | None = typer.Option(
        None,
        "--exclude",
        help="Never read what this rule names (repeatable): a path glob, or sender:, domain:, chat:, label: "
        "with a glob ('sender:*@news.example', 'private/**').",
    ),
    option: list[str] | None = typer.Option(
        None,
        "--option",
        help="KEY=VALUE: a setting of this connector (repeatable), e.g. whatsapp's me=NAME or "
        "timezone=Europe/Berlin; a wrong key is refused with the connector's list.",
    ),
) -> None:
    """Register a source in $RAGBAG_HOME/sources.yaml."""
    home = Home()
    options: dict[str, Any] = {}
    if schedule is not None:
        from ragbag.orchestration.schedules import valid_cron

        if not valid_cron(schedule):
            raise RagbagError(f"--schedule {schedule!r} is not a valid cron string (e.g. '0 7 * * *')")
        options["schedule"] = schedule
    if profile is not None:
        from ragbag.index.graph import check_profile

        options["profile"] = check_profile(profile, "--profile")
    if follow_links_outside:
        from ragbag.connectors import FOLLOW_LINKS_OUTSIDE

        options[FOLLOW_LINKS_OUTSIDE] = True
    if not attachments:
        options["attachments"] = False
    if not ocr:
        options["ocr"] = False
    if not speech:
        options["speech"] = False
    from ragbag.pipeline import screen

    if screen.check_policy(secrets) != "redact":
        options["secrets"] = secrets
    if redact_pii is not None:
        options["pii"] = screen.check_pii(redact_pii)
    if exclude:
        from ragbag.core import exclusions

        options[exclusions.OPTION] = list(dict.fromkeys(str(exclusions.parse(r)) for r in exclude))
    if option:
        options.update(_connector_options(connector, option))
    found: list[Path] = []
    if path is None:
        found = _discover(connector)
    elif connector in _known_connectors():
        from ragbag import connectors

        connectors.get(connector)  # a plugin that cannot load says so now, not at the first build
    history = {k: v for k, v in (("versions", history_versions), ("days", history_days)) if v is not None}
    # sources.yaml only: whatever opens Dagster next (a build, the code location, its sources
    # sensor) registers the partition (ragbag.orchestration.definitions).
    src = home.add_source(name, connector, path or "", known=_known_connectors(), options=options, history=history)
    where = src.path or "default places: " + ", ".join(str(p) for p in found)
    console().print(f"added {src.connector} source [bold]{src.name}[/] → {markup(where)}")
    for other in _same_place(home, src):
        console(stderr=True).print(
            f"[yellow]note: {markup(other.name)} already reads {markup(other.path)} with {markup(other.connector)}: "
            f"its documents will be indexed twice (`ragbag remove {markup(src.name)}` to undo)[/]"
        )


def _connector_options(connector: str, given: list[str]) -> dict[str, Any]:
    """``--option KEY=VALUE`` pairs checked against the options the connector declares
    (``OPTIONS``); a key given twice is a list, ``true``/``false`` are booleans."""
    from ragbag import connectors

    known: dict[str, str] = getattr(connectors.get(connector), "OPTIONS", {}) if connector in connectors.NAMES else {}
    out: dict[str, Any] = {}
    for pair in given:
        key, sep, value = pair.partition("=")
        key = key.strip()
        if not sep or not key:
            raise RagbagError(f"--option {pair!r}: write KEY=VALUE")
        if key not in known:
            offer = ", ".join(known) if known else "none"
            raise RagbagError(f"--option {key!r}: the {connector} connector has no such setting (it has: {offer})")
        typed: Any = {"true": True, "false": False}.get(value.strip().lower(), value.strip())
        out[key] = [*(out[key] if isinstance(out[key], list) else [out[key]]), typed] if key in out else typed
    return out


def _same_place(home: Home, src: Source) -> list[Source]:
    """Other sources of the same connector reading the same folder (or one inside the other)."""
    if not src.path:
        return []
    mine = Path(src.path).resolve()
    out = []
    for other in home.sources().values():
        if other.name == src.name or other.connector != src.connector or not other.path:
            continue
        theirs = Path(other.path).resolve()
        if mine == theirs or mine.is_relative_to(theirs) or theirs.is_relative_to(mine):
            out.append(other)
    return out


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


def build(
    names: list[str] | None = typer.Argument(None, help="Sources to build (default: all)."),
    docs: str | None = typer.Option(None, "--docs", help="Add a files source for this folder first (LEANN habit)."),
    as_json: bool = typer.Option(False, "--json", help="Print the per-source report as JSON."),
    force: bool = typer.Option(
        False, "--force", help="Run every build, even for sources whose files and settings did not change."
    ),
    allow_empty: bool = typer.Option(
        False,
        "--allow-empty",
        help="Empty a source whose records all vanished (its folder empty or gone, 0 records read). Without "
        "it, such a build fails and keeps the index: an unplugged disk must not wipe it.",
    ),
) -> None:
    """Build sources through Dagster: read, chunk, embed, index. A source whose files and settings
    are as its last build left them starts no run (reported as unchanged)."""
    home = Home().ensure()
    names = list(names or [])
    if docs is not None:
        if len(names) != 1:
            raise RagbagError("--docs needs exactly one source name: ragbag build NAME --docs PATH")
        registered = home.sources()
        if names[0] not in registered:
            home.add_source(names[0], "files", docs, known=_known_connectors())
        elif Path(registered[names[0]].path) != Path(docs).expanduser().resolve():
            raise RagbagError(f"source {names[0]!r} already exists for {registered[names[0]].path}")
    registered = home.sources()
    for n in names:
        if n not in registered:
            raise RagbagError(f"no source named {n!r}; see `ragbag list`")
    targets = [registered[n] for n in (names or sorted(registered))]
    if not targets:
        raise RagbagError("no sources registered: `ragbag add CONNECTOR NAME PATH` first")

    with collector.long_lived():
        from ragbag.orchestration.runner import BuildsStopped, run_builds

    stopped = None
    try:
        reports = run_builds(
            home, targets, show_progress=not as_json and sys.stderr.isatty(), force=force, allow_empty=allow_empty
        )
    except BuildsStopped as e:  # a full or read-only disk: the report, then its one line
        reports, stopped = e.reports, e
    if as_json:
        print(jsonout.dumps(reports, indent=2))
    else:
        _print_reports(reports)
    if stopped is not None:
        raise stopped
    if any(r["status"] != "success" for r in reports):
        raise typer.Exit(1)


def list_sources(as_json: bool = typer.Option(False, "--json")) -> None:
    """Every registered source with its size and last build."""
    rows = _status_rows(Home())
    if as_json:
        print(jsonout.dumps(rows, indent=2))
        return
    from rich.table import Table
    from rich.text import Text

    table = Table("source", "connector", "path", "documents", "chunks", "profile", "last build", "bytes")
    for r in rows:
        cells = (
            r["source"],
            r["connector"],
            r["path"],
            r["documents"] if r["built"] else "-",
            r["chunks"] if r["built"] else "-",
            r["profile"] or "-",
            "damaged" if r["damaged"] else r["last_build"] or "never",
            _human(r["bytes"]),
        )
        table.add_row(*(Text(line(c)) for c in cells))  # a cell given as str would be markup
    console().print(table if rows else NO_SOURCES)


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
    con = console()
    if not rows:
        con.print(NO_SOURCES)
        return
    for r in rows:
        name = markup(r["source"])
        con.print(f"[bold]{name}[/] ({markup(r['connector'])}) {markup(r['path'] or 'its default places')}")
        for key in ("built", "last_build", "documents", "chunks", "model", "bytes", "path_exists"):
            con.print(f"  {key}: {markup(_word(key, r[key]))}")
        if r["embedding"]:
            from ragbag.search.sources import embedding_note

            con.print(f"  [yellow]{embedding_note(r['embedding'])}[/]")
        if r["damaged"]:
            con.print(f"  [red]damaged: {markup(r['damaged'])}; rebuild it with `ragbag build {name}`[/]")


NO_SOURCES = "no sources yet: `ragbag add CONNECTOR NAME PATH`"


def _word(key: str, value: Any) -> str:
    """A status value in words, not Python's: yes/no, "never", sizes with units."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if value is None:
        return "never" if key == "last_build" else "-"
    if key == "bytes" and isinstance(value, int):
        from ragbag.text.unreadable import human_size

        return human_size(value)
    return str(value)


def remove(name: str = typer.Argument(..., help="The source to remove.")) -> None:
    """Remove a source and every byte of it: rows, old table versions, cached vectors, index
    files, cursor, Dagster runs and partition, and its registration. A build of it under way
    stops at its next step and writes nothing more."""
    from ragbag.apps.removal import RUN_WAIT_S
    from ragbag.apps.removal import remove as remove_source

    home = Home().ensure()
    con = console()
    done = remove_source(home, name, waiting=lambda why: console(stderr=True).print(f"[dim]{markup(why)}[/]"))
    con.print(f"removed source [bold]{markup(name)}[/] (and its {done.runs} Dagster runs)")
    for other in done.held:
        con.print(
            f"[yellow]{other}: a build of it is unfinished, so the table versions its index reads "
            f"still hold {name}'s text until `ragbag build {other}`[/]"
        )
    for run in done.still_running:
        con.print(
            f"[yellow]run {run} of {name} had not ended after {RUN_WAIT_S / 60:.0f} min: what it records "
            f"from now on stays until you delete the run in the Dagster UI[/]"
        )


# The status-row fields only the MCP tools show (the tables' share alone, the raw options).
MCP_ONLY_FIELDS = ("store_bytes", "options")


def _status_rows(home: Home, name: str | None = None) -> list[dict[str, Any]]:
    """What `ragbag list --json` and `ragbag status --json` show: every status field but the MCP
    tools' own, in the rows' order."""
    from ragbag.search import sources

    return sources.statuses(home, name, tuple(f for f in sources.FIELDS if f not in MCP_ONLY_FIELDS))


def _known_connectors() -> tuple[str, ...]:
    from ragbag import connectors

    return connectors.NAMES


def _print_reports(reports: list[dict[str, Any]]) -> None:
    from rich.table import Table
    from rich.text import Text

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
        cells = (
            r["source"],
            r["connector"],
            "unchanged (no run)" if r["status"] == "success" and r.get("run_id") is None else r["status"],
            *(r[k] for k in ("documents", "added", "changed", "deleted", "chunks", "chunks_embedded")),
            len(r["errors"]),
            f"{r['seconds']:.1f}",
        )
        table.add_row(*(Text(line(c)) for c in cells))
    con = console()
    con.print(table)
    for r in reports:
        name = markup(r["source"])
        if r.get("failure"):
            con.print(f"[red]{name}: {markup(r['failure'])}[/]")
        for w in r.get("warnings", []):
            con.print(f"[yellow]{name}: warning: {markup(w)}[/]")
        if found := r.get("secrets", {}).get("records"):
            kinds = ", ".join(f"{k} ×{n}" for k, n in r["secrets"]["kinds"].items())
            done = ", ".join(f"{n} {action}" for action, n in found.items())
            con.print(f"{name}: records holding secrets: {markup(done)} ({markup(kinds)}); `ragbag secrets` lists them")
        kept_out = r.get("excluded") or {}
        if kept_out.get("records") or kept_out.get("purged"):
            con.print(
                f"{name}: exclusion rules kept out {kept_out.get('records', 0)} records read"
                + (f" and removed {kept_out['purged']} indexed ones" if kept_out.get("purged") else "")
            )
        for e in r["errors"][:20]:  # file names and parser messages: anything a file holds
            con.print(f"[yellow]{name}: {markup(e['uri'])}: {markup(e['error'])}[/]")
        if len(r["errors"]) > 20:
            con.print(f"[yellow]{name}: … {len(r['errors']) - 20} more (see --json)[/]")


def _human(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)
