"""The `json_schema` gate: the seed's Draft-07 chunk schema on every record as the export writes it."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Sequence

from pocket_assets.core.json_schema import DRAFT_07, Validator, load_validator, schema_rule
from pocket_assets.core.quality.gate_results import OFFENDING_LIMIT, SCHEMA_GATE, GateResult
from pocket_assets.core.records import ChunkRecord, to_dict

CHUNK_SCHEMA_FILE = "chunk.schema.json"


def load_chunk_schema(expectations_dir: Path) -> Validator:
    """The seed's Draft-07 chunk schema alone: the schema gate needs no Great Expectations."""
    return load_validator(expectations_dir / CHUNK_SCHEMA_FILE, DRAFT_07)


def check_schema(
    chunk_schema: Validator, chunks: Sequence[ChunkRecord], records: Sequence[Mapping[str, Any]] | None = None
) -> tuple[GateResult, ...]:
    """Every record, as `to_dict` writes it, against the seed's Draft-07 chunk schema.

    One result per violated schema rule (e.g. `properties/text/minLength`), so the
    check names the rule, not just "invalid". `records`, when given, are the chunks' `to_dict`
    already (the rows a stage file holds, which `chunk_from_dict` read): not made again.
    """
    validator = chunk_schema
    offenders: dict[str, list[tuple[str, int]]] = {}
    first_message: dict[str, str] = {}
    for chunk, record in zip(chunks, records if records is not None else map(to_dict, chunks), strict=True):
        if validator.is_valid(record):
            continue
        for error in validator.iter_errors(record):
            rule = schema_rule(error)
            offenders.setdefault(rule, []).append((chunk.id, chunk.page))
            first_message.setdefault(rule, error.message[:200])
    if not offenders:
        valid = GateResult(SCHEMA_GATE, CHUNK_SCHEMA_FILE, True, len(chunks), 0, detail="every record is valid")
        return (valid,)
    return tuple(
        GateResult(
            gate=SCHEMA_GATE,
            expectation=rule,
            passed=False,
            checked_count=len(chunks),
            unexpected_count=len(offenders[rule]),
            offending=tuple(offenders[rule][:OFFENDING_LIMIT]),
            detail=f"{CHUNK_SCHEMA_FILE}: {first_message[rule]}",
        )
        for rule in sorted(offenders)
    )
