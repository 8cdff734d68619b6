"""Each PDF's export piece, kept beside its stages: rendered when its `validated_chunks` is written, copied by the export.

A piece (`core.export.corpus_files.Piece`) is what one PDF adds to its corpus's SDK, corpus JSON and
HEPilot files, validated once. `write_export_piece` renders it from the validated file just written
(in `SuiteBatches._verdict`), so that an export after one PDF changed renders that PDF alone and copies
the bytes of the others (issue 31).

A piece is at `<stages>/export_pieces/<PDF key>.piece` and records what it was made from: a digest of
the bytes of the PDF's validated file and `piece_render_key` (the renderer and the two schemas). The
export reads each shipped PDF's validated file once (`read_validated`: the columns it holds of every
chunk and that digest, from the same bytes), and trusts a piece only if it was made from those bytes
and is whole (`PieceFiles`); a piece missing, damaged, or made from another version of the file is
rendered again from the file and kept. A validated file that changes while the export runs is named,
never mixed with what was read before.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache, partial
from pathlib import Path
from typing import Any

import blake3
import pyarrow as pa
import pyarrow.parquet as pq

from pocket_assets.core.export.corpus_files import (
    ExportError,
    PieceFiles,
    piece_render_key,
    piece_validators,
    render_piece,
    write_piece_file,
)
from pocket_assets.core.json_schema import Validator
from pocket_assets.runstate.export_selection import ValidatedChunks
from pocket_assets.runstate.stages import EXPORTED
from pocket_assets.runstate.storage import PartitionStore

PIECES_FOLDER = "export_pieces"


@dataclass(frozen=True)
class ValidatedFile:
    """What the export holds of one PDF's validated file: some columns (column -> values, in the file's row
    order) and a digest of the bytes they were read from."""

    columns: dict[str, list[Any]]
    digest: str


def piece_path(store: PartitionStore, partition_key: str) -> Path:
    return store.stage_file(PIECES_FOLDER, partition_key, ".piece")


def read_validated(store: PartitionStore, partition_key: str, columns: Sequence[str]) -> ValidatedFile:
    """Some columns of a PDF's last good validated file, and the digest of its bytes (read once for both)."""
    data = store.data_path(EXPORTED, partition_key).read_bytes()
    return ValidatedFile(_table(data, columns).to_pydict(), _digest(data))


def write_export_piece(store: PartitionStore, partition_key: str, schema_dir: Path) -> None:
    """Render and keep the piece of the PDF's validated file as it was just written."""
    data = store.data_path(EXPORTED, partition_key).read_bytes()
    piece = render_piece(ValidatedChunks(_table(data)), _validators(schema_dir))
    write_piece_file(piece_path(store, partition_key), piece, _made_from(_digest(data), schema_dir))


def stored_pieces(store: PartitionStore, schema_dir: Path, files: Mapping[str, ValidatedFile]) -> PieceFiles:
    """The kept pieces of the PDFs an export ships (`files`: each one's validated file as the export read it)."""
    return PieceFiles(
        path=partial(piece_path, store),
        made_from={key: _made_from(file.digest, schema_dir) for key, file in files.items()},
    )


def validated_chunks_as_read(store: PartitionStore, files: Mapping[str, ValidatedFile]) -> Callable[[str], ValidatedChunks]:
    """A PDF's validated chunks read again (for a piece rendered anew, or the redirects), refused, naming the PDF,
    if the file is no longer the one the export read its columns from."""

    def load(partition_key: str) -> ValidatedChunks:
        data = store.data_path(EXPORTED, partition_key).read_bytes()
        file = files[partition_key]
        if _digest(data) != file.digest:
            first_id = file.columns["id"][0] if file.columns["id"] else None
            raise ExportError(first_id, f"{partition_key}: its validated chunks changed during the export; export again")
        return ValidatedChunks(_table(data))

    return load


def _made_from(digest: str, schema_dir: Path) -> str:
    return f"{digest}+{_render_key(schema_dir)}"


@lru_cache(maxsize=4)
def _render_key(schema_dir: Path) -> str:
    return piece_render_key(schema_dir)


@lru_cache(maxsize=4)
def _validators(schema_dir: Path) -> tuple[Validator, Validator]:
    """Loaded once per process: a build renders one piece per PDF."""
    return piece_validators(schema_dir)


def _digest(data: bytes) -> str:
    return blake3.blake3(data).hexdigest()[:32]


def _table(data: bytes, columns: Sequence[str] | None = None) -> pa.Table:
    """A Parquet file held in memory, read as `storage` reads a stage file (one thread)."""
    with pq.ParquetFile(pa.BufferReader(data)) as parquet:
        return parquet.read(columns=list(columns) if columns is not None else None, use_threads=False)
