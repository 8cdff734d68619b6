"""Which PDFs an export ships, and in what state.

One PDF never blocks the others (issue 14). Every PDF is one of:

- included: its latest chunks passed the gates;
- stale: its latest attempt failed (a gate, or a stage before the gates), and
  an older build's validated chunks (the last good file, kept by the stage)
  ship instead, listed with the failing gate or stage;
- left out: it has no validated chunks at all (unreadable, upstream failed, or
  failed its gates on its first build), listed with why.

Whether a non-empty stale or left-out list refuses the export is the caller's
setting (strict export), not this module's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import pyarrow as pa

from pocket_assets.core.records import chunk_from_dict, to_dict
from pocket_assets.core.schemas import CHUNK_SCHEMA
from pocket_assets.runstate.stages import EXPORTED
from pocket_assets.runstate.staleness import first_problem
from pocket_assets.runstate.storage import STATUS_FAILED, STATUS_OK, PartitionStore


@dataclass(frozen=True)
class ExportSelection:
    included: tuple[str, ...]
    stale: tuple[tuple[str, str], ...]  # (partition key, failed gate sentence): last good chunks ship
    excluded: tuple[tuple[str, str], ...]  # (partition key, why): nothing ships

    @property
    def shipped(self) -> tuple[str, ...]:
        """Every PDF whose chunks are in the export, fresh or stale, sorted."""
        return tuple(sorted(self.included + tuple(key for key, _ in self.stale)))

    @property
    def problems(self) -> tuple[tuple[str, str], ...]:
        """Stale and left-out PDFs with their sentence: what a strict export refuses on."""
        return tuple(sorted(self.stale + self.excluded))


def select_for_export(store: PartitionStore, partition_keys: Sequence[str]) -> ExportSelection:
    """Why a PDF has no fresh chunks is its failed gate, else the first stage, in lineage order, without a good output."""
    included, stale, excluded = [], [], []
    for key in sorted(partition_keys):
        manifest = store.manifest(EXPORTED, key)
        damage = store.problem(EXPORTED, key, manifest) if manifest is not None and manifest.status == STATUS_OK else None
        if manifest is not None and manifest.status == STATUS_OK and damage is None:
            included.append(key)
            continue
        if damage is not None:
            excluded.append((key, f"left out, {damage}; build it again"))
            continue
        if manifest is not None and manifest.status == STATUS_FAILED:
            why = manifest.reason or "failed its gates"
        else:
            problem = first_problem(store, key)
            why = problem.sentence if problem else f"{EXPORTED} not built"
        if store.data_path(EXPORTED, key).is_file():
            stale.append((key, f"stale, its last good chunks ship: {why}"))
        else:
            excluded.append((key, f"left out, it has no good chunks: {why}"))
    return ExportSelection(tuple(included), tuple(stale), tuple(excluded))


class ValidatedChunks(Sequence[dict[str, Any]]):
    """A PDF's last good validated chunks as the export reads them: rows, each `to_dict` of its
    record (`core.export.redirects.ChunkRow`), made a batch at a time as they are read.

    The file stays in Arrow columns (each text once, compact) and only the batch being read is
    Python rows: the export reads a PDF's chunks in about their file order, so each batch is made
    once, and a PDF of thousands of chunks costs its file's size, not its rows' (issue 18). A file
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
