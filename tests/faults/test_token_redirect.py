"""The redirect that takes the token out of the URL stays on this server (issue #38, class 4).

``ragbag serve`` answers the printed link (``/?token=T``) with a cookie and a 303 to the same
path without the token. It used to echo the path as it came, so ``//evil.example/?token=T``
(a link anyone could build around the token once it leaked into a log or a screenshot)
answered ``Location: //evil.example/``, which a browser follows to another host. Every
Location must be a path here: what a browser makes of it (backslashes read as slashes, tabs
and newlines dropped) must resolve to this server's own origin. Driven through the guard with
tests/browser/test_serve.py's in-process helper, then once over HTTP against ``ragbag serve``.
"""

from __future__ import annotations

from urllib.parse import urljoin, urlsplit

import pytest
from conftest import stop_group
from test_serve import _call, _start

from ragbag.apps.web.security import Guard, Policy

ORIGIN = "http://127.0.0.1:8765"
HOSTILE = [
    "//evil.example/",
    "///evil.example/",
    "//evil.example",
    "/\\evil.example/",
    "/\\/evil.example/",
    "\\\\evil.example/",
    "/\t/evil.example/",
    "/\n/evil.example/",
    "/ //evil.example/",
    "//evil.example/%2F..",
    "//evil.example:8765/doc",
    "//127.0.0.1@evil.example/",
    "http://evil.example/",
    "https:evil.example",
    "",
]


def _lands(location: str) -> tuple[str, str]:
    """(origin, path) a browser goes to from our page: it reads a backslash as a slash and drops
    tabs and newlines before it resolves the reference."""
    browser = location.replace("\\", "/").replace("\t", "").replace("\n", "").replace("\r", "")
    target = urlsplit(urljoin(ORIGIN + "/", browser))
    return f"{target.scheme}://{target.netloc}", target.path


@pytest.mark.parametrize("path", HOSTILE)
def test_the_token_redirect_never_leaves_this_server(path):
    policy = Policy.for_server("t0ken-" + "x" * 26, "127.0.0.1", 8765)
    status, headers, reached = _call(
        Guard(None, policy), "GET", f"{path}?token={policy.token}&q=1", {"Host": "127.0.0.1:8765"}
    )
    location = headers["location"]
    assert (status, reached) == (303, False) and location.startswith("/") and not location.startswith("//")
    assert _lands(location)[0] == ORIGIN, (path, location)
    assert location.endswith("?q=1") and "token" not in location


def test_ordinary_paths_keep_their_redirect():
    policy = Policy.for_server("t0ken-" + "x" * 26, "127.0.0.1", 8765)
    guard, host = Guard(None, policy), {"Host": "127.0.0.1:8765"}
    for path, expected in (("/", "/"), ("/doc", "/doc?cite=abc"), ("/a b/ü", "/a%20b/%C3%BC?cite=abc")):
        query = f"?cite=abc&token={policy.token}" if path != "/" else f"?token={policy.token}"
        status, headers, _ = _call(guard, "GET", path + query, host)
        assert status == 303 and headers["location"] == expected, (path, headers["location"])


def test_over_http_against_ragbag_serve(home, tmp_path):
    server = _start(home, tmp_path / "serve.log")
    try:
        for path in ("//evil.example/", "/%5Cevil.example/", "//evil.example/%2F.."):
            status, headers, _ = server.request("GET", f"{path}?token={server.token}", auth=False)
            assert status == 303, (path, status)
            origin, _ = _lands(headers["location"])
            assert origin == ORIGIN and not headers["location"].startswith("//"), (path, headers["location"])
    finally:
        stop_group(server.proc)
