"""The stored schemas are read off the record types, byte for byte the schemas the stage files were written with."""

from __future__ import annotations

import pyarrow as pa
import pytest

from pocket_assets.core.schemas import CHUNK_SCHEMA, PAGE_SCHEMA, PDF_IDENTITY_SCHEMA

WRITTEN_PDF_IDENTITY = pa.schema(
    [
        ("partition_key", pa.string()),
        ("corpus", pa.string()),
        ("source", pa.string()),
        ("sha256", pa.string()),
        ("size_bytes", pa.int64()),
        ("page_count", pa.int32()),
        ("metadata", pa.map_(pa.string(), pa.string())),
    ]
)

_TABLE_CELLS = pa.struct(
    [
        ("header", pa.list_(pa.string())),
        ("rows", pa.list_(pa.list_(pa.string()))),
        ("caption", pa.string()),
    ]
)

_BLOCK = pa.struct(
    [
        ("kind", pa.string()),
        ("char_start", pa.int32()),
        ("char_end", pa.int32()),
        ("level", pa.int8()),
        ("table", _TABLE_CELLS),
    ]
)

WRITTEN_PAGE = pa.schema(
    [
        ("page", pa.int32()),
        ("text", pa.string()),
        ("blocks", pa.list_(_BLOCK)),
        ("warnings", pa.list_(pa.string())),
        ("char_start", pa.int64()),
        ("char_end", pa.int64()),
        ("line_start", pa.int64()),
    ]
)

WRITTEN_CHUNK = pa.schema(
    [
        ("id", pa.string()),
        ("text", pa.string()),
        ("source", pa.string()),
        ("corpus", pa.string()),
        ("chunk_type", pa.string()),
        ("page", pa.int32()),
        ("pages", pa.list_(pa.int32())),
        ("tokens", pa.int32()),
        ("section", pa.string()),
        ("section_path", pa.list_(pa.string())),
        ("section_id", pa.string()),
        ("article_num", pa.string()),
        ("parent_id", pa.string()),
        ("table_type", pa.string()),
        ("char_start", pa.int64()),
        ("char_end", pa.int64()),
        ("line_from", pa.int64()),
        ("line_to", pa.int64()),
        ("chunk_uid", pa.string()),
        ("document_id", pa.string()),
        ("canonical_id", pa.string()),
        ("hash", pa.string()),
        ("anchor", pa.string()),
        ("chunk_index", pa.int32()),
        ("total_chunks", pa.int32()),
        ("has_overlap_previous", pa.bool_()),
        ("has_overlap_next", pa.bool_()),
        ("content_type", pa.string()),
        (
            "content_features",
            pa.struct(
                [
                    ("heading_count", pa.int32()),
                    ("list_count", pa.int32()),
                    ("table_count", pa.int32()),
                    ("equation_count", pa.int32()),
                ]
            ),
        ),
        ("chunker_version", pa.string()),
        ("policy_hash", pa.string()),
        ("context", pa.string()),
        ("embedded_tokens", pa.int32()),
    ]
)


@pytest.mark.parametrize(
    ("derived", "written"),
    [(PDF_IDENTITY_SCHEMA, WRITTEN_PDF_IDENTITY), (PAGE_SCHEMA, WRITTEN_PAGE), (CHUNK_SCHEMA, WRITTEN_CHUNK)],
    ids=["raw_pdf", "pages", "chunks"],
)
def test_the_derived_schema_is_the_written_one(derived: pa.Schema, written: pa.Schema) -> None:
    assert derived.equals(written, check_metadata=True)
    assert derived.serialize().to_pybytes() == written.serialize().to_pybytes()
