"""`storage.keep_versions`, the retention of superseded table versions (the cleanup itself is
checked end to end in tests/faults/test_privacy.py)."""

from __future__ import annotations

import pytest


def test_a_retention_is_a_duration():
    from ragbag.core.errors import RagbagError
    from ragbag.core.settings import retention

    assert retention("90s").total_seconds() == 90 and retention("2h").total_seconds() == 7200
    assert retention("0").total_seconds() == 0 and retention("1.5d").total_seconds() == 129600
    for bad in ("", "soon", "-1h", "1w", "nan", "99999999d"):
        with pytest.raises(RagbagError):
            retention(bad)
