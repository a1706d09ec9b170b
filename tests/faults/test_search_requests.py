"""Search requests that cannot mean anything are refused (issue #18, B), not answered "0 hits".

A `SearchRequest` is checked when it is built, and the CLI, `ask`, MCP, the agent and
`query.search` all build one: an unknown connector, an empty query, a NaN or infinite floor, k < 1.
"""

from __future__ import annotations

import math

import pytest
from conftest import cli

from ragbag import connectors
from ragbag.core.errors import RagbagError
from ragbag.search import query
from ragbag.search.request import SearchRequest


def _error(proc) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ragbag: error: "), proc.stderr
    return lines[0]


@pytest.mark.parametrize(
    "args, says",
    [
        (("search", "gate code", "--connector", "nosuch"), "unknown connector 'nosuch'; choose one of: files, code"),
        (("search", "gate code", "--connector", "files", "--connector", "mial"), "unknown connector 'mial'"),
        (("search", ""), "the query is empty"),
        (("search", "  \t "), "the query is empty"),
        (("search", "gate code", "--min-score", "nan"), "--min-score nan: give a finite number"),
        (("search", "gate code", "--min-score", "inf"), "--min-score inf: give a finite number"),
        (("search", "gate code", "--min-score", "-inf"), "--min-score -inf: give a finite number"),
        (("ask", "gate code?", "--connector", "nosuch"), "unknown connector 'nosuch'"),
        (("ask", "gate code?", "--min-score", "nan"), "--min-score nan: give a finite number"),
    ],
)
def test_the_cli_refuses_a_meaningless_search(home, args, says):
    assert says in _error(cli(*args, check=False))


def test_the_error_lists_every_known_connector(home):
    line = _error(cli("search", "gate code", "--connector", "nosuch", check=False))
    assert all(name in line for name in connectors.NAMES)


@pytest.mark.parametrize(
    "kwargs, says",
    [
        ({"connectors": ["nosuch"]}, "unknown connector 'nosuch'"),
        ({"query": ""}, "the query is empty"),
        ({"query": " \n"}, "the query is empty"),
        ({"min_score": math.nan}, "give a finite number"),
        ({"min_score": math.inf}, "give a finite number"),
        ({"k": 0}, "k must be at least 1"),
        ({"k": -3}, "k must be at least 1"),
    ],
)
def test_query_search_refuses_it_for_every_caller(home, kwargs, says):
    kwargs = {"query": "gate code", **kwargs}
    with pytest.raises(RagbagError, match=says):
        query.search(kwargs.pop("query"), home=home, **kwargs)


def test_mcp_search_refuses_an_unknown_connector(home):
    from ragbag.apps.mcp_server import Backend

    for connector in ("nosuch", ["files", "nosuch"]):
        with pytest.raises(RagbagError, match="unknown connector 'nosuch'; choose one of"):
            Backend(home).call("search", {"query": "gate code", "connector": connector})


def test_a_known_connector_and_a_finite_floor_pass(home):
    SearchRequest.parse("gate code", k=1, connectors=list(connectors.NAMES), min_score=-1.5)
