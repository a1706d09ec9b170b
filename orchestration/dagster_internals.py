"""The few parts of Dagster's private API ragbag relies on, in one place.

Dagster's public API has no cron iterator, no cron validator, no way to make an executor's
steps honour run interrupts, and no way to forget a deleted run's cached latest
materialisation. These come from ``dagster._*`` modules, which can change in any release; the
version is pinned in pyproject.toml, and this is the only module that imports them
(tests/unit/test_layers.py fails on any other), so an upgrade has one file to check.
"""

from __future__ import annotations

from dagster._core.errors import raise_execution_interrupts
from dagster._core.storage.event_log.schema import AssetKeyTable
from dagster._utils import iterate_with_context
from dagster._utils.schedules import cron_string_iterator, is_valid_cron_string

__all__ = [
    "AssetKeyTable",
    "cron_string_iterator",
    "is_valid_cron_string",
    "iterate_with_context",
    "raise_execution_interrupts",
]
