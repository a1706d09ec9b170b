"""``import lancedb`` with its namespace client's validators built on first call (issue #20):
the deferral ends with the import, and a deferred function still validates its arguments."""

from __future__ import annotations

import subprocess
import sys

PROBE = """
import pydantic
eager = pydantic.validate_call
from ragbag.index.store import import_lancedb
lancedb = import_lancedb()
assert pydantic.validate_call is eager, "validate_call left replaced"
from lance_namespace_urllib3_client.api import MetadataApi
assert not hasattr(MetadataApi.describe_table, "raw_function"), "validator built at import"
try:
    MetadataApi().describe_table(id=123, describe_table_request=None)
except pydantic.ValidationError as e:
    print("validated:", e.error_count())
"""


def test_lancedb_imports_with_validators_deferred_and_still_validating():
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.startswith("validated:"), done.stdout
