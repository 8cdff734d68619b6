"""The Arrow schemas of the stored records, read off the record types of `core/records.py`.

A record's fields, in their order, are the columns of its stage files, so a field added to a record is a
column of every file written after. The schema is explicit rather than inferred from the rows, so that
empty and all-null columns keep their types. Every column is nullable, as Arrow's fields are by default:
what may be None is the record's business, and the gates check the values.

How an annotation becomes an Arrow type: `str` a string, `bool` a boolean, `int` a 32-bit integer (or the
width an `Annotated` integer names: `records.Int64`, `records.Int8`), `X | None` as `X`, `tuple[X, ...]` a
list of `X`, `dict[K, V]` a map, a record type a struct of its fields.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from typing import Any

import pyarrow as pa

from pocket_assets.core.records import ChunkRecord, PageRecord, PdfIdentity

_SCALARS: dict[Any, pa.DataType] = {str: pa.string(), bool: pa.bool_(), int: pa.int32()}


def record_schema(record_type: type) -> pa.Schema:
    """The schema of a stage file holding `record_type`'s records (`to_dict`'s rows)."""
    return pa.schema(_fields(record_type))


def _fields(record_type: type) -> list[pa.Field]:
    hints = typing.get_type_hints(record_type, include_extras=True)
    return [pa.field(field.name, _arrow_type(hints[field.name])) for field in dataclasses.fields(record_type)]


def _arrow_type(hint: Any) -> pa.DataType:
    origin, arguments = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Annotated:
        return pa.type_for_alias(arguments[1])
    if origin in (types.UnionType, typing.Union):
        (value,) = [argument for argument in arguments if argument is not type(None)]
        return _arrow_type(value)
    if origin is tuple:
        return pa.list_(_arrow_type(arguments[0]))
    if origin is dict:
        return pa.map_(_arrow_type(arguments[0]), _arrow_type(arguments[1]))
    if dataclasses.is_dataclass(hint):
        return pa.struct(_fields(hint))
    return _SCALARS[hint]


PDF_IDENTITY_SCHEMA = record_schema(PdfIdentity)
PAGE_SCHEMA = record_schema(PageRecord)
CHUNK_SCHEMA = record_schema(ChunkRecord)
