"""Which PDFs an export ships, and in what state.

One PDF never blocks the others. Every PDF is one of:

- included: its latest chunks passed the gates;
- stale: its latest attempt failed (a gate, or a stage before the gates), and
  an older build's validated chunks (the last good file, kept by the stage)
  ship instead, listed with the failing gate or stage;
- without chunks: it has no validated chunks it can ship (unreadable, upstream
  failed, or failed its gates on its first build): the export ships its last
  exported chunks when it has them, else leaves it out, listed with why.

Whether a non-empty stale or left-out list refuses the export is the caller's
setting (strict export), not this module's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from pocket_assets.stages.registry import VALIDATED_CHUNKS
from pocket_assets.stages.staleness import first_problem
from pocket_assets.stages.store import STATUS_FAILED, STATUS_OK, PartitionStore


@dataclass(frozen=True)
class ExportSelection:
    included: tuple[str, ...]
    stale: tuple[tuple[str, str], ...]  # (partition key, failed gate sentence): last good chunks ship
    excluded: tuple[tuple[str, str], ...]  # (partition key, why it has no chunks to ship)

    @property
    def shipped(self) -> tuple[str, ...]:
        """Every PDF whose chunks are in the export, fresh or stale, sorted."""
        return tuple(sorted(self.included + tuple(key for key, _ in self.stale)))


def select_for_export(store: PartitionStore, partition_keys: Sequence[str]) -> ExportSelection:
    """Why a PDF has no fresh chunks is its failed gate, else the first stage, in lineage order, without a good output."""
    included, stale, excluded = [], [], []
    for key in sorted(partition_keys):
        manifest = store.manifest(VALIDATED_CHUNKS, key)
        damage = store.problem(VALIDATED_CHUNKS, key, manifest) if manifest is not None and manifest.status == STATUS_OK else None
        if manifest is not None and manifest.status == STATUS_OK and damage is None:
            included.append(key)
            continue
        if damage is not None:
            excluded.append((key, f"{damage}; build it again"))
            continue
        if manifest is not None and manifest.status == STATUS_FAILED:
            why = manifest.reason or "failed its gates"
        else:
            problem = first_problem(store, key)
            why = problem.sentence if problem else f"{VALIDATED_CHUNKS} not built"
        if store.data_path(VALIDATED_CHUNKS, key).is_file():
            stale.append((key, f"stale, its last good chunks ship: {why}"))
        else:
            excluded.append((key, f"it has no good chunks: {why}"))
    return ExportSelection(tuple(included), tuple(stale), tuple(excluded))
