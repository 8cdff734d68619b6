"""Each PDF's export piece, kept beside its stages: rendered when its validated chunks are written, copied by
the export.

A piece (`export.pieces.Piece`) is what one PDF adds to its corpus's SDK, corpus JSON and HEPilot files,
validated once. `write_export_piece` renders it from the validated file just written (the build calls it
after writing a PDF's `validated_chunks`), so that an export after one PDF changed renders that PDF alone
and copies the bytes of the others.

A piece is at `<stages>/export_pieces/<PDF key>.piece` and records what it was made from: a digest of
the bytes of the PDF's validated file and `piece_render_key` (the renderer and the two schemas). The
export trusts a piece only if it was made from the bytes it read (`export.validated_files`) and is whole
(`PieceFileCache`); a piece missing, damaged, or made from another version of the file is rendered again
from the file and kept.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache, partial
from pathlib import Path

from pocket_assets.core.json_schema import Validator
from pocket_assets.export.corpus_records import piece_validators
from pocket_assets.export.pieces import PieceFileCache, piece_render_key, render_piece, write_piece_file
from pocket_assets.export.validated_files import ValidatedChunks, ValidatedFile, file_digest, parquet_table
from pocket_assets.stages.registry import VALIDATED_CHUNKS
from pocket_assets.stages.store import PartitionStore

PIECES_FOLDER = "export_pieces"


def piece_path(store: PartitionStore, partition_key: str) -> Path:
    return store.stage_file(PIECES_FOLDER, partition_key, ".piece")


def write_export_piece(store: PartitionStore, partition_key: str, schema_dir: Path) -> None:
    """Render and keep the piece of the PDF's validated file as it was just written."""
    data = store.data_path(VALIDATED_CHUNKS, partition_key).read_bytes()
    piece = render_piece(ValidatedChunks(parquet_table(data)), _validators(schema_dir))
    write_piece_file(piece_path(store, partition_key), piece, _made_from(file_digest(data), schema_dir))


def stored_pieces(store: PartitionStore, schema_dir: Path, files: Mapping[str, ValidatedFile]) -> PieceFileCache:
    """The kept pieces of the PDFs an export ships (`files`: each one's validated file as the export read it)."""
    return PieceFileCache(
        path=partial(piece_path, store),
        made_from={key: _made_from(file.digest, schema_dir) for key, file in files.items()},
    )


def _made_from(digest: str, schema_dir: Path) -> str:
    return f"{digest}+{_render_key(schema_dir)}"


@lru_cache(maxsize=4)
def _render_key(schema_dir: Path) -> str:
    return piece_render_key(schema_dir)


@lru_cache(maxsize=4)
def _validators(schema_dir: Path) -> tuple[Validator, Validator]:
    """Loaded once per process: a build renders one piece per PDF."""
    return piece_validators(schema_dir)
