"""Which PDFs an export may include, and whether it may be written at all.

A PDF whose latest chunks failed a gate refuses the export (shipping its older
chunks, or none, without saying so would be wrong). A PDF that never produced
chunks (unreadable, or upstream failed) is left out and reported.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from pocket_assets.core.records import ChunkRecord, chunk_from_dict
from pocket_assets.runstate.storage import STATUS_FAILED, STATUS_OK, PartitionStore

VALIDATED = "validated_chunks"


@dataclass(frozen=True)
class ExportSelection:
    included: tuple[str, ...]
    excluded: tuple[tuple[str, str], ...]  # (partition key, why)
    refused: tuple[tuple[str, str], ...]  # (partition key, failed gate sentence)


def select_for_export(store: PartitionStore, partition_keys: Sequence[str], stages: Sequence[str]) -> ExportSelection:
    """`stages` are the per-PDF assets in lineage order, used to name why a PDF has no chunks."""
    included, excluded, refused = [], [], []
    for key in sorted(partition_keys):
        manifest = store.manifest(VALIDATED, key)
        if manifest is not None and manifest.status == STATUS_OK:
            included.append(key)
        elif manifest is not None and manifest.status == STATUS_FAILED:
            refused.append((key, manifest.reason or "failed its gates"))
        else:
            excluded.append((key, _first_problem(store, key, stages)))
    return ExportSelection(tuple(included), tuple(excluded), tuple(refused))


def _first_problem(store: PartitionStore, key: str, stages: Sequence[str]) -> str:
    for stage in stages:
        manifest = store.manifest(stage, key)
        if manifest is None:
            return f"{stage} not built yet"
        if manifest.status != STATUS_OK:
            return f"{stage} {manifest.status}: {manifest.reason}"
    return "not validated"


def read_validated_chunks(store: PartitionStore, partition_keys: Sequence[str]) -> list[ChunkRecord]:
    return [chunk_from_dict(row) for key in partition_keys for row in store.read(VALIDATED, key)]
