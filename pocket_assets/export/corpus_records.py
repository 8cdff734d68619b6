"""The corpus JSON's and the HEPilot file's records of a chunk, and the schemas each is validated against.

The corpus JSON (`chunks_mode_b_{c}.json`) holds every chunk as `to_dict` gives it, each valid against
the seed's Draft-07 chunk schema (§5); the HEPilot file (`chunks_{c}.hepilot.jsonl`) one seed HEPilot
`chunk_output` record per chunk, valid against its 2020-12 schema, UUID formats checked (the schema allows
no other field, so the context header is not there: its `section_path` holds the same structure).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pocket_assets.core.json_schema import (
    DRAFT_07,
    DRAFT_2020_12,
    Validator,
    instance_location,
    load_validator,
    most_relevant_error,
)
from pocket_assets.export.errors import ExportError
from pocket_assets.export.redirects import ChunkRow

SCHEMA_VERSION = "1.0"  # the corpus file format of seed SPEC-SCH-001 §5.1
CHUNK_SCHEMA_FILE = "chunk.schema.json"
HEPILOT_SCHEMA_FILE = "hepilot_chunk_output.schema.json"


def hepilot_record(chunk: ChunkRow) -> dict[str, Any]:
    """Seed HEPilot `chunk_output`: our UUIDv5s as ids, `content_type` as its `chunk_type`.

    `chunk_index`/`total_chunks` count within the document and our chunk type
    (parents, children and summaries are each numbered from 0), since the
    record has no field to say which of the three a chunk is.
    """
    return {
        "chunk_id": chunk["chunk_uid"],
        "document_id": chunk["document_id"],
        "chunk_index": chunk["chunk_index"],
        "total_chunks": chunk["total_chunks"],
        "content": chunk["text"],
        "token_count": chunk["tokens"],
        "chunk_type": chunk["content_type"],
        "section_path": chunk["section_path"],
        "has_overlap_previous": chunk["has_overlap_previous"],
        "has_overlap_next": chunk["has_overlap_next"],
        "content_features": chunk["content_features"],
    }


def piece_validators(schema_dir: Path) -> tuple[Validator, Validator]:
    """The chunk schema's and HEPilot's validators, as `render_piece` takes them."""
    return load_validator(schema_dir / CHUNK_SCHEMA_FILE, DRAFT_07), load_validator(schema_dir / HEPILOT_SCHEMA_FILE, DRAFT_2020_12)


def invalid_record(validator: Validator, record: dict[str, Any], chunk_id: str, schema_name: str) -> ExportError | None:
    """`_validate`'s error as a value: the one-pass writer keeps writing the other files after a file's first
    error, so that the error raised is the one the files written one after the other would raise."""
    try:
        _validate(validator, record, chunk_id, schema_name)
    except ExportError as error:
        return error
    return None


def _validate(validator: Validator, document: dict[str, Any], chunk_id: str, schema_name: str) -> None:
    error = most_relevant_error(validator, document)
    if error is not None:
        where = instance_location(error) or "(record)"
        raise ExportError(chunk_id, f"invalid against {schema_name} at {where}: {error.message}")
