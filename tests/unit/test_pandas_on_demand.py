"""ragbag's own processes import pandas when something asks for it, not with LanceDB
(``lancedb_import.pandas_on_demand``): the rows they read are the same as with pandas loaded
first, and pandas asked for by name works, after which pyarrow recognises pandas objects."""

from __future__ import annotations

import json
import subprocess
import sys

PROBE = """
import json, sys
from datetime import datetime, timezone, timedelta
from ragbag.index import lancedb_import
if sys.argv[1] == "on demand":
    lancedb_import.pandas_on_demand()
import pyarrow as pa
from ragbag.index.store import SCHEMAS, Store

out = {"pandas_before": "pandas" in sys.modules}
store = Store(sys.argv[2], writer=True)
when = datetime(2025, 3, 30, 1, 30, 15, 123456, tzinfo=timezone(timedelta(hours=2)))
row = {"doc_id": "d1", "source": "s", "connector": "mail", "title": "Grüße 你好", "text": "x" * 3,
       "created_at": when, "date": when, "authors": ["Anna", "陈静"], "metadata": '{"k": 1.5}',
       "version": 2, "valid_from": when}
store.add("documents", pa.Table.from_pylist([row, {"doc_id": "d2", "source": "s"}], schema=SCHEMAS["documents"]))
read = store.rows("documents", "s").to_pylist()
out["rows"] = json.loads(json.dumps(read, default=lambda v: [type(v).__name__, v.isoformat()]))
out["pandas_after_reads"] = "pandas" in sys.modules
frame = store.table("documents").to_pandas()  # pandas asked for by name
import pandas as pd
out["frame_rows"] = len(frame)
out["frame_table_rows"] = pa.table(pd.DataFrame({"a": [1, 2, 3]})).num_rows
out["series_type"] = str(pa.array(pd.Series([1.5, None])).type)
print(json.dumps(out), file=sys.stderr)
"""


def _probe(kind: str, lance) -> dict:
    done = subprocess.run([sys.executable, "-c", PROBE, kind, str(lance)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stderr.strip().splitlines()[-1])


def test_pandas_waits_until_asked_for_and_reads_are_the_same(tmp_path):
    demand = _probe("on demand", tmp_path / "a")
    library = _probe("library", tmp_path / "b")
    assert not demand["pandas_before"] and not library["pandas_before"]
    assert not demand["pandas_after_reads"]  # opening, writing and reading the store left it out
    assert library["pandas_after_reads"]  # a library caller keeps pyarrow's own behaviour
    assert demand["rows"] == library["rows"]
    assert demand["rows"][0]["created_at"] == ["datetime", "2025-03-29T23:30:15.123456+00:00"]
    for probe in (demand, library):
        assert probe["frame_rows"] == 2 and probe["frame_table_rows"] == 3 and probe["series_type"] == "double"
