"""Who may talk to the search page: this launch's token, our own Host, our own Origin.

The page serves everything the index holds, so it must answer its owner only. Binding to
loopback keeps other machines out, but not other local users, and not the pages of other
sites open in the owner's browser (a page may send requests to ``127.0.0.1``, and a DNS
rebinding attack can make it look same-origin). So every request passes four checks, in an
ASGI middleware that wraps the whole app (errors and static files included):

- **Host** must name this server (``127.0.0.1:PORT``, ``localhost:PORT``, or the ``--host``
  given): a rebound domain name sends its own Host and is refused.
- **Token**: a random one per launch (``secrets.token_urlsafe(24)``), carried by the URL that
  ``ragbag serve`` prints. The first visit with it gets an HttpOnly, SameSite=Strict cookie and
  a redirect to the same URL without the token (so it does not stay in the address bar or
  history; only ever to a path on this server, see ``_here``); later requests carry the
  cookie. Other local users cannot read the cookie or the terminal; compared with
  ``hmac.compare_digest``. API calls may carry ``?token=`` instead (scripts, the benchmark).
- **Origin**: a request that names an origin other than ours is refused, whatever its method;
  a POST (ask, refresh) must have our Origin or none, and ``Sec-Fetch-Site`` cross-site is
  refused too. No CORS headers are ever sent, so a foreign page cannot read a response.
- **Headers** on every response: a strict Content-Security-Policy (scripts and styles from
  our own files only, no inline script, no framing), nosniff, no referrer, no caching (static
  files are revalidated), and ``Server-Timing`` with the time the server took (what
  ``benchmarks/serve_latency.py`` reads).
"""

from __future__ import annotations

import hmac
import ipaddress
import secrets
import time
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode

from ragbag.core.errors import RagbagError

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

LOOPBACK = "127.0.0.1"
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
    "font-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
SECURITY_HEADERS = (
    ("content-security-policy", CSP),
    ("x-content-type-options", "nosniff"),
    ("referrer-policy", "no-referrer"),
    ("x-frame-options", "DENY"),
    ("cross-origin-opener-policy", "same-origin"),
    ("cross-origin-resource-policy", "same-origin"),
)
FORBIDDEN = (
    "forbidden: open the URL `ragbag serve` printed (it carries this launch's token); "
    "requests from other sites or under another host name are refused\n"
)
_SAFE_METHODS = frozenset({"GET", "HEAD"})


def new_token() -> str:
    """A fresh random token for one launch of the server."""
    return secrets.token_urlsafe(24)


def check_host(host: str) -> tuple[str, bool]:
    """``host`` as given to ``--host``, checked: an IP address or ``localhost`` (a name other than
    that could resolve anywhere, and the Host check would not know what to expect). Returns the
    address to bind and whether it is loopback only."""
    text = host.strip().strip("[]")
    if text.lower() == "localhost":
        return LOOPBACK, True
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        raise RagbagError(
            f"--host {host!r}: give an IP address to listen on (127.0.0.1, ::1, or this machine's own address)"
        ) from None
    return str(address), address.is_loopback


def check_port(port: int) -> int:
    """A TCP port number, 0 meaning any free one."""
    if not 0 <= port <= 65535:
        raise RagbagError(f"--port {port}: give a port between 1 and 65535 (or 0 for any free port)")
    return port


@dataclass
class Policy:
    """What this launch accepts: its token, the Host values that name it, and its origins."""

    token: str
    port: int
    bind: str = LOOPBACK
    hosts: frozenset[str] = field(default_factory=frozenset)
    any_host: bool = False  # bound to a wildcard address: every name may reach it; the token still guards it

    @classmethod
    def for_server(cls, token: str, bind: str, port: int) -> Policy:
        address = ipaddress.ip_address(bind)
        names = {LOOPBACK, "localhost", "[::1]"} if address.is_loopback else set()
        names.add(f"[{bind}]" if address.version == 6 else bind)
        hosts = frozenset(f"{n}:{port}" for n in names)
        return cls(token, port, bind, hosts, address.is_unspecified)

    @property
    def cookie(self) -> str:
        """The cookie's name: per port, since a browser shares cookies of one host across ports."""
        return f"ragbag_serve_{self.port}"

    def url(self, path: str = "/") -> str:
        """The URL to print: the page with the token that opens it."""
        address = ipaddress.ip_address(self.bind)
        name = LOOPBACK if address.is_unspecified else (f"[{self.bind}]" if address.version == 6 else self.bind)
        return f"http://{name}:{self.port}{path}?token={self.token}"

    def host_ok(self, host: str | None) -> bool:
        return self.any_host or (host or "").lower() in self.hosts

    def origin_ok(self, origin: str | None, host: str | None) -> bool:
        """No Origin (a same-origin GET, curl), or exactly ours: the scheme and the Host we answer to."""
        if origin is None:
            return True
        return self.host_ok(host) and origin.lower() == f"http://{(host or '').lower()}"

    def token_ok(self, given: str | None) -> bool:
        return given is not None and hmac.compare_digest(given.encode(), self.token.encode())


class Guard:
    """The middleware: refuses what the policy refuses with a plain 403, turns a first visit's
    token into a cookie, and adds the security headers and Server-Timing to every response."""

    def __init__(self, app: ASGIApp, policy: Policy):
        self.app = app
        self.policy = policy

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # lifespan passes through; no websockets are served
            if scope["type"] == "websocket":
                await send({"type": "websocket.close", "code": 1008})
                return
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        headers = _headers(scope)
        method = scope["method"]
        query = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
        token = next((v for k, v in query if k == "token"), None)
        send = _decorated(send, started, static=scope["path"].startswith("/static/"))
        if not self._allowed(method, headers, token):
            await _plain(send, 403, FORBIDDEN)
            return
        if token is not None and method in _SAFE_METHODS and not scope["path"].startswith(("/api/", "/static/")):
            rest = urlencode([(k, v) for k, v in query if k != "token"])
            await _redirect(send, _here(scope["path"]) + (f"?{rest}" if rest else ""), self._cookie())
            return
        await self.app(scope, receive, send)

    def _allowed(self, method: str, headers: dict[str, str], token: str | None) -> bool:
        p = self.policy
        host = headers.get("host")
        if not p.host_ok(host) or not p.origin_ok(headers.get("origin"), host):
            return False
        if method not in _SAFE_METHODS and headers.get("sec-fetch-site", "same-origin") not in ("same-origin", "none"):
            return False
        if token is not None:
            return p.token_ok(token)
        return p.token_ok(_cookies(headers.get("cookie", "")).get(p.cookie))

    def _cookie(self) -> str:
        return f"{self.policy.cookie}={self.policy.token}; Path=/; HttpOnly; SameSite=Strict"


def _here(path: str) -> str:
    """``path`` as a redirect's Location that can only name a page of this server. A browser
    reads ``//evil.example/`` (and ``/\\evil.example/``, a backslash being a slash to it) as
    another host, so ``GET //evil.example/?token=…`` would send the owner, logged in, wherever
    the link said. Quoted, a backslash, tab or newline is ``%XX``; the leading slashes collapse
    to one, so what follows is a path segment, never an authority."""
    return "/" + quote(path).lstrip("/")


def _headers(scope: Scope) -> dict[str, str]:
    """Request headers by lower-case name; a repeated one keeps its first value (a second Host or
    Origin cannot smuggle past the check)."""
    out: dict[str, str] = {}
    for name, value in scope.get("headers", []):
        out.setdefault(name.decode("latin-1").lower(), value.decode("latin-1"))
    return out


def _cookies(header: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for part in header.split(";"):
        name, _, value = part.strip().partition("=")
        if name:
            out.setdefault(name, value)
    return out


def _decorated(send: Send, started: float, static: bool) -> Send:
    """``send`` that adds the security headers, no-store caching (static files: revalidated) and
    Server-Timing to the response head, and drops any CORS header a route might have set."""

    async def wrapped(message: Message) -> None:
        if message["type"] == "http.response.start":
            kept = [(n, v) for n, v in message.get("headers", []) if not n.lower().startswith(b"access-control-")]
            names = {n.lower() for n, _ in kept}
            extra: Iterable[tuple[str, str]] = [
                *SECURITY_HEADERS,
                ("cache-control", "no-cache" if static else "no-store"),
                ("server-timing", f"app;dur={(time.perf_counter() - started) * 1000:.2f}"),
            ]
            kept += [(n.encode(), v.encode()) for n, v in extra if n.encode() not in names]
            message = {**message, "headers": kept}
        await send(message)

    return wrapped


async def _plain(send: Send, status: int, text: str) -> None:
    body = text.encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def _redirect(send: Send, location: str, cookie: str) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": 303,
            "headers": [
                (b"location", location.encode("latin-1", "replace")),
                (b"set-cookie", cookie.encode()),
                (b"content-length", b"0"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": b""})
