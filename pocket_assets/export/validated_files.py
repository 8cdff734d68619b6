"""Each shipped PDF's validated file as the export reads it: some columns first, its rows again on demand.

The export reads each shipped PDF's validated file once (`read_validated`: the columns it holds of every
chunk, and a digest of the bytes they were read from). A PDF's rows are read again only to render its
piece or for the redirects of a changed PDF (`validated_chunks_as_read`), and refused, named, if the file
changed since: never mixed with what was read before.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import blake3
import pyarrow as pa
import pyarrow.parquet as pq

from pocket_assets.core.records import chunk_from_dict, to_dict
from pocket_assets.core.schemas import CHUNK_SCHEMA
from pocket_assets.export.errors import ExportError
from pocket_assets.stages.registry import VALIDATED_CHUNKS
from pocket_assets.stages.store import PartitionStore


@dataclass(frozen=True)
class ValidatedFile:
    """What the export holds of one PDF's validated file: some columns (column -> values, in the file's row
    order) and a digest of the bytes they were read from."""

    columns: dict[str, list[Any]]
    digest: str


def read_validated(store: PartitionStore, partition_key: str, columns: Sequence[str]) -> ValidatedFile:
    """Some columns of a PDF's last good validated file, and the digest of its bytes (read once for both)."""
    data = store.data_path(VALIDATED_CHUNKS, partition_key).read_bytes()
    return ValidatedFile(parquet_table(data, columns).to_pydict(), file_digest(data))


def validated_chunks_as_read(store: PartitionStore, files: Mapping[str, ValidatedFile]) -> Callable[[str], ValidatedChunks]:
    """A PDF's validated chunks read again (for a piece rendered anew, or the redirects), refused, naming the PDF,
    if the file is no longer the one the export read its columns from."""

    def load(partition_key: str) -> ValidatedChunks:
        data = store.data_path(VALIDATED_CHUNKS, partition_key).read_bytes()
        file = files[partition_key]
        if file_digest(data) != file.digest:
            first_id = file.columns["id"][0] if file.columns["id"] else None
            raise ExportError(first_id, f"{partition_key}: its validated chunks changed during the export; export again")
        return ValidatedChunks(parquet_table(data))

    return load


def file_digest(data: bytes) -> str:
    return blake3.blake3(data).hexdigest()[:32]


def parquet_table(data: bytes, columns: Sequence[str] | None = None) -> pa.Table:
    """A Parquet file held in memory, read as the stage store reads a stage file (one thread)."""
    with pq.ParquetFile(pa.BufferReader(data)) as parquet:
        return parquet.read(columns=list(columns) if columns is not None else None, use_threads=False)


class ValidatedChunks(Sequence[dict[str, Any]]):
    """A PDF's last good validated chunks as the export reads them: rows, each `to_dict` of its
    record (`export.redirects.ChunkRow`), made a batch at a time as they are read.

    The file stays in Arrow columns (each text once, compact) and only the batch being read is
    Python rows: the export reads a PDF's chunks in about their file order, so each batch is made
    once, and a PDF of thousands of chunks costs its file's size, not its rows'. A file
    in today's schema is its rows already, read a column at a time (no record is made); a file of
    an older schema goes through its records, for their defaults.
    """

    BATCH_ROWS = 512

    def __init__(self, table: pa.Table) -> None:
        self._table = table
        self._current_schema = table.schema.equals(CHUNK_SCHEMA)
        self._batch_start = -1
        self._batch: list[dict[str, Any]] = []

    def __len__(self) -> int:
        return self._table.num_rows

    def __getitem__(self, row: int) -> dict[str, Any]:  # type: ignore[override]  # rows only, no slices
        if not 0 <= row < len(self):
            raise IndexError(row)
        start = row - row % self.BATCH_ROWS
        if start != self._batch_start:
            self._batch = self._rows(self._table.slice(start, self.BATCH_ROWS))
            self._batch_start = start
        return self._batch[row - start]

    def _rows(self, batch: pa.Table) -> list[dict[str, Any]]:
        if not self._current_schema:
            return [to_dict(chunk_from_dict(values)) for values in batch.to_pylist()]
        names = batch.column_names
        return [dict(zip(names, values)) for values in zip(*(column.to_pylist() for column in batch.columns))]
