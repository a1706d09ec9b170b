"""``ragbag secrets``: what the build kept out of the index, where, and the home's own rules.

Never the secret itself: kinds, counts and the document (its screened title and link).
"""

from __future__ import annotations

from typing import Any

import typer

from ragbag.apps.cli.console import console
from ragbag.core import jsonout
from ragbag.core.errors import RagbagError
from ragbag.core.home import Home
from ragbag.core.terminal import markup

secrets_app = typer.Typer(
    help="Secrets found in the sources (kinds, counts, documents; never the secret) and the home's own rules.",
    invoke_without_command=True,
)


@secrets_app.callback()
def secrets_list(
    ctx: typer.Context,
    source: str | None = typer.Option(None, "--source", help="Only this source."),
    as_json: bool = typer.Option(False, "--json", help="Strict JSON."),
) -> None:
    """List what each source's last build found: kinds, counts and the documents they were in."""
    if ctx.invoked_subcommand is not None:
        return
    from ragbag.pipeline import screen

    home = Home()
    sources = home.sources()
    if source is not None and source not in sources:
        raise RagbagError(f"no source named {source!r}; `ragbag list` shows them")
    report: list[dict[str, Any]] = []
    for name, src in sorted(sources.items()):
        if source is not None and name != source:
            continue
        docs = screen.load_findings(home, name)
        report.append(
            {
                "source": name,
                "policy": screen.for_source(home, src).policy,
                "kinds": screen.totals(docs)["kinds"],
                "documents": [{"doc_id": i, **e} for i, e in sorted(docs.items(), key=lambda kv: kv[1]["uri"])],
            }
        )
    if as_json:
        print(jsonout.dumps({"sources": report, "rules": _rules(home)}, indent=2))
        return
    out = console()
    if not any(r["documents"] for r in report):
        out.print("no secrets found in the last builds" + (f" of {markup(source)}" if source else ""))
    for r in report:
        if not r["documents"]:
            continue
        counts = ", ".join(f"{k} ×{n}" for k, n in r["kinds"].items())
        out.print(f"[bold]{markup(r['source'])}[/] ({r['policy']}): {markup(counts)}")
        for d in r["documents"]:
            found = ", ".join(f"{k} ×{n}" for k, n in d["kinds"].items())
            out.print(f"  {d['action']:<8} {markup(d['uri'])}  [dim]{markup(found)}[/]")


def _rules(home: Home) -> dict[str, str]:
    from ragbag.pipeline import screen

    return {r.kind: r.pattern.pattern for r in screen.home_rules(home)}


@secrets_app.command("rule")
def add_rule(
    kind: str = typer.Argument(..., help="A name for what it finds (lowercase, digits, dashes)."),
    pattern: str = typer.Argument(..., help="A regular expression; its first group, if any, is the secret."),
) -> None:
    """Add (or replace) a rule of this home: what it matches is redacted like any secret from the
    next build on (every source is read again)."""
    from ragbag.pipeline import screen

    screen.add_rule(Home(), kind, pattern)
    console().print(f"rule {markup(kind)} added; `ragbag build` applies it to every source")


@secrets_app.command("unrule")
def remove_rule(kind: str = typer.Argument(..., help="The rule's name.")) -> None:
    """Remove a rule of this home."""
    from ragbag.pipeline import screen

    if not screen.remove_rule(Home(), kind):
        raise RagbagError(f"no rule named {kind!r}; `ragbag secrets --json` lists them")
    console().print(f"rule {markup(kind)} removed")
