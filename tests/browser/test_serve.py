"""`ragbag serve`: the local search page, driven over HTTP and in headless Chromium.

A home with two `files` sources is built through the CLI (Dagster), `ragbag serve --port 0` is
started as a subprocess, and the URL it prints is used as a user would. Over HTTP: what the
security model refuses (no token, a wrong token, a foreign Host, a foreign Origin or a
cross-site POST: 403, no CORS header ever) and what it answers (the token becomes an HttpOnly
SameSite=Strict cookie, strict JSON, a bad filter as its one-line message, paging,
Server-Timing). In Chromium (Debian's, driven by Playwright like tests/browser/test_ui_browser.py):
search as you type with a source facet, the keyboard down to a hit and Enter, the document
opened with the hit marked and scrolled into view, document text with markup in it shown as
text, a question answered with a citation chip that opens its passage, and "Refresh now"
building a changed source that search then finds. Screenshots are checked to be non-blank.
"""

from __future__ import annotations

import http.client
import json
import select
import socket
import subprocess
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from conftest import (
    RAGBAG,
    cli,
    launch_chromium,
    listening_addresses,
    platform_env,
    stop_group,
    strict_json,
    write,
)

DOOR = "The street door code is 4711# and the key box by the lift opens with 0725."
PAYLOAD = "<img src=x onerror=\"document.title='pwned'\">"
PLACES = ["Alfama", "Belém", "Chiado", "Graça", "Sintra", "Cascais", "Baixa", "Estrela", "Lapa", "Campo de Ourique"]
FOODS = ["grilled sardines", "custard tarts", "bacalhau", "caldo verde", "bifana", "arroz de pato", "ginjinha"]


def _long_note() -> str:
    """A travel diary whose door code sits far down the page, so opening it must scroll."""
    days = [
        f"Day {i}: we walked from {PLACES[i % len(PLACES)]} to {PLACES[(i * 3 + 1) % len(PLACES)]}, "
        f"took tram {20 + i} past the viewpoint number {i}, and ate {FOODS[i % len(FOODS)]} for lunch "
        f"before resting {i % 4 + 1} hours in the shade."
        for i in range(1, 31)
    ]
    return (
        "# Lisbon trip\n\n"
        + "\n\n".join(days)
        + f"\n\n## Arrival details\n\n{DOOR}\n\nThe flat is on the fourth floor.\n"
    )


NOTES = {
    "lisbon.md": _long_note(),
    "book-club.md": "# Book club meeting\n\nThe book club meeting is on Friday; we discuss the lighthouse novel.\n",
    "shed.md": f"# Garden shed\n\nThe payload {PAYLOAD} sits in the garden shed, next to the rake.\n",
}
WORK = {
    "budget.md": "# Budget meeting\n\nThe quarterly budget meeting moved to Thursday at ten; bring the forecast.\n",
    "standup.md": "# Standup\n\nThe daily standup meeting starts at nine in the small room.\n",
}


class Server:
    """A running `ragbag serve`, its base URL and token."""

    def __init__(self, proc: subprocess.Popen, url: str):
        self.proc = proc
        self.url = url
        parts = urlsplit(url)
        self.base = f"{parts.scheme}://{parts.netloc}"
        self.host, self.port = parts.hostname or "", parts.port or 0
        self.token = parts.query.split("token=", 1)[1]
        self.cookie = f"ragbag_serve_{self.port}={self.token}"

    def request(self, method: str, path: str, body: bytes | None = None, headers: dict | None = None, auth=True):
        """(status, headers by lower-case name, body) of one request, the cookie sent when ``auth``."""
        conn = http.client.HTTPConnection(self.host, self.port, timeout=120)
        sent = {"Cookie": self.cookie} if auth else {}
        sent.update(headers or {})
        conn.request(method, path, body=body, headers=sent)
        resp = conn.getresponse()
        data = resp.read()
        conn.close()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, data

    def post_json(self, path: str, value: dict, headers: dict | None = None):
        return self.request(
            "POST", path, json.dumps(value).encode(), {"Content-Type": "application/json", **(headers or {})}
        )


def _start(home, log: Path) -> Server:
    proc = subprocess.Popen(
        [RAGBAG, "serve", "--port", "0"],
        env=platform_env(home),
        stdout=subprocess.PIPE,
        stderr=log.open("wb"),
        text=True,
        start_new_session=True,
    )
    deadline = time.time() + 120
    while time.time() < deadline:
        ready, _, _ = select.select([proc.stdout], [], [], 1.0)
        if ready:
            line = proc.stdout.readline()
            if "http://" in line:
                return Server(proc, line.split()[-1])
        assert proc.poll() is None, f"ragbag serve exited {proc.returncode}: {log.read_text()[-3000:]}"
    raise AssertionError("ragbag serve printed no URL in 120 s")


def _not_blank(png: Path) -> None:
    from PIL import Image

    with Image.open(png) as img:
        rgb = img.convert("RGB")
        colours = rgb.getcolors(maxcolors=1 << 16)
        assert colours is None or len(colours) > 40, f"{png.name}: only {len(colours)} colours"
        lo, hi = zip(*rgb.getextrema())
        assert max(hi) - min(lo) > 150, f"{png.name}: no contrast"


@pytest.mark.slow(seconds=120)
def test_search_page_security_search_read_ask_and_refresh(home, tmp_path):
    notes = write(tmp_path / "notes", NOTES)
    work = write(tmp_path / "work", WORK)
    cli("add", "files", "notes", str(notes))
    cli("add", "files", "work", str(work))
    reports = json.loads(cli("build", "--json", timeout=900).stdout)
    assert [r["status"] for r in reports] == ["success", "success"], reports
    server = _start(home, tmp_path / "serve.log")
    try:
        assert server.url.startswith("http://127.0.0.1:") and server.port > 0
        assert listening_addresses(server.port) == {"0100007F"}  # loopback only
        _check_http(server)
        _browse(server, tmp_path / "shots", notes)
    finally:
        stop_group(server.proc)
    assert server.proc.returncode is not None


def _check_http(s: Server) -> None:
    # No token, a wrong one: refused, with the security headers all the same.
    status, headers, body = s.request("GET", "/", auth=False)
    assert status == 403 and b"token" in body
    assert "frame-ancestors 'none'" in headers["content-security-policy"]
    assert s.request("GET", "/?token=" + "x" * len(s.token), auth=False)[0] == 403
    assert s.request("GET", "/api/search?q=meeting", auth=False)[0] == 403
    # The printed URL: a cookie (HttpOnly, SameSite=Strict) and the same page without the token.
    status, headers, _ = s.request("GET", "/?token=" + s.token, auth=False)
    assert status == 303 and headers["location"] == "/"
    cookie = headers["set-cookie"]
    assert cookie.startswith(s.cookie + ";") and "HttpOnly" in cookie and "SameSite=Strict" in cookie
    status, headers, body = s.request("GET", "/")
    assert status == 200 and b'id="q"' in body
    csp = headers["content-security-policy"]
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp
    assert headers["x-content-type-options"] == "nosniff" and headers["referrer-policy"] == "no-referrer"
    # DNS rebinding: another name for this address is refused; the loopback names are not.
    assert s.request("GET", "/", headers={"Host": f"evil.example:{s.port}"})[0] == 403
    assert s.request("GET", "/", headers={"Host": f"localhost:{s.port}"})[0] == 200
    # Other sites' pages: a foreign Origin is refused on any method, a cross-site POST too; no CORS.
    evil = {"Origin": "http://evil.example"}
    status, headers, _ = s.request("GET", "/api/search?q=meeting", headers=evil)
    assert status == 403 and not any(h.startswith("access-control-") for h in headers)
    assert s.post_json("/api/ask", {"question": "when is the budget meeting?"}, evil)[0] == 403
    assert s.post_json("/api/refresh", {"source": "work"}, evil)[0] == 403
    assert s.post_json("/api/ask", {"question": "budget?"}, {"Sec-Fetch-Site": "cross-site"})[0] == 403
    assert (
        s.request("POST", "/api/refresh", b"source=work", {"Content-Type": "application/x-www-form-urlencoded"})[0]
        == 400
    )
    # Search: strict JSON, the source facet, paging, the request's own errors as one line.
    status, headers, body = s.request("GET", "/api/search?q=meeting&source=work")
    assert status == 200 and headers["server-timing"].startswith("app;dur=")
    hits = strict_json(body)["hits"]
    assert hits and {h["source"] for h in hits} == {"work"}
    assert any(m and "meeting" in t.lower() for h in hits for t, m in h["snippet"])
    second = strict_json(s.request("GET", "/api/search?q=meeting&size=1&page=1")[2])
    assert second["page"] == 1 and [h["rank"] for h in second["hits"]] == [2] and second["has_more"]
    status, _, body = s.request("GET", "/api/search?q=meeting&where=%7Bnot-json")
    assert status == 400 and strict_json(body)["error"].startswith("--where is not valid JSON")
    status, _, body = s.request("GET", "/api/search?q=meeting&connector=nosuch")
    assert status == 400 and "unknown connector 'nosuch'" in strict_json(body)["error"]
    status, _, body = s.request("GET", "/doc?cite=c:ffffff")
    assert status == 404 and b"no indexed passage" in body and b"Traceback" not in body
    # Ask, same origin: the answer streams as JSON lines and ends with its citations.
    status, _, body = s.post_json(
        "/api/ask", {"question": "When is the budget meeting?", "source": ["work"]}, {"Origin": s.base}
    )
    lines = [strict_json(line) for line in body.decode().splitlines()]
    assert status == 200 and lines[0]["type"] == "text" and lines[-1]["type"] == "done", lines
    assert lines[-1]["citations"] and lines[-1]["citations"][0]["source"] == "work"


def _browse(s: Server, shots: Path, notes: Path) -> None:
    from playwright.sync_api import expect, sync_playwright

    shots.mkdir()
    expect.set_options(timeout=60_000)  # a search or an answer on a busy two-core machine
    with sync_playwright() as p:
        browser = launch_chromium(p)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            page.set_default_timeout(60_000)
            problems: list[str] = []
            page.on("pageerror", lambda e: problems.append(str(e)))
            page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
            page.goto(s.url)
            assert page.url == s.base + "/"  # the token left the address bar for a cookie

            # Search as you type, then narrow by a source facet.
            box = page.get_by_label("Search your data")
            box.fill("meeting")
            expect(page.locator("#results li").first).to_be_visible()
            # One page of hits: no Prev/Next (the pager's display: flex beat its hidden attribute).
            assert page.locator("#results li").count() < 10
            expect(page.locator("#pager")).to_be_hidden()
            # On a phone (390 px) the search box comes first, the filters below it, not above.
            page.set_viewport_size({"width": 390, "height": 844})
            box_y = page.locator("#q").bounding_box()["y"]
            assert box_y < page.locator("aside.facets").bounding_box()["y"] and box_y < 200
            page.set_viewport_size({"width": 1280, "height": 800})
            page.get_by_label("work").check()
            expect(page.locator("#results .facts").first).to_contain_text("work")
            facts = page.locator("#results .facts").all_inner_texts()
            assert facts and all(f.startswith("work ·") for f in facts), facts
            assert page.locator("#results mark").count() > 0  # the query's words marked in snippets
            page.screenshot(path=str(shots / "search.png"))
            page.get_by_label("work").uncheck()

            # Markup inside a document is shown as text, never run.
            box.fill("payload garden shed rake")
            expect(page.locator("#results li").first).to_contain_text("<img src=x")
            assert page.locator('img[src="x"]').count() == 0

            # The keyboard: ↓ to the hits, ↓ ↑ between them, Enter opens the one focused.
            box.fill("street door code key box lift")
            expect(page.locator("#results .title").first).to_have_text("Lisbon trip")
            box.press("ArrowDown")
            expect(page.locator("#results a.hit-link").first).to_be_focused()
            page.keyboard.press("ArrowDown")
            page.keyboard.press("ArrowUp")
            expect(page.locator("#results a.hit-link").first).to_be_focused()
            page.keyboard.press("Enter")
            page.wait_for_url("**/doc?cite=*")
            hit = page.locator("mark#hit")
            expect(hit).to_contain_text("4711#")
            expect(hit).to_be_in_viewport()
            assert page.evaluate("window.scrollY") > 300  # far down the diary: the page scrolled to it
            assert hit.locator("b.term").count() > 0
            expect(page.locator(".meta")).to_contain_text("lisbon.md")
            page.screenshot(path=str(shots / "doc.png"))
            page.go_back()
            expect(page.get_by_label("Search your data")).to_have_value("street door code key box lift")

            # Ask: the answer streams in with citation chips; a chip opens its passage.
            page.goto(s.base + "/ask")
            page.get_by_label("Ask your data").fill("What is the street door code in Lisbon?")
            page.get_by_role("button", name="Ask").click()
            chip = page.locator("#answer a.chip").first
            expect(chip).to_be_visible()
            expect(page.locator("#cited")).to_contain_text("Lisbon trip")
            page.screenshot(path=str(shots / "ask.png"))
            chip.click()
            page.wait_for_url("**/doc?cite=*")
            expect(page.locator("mark#hit")).to_contain_text("4711#")

            # Refresh now: a changed source is rebuilt in the background; search then finds it.
            (notes / "bakery.md").write_text("# Bakery\n\nThe bakery on Rua Augusta opens at seven sharp.\n")
            page.goto(s.base + "/status")
            expect(page.locator('tr[data-source="notes"] .docs')).to_have_text("3")
            page.locator('button.refresh[data-source="notes"]').click()
            expect(page.locator("#build-state")).to_contain_text("Building notes")
            busy = s.post_json("/api/refresh", {"source": "work"}, {"Origin": s.base})
            assert busy[0] == 409 and "is running" in strict_json(busy[2])["error"]
            expect(page.locator("#build-state")).to_contain_text("notes: success", timeout=300_000)
            expect(page.locator('tr[data-source="notes"] .docs')).to_have_text("4")
            page.screenshot(path=str(shots / "status.png"))
            assert problems == [], problems
        finally:
            browser.close()
    found = strict_json(s.request("GET", "/api/search?q=bakery+Rua+Augusta&source=notes")[2])["hits"]
    assert found and found[0]["title"] == "Bakery"
    for name in ("search.png", "doc.png", "ask.png", "status.png"):
        _not_blank(shots / name)


def test_serve_refuses_bad_ports_and_hosts_in_one_line(home):
    for args, expected in (
        (["--port", "70000"], "--port 70000: give a port between 1 and 65535"),
        (["--host", "example.com"], "--host 'example.com': give an IP address"),
        (["--dagster-url", "javascript:alert(1)"], "--dagster-url 'javascript:alert(1)': give an http://"),
        (["--port", "nine"], "invalid value for '--port'"),
    ):
        proc = cli("serve", *args, check=False, timeout=60)
        assert proc.returncode == 2 and proc.stdout == "", (args, proc.stdout, proc.stderr)
        assert proc.stderr.startswith("ragbag: error: ") and expected in proc.stderr, (args, proc.stderr)
        assert len(proc.stderr.strip().splitlines()) == 1
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        proc = cli("serve", "--port", str(port), check=False, timeout=60)
    assert proc.returncode == 2 and f"port {port} on 127.0.0.1 is in use" in proc.stderr


def _call(guard, method: str, path: str, headers: dict[str, str]) -> tuple[int, dict[str, str], bool]:
    """(status, response headers, whether the app was reached) of one request through ``guard``."""
    import asyncio

    reached = []
    sent: list[dict] = []

    async def app(scope, receive, send):
        reached.append(scope["path"])
        await send({"type": "http.response.start", "status": 200, "headers": [(b"access-control-allow-origin", b"*")]})
        await send({"type": "http.response.body", "body": b"ok"})

    async def receive():
        return {"type": "http.request", "body": b""}

    async def send(message):
        sent.append(message)

    guard.app = app
    path, _, query = path.partition("?")
    scope = {
        "type": "http",
        "method": method,
        "path": path,
        "query_string": query.encode(),
        "headers": [(k.lower().encode(), v.encode()) for k, v in headers.items()],
    }
    asyncio.run(guard(scope, receive, send))
    start = sent[0]
    return start["status"], {k.decode(): v.decode() for k, v in start["headers"]}, bool(reached)


def test_the_guard_checks_token_host_and_origin():
    from ragbag.apps.web.security import Guard, Policy

    policy = Policy.for_server("t0ken-" + "x" * 26, "127.0.0.1", 8765)
    guard = Guard(None, policy)
    host = {"Host": "127.0.0.1:8765"}
    cookie = {**host, "Cookie": f"other=1; ragbag_serve_8765={policy.token}"}
    assert policy.url() == f"http://127.0.0.1:8765/?token={policy.token}"
    # The token: a redirect that trades it for a cookie and drops it from the URL.
    status, headers, reached = _call(guard, "GET", f"/doc?cite=abc123&token={policy.token}&q=x", host)
    assert (status, reached) == (303, False) and headers["location"] == "/doc?cite=abc123&q=x"
    assert headers["set-cookie"] == f"ragbag_serve_8765={policy.token}; Path=/; HttpOnly; SameSite=Strict"
    assert _call(guard, "GET", f"/api/search?q=x&token={policy.token}", host)[2]  # scripts: no redirect
    for refused in (
        ("GET", "/", host),  # nothing
        ("GET", "/?token=wrong", host),
        ("GET", "/", {**host, "Cookie": "ragbag_serve_8765=wrong"}),
        ("GET", "/", {**host, "Cookie": f"ragbag_serve_9999={policy.token}"}),  # another port's cookie
        ("GET", "/", {**cookie, "Host": "evil.example:8765"}),  # DNS rebinding
        ("GET", "/", {**cookie, "Host": "127.0.0.1:8766"}),
        ("GET", "/api/search?q=x", {**cookie, "Origin": "http://evil.example"}),
        ("GET", "/", {**cookie, "Origin": "null"}),
        ("POST", "/api/ask", {**cookie, "Origin": "http://127.0.0.1:8766"}),
        ("POST", "/api/ask", {**cookie, "Sec-Fetch-Site": "cross-site"}),
        ("POST", "/api/ask", {**cookie, "Sec-Fetch-Site": "same-site"}),
    ):
        status, headers, reached = _call(guard, *refused)
        assert (status, reached) == (403, False), refused
        assert "default-src 'none'" in headers["content-security-policy"]
    for allowed in (
        ("GET", "/", cookie),
        ("GET", "/", {**cookie, "Host": "localhost:8765"}),
        ("POST", "/api/ask", {**cookie, "Origin": "http://127.0.0.1:8765", "Sec-Fetch-Site": "same-origin"}),
        ("POST", "/api/ask", cookie),  # no Origin: curl, scripts
    ):
        status, headers, reached = _call(guard, *allowed)
        assert (status, reached) == (200, True), allowed
        assert "access-control-allow-origin" not in headers  # never CORS, even if a route set it
        assert headers["x-content-type-options"] == "nosniff" and headers["cache-control"] == "no-store"
        assert headers["server-timing"].startswith("app;dur=")
    wildcard = Guard(None, Policy.for_server(policy.token, "0.0.0.0", 8765))
    assert _call(wildcard, "GET", "/", {**cookie, "Host": "192.0.2.7:8765"})[2]  # any name; the token still counts
    assert not _call(wildcard, "GET", "/", {"Host": "192.0.2.7:8765"})[2]


def test_snippets_mark_the_query_words_as_segments_never_html():
    from ragbag.text.snippets import query_terms, snippet

    terms = query_terms("Cleaning the <b>magnetic</b> filter 黄山缆车")
    assert {"clean", "magnetic", "filter", "黄山", "缆车"} <= set(terms)
    assert not {"the", "b", "<b>"} & set(terms)
    text = "Intro. " * 80 + "Clean the magnetic filter <script>x</script> twice a year. 我们坐缆车上了黄山。"
    parts = snippet(text, terms, 280)
    marked = [t for t, m in parts if m]
    assert marked[:3] == ["Clean", "magnetic", "filter"] and "黄山" in marked and "缆车" in marked
    joined = "".join(t for t, _ in parts)
    assert joined.startswith("…") and "<script>x</script>" in joined  # kept as text: the page adds it as text
    assert len(joined) <= 300
