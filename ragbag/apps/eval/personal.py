"""The personal evaluation set, assembled: persona A's home (``personal_set``: nine connectors'
formats, the judged queries) with the documents inside it (``personal_inside``: attachments,
scans, screenshots, photos). Two modules that each import only downwards, joined here.

Usage: ``python -m ragbag.apps.eval.personal OUT`` (or ``generate(Path(OUT))``).
"""

from __future__ import annotations

import sys
from pathlib import Path

from ragbag.apps.eval import personal_inside, personal_set


def generate(out: Path) -> Path:
    """Write the set under ``out`` (``data/``, ``home.json``, ``queries.jsonl``); the same bytes and
    file times on every run. ``data/`` is replaced; nothing else under ``out`` is touched."""
    s = personal_set.assemble(personal_inside.made())
    return personal_set.write_set(Path(out), s, "personal", personal_set.SOURCES, "id")


if __name__ == "__main__":
    sys.exit(personal_set.main(module=__name__, make=generate))
