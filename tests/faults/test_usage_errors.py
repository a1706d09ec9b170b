"""Usage errors (issue #18, A): a bad option, value or date is one `ragbag: error:` line, exit 2.

typer 0.29 raises the exceptions of its own vendored click, which are not click's, so these
used to escape `cli.main` as a rich traceback with exit code 1.
"""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import pytest
from conftest import cli

from ragbag.core.errors import RagbagError
from ragbag.search import filters


def _one_error_line(proc) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ragbag: error: "), proc.stderr
    assert "Traceback" not in proc.stderr and "╭" not in proc.stderr
    return lines[0]


@pytest.mark.parametrize(
    "args, says",
    [
        (("add", "files", "-x", "/tmp"), ["no such option: -x", "`ragbag add --help`"]),
        (("search", "q", "-k", "0"), ["'--top-k'", "greater than or equal to 1", "`ragbag search --help`"]),
        (("search", "q", "-k", "-1"), ["'--top-k'", "greater than or equal to 1"]),
        (("search", "q", "-k", "abc"), ["'--top-k'", "valid integer"]),
        (("search", "q", "--rerank-depth", "1"), ["'--rerank-depth'", "greater than or equal to 2"]),
        (("search", "q", "--min-score", "high"), ["'--min-score'", "valid number"]),
        (("ask", "q", "-k", "0"), ["'--top-k'", "`ragbag ask --help`"]),
        (("ask", "q", "-k", "51"), ["'--top-k'", "less than or equal to 50"]),
        (("search",), ["missing argument 'query'"]),
        (("serach", "q"), ["no such command 'serach'", "`ragbag --help`"]),
        (("config",), ["missing command", "`ragbag config --help`"]),
    ],
)
def test_a_usage_error_is_one_line_naming_the_option(home, args, says):
    line = _one_error_line(cli(*args, check=False))
    for part in says:
        assert part in line, line


@pytest.mark.parametrize("option", ["--after", "--before"])
@pytest.mark.parametrize("command", ["search", "ask"])
def test_a_date_out_of_range_is_one_line(home, command, option):
    line = _one_error_line(cli(command, "gate code", option, "99999999999d", check=False))
    assert "'99999999999d' is out of range" in line and "9999" in line


@pytest.mark.parametrize(
    "value", ["99999999999d", "3000000d", "9999999y", "9999-12-31T23:00-05:00", "0001-01-01T00:30+01:00"]
)
def test_parse_time_reports_a_moment_outside_datetime(value):
    with pytest.raises(RagbagError, match="out of range"):
        filters.parse_time(value)


def test_an_out_of_range_date_is_a_tool_error_over_mcp(home):
    from ragbag.apps.mcp_server import Backend

    with pytest.raises(RagbagError, match="out of range"):
        Backend(home).call("search", {"query": "gate code", "after": "99999999999d"})


def test_a_time_with_an_offset_filters_by_the_utc_moment():
    """`_mask` compares against UTC dates: an offset must be converted, not dropped."""
    from ragbag.search import query

    class Dated:
        dates = np.array(["2024-01-01T00:30", "2024-01-01T05:30"], dtype="datetime64[us]")
        records: list = []
        past = False  # no earlier document versions: every row is current

    lo = filters.parse_time("2024-01-01T05:00+05:00")  # = 2024-01-01T00:00 UTC
    assert lo == datetime(2024, 1, 1, tzinfo=UTC) and lo.utcoffset().total_seconds() == 0
    assert query._mask(Dated(), [], lo, None).tolist() == [True, True]
    hi = filters.parse_time("2024-01-01T06:00+05:00")  # 01:00 UTC
    assert query._mask(Dated(), [], None, hi).tolist() == [True, False]


def test_a_home_that_is_a_file_is_one_line(tmp_path):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x")
    for home in (blocker, blocker / "below"):
        for args in (("status",), ("list", "--json"), ("search", "gate code"), ("mcp",)):
            line = _one_error_line(cli(*args, env={"RAGBAG_HOME": str(home)}, check=False))
            assert f"RAGBAG_HOME {home}" in line and "not a folder" in line, line


def test_help_shows_citation_brackets_as_written():
    """Issue 34: Rich markup in the help ate "[c:xxxxxx]" (a citation as it is printed)."""
    assert "[c:xxxxxx]" in cli("ask", "--help").stdout


def test_a_cli_error_names_cli_commands_not_mcp_tools(home, tmp_path):
    """Issue 34: `ragbag history` of an unknown path said "find_files lists them", a tool the CLI
    does not have."""
    proc = cli("history", str(tmp_path / "nope.md"), check=False)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1
    assert "find_files" not in proc.stderr and "`ragbag search`" in proc.stderr, proc.stderr
