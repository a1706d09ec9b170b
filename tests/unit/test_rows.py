"""One definition of each row and hit (``ragbag.core.rows``): the table schemas, the published
rows, the search columns, the tools' JSON schema and the search page's hits all follow it."""

from __future__ import annotations

from datetime import UTC, datetime

import jsonschema
import pytest

from ragbag.answer.citations import hit_dict
from ragbag.answer.tool_specs import SPECS
from ragbag.apps.web.hits import shape
from ragbag.core import rows
from ragbag.index import published
from ragbag.index.store import SCHEMAS
from ragbag.search import query


def test_the_tables_are_the_row_types():
    assert SCHEMAS["documents"].names == rows.fields(rows.DocumentRow)
    assert SCHEMAS["document_versions"].names == rows.fields(rows.DocumentRow)
    assert SCHEMAS["chunks"].names == rows.fields(rows.ChunkRow)
    assert str(SCHEMAS["chunks"].field("start").type) == "int64"
    assert str(SCHEMAS["chunks"].field("ordinal").type) == "int32"
    assert str(SCHEMAS["documents"].field("date").type) == "timestamp[us, tz=UTC]"


def test_published_rows_and_search_columns_follow_the_types():
    assert list(published.ROW_FIELDS) == [f for f in rows.fields(rows.ChunkRow) if f != "doc_hash"]
    assert query.COLUMNS == rows.fields(rows.Hit)
    chunk, hit = rows.columns(rows.ChunkRow), rows.columns(rows.Hit)
    # a field a hit carries from its chunk has the chunk's type (metadata is parsed from its JSON text)
    for name in set(chunk) & set(hit) - {"metadata"}:
        assert chunk[name][0] == hit[name][0], name


def _hit(**over) -> rows.Hit:
    base = rows.Hit(
        text="The street door code is 4411#.",
        score=0.5,
        source="notes",
        connector="files",
        uri="/notes/lisbon.pdf",
        title="lisbon.pdf",
        doc_id="d" * 32,
        chunk_id="abcdef" + "0" * 26,
        citation="abcdef",
        metadata={},
        date=datetime(2026, 1, 2, tzinfo=UTC),
        ordinal=0,
        start=0,
        end=30,
        vector_score=float("nan"),
        keyword_score=None,
        chunk_text="The street door code is 4411#.",
        version=1,
        valid_from=None,
        valid_to=None,
        people={},
    )
    base.update(over)  # type: ignore[typeddict-item]
    return base


@pytest.mark.parametrize("meta", [{}, {"format": "pdf", "page_start": 2, "page_end": 3}])
def test_the_tools_hit_is_its_schema_and_the_page_adds_two_fields(meta):
    (search,) = [s for s in SPECS if s["name"] == "search"]
    schema = search["returns"]["properties"]["hits"]["items"]
    assert list(schema["properties"]) == rows.fields(rows.ShownHit)
    assert set(schema["required"]) == set(rows.fields(rows.ShownHit)) - {"page_start", "page_end", "people"}
    shown = hit_dict(_hit(metadata=meta), 1)
    jsonschema.validate(shown, schema)  # the NaN cosine is null, the date ISO 8601
    assert shown["vector_score"] is None and shown["date"] == "2026-01-02T00:00:00+00:00"
    assert (shown.get("page_start"), shown.get("page_end")) == ((2, 3) if meta else (None, None))
    page = shape(_hit(metadata=meta), 1, ["code"], "door code")
    assert set(page) == set(shown) | {"snippet", "href"}
    assert [p for p in page["snippet"] if p[1]] == [["code", True]]
