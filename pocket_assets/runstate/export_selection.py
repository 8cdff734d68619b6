"""Which PDFs an export may include, and whether it may be written at all.

A PDF whose latest chunks failed a gate refuses the export (shipping its older
chunks, or none, without saying so would be wrong). A PDF that never produced
chunks (unreadable, or upstream failed) is left out and reported.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from pocket_assets.core.records import ChunkRecord, chunk_from_dict
from pocket_assets.runstate.stages import EXPORTED
from pocket_assets.runstate.staleness import first_problem
from pocket_assets.runstate.storage import STATUS_FAILED, STATUS_OK, PartitionStore


@dataclass(frozen=True)
class ExportSelection:
    included: tuple[str, ...]
    excluded: tuple[tuple[str, str], ...]  # (partition key, why)
    refused: tuple[tuple[str, str], ...]  # (partition key, failed gate sentence)


def select_for_export(store: PartitionStore, partition_keys: Sequence[str]) -> ExportSelection:
    """Why a PDF is left out is the first stage, in lineage order, without a good output."""
    included, excluded, refused = [], [], []
    for key in sorted(partition_keys):
        manifest = store.manifest(EXPORTED, key)
        if manifest is not None and manifest.status == STATUS_OK:
            included.append(key)
        elif manifest is not None and manifest.status == STATUS_FAILED:
            refused.append((key, manifest.reason or "failed its gates"))
        else:
            problem = first_problem(store, key)
            excluded.append((key, problem.sentence if problem else f"{EXPORTED} not built"))
    return ExportSelection(tuple(included), tuple(excluded), tuple(refused))


def read_validated_chunks(store: PartitionStore, partition_keys: Sequence[str]) -> list[ChunkRecord]:
    return [chunk_from_dict(row) for key in partition_keys for row in store.read(EXPORTED, key)]
