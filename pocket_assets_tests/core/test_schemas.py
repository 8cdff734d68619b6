"""The Arrow schemas of the stage files are read off the record types: a field of a record is a column."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import pyarrow as pa
import pytest

from pocket_assets.core.records import Int8, Int64
from pocket_assets.core.schemas import CHUNK_SCHEMA, PAGE_SCHEMA, PDF_IDENTITY_SCHEMA, record_schema


@dataclass(frozen=True)
class Inner:
    name: str
    count: int


@dataclass(frozen=True)
class EveryKind:
    text: str
    flag: bool
    count: int
    offset: Int64
    level: Int8
    maybe: str | None
    pages: tuple[int, ...]
    rows: tuple[tuple[str, ...], ...]
    metadata: dict[str, str]
    inner: Inner
    optional_inner: Inner | None = None
    added: int = 0


def test_each_annotation_is_its_arrow_type_in_field_order() -> None:
    inner = pa.struct([("name", pa.string()), ("count", pa.int32())])
    assert record_schema(EveryKind).equals(
        pa.schema(
            [
                ("text", pa.string()),
                ("flag", pa.bool_()),
                ("count", pa.int32()),
                ("offset", pa.int64()),
                ("level", pa.int8()),
                ("maybe", pa.string()),
                ("pages", pa.list_(pa.int32())),
                ("rows", pa.list_(pa.list_(pa.string()))),
                ("metadata", pa.map_(pa.string(), pa.string())),
                ("inner", inner),
                ("optional_inner", inner),
                ("added", pa.int32()),
            ]
        ),
        check_metadata=True,
    )


# What the stage files on disk hold: the serialized schema's digest. A record change that changes one is a new
# format of that stage's files: rows of older files must still read back (a new field needs a default, as
# `ChunkRecord.context` has); then the digest is updated here.
STORED = {"raw_pdf": "468e132bfb3683f6", "pages": "d632788862cb0e2a", "chunks": "f2eb37c0c3d572d6"}


@pytest.mark.parametrize(
    ("stored", "schema"),
    [("raw_pdf", PDF_IDENTITY_SCHEMA), ("pages", PAGE_SCHEMA), ("chunks", CHUNK_SCHEMA)],
)
def test_the_stage_files_schemas_are_unchanged(stored: str, schema: pa.Schema) -> None:
    digest = hashlib.sha256(schema.serialize().to_pybytes()).hexdigest()[:16]
    assert digest == STORED[stored], f"{stored} files would now be written as\n{schema}"
