"""Exclusion rules as written and as matched (``ragbag.core.exclusions``)."""

from __future__ import annotations

import pytest

from ragbag.core import exclusions
from ragbag.core.errors import RagbagError
from ragbag.core.home import Source
from ragbag.pipeline import cursor


def test_rules_parse_with_path_as_the_default_field():
    assert [str(exclusions.parse(r)) for r in ("private/", "Sender: *@X.org", "C:\\Temp", "label:Spam")] == [
        "path:private",
        "sender:*@x.org",
        "path:c:/temp",
        "label:spam",
    ]
    assert str(exclusions.parse("domain:@news.example")) == "domain:news.example"
    with pytest.raises(RagbagError, match="no pattern"):
        exclusions.parse("sender:")
    assert exclusions.of_source({"exclude": "*.log"}) == (exclusions.Rule("path", "*.log"),)


@pytest.mark.parametrize(
    ("glob", "rel", "out"),
    [
        ("private", "private/a.md", True),
        ("private", "x/private/a.md", True),
        ("private", "privateer.md", False),
        ("/private", "x/private/a.md", False),
        ("/private", "private/a.md", True),
        ("work/clients/*", "work/clients/acme/plan.md", True),
        ("*.key", "deep/down/id.KEY", True),
        ("*.key", "keys.md", False),
    ],
)
def test_path_globs(glob, rel, out):
    assert exclusions.path_excluded((exclusions.parse(glob).pattern,), rel) is out


def test_record_fields():
    rules = tuple(
        exclusions.parse(r) for r in ("sender:*@spam.example", "domain:ads.com", "chat:family*", "label:#private")
    )
    mail = {"from": "deals@spam.example", "labels": ["Inbox"]}
    assert str(exclusions.matching(rules, mail)) == "sender:*@spam.example"
    assert str(exclusions.matching(rules, {"from": "x@mail.ads.com"})) == "domain:ads.com"  # subdomains too
    assert str(exclusions.matching(rules, {}, uri="https://www.ads.com/page")) == "domain:ads.com"
    assert exclusions.matching(rules, {}, uri="https://notads.com/") is None
    assert str(exclusions.matching(rules, {"chat": "Family Group"})) == "chat:family*"
    assert str(exclusions.matching(rules, {"tags": ["private"]})) == "label:private"
    assert str(exclusions.matching(rules, {}, authors=["Deals <x@spam.example>"])) is not None
    assert exclusions.matching(rules, {"from": "anna@example.org", "chat": "Work"}) is None


def test_a_read_under_other_rules_starts_over(tmp_path):
    """A record a dropped rule kept out is in no cursor, and one stored before a new secret rule
    was never screened by it: a read under other rules must not start from the old cursor."""
    src = Source("s", "files", "/x")
    file = tmp_path / "c.json"
    cursor.save(file, src, {"n": 1}, "rules-1")
    assert cursor.load(file, src, "rules-1") == {"n": 1}
    assert cursor.load(file, src, "rules-2") is None
