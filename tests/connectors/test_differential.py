"""The differential run over the public corpus (issue 31): every connector's files read by ragbag
and by an independent reference reader (``tests/differential/``). Holds the issue's floor: at
least 500 files from 12 projects, no file failing its source, and every disagreement explained
in the differential module (and the corpus README)."""

from __future__ import annotations

import pytest

from tests.differential import run


@pytest.fixture(scope="module")
def reports():
    return [run.run(m) for m in run.modules()]


def test_corpus_is_wide(reports):
    files = sum(len(r.outcomes) + len(r.failures) for r in reports)
    projects = set().union(*(r.projects for r in reports))
    assert files >= 500 and len(projects) >= 12, (files, sorted(projects))


def test_no_file_fails_its_source(reports):
    failures = {f: why for r in reports for f, why in r.failures.items()}
    assert not failures


def test_every_disagreement_is_explained(reports):
    unexplained = {f: d for r in reports for f, d in r.unexplained.items()}
    assert not unexplained


def test_explanations_name_files_of_the_corpus(reports):
    """An explanation for a file that now agrees (or is gone) is stale: it must go."""
    for module in run.modules():
        report = next(r for r in reports if r.connector == module.CONNECTOR)
        stale = set(getattr(module, "EXPLAINED", {})) - set(report.explained)
        assert not stale, (module.CONNECTOR, stale)
