"""The differential run: every connector's public corpus read by ragbag and by an independent
reference, compared per file. Prints the agreement table the corpus README keeps.

    .venv/bin/python -m tests.differential.run            # the table (markdown)
    .venv/bin/python -m tests.differential.run --details  # and every disagreement, explained or not

Each ``tests/differential/<connector>.py`` module defines ``CONNECTOR``, ``units()``,
``compare(path) -> Outcome`` and ``EXPLAINED`` (see ``common.py``). A file whose ragbag read
raises is a source-level failure; a disagreement not in ``EXPLAINED`` is unexplained. Both must
be zero (``tests/connectors/test_differential.py``).
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

from tests.differential.common import Outcome, SourceFailure, rel

HERE = Path(__file__).resolve().parent
ASPECTS = ("count", "times", "people", "text", "attachments")


@dataclass
class Report:
    """One connector's run: outcomes, source-level failures (file → why), unexplained files."""

    connector: str
    outcomes: list[Outcome] = field(default_factory=list)
    failures: dict[str, str] = field(default_factory=dict)
    unexplained: dict[str, list[str]] = field(default_factory=dict)
    explained: dict[str, list[str]] = field(default_factory=dict)

    @property
    def projects(self) -> set[str]:
        return {_project(o.file) for o in self.outcomes} | {_project(f) for f in self.failures}


def modules() -> list[ModuleType]:
    names = sorted(
        m.name
        for m in pkgutil.iter_modules([str(HERE)])
        if m.name not in ("common", "run") and not m.name.startswith("_")
    )
    return [importlib.import_module(f"tests.differential.{name}") for name in names]


def run(module: ModuleType) -> Report:
    report = Report(module.CONNECTOR)
    explained: dict[str, str] = getattr(module, "EXPLAINED", {})
    for unit in module.units():
        try:
            outcome = module.compare(unit)
        except SourceFailure as exc:
            report.failures[rel(unit)] = str(exc)
            continue
        report.outcomes.append(outcome)
        if outcome.disagreements:
            target = report.explained if outcome.file in explained else report.unexplained
            target[outcome.file] = outcome.disagreements
    return report


def table(reports: list[Report]) -> str:
    head = (
        "| connector | files | projects | source-level failures | "
        + " | ".join(ASPECTS)
        + " | files agreeing | explained | unexplained |"
    )
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    total_files: int = 0
    projects: set[str] = set()
    for r in reports:
        sums: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for o in r.outcomes:
            for aspect, (ok, n) in o.checks.items():
                sums[aspect][0] += ok
                sums[aspect][1] += n
        cells = [f"{sums[a][0]}/{sums[a][1]}" if sums[a][1] else "—" for a in ASPECTS]
        files = len(r.outcomes) + len(r.failures)
        agreeing = sum(1 for o in r.outcomes if not o.disagreements)
        total_files += files
        projects |= r.projects
        lines.append(
            f"| {r.connector} | {files} | {len(r.projects)} | {len(r.failures)} | "
            + " | ".join(cells)
            + f" | {agreeing} | {len(r.explained)} | {len(r.unexplained)} |"
        )
    lines.append(f"\n{total_files} files from {len(projects)} projects.")
    return "\n".join(lines)


def _project(file: str) -> str:
    """The origin project of a corpus file: ``public/<connector>/<project>/…`` or
    ``realworld/<connector>/<project>/…``."""
    parts = file.split("/")
    return parts[2] if len(parts) > 3 else parts[-2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--details", action="store_true", help="list every disagreement")
    args = parser.parse_args()
    reports = [run(m) for m in modules()]
    print(table(reports))
    if args.details:
        for r in reports:
            for file, why in sorted(r.failures.items()):
                print(f"FAILURE {file}: {why}")
            for label, found in (("UNEXPLAINED", r.unexplained), ("explained", r.explained)):
                for file, lines in sorted(found.items()):
                    print(f"{label} {file}: " + "; ".join(lines))


if __name__ == "__main__":
    main()
