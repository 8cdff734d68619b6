"""`table_of_rows` makes the table `pa.Table.from_pylist` makes, so the stage files keep their bytes."""

from __future__ import annotations

import io
import subprocess
import sys
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pocket_assets.core.schemas import CHUNK_SCHEMA, PAGE_SCHEMA, PDF_IDENTITY_SCHEMA
from pocket_assets.stages.arrow_rows import table_of_rows

_TEXT = st.text(st.characters(codec="utf-8", categories=None), max_size=30)


def _values(kind: pa.DataType, nullable: bool = True) -> st.SearchStrategy[Any]:
    """The values a stage's row holds for an Arrow type (nulls where the type allows them)."""
    if pa.types.is_string(kind):
        strategy: st.SearchStrategy[Any] = _TEXT
    elif pa.types.is_boolean(kind):
        strategy = st.booleans()
    elif pa.types.is_integer(kind):
        bits = kind.bit_width - 1
        strategy = st.integers(min_value=-(2**bits), max_value=2**bits - 1)
    elif pa.types.is_map(kind):
        strategy = st.dictionaries(_TEXT, _values(kind.item_type), max_size=4)
    elif pa.types.is_list(kind):
        strategy = st.lists(_values(kind.value_type), max_size=4)
        strategy = strategy | strategy.map(tuple)
    elif pa.types.is_struct(kind):
        strategy = st.fixed_dictionaries(
            {}, optional={field.name: _values(field.type, field.nullable) for field in kind}
        )
    else:
        raise AssertionError(kind)
    return st.none() | strategy if nullable else strategy


def _rows(schema: pa.Schema) -> st.SearchStrategy[list[dict[str, Any]]]:
    """Rows holding most fields (a missing one is null), sometimes a field the schema lacks (ignored)."""
    row = st.fixed_dictionaries(
        {field.name: _values(field.type) for field in schema if field.name in schema.names[:3]},
        optional={field.name: _values(field.type) for field in schema if field.name not in schema.names[:3]}
        | {"not_a_column": _TEXT},
    )
    return st.lists(row, max_size=6)


def _parquet(table: pa.Table) -> bytes:
    sink = io.BytesIO()
    pq.write_table(table, sink, compression="zstd")
    return sink.getvalue()


@pytest.mark.parametrize("schema", [PDF_IDENTITY_SCHEMA, PAGE_SCHEMA, CHUNK_SCHEMA], ids=["raw_pdf", "pages", "chunks"])
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_rows_make_from_pylists_table_and_parquet_bytes(schema: pa.Schema, data: st.DataObject) -> None:
    rows = data.draw(_rows(schema))
    made = table_of_rows(rows, schema)
    expected = pa.Table.from_pylist(rows, schema=schema)
    assert made.equals(expected)
    assert made.to_pylist() == expected.to_pylist()
    assert _parquet(made) == _parquet(expected)


@pytest.mark.parametrize(
    "value",
    [1.5, True, "\ud800", ("a", "b"), 2**40],
    ids=["float", "bool-as-int", "lone-surrogate", "tuple-as-map", "int-too-large"],
)
def test_what_this_does_not_convert_is_from_pylists_to_accept_or_refuse(value: Any) -> None:
    """A value outside the stored kinds: the table (or the error) is `from_pylist`'s own."""
    rows = [{"page": 1, "char_start": 0}, {"page": value, "metadata": value, "text": value}]
    schema = pa.schema([("page", pa.int32()), ("char_start", pa.int64()), ("text", pa.string()), ("metadata", pa.map_(pa.string(), pa.string()))])
    try:
        expected = pa.Table.from_pylist(rows, schema=schema)
    except Exception as error:  # noqa: BLE001  # whichever error from_pylist raises is the one expected
        with pytest.raises(type(error)):
            table_of_rows(rows, schema)
    else:
        assert table_of_rows(rows, schema).equals(expected)


def test_writing_stage_files_does_not_import_pandas(tmp_path: Any) -> None:
    """The point of the module: a process that writes stage files does not pay pandas' import."""
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from pocket_assets.stages.registry import VALIDATED_CHUNKS\n"
        "from pocket_assets.stages.store import PartitionManifest, PartitionStore\n"
        "store = PartitionStore(Path(sys.argv[1]))\n"
        "rows = [{'id': 'a-p001-child001', 'pages': [1, 2], 'content_features': {'heading_count': 1}}]\n"
        "store.write(VALIDATED_CHUNKS, 'fr/a.pdf', rows, PartitionManifest('validated_chunks', 'fr/a.pdf', 'ok'))\n"
        "print('pandas' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
    assert pq.read_table(tmp_path / "validated_chunks" / "fr" / "a.pdf.parquet").column("pages").to_pylist() == [[1, 2]]
