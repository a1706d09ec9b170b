"""ragbag's evaluation homes: made-up people's data in the real on-disk formats of every
connector ragbag ships, with judged queries, for ``ragbag eval personal``, ``ragbag eval
persona-b`` and ``ragbag eval persona-c``.

A distribution of its own (``evalsets/`` in the ragbag checkout) because it is test data, not
product: an installed ragbag carries no invented mailboxes, and ragbag imports this package only
when one of these sets is asked for. The people are data (``personas/<x>/*.json``), laid down by
one small generator (:mod:`ragbag_evalsets.sources`) through writers of each format
(:mod:`ragbag_evalsets.formats`), the same bytes on every run.

Usage: ``python -m ragbag_evalsets {personal|persona-b|persona-c} OUT``, or :func:`generate`.
"""

from __future__ import annotations

import importlib
from pathlib import Path

# Set name -> the module that lays it down (each persona's hooks, its data folder).
SETS = {"personal": "personal", "persona-b": "persona_b", "persona-c": "persona_c"}


def generate(name: str, out: Path) -> Path:
    """Write set ``name`` under ``out`` (``data/``, ``home.json``, ``queries.jsonl``); ``data/`` is
    replaced, nothing else under ``out`` is touched."""
    if name not in SETS:
        raise ValueError(f"unknown evaluation set {name!r}: {', '.join(SETS)}")
    module = importlib.import_module(f"ragbag_evalsets.{SETS[name]}")
    return module.generate(Path(out))
