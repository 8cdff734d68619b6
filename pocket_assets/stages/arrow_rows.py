"""Rows (dicts) to an Arrow table of a given schema, the table `pa.Table.from_pylist` makes, without pandas.

Every Arrow conversion of a Python sequence (`pa.array`, hence `from_pylist`) first asks whether
the sequence is a pandas object, and so imports pandas in the build's own process at its first
`raw_pdf` file, shared from then on with every worker it forks. Nothing else in those processes
needs pandas, so the stage files are made here from the rows' values, column by column, into Arrow
buffers (numpy packs the numbers and bits; it is loaded with pyarrow anyway). Making a table so
costs more CPU than `from_pylist`, less than the import it saves, and spares the memory pandas holds.

The values this knows are those the stages store: `str`, `int`, `bool`, None, lists or tuples,
dicts (structs, and maps of text to text). A column holding anything else (a float, a subclass,
text that is not valid UTF-8, an int out of the type's range, a struct with a field the schema
lacks) goes to `from_pylist`, which then decides as it always did, errors included: same table,
same Parquet bytes.
"""

from __future__ import annotations

from itertools import chain
from operator import itemgetter
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
import pyarrow as pa

_MAX_OFFSET = 2**31 - 1  # 32-bit offsets: `from_pylist` splits a longer column into chunks
_NO_FIELDS: Mapping[str, Any] = {}  # a null struct's (absent) fields, each null in its children


class _Unsupported(Exception):
    """A value this module does not convert; the table is made by `from_pylist` instead."""


def table_of_rows(rows: Sequence[Mapping[str, Any]], schema: pa.Schema) -> pa.Table:
    """`pa.Table.from_pylist(rows, schema=schema)`: a missing key is null, a key not in the schema ignored."""
    try:
        columns = [_array(values, field.type) for values, field in zip(_columns(rows, schema.names), schema)]
    except (_Unsupported, UnicodeEncodeError, OverflowError):
        return pa.Table.from_pylist(list(rows), schema=schema)
    table = pa.Table.from_arrays(columns, schema=schema)
    table.validate()
    return table


def _columns(rows: Sequence[Mapping[str, Any]], names: list[str]) -> list[Sequence[Any]]:
    """The rows' values, a column per name: one C call per row while every row holds every name."""
    if not rows or len(names) < 2:
        return [[row.get(name) for row in rows] for name in names]
    try:
        return list(zip(*map(itemgetter(*names), rows)))
    except KeyError:
        return [[row.get(name) for row in rows] for name in names]


def _array(values: Sequence[Any], kind: pa.DataType) -> pa.Array:
    """The column's values as an array of `kind`; each pass over the values is a C loop (`map`, `count`)."""
    nulls = values.count(None)
    present = [value for value in values if value is not None] if nulls else values
    validity = _bits([value is not None for value in values]) if nulls else None
    if pa.types.is_string(kind):
        _require(present, str)
        encoded = list(map(str.encode, values if not nulls else [value or "" for value in values]))
        buffers = [validity, _offsets(map(len, encoded)), pa.py_buffer(b"".join(encoded))]
        return pa.Array.from_buffers(kind, len(values), buffers, nulls)
    if pa.types.is_boolean(kind):
        _require(present, bool)
        return pa.Array.from_buffers(kind, len(values), [validity, _bits([value is True for value in values])], nulls)
    if pa.types.is_integer(kind):
        _require(present, int)
        numbers = np.array(values if not nulls else [value or 0 for value in values], dtype=_integer_dtype(kind))
        return pa.Array.from_buffers(kind, len(values), [validity, pa.py_buffer(numbers)], nulls)
    if pa.types.is_map(kind):
        _require(present, dict)
        keys = list(chain.from_iterable(present))
        if None in keys:
            raise _Unsupported("a map key that is null")
        items = list(chain.from_iterable(value.values() for value in present))
        entries = pa.Array.from_buffers(
            pa.struct([kind.key_field, kind.item_field]),
            len(keys),
            [None],
            children=[_array(keys, kind.key_type), _array(items, kind.item_type)],
        )
        return _nested(kind, values, validity, nulls, entries)
    if pa.types.is_list(kind):
        _require(present, list, tuple)
        return _nested(kind, values, validity, nulls, _array(list(chain.from_iterable(present)), kind.value_type))
    if pa.types.is_struct(kind):
        _require(present, dict)
        names = [field.name for field in kind]
        if not set(chain.from_iterable(present)) <= set(names):
            raise _Unsupported(kind)
        held = values if not nulls else [value or _NO_FIELDS for value in values]
        children = [_array(column, field.type) for column, field in zip(_columns(held, names), kind)]
        return pa.Array.from_buffers(kind, len(values), [validity], nulls, children=children)
    raise _Unsupported(kind)


def _integer_dtype(kind: pa.DataType) -> np.dtype:
    return np.dtype(f"{'' if pa.types.is_signed_integer(kind) else 'u'}int{kind.bit_width}")


def _require(present: Sequence[Any], *kinds: type) -> None:
    """Exact types only: `from_pylist` has its own rules for the rest (bools as ints, floats, subclasses)."""
    if not set(map(type, present)) <= set(kinds):
        raise _Unsupported(kinds)


def _nested(kind: pa.DataType, values: Sequence[Any], validity: pa.Buffer | None, nulls: int, child: pa.Array) -> pa.Array:
    """A list or map array: each value's length in the offsets, their items (or entries) in `child`."""
    lengths = map(len, values) if not nulls else (0 if value is None else len(value) for value in values)
    return pa.Array.from_buffers(kind, len(values), [validity, _offsets(lengths)], nulls, children=[child])


def _offsets(lengths: Iterable[int]) -> pa.Buffer:
    ends = np.zeros(1, dtype=np.int64)
    ends = np.concatenate((ends, np.cumsum(np.array(list(lengths), dtype=np.int64))))
    if ends[-1] > _MAX_OFFSET:
        raise _Unsupported("a column too long for 32-bit offsets")
    return pa.py_buffer(ends.astype(np.int32))


def _bits(flags: list[bool]) -> pa.Buffer:
    return pa.py_buffer(np.packbits(np.array(flags, dtype=np.bool_), bitorder="little"))
