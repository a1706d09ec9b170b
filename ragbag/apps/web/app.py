"""The routes of the search page (``ragbag serve``), on Starlette, the ASGI toolkit the Dagster
webserver already brings.

Pages: ``/`` search, ``/ask``, ``/status``, ``/doc`` (a document at a passage), ``/diff``
(between versions), ``/page.png`` (a PDF citation drawn). JSON: ``/api/search``,
``/api/sources``, ``/api/ask`` (POST, streamed JSON lines), ``/api/refresh`` (POST starts a
build, GET reports it). Everything sits behind ``security.Guard`` (token, Host, Origin,
headers), added around the whole app by ``create_app``.

Each handler is a thin call into ``hits``, ``reader``, ``asking`` or ``builds``; a
``RagbagError`` (a bad filter, an unknown citation) becomes a 400 (404 for what is not
there) with its one-line message: JSON ``{"error": …}`` under ``/api/``, a page elsewhere;
never a traceback. JSON is strict (``ragbag.core.jsonout``). Synchronous handlers run in
Starlette's thread pool, so a search never blocks the event loop.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from ragbag.apps.web import asking, builds, docpage, hits, pages, reader
from ragbag.apps.web.security import Guard, Policy
from ragbag.core import jsonout
from ragbag.core.errors import RagbagError
from ragbag.core.home import Home

STATIC = Path(__file__).with_name("static")
MAX_BODY = 64 * 1024
LIST_FIELDS = ("source", "connector", "path", "built", "damaged", "last_build", "documents", "chunks", "embedding")


class NotThere(RagbagError):
    """What was asked for is not in the index (a 404)."""


def create_app(home: Home, policy: Policy, dagster_url: str = "http://127.0.0.1:3000") -> Guard:
    """The whole app for ``home``, guarded by ``policy``."""
    web = _Web(home, dagster_url)
    routes = [
        Route("/", web.search_page),
        Route("/ask", web.ask_page),
        Route("/status", web.status_page),
        Route("/doc", web.doc),
        Route("/diff", web.diff),
        Route("/page.png", web.picture),
        Route("/api/search", web.api_search),
        Route("/api/sources", web.api_sources),
        Route("/api/ask", web.api_ask, methods=["POST"]),
        Route("/api/refresh", web.refresh_state, methods=["GET"]),
        Route("/api/refresh", web.refresh, methods=["POST"]),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    app = Starlette(routes=routes, exception_handlers={HTTPException: _http_error, Exception: _crash})
    app.state.web = web
    return Guard(app, policy)


class _Web:
    """The handlers, over one home: its reading tools and its one background build."""

    def __init__(self, home: Home, dagster_url: str):
        self.home = home
        self.dagster_url = dagster_url
        self.refresher = builds.Refresher(home)
        self._tools: Any = None
        self._read_lock = threading.Lock()  # the tools' document caches are one reader's at a time

    # -- pages -----------------------------------------------------------------------------
    def search_page(self, request: Request) -> Response:
        return _page(lambda: pages.search_page(self._sources(), _params(request)))

    def ask_page(self, request: Request) -> Response:
        def render() -> str:
            from ragbag.answer import llm

            try:
                label = llm.resolve(self.home, None, None, None).label
            except RagbagError as e:
                label = f"no usable provider ({e})"
            return pages.ask_page(self._sources(), _params(request), label)

        return _page(render)

    def status_page(self, request: Request) -> Response:
        return _page(lambda: pages.status_page(self._sources(LIST_FIELDS), self.dagster_url))

    def doc(self, request: Request) -> Response:
        p = request.query_params

        def render() -> str:
            with self._read_lock:
                got = reader.read(
                    self.home,
                    self._reading_tools(),
                    cite=p.get("cite") or None,
                    doc_id=p.get("doc_id") or None,
                    version=hits.whole_number(p.get("version"), "version"),
                    offset=hits.whole_number(p.get("offset"), "offset"),
                )
            return docpage.doc_page(got, p.get("q") or "")

        return _page(render, missing=404)

    def diff(self, request: Request) -> Response:
        p = request.query_params

        def render() -> str:
            with self._read_lock:
                result = self._reading_tools().diff(
                    p.get("doc_id") or "",
                    hits.whole_number(p.get("from"), "from") or 1,
                    hits.whole_number(p.get("to"), "to"),
                )
            return docpage.diff_page(result)

        return _page(render, missing=404)

    def picture(self, request: Request) -> Response:
        from ragbag.answer import visual

        try:
            with self._read_lock:
                view = visual.make(
                    self.home, request.query_params.get("cite") or "", documents=self._reading_tools().documents
                )
            if view.image is None:
                raise NotThere(f"c:{view.citation} is not from a PDF: there is no page to draw")
            return Response(view.png(), media_type="image/png")
        except RagbagError as e:
            return _plain_error(404, str(e))

    # -- JSON ------------------------------------------------------------------------------
    def api_search(self, request: Request) -> Response:
        params = _params(request)
        try:
            page, size = hits.page_numbers(params)
            return _json(hits.search(self.home, hits.arguments(params), page, size))
        except RagbagError as e:
            return _json({"error": str(e)}, 400)

    def api_sources(self, request: Request) -> Response:
        try:
            return _json({"sources": self._sources(LIST_FIELDS)})
        except RagbagError as e:
            return _json({"error": str(e)}, 400)

    async def api_ask(self, request: Request) -> Response:
        try:
            body = await _json_body(request)
            args = hits.arguments({k: v for k, v in body.items() if k != "q"}, query_key="question")
            provider, options = await run_in_threadpool(asking.prepare, self.home, args)
        except RagbagError as e:
            return _json({"error": str(e)}, 400)
        return StreamingResponse(
            asking.stream(self.home, provider, options), media_type="application/x-ndjson; charset=utf-8"
        )

    def refresh_state(self, request: Request) -> Response:
        return _json(self.refresher.state())

    async def refresh(self, request: Request) -> Response:
        try:
            body = await _json_body(request)
            return _json(await run_in_threadpool(self.refresher.start, body.get("source")), 202)
        except builds.Busy as e:
            return _json({**self.refresher.state(), "error": str(e)}, 409)
        except RagbagError as e:
            return _json({"error": str(e)}, 400)

    # -- helpers ---------------------------------------------------------------------------
    def _sources(self, fields: tuple[str, ...] = ("source", "connector", "documents")) -> list[dict[str, Any]]:
        from ragbag.search import sources

        return sources.statuses(self.home, fields=fields)

    def _reading_tools(self) -> Any:
        if self._tools is None:
            self._tools = reader.tools(self.home)
        return self._tools


def _params(request: Request) -> dict[str, list[str]]:
    """Query parameters as lists (a facet may be given several times)."""
    out: dict[str, list[str]] = {}
    for key, value in request.query_params.multi_items():
        out.setdefault(key, []).append(value)
    return out


async def _json_body(request: Request) -> dict[str, Any]:
    """A POST's JSON object. Only ``application/json``: a cross-site form cannot send it without
    a CORS preflight, which this server never answers."""
    if request.headers.get("content-type", "").split(";")[0].strip().lower() != "application/json":
        raise RagbagError("send the request as application/json")
    raw = await request.body()
    if len(raw) > MAX_BODY:
        raise RagbagError(f"the request is {len(raw)} bytes; the most is {MAX_BODY}")
    try:
        body = json.loads(raw or b"{}")
    except ValueError:
        raise RagbagError("the request body is not JSON") from None
    if not isinstance(body, dict):
        raise RagbagError("the request body must be a JSON object")
    return body


def _json(value: Any, status: int = 200) -> Response:
    return Response(jsonout.dumps(value), status_code=status, media_type="application/json")


def _page(render: Any, missing: int = 400) -> Response:
    """A page, or the one-line message of the RagbagError that stopped it (404 for what is not
    there: unknown citations and documents)."""
    try:
        return HTMLResponse(render())
    except RagbagError as e:
        status = 404 if missing == 404 and (isinstance(e, NotThere) or _unknown(str(e))) else 400
        return HTMLResponse(pages.error_page(status, str(e)), status_code=status)


def _unknown(message: str) -> bool:
    return message.startswith(("no indexed passage", "unknown doc_id", "no source named"))


def _plain_error(status: int, message: str) -> Response:
    return Response(message + "\n", status_code=status, media_type="text/plain; charset=utf-8")


async def _http_error(request: Request, exc: Exception) -> Response:
    """404/405 and the like: JSON under /api/, a page elsewhere."""
    status = getattr(exc, "status_code", 500)
    detail = str(getattr(exc, "detail", "") or "")
    message = "no such page" if status == 404 else detail
    if request.url.path.startswith("/api/"):
        return _json({"error": message}, status)
    return HTMLResponse(pages.error_page(status, message), status_code=status)


async def _crash(request: Request, exc: Exception) -> Response:
    """An unexpected failure: a short message, never a traceback in the page."""
    message = f"the server failed on this request ({type(exc).__name__}); see the terminal running `ragbag serve`"
    if request.url.path.startswith("/api/"):
        return _json({"error": message}, 500)
    return HTMLResponse(pages.error_page(500, message), status_code=500)
