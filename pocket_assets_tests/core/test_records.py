"""`to_dict` writes every record exactly as `dataclasses.asdict` would, tuples as lists."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pocket_assets.core.records import (
    Block,
    ChunkRecord,
    ContentFeatures,
    PageRecord,
    PdfIdentity,
    TableCells,
    chunk_from_dict,
    to_dict,
)
from pocket_assets.export.redirects import Meaning

RECORD_TYPES = (PdfIdentity, TableCells, Block, PageRecord, ContentFeatures, ChunkRecord, Meaning)


def as_lists(value: Any) -> Any:
    """What `asdict` gives, with its tuples as lists (JSON's and Parquet's arrays)."""
    if isinstance(value, dict):
        return {key: as_lists(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [as_lists(item) for item in value]
    return value


@settings(max_examples=40, deadline=None, derandomize=True)
@given(st.one_of(*(st.from_type(record_type) for record_type in RECORD_TYPES)))
def test_to_dict_is_asdict_with_lists(record: Any) -> None:
    plain = to_dict(record)
    expected = as_lists(dataclasses.asdict(record))
    # repr tells a tuple from a list and shows the key order; json.dumps is what the exports write.
    assert repr(plain) == repr(expected)
    assert json.dumps(plain, ensure_ascii=False) == json.dumps(expected, ensure_ascii=False)


@settings(max_examples=20, deadline=None, derandomize=True)
@given(st.from_type(ChunkRecord))
def test_chunk_from_dict_reads_back_what_to_dict_wrote(chunk: ChunkRecord) -> None:
    assert chunk_from_dict(to_dict(chunk)) == chunk


@settings(max_examples=10, deadline=None, derandomize=True)
@given(st.from_type(ChunkRecord))
def test_a_row_without_the_newer_fields_gets_their_defaults_and_an_unknown_field_is_refused(chunk: ChunkRecord) -> None:
    row = to_dict(chunk)
    older = {key: value for key, value in row.items() if key not in ("context", "embedded_tokens")}
    assert chunk_from_dict(older) == dataclasses.replace(chunk, context="", embedded_tokens=0)
    with pytest.raises(TypeError, match="no_such_field"):
        chunk_from_dict({**row, "no_such_field": 1})
