"""``import lancedb`` with its namespace client's validators and models built on first use,
``override`` only marking and the REST client's package run when a name of it is first read
(issues #20, #37): the deferral ends with the import, and what is deferred still validates its
arguments."""

from __future__ import annotations

import subprocess
import sys

PROBE = """
import overrides, pydantic
eager, config, override = pydantic.validate_call, dict(pydantic.BaseModel.model_config), overrides.override
from ragbag.index.lancedb_import import import_lancedb
lancedb = import_lancedb()
assert pydantic.validate_call is eager, "validate_call left replaced"
assert pydantic.BaseModel.model_config == config, "BaseModel's config left changed"
assert overrides.override is override, "override left replaced"
from lancedb.db import LanceDBConnection
assert LanceDBConnection.table_names.__override__, "override no longer marks"
import sys
models = [c for name, m in list(sys.modules.items()) if name.startswith("lance_namespace_urllib3_client.models.")
          for c in vars(m).values() if isinstance(c, type) and issubclass(c, pydantic.BaseModel) and c.__module__ == name]
built = [c.__name__ for c in models if c.__pydantic_complete__]
assert len(models) > 100 and len(built) < 10, built  # (a few are rebuilt by their module for a forward reference)
from lance_namespace_urllib3_client.models import ListTablesRequest
assert not ListTablesRequest.__pydantic_complete__, "model built at import"
assert ListTablesRequest(id=["a"], limit=3).limit == 3
try:
    ListTablesRequest(id=["a"], limit="many")
    raise AssertionError("a deferred model did not validate")
except pydantic.ValidationError:
    pass
class Later(pydantic.BaseModel):
    x: int
assert Later.__pydantic_complete__, "a model defined after the import is deferred too"
assert "lance_namespace_urllib3_client.api" not in sys.modules, "the REST client's API imported with lancedb"
assert "urllib3" not in sys.modules, "the REST client's HTTP library imported with lancedb"
import lance_namespace_urllib3_client as client
assert client.ApiClient.__name__ == "ApiClient"  # the first name read runs the package
from lance_namespace_urllib3_client.api import MetadataApi
try:
    MetadataApi().describe_table(id=123, describe_table_request=None)
except pydantic.ValidationError as e:
    print("validated:", e.error_count())
"""


def test_lancedb_imports_with_validators_deferred_and_still_validating():
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.startswith("validated:"), done.stdout
