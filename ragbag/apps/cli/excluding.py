"""``ragbag exclude``: a source's exclusion rules (``ragbag.core.exclusions``) listed, added or
dropped. Adding rules builds the source at once and purges what they name the way ``remove``
purges a source: rows, every version, cached vectors, old table and index versions, the text
read from its pictures and the earlier runs' previews.
"""

from __future__ import annotations

import sys

import typer

from ragbag.apps.cli.console import console
from ragbag.core import exclusions, jsonout
from ragbag.core.errors import RagbagError
from ragbag.core.home import Home
from ragbag.core.terminal import markup


def exclude(
    name: str = typer.Argument(..., help="The source."),
    rules: list[str] | None = typer.Argument(
        None, help="Rules to add, FIELD:PATTERN with FIELD one of path (the default), sender, domain, chat, label."
    ),
    drop: list[str] | None = typer.Option(
        None, "--drop", help="Drop this rule (repeatable); the next build reads what it kept out."
    ),
    as_json: bool = typer.Option(False, "--json", help="Strict JSON: the source's rules and what was done."),
) -> None:
    """List a source's exclusion rules, or add some (then build it and purge what they name)."""
    home = Home().ensure()
    src = home.source(name)
    current = [str(r) for r in exclusions.of_source(src.options)]
    added = [str(exclusions.parse(r)) for r in rules or []]
    added = [r for r in dict.fromkeys(added) if r not in current]
    dropped = [str(exclusions.parse(r)) for r in drop or []]
    unknown = [r for r in dropped if r not in current]
    if unknown:
        raise RagbagError(f"source {name!r} has no rule {unknown[0]!r}; its rules: {', '.join(current) or 'none'}")
    result: dict = {"source": name, "added": added, "dropped": dropped, "build": None, "purged_runs": 0}
    if added or dropped:
        kept = [r for r in current if r not in dropped] + added
        options = {k: v for k, v in src.options.items() if k != exclusions.OPTION}
        src = home.set_source_options(name, {**options, exclusions.OPTION: kept} if kept else options)
        current = kept
    if added:
        from ragbag.apps.removal import purge_excluded
        from ragbag.orchestration.runner import run_builds

        (report,) = run_builds(home, [src], show_progress=not as_json and sys.stderr.isatty(), force=True)
        result["build"] = report
        if report["status"] == "success":
            waiting = lambda why: console(stderr=True).print(f"[dim]{markup(why)}[/]")  # noqa: E731
            done = purge_excluded(home, name, [report["run_id"]] if report.get("run_id") else [], waiting)
            result["purged_runs"], result["held"] = done.runs, done.held
    result["rules"] = current
    if as_json:
        print(jsonout.dumps(result, indent=2))
    else:
        _print(result)
    if result["build"] is not None and result["build"]["status"] != "success":
        raise typer.Exit(1)


def _print(result: dict) -> None:
    out, name = console(), markup(result["source"])
    for rule in result["dropped"]:
        out.print(f"{name}: dropped rule {markup(rule)}; `ragbag build {name}` reads what it kept out")
    report = result["build"]
    if report is not None and report["status"] != "success":
        out.print(f"[red]{name}: the build failed, nothing was purged: {markup(report.get('failure') or '')}[/]")
        out.print(f"the rules stay; `ragbag exclude {name}` lists them and the next build applies them")
    elif report is not None:
        gone = report["excluded"]["purged"]
        out.print(
            f"{name}: removed {gone} indexed records the new rules name, with every version and byte "
            f"(and {result['purged_runs']} earlier Dagster runs)"
        )
        for other in result.get("held", []):
            out.print(
                f"[yellow]{other}: a build of it is unfinished; the table versions it pins go with its next build[/]"
            )
    if not result["rules"]:
        out.print(f"{name}: no exclusion rules (add one: `ragbag exclude {name} 'sender:*@example.com'`)")
    elif not (result["added"] or result["dropped"]):
        out.print(f"{name} excludes:")
        for rule in result["rules"]:
            out.print(f"  {markup(rule)}")
