"""``ragbag search``: one SearchRequest from the options, the hits as a table or JSON."""

from __future__ import annotations

from typing import Any

import typer

from ragbag.apps.cli.console import console
from ragbag.apps.cli.options import FILTER_OPTIONS, with_filters
from ragbag.core import jsonout
from ragbag.search.request import MODES


@with_filters
def search(
    query: str = typer.Argument(..., help="What to look for."),
    k: int = typer.Option(10, "-k", "--top-k", min=1, help="How many hits."),
    filters: dict[str, Any] = FILTER_OPTIONS,
    mode: str = typer.Option("hybrid", "--mode", help=" | ".join(MODES) + "."),
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
    from ragbag.search.request import SearchRequest, fields_of
    from ragbag.search.request import rerank_depth as depth

    request = SearchRequest.parse(  # a bad request fails here, before anything heavy loads
        query,
        k=k,
        **fields_of(filters),
        mode=mode,
        min_score=min_score,
        context=context,
        collapse=collapse,
        width=width,
        recompute=recompute,
        rerank=depth(rerank, rerank_depth),
    )
    from ragbag.search import query as q

    hits = q.results(request)
    if as_json:
        print(jsonout.dumps(hits, indent=2))
        return
    from ragbag.apps.cli.render import print_hits

    print_hits(console(), query, hits, min_score)
