"""``ragbag serve``: the local search page (``ragbag.apps.web``) for this home, on loopback.

Thin: the options, then ``ragbag.apps.web.server.serve``, which binds, prints the URL with
this launch's token, and serves until Ctrl-C. A bad port or host is a RagbagError (one line,
exit 2) raised before anything listens.
"""

from __future__ import annotations

import typer

from ragbag.core.home import Home


def serve(
    port: int = typer.Option(8765, "--port", "-p", help="TCP port (0: any free port; the real one is printed)."),
    host: str | None = typer.Option(
        None,
        "--host",
        help="Listen on this address instead of 127.0.0.1 (e.g. ::1). Anything not loopback is "
        "reachable from other machines: it is refused unless given here, and still needs the token.",
    ),
    dagster_url: str = typer.Option(
        "http://127.0.0.1:3000", "--dagster-url", help="Where the Dagster UI runs (`make ui`), for the status links."
    ),
    open_browser: bool = typer.Option(False, "--open/--no-open", help="Open the page in a browser."),
) -> None:
    """Search, read, ask and refresh in the browser: a page on 127.0.0.1 that only you can open."""
    from ragbag.apps.web.server import serve as run

    run(Home(), port, host=host, dagster_url=dagster_url, open_browser=open_browser)
