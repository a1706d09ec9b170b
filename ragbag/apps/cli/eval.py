"""``ragbag eval``: retrieval scored on a dataset (BEIR, SQuAD-style, a home set, or the
project's personal-data set), one table per mode."""

from __future__ import annotations

import typer

from ragbag.apps.cli.console import console
from ragbag.core import jsonout
from ragbag.core.errors import RagbagError
from ragbag.core.home import Home
from ragbag.core.terminal import markup
from ragbag.search.request import MODES


def eval_cmd(
    dataset: str = typer.Argument(
        ...,
        help="A BEIR folder, a SQuAD-style .json file, a home set (a folder "
        "with home.json), `personal` (the project's own personal-data set), `persona-b` or `persona-c` "
        "(a second and a third persona, held out: never tuned on); these need `pip install ./evalsets` from a "
        "checkout.",
    ),
    mode: str = typer.Option("all", "--mode", help=" | ".join(MODES) + " | all."),
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
    from ragbag.index.published import home_model
    from ragbag.search.request import rerank_depth as depth

    modes = list(MODES) if mode == "all" else [mode]
    for m in modes:
        if m not in MODES:
            raise RagbagError(f"unknown mode {m!r}; use {', '.join(MODES)} or all")
    result = evaluate.evaluate(
        dataset,
        modes,
        home=home,
        model=model or home_model(Home()),
        max_queries=max_queries,
        rerank=depth(rerank, rerank_depth),
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
                "tune / test",
                "MRR@10",
                "nDCG@10",
                "quiet",
                title=f"{markup(result['dataset'])} ({m}): {result['documents']} docs in {result['sources']} "
                f"sources, {result['queries']} queries, {result['model']}, {r['ms_per_query']} ms/query",
            )
            for kind, row in r["kinds"].items():
                halves = [r["halves"][h].get(kind, {}) for h in ("tune", "test")]
                split = " / ".join(f"{h['hit@10']:.3f}" if "hit@10" in h else "-" for h in halves)
                table.add_row(
                    kind,
                    str(row["queries"]),
                    f"{row['hit@10']:.3f}" if "hit@10" in row else "-",
                    split,
                    *(f"{row[x]:.3f}" if x in row else "-" for x in ("MRR@10", "nDCG@10", "quiet")),
                )
            console().print(table)
        return

    table = Table(
        "mode",
        *evaluate.MEASURES,
        "ms/query",
        title=f"{markup(result['dataset'])}: {result['documents']} docs, {result['queries']} queries, "
        f"{result['model']}",
    )
    for m, r in result["modes"].items():
        table.add_row(m, *(f"{r[x]:.4f}" for x in evaluate.MEASURES), f"{r['ms_per_query']:.1f}")
    console().print(table)
